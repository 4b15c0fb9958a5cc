/*
 * nccl.h (fake) - the NCCL calls runtime/transport_nccl.c makes, modelled on host memory for
 * test_transport_nccl (fake_nccl.c). The model keeps what the transport relies on and what it
 * could get wrong:
 *   - two ranks that init with one unique id share a communicator;
 *   - on a communicator, the n-th ncclSend of one rank pairs with the n-th ncclRecv of the other
 *     (NCCL matches point-to-point calls in order, with no tags);
 *   - a send reads its buffer only when it pairs, so a send's buffer is not free until then (an
 *     event recorded after it passes then), and a receive's buffer is written only then;
 *   - a pair of a send and a receive of different sizes is an error (NCCL's is undefined).
 * Streams and events: operations on a stream complete in order; an event passes when every
 * operation queued before its record has completed. Pairing happens whenever any call looks.
 */
#ifndef PPS_FAKE_NCCL_H
#define PPS_FAKE_NCCL_H

#include <stddef.h>

#include "cuda_runtime_api.h"

typedef enum {
    ncclSuccess = 0,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
} ncclResult_t;

typedef enum { ncclChar = 0 } ncclDataType_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef struct fake_comm *ncclComm_t;

ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t s);
ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t s);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async);
const char *ncclGetErrorString(ncclResult_t r);
const char *ncclGetLastError(ncclComm_t comm);

/* The test's view: pairs that had different sizes, and sends still unpaired. */
int fake_nccl_size_mismatches(void);
int fake_nccl_unpaired(void);
/* How many GPUs cudaGetDeviceCount reports (1 unless a test sets another). */
extern int fake_cuda_devices;

#endif
