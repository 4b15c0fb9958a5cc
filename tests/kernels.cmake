# Tests of kernels/: forwards against references, backwards against finite differences, B/W
# split against fused, accumulation, AdamW, gradient checks, determinism under threads. They run
# on the backend named by PPS_KERNELS_BACKEND (default cpu).
pps_unit_test(test_kernels pps_kernels Threads::Threads)
pps_unit_test(test_kernels_grad pps_kernels)
