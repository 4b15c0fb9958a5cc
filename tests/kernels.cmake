# Tests of kernels/: forwards against references, backwards against finite differences, B/W
# split against fused, accumulation, AdamW, gradient checks, determinism under threads. They run
# on the backend named by PPS_KERNELS_BACKEND (default cpu).
pps_unit_test(test_kernels pps_kernels Threads::Threads)
pps_unit_test(test_kernels_grad pps_kernels)
# The same tests on the cuda backend, and cuda against cpu call by call (test_kernels_cuda.c):
# each exits 77 (skipped) on a machine without a GPU, or in a build without the cuda backend.
foreach(t test_kernels test_kernels_grad)
  add_test(NAME ${t}_on_cuda COMMAND ${t})
  set_tests_properties(${t}_on_cuda PROPERTIES LABELS "unit;gpu" SKIP_RETURN_CODE 77
                                               ENVIRONMENT PPS_KERNELS_BACKEND=cuda)
endforeach()
pps_unit_test(test_kernels_cuda pps_kernels Threads::Threads)
set_tests_properties(test_kernels_cuda PROPERTIES LABELS "unit;gpu")
