/*
 * cuda_runtime_api.h (fake) - the CUDA runtime calls runtime/transport_nccl.c makes, on host
 * memory, so that test_transport_nccl can run the transport without a GPU (fake_nccl.c; nccl.h
 * here says what the model is). Only what the transport uses.
 */
#ifndef PPS_FAKE_CUDA_RUNTIME_API_H
#define PPS_FAKE_CUDA_RUNTIME_API_H

#include <stddef.h>

typedef enum {
    cudaSuccess = 0,
    cudaErrorMemoryAllocation = 2,
    cudaErrorNotReady = 600,
} cudaError_t;

enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

#define cudaStreamNonBlocking  0x01
#define cudaEventDisableTiming 0x02

typedef struct fake_stream *cudaStream_t;
typedef struct fake_event *cudaEvent_t;

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t e);
const char *cudaGetErrorName(cudaError_t e);
cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t s);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);

#endif
