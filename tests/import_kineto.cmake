# Tests of the Kineto importer (storage/import_kineto.c, kineto_*.c, docs/import.md): its parts
# on small hand-made traces, and the real fixtures and bad input end to end. Without simdjson or
# zlib both say they are skipped.
if(PPS_HAVE_SIMDJSON AND PPS_HAVE_ZLIB)
  pps_unit_test(test_import_kineto pps_import_kineto pps_storage ZLIB::ZLIB)
else()
  pps_unit_test(test_import_kineto pps_import_kineto pps_storage)
endif()
pps_cli_test(import_kineto)

# The fuzz target's corpus replayed in every build (label unit), as fuzz.cmake does for nsys;
# with PPS_FUZZ=ON (clang) the libFuzzer target itself, over the same sources as
# pps_import_kineto built with the fuzzer's coverage and the sanitizers (fuzz.cmake's functions).
pps_fuzz_replay(kineto pps_import_kineto pps_storage pps_common)
if(PPS_FUZZ AND PPS_HAVE_SIMDJSON AND PPS_HAVE_ZLIB)
  pps_fuzz_library(pps_import_kineto_fuzz pps_import_kineto pps_storage_fuzz pps_common
                   SQLite::SQLite3 simdjson::simdjson ZLIB::ZLIB m)
  pps_fuzz_executable(kineto pps_import_kineto_fuzz pps_common)
endif()
