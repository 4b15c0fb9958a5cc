# Tests of the tracer's launcher environment, clock sync and packaging: the launcher table (unit),
# clock offsets between two MPI ranks (mpi; skipped without MPI or mpirun), and the installed
# library used by a project outside the tree (cli).
pps_unit_test(test_launcher_env pps_tracer)

add_executable(test_clock_sync unit/test_clock_sync.c)
target_include_directories(test_clock_sync PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_clock_sync PRIVATE pps_tracer pps_storage pps_common m)
if(PPS_HAVE_MPI)
  target_link_libraries(test_clock_sync PRIVATE MPI::MPI_C)
endif()
add_test(NAME clock_sync_mpi
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/clock_sync_mpi.sh $<TARGET_FILE:test_clock_sync>
                 ${PPS_HAVE_MPI} "${MPIEXEC_EXECUTABLE}")
# Two ranks that time a barrier want the machine's two cores to themselves.
set_tests_properties(clock_sync_mpi PROPERTIES LABELS mpi SKIP_RETURN_CODE 77 TIMEOUT 120
                                               PROCESSORS 2)

add_test(NAME trace_install
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/trace_install.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/tracer/trace_api.txt)
# A sanitized library loads only into a sanitized program: the consumers get the same flags.
set(_consumer_flags "")
if(PPS_SANITIZE)
  set(_consumer_flags "-fsanitize=address,undefined")
endif()
set_tests_properties(trace_install PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300
                     ENVIRONMENT "CC=${CMAKE_C_COMPILER};PPS_CONSUMER_FLAGS=${_consumer_flags}")
