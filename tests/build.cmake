# Tests of the test machinery and of the build itself (label build): the unit runner fails on a
# case name it does not have and stops a case at its failed check, a missing test list fails the configure, and the Makefile's targets
# behave as README.md promises (a build alone installs nothing; check and demo say what they
# install, and why, before they do; the configure summary shows; the build output is quiet).
add_test(NAME runner_unknown_case
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/runner_unknown_case.sh $<TARGET_FILE:test_strtab>)
# A binary whose cases fail and skip on purpose: the runner must stop each failed case there.
add_executable(runner_selftest unit/runner_selftest.c)
target_include_directories(runner_selftest PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(runner_selftest PRIVATE m Threads::Threads)
add_test(NAME runner_stops
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/runner_stops.sh $<TARGET_FILE:runner_selftest>)
add_test(NAME test_list_missing
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_list_missing.sh ${PROJECT_SOURCE_DIR})
add_test(NAME make_targets COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/make_targets.sh
                                   ${PROJECT_SOURCE_DIR})
set_tests_properties(runner_unknown_case runner_stops test_list_missing make_targets
                     PROPERTIES LABELS build SKIP_RETURN_CODE 77)
# The scratch configure runs the same cmake and compiler as this build.
set_tests_properties(test_list_missing PROPERTIES
                     ENVIRONMENT "CMAKE=${CMAKE_COMMAND};CC=${CMAKE_C_COMPILER}")

# What the build compiles in: the training text, found from any directory with no file lookup.
add_test(NAME run_builtin_text COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_builtin_text.sh
                                       $<TARGET_FILE:ppscope> ${PROJECT_SOURCE_DIR})
set_tests_properties(run_builtin_text PROPERTIES LABELS cli SKIP_RETURN_CODE 77)

# tests/gpu/device-check.sh's dry run: every step listed, none run, exit 77 (issue 10).
add_test(NAME device_check_dry COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/device_check_dry.sh
                                       ${PROJECT_SOURCE_DIR})
set_tests_properties(device_check_dry PROPERTIES LABELS build)

# tests/gpu/device-check.sh --rehearse: the whole script on cpu with a small model on this build
# (its steps, figures and what OUT gets), so that it works the first time a GPU is lent.
add_test(NAME device_check_rehearse COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/device_check_rehearse.sh
                                            ${PROJECT_SOURCE_DIR} $<TARGET_FILE_DIR:ppscope>)
set_tests_properties(device_check_rehearse PROPERTIES LABELS cli)
