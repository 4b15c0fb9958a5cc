/*
 * transport_nccl_plugin.h - the one function libppscope_nccl.so exports (transport_nccl.c), which
 * transport_nccl_load.c finds by name: the transport's constructor, for a program whose
 * transport.h has the layout abi (PPS__NCCL_PLUGIN_ABI), or NULL when it differs.
 */
#ifndef PPS_TRANSPORT_NCCL_PLUGIN_H
#define PPS_TRANSPORT_NCCL_PLUGIN_H

#include "transport.h"

#define PPS__NCCL_PLUGIN_ABI                                                                       \
    ((unsigned)(1u << 24 | sizeof(struct pps_transport_ops) << 12 | sizeof(struct pps_transport)))

struct pps__nccl_plugin {
    /* pps_transport_nccl_new(), host's release on failure included. */
    int (*transport_new)(struct pps_transport *host, int local_rank, int *device_out,
                         struct pps_transport **out, struct pps_err *err);
};

__attribute__((visibility("default"))) const struct pps__nccl_plugin *pps_nccl_plugin(unsigned abi);

#endif
