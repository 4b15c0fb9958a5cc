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

# TSC stamps against CLOCK_MONOTONIC over PPS_BENCH_CLOCK_S seconds (60 by default).
add_executable(bench_tracer_clock bench_tracer_clock.c)
target_link_libraries(bench_tracer_clock PRIVATE pps_tracer pps_storage)

foreach(_b bench_tracer_hotpath bench_tracer_flush bench_tracer_pipeline bench_tracer_clock)
  add_test(NAME ${_b} COMMAND ${_b})
  set_tests_properties(${_b} PROPERTIES LABELS bench RUN_SERIAL TRUE)
endforeach()
# The TSC where it is invariant (tracer/tsc.h: off by default): what the goals are set for.
set_tests_properties(bench_tracer_hotpath bench_tracer_clock PROPERTIES ENVIRONMENT
                     "PPSCOPE_CLOCK=auto")

# The NVTX injection's range against the core pair (built where the NVTX headers are).
if(TARGET ppscope_nvtx)
  add_executable(bench_nvtx_hotpath bench_nvtx_hotpath.c)
  target_include_directories(bench_nvtx_hotpath SYSTEM PRIVATE ${PPS_NVTX_INCLUDE_DIR})
  target_link_libraries(bench_nvtx_hotpath PRIVATE pps_tracer ${CMAKE_DL_LIBS})
  add_test(NAME bench_nvtx_hotpath
           COMMAND bench_nvtx_hotpath $<TARGET_FILE:ppscope_nvtx>)
  set_tests_properties(bench_nvtx_hotpath PROPERTIES LABELS bench RUN_SERIAL TRUE
                                                      ENVIRONMENT "PPSCOPE_CLOCK=auto")
endif()
