# Benchmarks of the runtime (label bench): on the emu backend, each schedule's measured bubble
# against the simulator, ZB-H1 against 1F1B, ZB-H2's steady state with post-validation; on the cpu
# backend, tracing on against off. Prints figures, goals and MISSED; never fails on a goal.
add_executable(bench_runtime bench_runtime.c)
target_link_libraries(bench_runtime PRIVATE pps_runtime pps_analysis pps_storage m)
add_test(NAME bench_runtime COMMAND bench_runtime)
set_tests_properties(bench_runtime PROPERTIES LABELS bench RUN_SERIAL TRUE)
