# Tests of export/ (`ppscope export`): each format's quoting, tracks, flows, the SVG's merging,
# cap and range, the file written whole or not at all (unit); the four formats parsed back by
# real parsers on simulated and emulated runs, and bad input (cli); the SVG rendered by
# rsvg-convert and its rows counted in the picture (cli, skipped without rsvg-convert).
pps_unit_test(test_export pps_export pps_analysis pps_schedule pps_storage)
pps_cli_test(export_cli)
pps_cli_test(export_render)
