/*
 * transport_nccl_load.c - pps_transport_nccl_new() (transport.h): the constructor of
 * libppscope_nccl.so (transport_nccl.c), loaded once per process the first time it is asked for
 * (common/pps_plugin.h says why it is a library of its own); in a build without NCCL, why not.
 */
#include <pthread.h>
#include <stdio.h>

#include "pps_config.h"
#include "transport.h"

#ifdef PPS_HAVE_NCCL
#include "pps_plugin.h"
#include "transport_nccl_plugin.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct pps__nccl_plugin *plugin;
static char why_not[512];

static void load(void)
{
    const struct pps__nccl_plugin *(*get)(unsigned abi) = NULL;
    PPS_PLUGIN_LOAD("libppscope_nccl.so", get, pps_nccl_plugin, PPS__NCCL_PLUGIN_ABI, plugin,
                    why_not);
}
#endif

int pps_transport_nccl_new(struct pps_transport *host, int local_rank, int *device_out,
                           struct pps_transport **out, struct pps_err *err)
{
    *out = NULL;
#ifdef PPS_HAVE_NCCL
    pthread_once(&once, load);
    if (plugin)
        return plugin->transport_new(host, local_rank, device_out, out, err);
    if (host)
        host->ops->free(host);
    return pps_err_set(err, PPS_ENOENT, "--transport nccl: %s", why_not);
#else
    (void)local_rank;
    (void)device_out;
    if (host)
        host->ops->free(host);
    return pps_err_set(err, PPS_ENOENT,
                       "--transport nccl: ppscope was built without NCCL (configure with the "
                       "CUDA toolkit and NCCL, -DPPS_WITH_NCCL=ON)");
#endif
}
