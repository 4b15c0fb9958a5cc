# Benchmark of `ppscope view` (label bench): opening a 10M-span run, frame times at every zoom,
# and following a live run written at 100k spans/s. Prints figures, goals and MISSED.
add_executable(bench_view bench_view.c)
target_link_libraries(bench_view PRIVATE pps_tui pps_analysis pps_storage pps_schedule
                                         Threads::Threads m)
add_test(NAME bench_view COMMAND bench_view)
set_tests_properties(bench_view PROPERTIES LABELS bench RUN_SERIAL TRUE)
