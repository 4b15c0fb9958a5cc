# The importers' benchmark (label bench): `ppscope import` of a generated 2M-event Nsight Systems
# export against SQLite's own scan of the same rows, and its peak memory per span kept.
add_executable(bench_import bench_import.c)
target_link_libraries(bench_import PRIVATE pps_storage SQLite::SQLite3)
add_test(NAME bench_import COMMAND bench_import)
set_tests_properties(bench_import PROPERTIES LABELS bench RUN_SERIAL TRUE)
