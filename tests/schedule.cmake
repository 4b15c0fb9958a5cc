pps_unit_test(test_schedule pps_schedule)
pps_unit_test(test_simulate pps_schedule)
pps_unit_test(test_zb_auto pps_schedule)
pps_cli_test(zb_auto)
pps_cli_test(sim_cli)
pps_cli_test(sim_from)
# The what-if is checked against emulated runs' timing: alone, as the other timing tests are.
set_tests_properties(sim_from PROPERTIES RUN_SERIAL TRUE)
pps_unit_test(test_dualpipev pps_schedule)
pps_unit_test(test_sched_text pps_schedule)
pps_cli_test(schedule_file)
# zb-auto's emulated run is judged against its prediction: alone, as the other timing tests are.
set_tests_properties(zb_auto PROPERTIES RUN_SERIAL TRUE)
