# Benchmarks of the tracer core (label bench): the hot path against two clock reads, the flusher
# against a bare SQLite insert loop, and tracing on/off on a synthetic spin-wait pipeline. Each
# prints its figures, their goals, and MISSED for a goal it missed, without failing.
add_executable(bench_tracer_hotpath bench_tracer_hotpath.c)
target_link_libraries(bench_tracer_hotpath PRIVATE pps_tracer)

add_executable(bench_tracer_flush bench_tracer_flush.c)
target_link_libraries(bench_tracer_flush PRIVATE pps_tracer pps_storage SQLite::SQLite3
                                                 Threads::Threads)

add_executable(bench_tracer_pipeline bench_tracer_pipeline.c)
target_link_libraries(bench_tracer_pipeline PRIVATE pps_tracer pps_schedule Threads::Threads)

foreach(_b bench_tracer_hotpath bench_tracer_flush bench_tracer_pipeline)
  add_test(NAME ${_b} COMMAND ${_b})
  set_tests_properties(${_b} PROPERTIES LABELS bench RUN_SERIAL TRUE)
endforeach()
