# Tests of runtime/'s transports. threads: a unit test (run it under helgrind too). mpi: one
# program run by tests/cli/transport_mpi.sh under mpirun with 2, 3 and 4 ranks (label mpi;
# skipped without MPI or mpirun), plus two runs in which a rank exits without sending what another
# waits for (peer_exit: exit() without MPI_Finalize; peer_abort: pps_transport_mpi_abort): the job
# must end, with a failure, instead of hanging.
pps_unit_test(test_transport_threads pps_runtime Threads::Threads)

add_executable(test_transport_mpi unit/test_transport_mpi.c)
target_include_directories(test_transport_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_transport_mpi PRIVATE pps_runtime pps_common m)
if(PPS_HAVE_MPI)
  target_link_libraries(test_transport_mpi PRIVATE MPI::MPI_C)
endif()
foreach(_np 2 3 4)
  add_test(NAME transport_mpi_np${_np}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/transport_mpi.sh
                   $<TARGET_FILE:test_transport_mpi> "${PPS_HAVE_MPI}" "${MPIEXEC_EXECUTABLE}"
                   ${_np})
  # More ranks than cores is fine (--oversubscribe), but they want the cores to themselves.
  set_tests_properties(transport_mpi_np${_np} PROPERTIES LABELS mpi SKIP_RETURN_CODE 77
                                                         TIMEOUT 300 PROCESSORS 2)
endforeach()
foreach(_case peer_exit peer_abort)
  add_test(NAME transport_mpi_${_case}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/transport_mpi.sh
                   $<TARGET_FILE:test_transport_mpi> "${PPS_HAVE_MPI}" "${MPIEXEC_EXECUTABLE}" 2
                   ${_case})
  set_tests_properties(transport_mpi_${_case} PROPERTIES LABELS mpi SKIP_RETURN_CODE 77
                                                         TIMEOUT 180 PROCESSORS 2)
endforeach()

# nccl: runtime/transport_nccl.c compiled against a model of NCCL's point-to-point calls on host
# memory (unit/fake_nccl: in-order matching per communicator, a send's buffer read when it pairs),
# on the threads transport: the transport's own logic, in every build, GPU or not. NCCL itself
# runs in tests/gpu/device-check.sh.
add_executable(test_transport_nccl unit/test_transport_nccl.c unit/fake_nccl/fake_nccl.c
                                   ${PROJECT_SOURCE_DIR}/runtime/transport_nccl.c)
target_include_directories(test_transport_nccl BEFORE PRIVATE
                           ${CMAKE_CURRENT_SOURCE_DIR}/unit/fake_nccl ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_transport_nccl PRIVATE pps_runtime pps_common m Threads::Threads)
add_test(NAME test_transport_nccl COMMAND test_transport_nccl)
set_tests_properties(test_transport_nccl PROPERTIES LABELS "unit;asan" SKIP_RETURN_CODE 77 TIMEOUT 60)
