# Tests of the importers (storage/import*.c, docs/import.md) and of the NVTX naming rules they
# share with the injection (storage/labels.c).
pps_unit_test(test_labels pps_storage)
# The model every importer feeds (storage/import_model.c): attribution, iterations, ranks.
pps_unit_test(test_import_model pps_storage)

# `ppscope import` end to end on the real exports of tests/fixtures/nsys (make.sh), the public
# ones in ../shared/traces (checked where they are), one written from the documentation, and
# every bad input.
add_test(NAME import_nsys
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/import_nsys.sh $<TARGET_FILE:ppscope>
                 ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/nsys
                 ${PROJECT_SOURCE_DIR}/../shared/traces/nsys_sqlite_hpcgroup_pipit)
set_tests_properties(import_nsys PROPERTIES LABELS cli SKIP_RETURN_CODE 77)
