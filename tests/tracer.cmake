# Tests of the tracer core (tracer/ppscope/trace.h): the API case by case (test_tracer), and many
# threads, killed writers and live readers (test_tracer_load). Both run `ppscope report` on what
# they wrote, found through PPS_BIN.
pps_unit_test(test_tracer pps_tracer pps_storage Threads::Threads)
pps_unit_test(test_tracer_load pps_tracer pps_storage Threads::Threads)
set_tests_properties(test_tracer test_tracer_load PROPERTIES
                     ENVIRONMENT "PPS_BIN=$<TARGET_FILE:ppscope>")
# The load test keeps both cores busy: run it alone.
set_tests_properties(test_tracer_load PROPERTIES RUN_SERIAL TRUE TIMEOUT 300)
# Device records (CUPTI's kernels, copies, external correlations) into op spans: tracer/devmap.c.
pps_unit_test(test_devmap pps_tracer pps_storage)
# Also under the sanitizers in CI (.ci/run, label asan).
set_property(TEST test_devmap APPEND PROPERTY LABELS asan)
# TSC stamps against CLOCK_MONOTONIC (tracer/tsc.h): the line's cases, then spans recorded for
# real, once with the TSC forced and once with it off.
pps_unit_test(test_tsc pps_tracer pps_storage Threads::Threads)
set_tests_properties(test_tsc PROPERTIES ENVIRONMENT "PPSCOPE_CLOCK=tsc")
add_test(NAME test_tsc_monotonic COMMAND test_tsc test_spans_agree_with_clock_monotonic)
set_tests_properties(test_tsc_monotonic PROPERTIES ENVIRONMENT "PPSCOPE_CLOCK=monotonic"
                     LABELS unit SKIP_RETURN_CODE 77)
# The lock-free line and the converted spans under the sanitizers too (.ci/run, label asan).
set_property(TEST test_tsc APPEND PROPERTY LABELS asan)
