# Tests of the NVTX injection (tracer/nvtx/): the name cache, the iteration inference, and
# libppscope_nvtx.so end to end on examples/nvtx_pipeline in each naming style (the naming rules
# it shares with the importers, storage/labels.c, are tested in import.cmake). Without the NVTX
# headers the library and the example are not built and the end-to-end test skips (77).
pps_unit_test(test_nvtx_names pps_nvtx_core)
pps_unit_test(test_nvtx_iters pps_nvtx_core)

if(TARGET ppscope_nvtx)
  # Helpers of the end-to-end test: a run's spans as text, and a program that ends badly.
  add_executable(test_nvtx_check unit/test_nvtx_check.c)
  target_link_libraries(test_nvtx_check PRIVATE pps_storage pps_common)
  add_executable(test_nvtx_exit unit/test_nvtx_exit.c)
  target_include_directories(test_nvtx_exit SYSTEM PRIVATE ${PPS_NVTX_INCLUDE_DIR})
  target_link_libraries(test_nvtx_exit PRIVATE Threads::Threads ${CMAKE_DL_LIBS})

  add_test(NAME nvtx_inject
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/nvtx_inject.sh $<TARGET_FILE:nvtx_pipeline>
                   $<TARGET_FILE:ppscope_nvtx> $<TARGET_FILE:test_nvtx_check>
                   $<TARGET_FILE:test_nvtx_exit> $<TARGET_FILE:ppscope>)
  # Issue 8: the libraries NEED no MPI, the injection library is installed, and a program traced
  # through the installed one with every libmpi hidden still loads it and leaves its run.
  add_test(NAME nvtx_without_mpi
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/nvtx_without_mpi.sh ${PROJECT_BINARY_DIR}
                   $<TARGET_FILE:ppscope_trace> $<TARGET_FILE:ppscope_nvtx>
                   $<TARGET_FILE:nvtx_pipeline> $<TARGET_FILE:test_nvtx_check>
                   $<TARGET_FILE:ppscope>)
else()
  add_test(NAME nvtx_inject COMMAND sh -c "echo 'nvtx_inject: no NVTX headers, skipped'; exit 77")
  add_test(NAME nvtx_without_mpi
           COMMAND sh -c "echo 'nvtx_without_mpi: no NVTX headers, skipped'; exit 77")
endif()
set_tests_properties(nvtx_inject PROPERTIES LABELS cli SKIP_RETURN_CODE 77)
set_tests_properties(nvtx_without_mpi PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
# Also under the sanitizers in CI (.ci/run, label asan).
set_property(TEST nvtx_inject APPEND PROPERTY LABELS asan)
