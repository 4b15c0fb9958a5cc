pps_unit_test(test_schedule pps_schedule)
pps_unit_test(test_simulate pps_schedule)
pps_cli_test(sim_cli)
pps_cli_test(sim_from)
