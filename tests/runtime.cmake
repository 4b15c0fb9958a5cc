# Tests of runtime/'s executor, optimizer, emu backend and run orchestration, and of `ppscope run`.
#   test_executor             pps_run on cpu: post-validation bitwise equal to sync (clipping, an
#                             injected inf), gradients of every schedule against the reference,
#                             the loss falling over 200 iterations of the default text, a W
#                             budget bounding pending W's with the parameters bitwise unchanged
#   test_executor_emu         emu ops sleep their time, the link model, and every schedule's
#                             measured bubble within 5 points of the simulator (bench/ has 2)
#   test_executor_collective  the non-blocking sum and the abort op of the threads transport
#   test_diagnosis            faults of known size (a slow stage, a slow link, stage threads on
#                             one core) named at their size, and nothing flagged on clean runs
#   run_check_grads           `ppscope run --check-grads` bitwise, many p, m, v and partitions
#   run_bad_input, run_fail   exit 2 with one line for each impossible flag combination; a stage
#                             that fails stops the others and leaves a readable, incomplete run
#   run_ab                    --schedule 1f1b,zb-h1,zb-h2 on emu: a run and a row per schedule,
#                             the summary's figures the report's (sync and post-validated)
#   run_host                  the warning for more stage threads than cores, the report's host
#                             figures, no untrue note about spans
#   run_budget                --w-budget / --act-budget-mib: gradients still bitwise, every
#                             stage's recorded peak of pending W's within its bound, bad budgets
#   run_check_grads_mpi       the same gradient check under mpirun, world size != p, a failing
#                             rank (label mpi; skipped without MPI or mpirun)
#   run_faults                a full disk (a 2 MiB tmpfs, else the injected one), SIGTERM and
#                             SIGKILL of a threads run: the exit, the one line, the spans kept
#                             and lost and the missing iterations, each exactly
#   run_faults_mpi            the full disk under mpirun -np 2, and a rank killed (label mpi)
pps_unit_test(test_executor pps_runtime pps_storage)
pps_unit_test(test_executor_emu pps_runtime pps_analysis pps_storage)
pps_unit_test(test_executor_collective pps_runtime Threads::Threads)
pps_unit_test(test_diagnosis pps_runtime pps_analysis pps_storage Threads::Threads)
# Emulated timings are measured against the clock: they want the machine to themselves.
set_tests_properties(test_executor_emu test_diagnosis PROPERTIES RUN_SERIAL TRUE)

foreach(_t run_check_grads run_bad_input run_fail run_ab run_budget run_host run_faults)
  pps_cli_test(${_t})
endforeach()
add_test(NAME run_faults_mpi
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_faults.sh $<TARGET_FILE:ppscope> mpi
                 "${PPS_HAVE_MPI}" "${MPIEXEC_EXECUTABLE}")
set_tests_properties(run_faults_mpi PROPERTIES LABELS mpi SKIP_RETURN_CODE 77 TIMEOUT 600
                                               PROCESSORS 2)
set_tests_properties(run_ab run_budget PROPERTIES RUN_SERIAL TRUE)

add_test(NAME run_check_grads_mpi
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_check_grads.sh $<TARGET_FILE:ppscope> mpi
                 "${PPS_HAVE_MPI}" "${MPIEXEC_EXECUTABLE}")
set_tests_properties(run_check_grads_mpi PROPERTIES LABELS mpi SKIP_RETURN_CODE 77 TIMEOUT 600
                                                    PROCESSORS 2)
# run_cuda: --backend cuda with --check-grads on every schedule where there is a GPU; here, the
# one-line refusal (exit 2), then skipped (77).
pps_cli_test(run_cuda)
set_tests_properties(run_cuda PROPERTIES LABELS "cli;gpu")
# gpu_libraries: what the CUDA libraries (libppscope_cuda.so, libppscope_nccl.so) link and export,
# and that ppscope links none of them; no GPU needed.
pps_cli_test(gpu_libraries)
set_tests_properties(gpu_libraries PROPERTIES LABELS "cli;build")
