# The analysis module's tests: measured bubbles against hand-made runs and the simulator, the
# evidence the diagnosis takes (links, host, partial iterations), and `ppscope report` end to end.
pps_unit_test(test_analysis pps_analysis pps_schedule pps_storage)
pps_unit_test(test_analysis_evidence pps_analysis pps_schedule pps_storage)
# The bubble by phase: the report's split of a simulated run is the simulator's own.
pps_unit_test(test_phase pps_analysis pps_schedule pps_storage)
pps_cli_test(report_phases)
pps_cli_test(report_cli)
pps_cli_test(report_memory)
# report_device: the bubble on the device, against a known answer and the shared real traces.
pps_cli_test(report_device)
# `ppscope compare A B`: against the simulator's known bubble and idle, and emu runs.
pps_cli_test(compare_cli)
pps_unit_test(test_critpath pps_analysis pps_schedule pps_storage)
# A report from its summary is the report from the spans, bit for bit; damaged bytes are refused.
pps_unit_test(test_summary pps_analysis pps_schedule pps_storage)
set_property(TEST test_summary APPEND PROPERTY LABELS asan)
pps_cli_test(critical_path)
if(TARGET pps_mkrun)
  set_tests_properties(report_cli PROPERTIES ENVIRONMENT "PPS_MKRUN=$<TARGET_FILE:pps_mkrun>")
endif()
# Text out of a run on its way to a terminal (common/pps_text.h), and hostile metadata, names
# and paths through report, report --json, view --once, merge, import, export and run.
pps_unit_test(test_text)
pps_cli_test(hostile_text)
# `ppscope rebalance RUN`: the suggested partition's measured gain against the predicted one.
pps_cli_test(rebalance)
set_tests_properties(rebalance PROPERTIES RUN_SERIAL TRUE)
# Also under the sanitizers in CI (.ci/run, label asan).
set_property(TEST report_device APPEND PROPERTY LABELS asan)
# The run's summary: reports from it equal reports from the spans, byte for byte.
add_test(NAME report_summary COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/report_summary.sh
                                     $<TARGET_FILE:ppscope> ${CMAKE_CURRENT_SOURCE_DIR}/fixtures)
set_tests_properties(report_summary PROPERTIES LABELS cli SKIP_RETURN_CODE 77)
