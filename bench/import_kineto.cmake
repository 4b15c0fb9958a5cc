# Benchmark of the Kineto importer (label bench): a generated 1 GB trace (kineto_gen, plain and
# gzip) imported against its raw streaming parse in the same run; events/s, MB/s, peak RSS per
# span kept. Prints figures, goals and MISSED; never fails on a goal. The parser comparison that
# chose simdjson is bench_json.sh (docs/import.md).
if(PPS_HAVE_ZLIB)
  add_executable(kineto_gen kineto_gen.c)
  target_link_libraries(kineto_gen PRIVATE ZLIB::ZLIB m)
  add_executable(bench_import_kineto bench_import_kineto.c)
  target_link_libraries(bench_import_kineto PRIVATE pps_import_kineto pps_storage pps_common)
  add_test(NAME bench_import_kineto
           COMMAND bench_import_kineto $<TARGET_FILE:kineto_gen> ${CMAKE_CURRENT_BINARY_DIR}/kineto
                   1000)
  set_tests_properties(bench_import_kineto PROPERTIES LABELS bench RUN_SERIAL TRUE
                                                      SKIP_RETURN_CODE 77)
endif()
