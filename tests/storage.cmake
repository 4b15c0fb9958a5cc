# Tests of storage/: the trace store's unit tests, and `ppscope merge` driven through the CLI on a
# run written by pps_mkrun (a small helper that writes a run with the writer API).
pps_unit_test(test_storage pps_storage)
pps_unit_test(test_storage_bad pps_storage)
pps_unit_test(test_storage_follow pps_storage Threads::Threads)
# storage/run_build.h: the rows-to-run path the loader and the follower share.
pps_unit_test(test_run_build pps_storage SQLite::SQLite3)
set_property(TEST test_run_build APPEND PROPERTY LABELS asan)
# pps_run_load_window(): a window of a run, through the index, equals the full load filtered.
pps_unit_test(test_storage_window pps_storage SQLite::SQLite3)
# Also under the sanitizers in CI (.ci/run, label asan): a new way of reading files.
set_property(TEST test_storage_window APPEND PROPERTY LABELS asan)
# pps_run_drop_before(): what `ppscope view --max-spans` keeps of a long run, and its report.
pps_unit_test(test_storage_trim pps_storage pps_analysis)
# common/pps_strtab.h: the name table the writer (and the tracer) intern through.
pps_unit_test(test_strtab)

add_executable(pps_mkrun unit/mkrun.c)
target_link_libraries(pps_mkrun PRIVATE pps_storage pps_common)

pps_cli_test(merge_and_bad_input)
# The bad-input corpus (issue 11), made from a simulated run by sqlite3 statements: every reader
# refuses every case with one line naming the file and the column.
pps_cli_test(bad_shards)
# What is wrong with the files themselves (a symlink loop, a FIFO, no permission, a damaged
# header) is bad input too: exit 2 and one line from every reader (issue 11, item 9).
pps_cli_test(bad_paths)
# Reports of a run that is starting never take a shard being created for a damaged one (item 8).
pps_cli_test(report_starting_run)
pps_cli_test(damaged_pages)
set_tests_properties(merge_and_bad_input PROPERTIES ENVIRONMENT "PPS_MKRUN=$<TARGET_FILE:pps_mkrun>")
# What merge refuses for the merged file's own constraints, named as it is (issue 11, item 8).
pps_cli_test(merge_constraints)
set_tests_properties(merge_constraints PROPERTIES ENVIRONMENT "PPS_MKRUN=$<TARGET_FILE:pps_mkrun>")
# A run is its own shards, all of them: missing ranks said, two runs in one directory refused
# (issue 11, item 2); a finished run is its shard files alone, read-only media too (item 10).
pps_cli_test(run_identity)
pps_cli_test(run_files_only)
# `ppscope gather`: a 4-rank mpirun whose ranks write one directory per emulated host, gathered
# live into one run (label mpi; its bad-input checks run everywhere, the job where MPI is).
add_test(NAME gather
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/gather.sh $<TARGET_FILE:ppscope>
                 "${PPS_HAVE_MPI}" "${MPIEXEC_EXECUTABLE}")
set_tests_properties(gather PROPERTIES LABELS "cli;mpi" SKIP_RETURN_CODE 77 TIMEOUT 600
                                       PROCESSORS 2)
