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
