# Fuzzing (tests/fuzz/): one libFuzzer target per importer, and in every build a replay of each
# target's corpus through the importer (label unit), so that the seeds, and what a fuzzing run
# found and saved beside them, keep importing without a crash. The fuzzing itself is not a test:
# `make fuzz` builds with clang and -DPPS_FUZZ=ON and runs each target for FUZZ_SECONDS.
option(PPS_FUZZ "Build the libFuzzer targets (needs clang)" OFF)

if(PPS_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PPS_FUZZ needs clang's libFuzzer: configure with CC=clang")
endif()

# The three pieces of a target, shared by the importers' (here and import_kineto.cmake), so that
# they are built and sanitized alike.
#
# pps_fuzz_replay(NAME LIBS...): fuzz/fuzz_import_NAME.c as a replayer, fuzz_replay_NAME, and the
# ctest of the same name over its corpus, fuzz/corpus/NAME.
function(pps_fuzz_replay name)
  add_executable(fuzz_replay_${name} fuzz/fuzz_import_${name}.c)
  target_link_libraries(fuzz_replay_${name} PRIVATE ${ARGN})
  add_test(NAME fuzz_replay_${name}
           COMMAND fuzz_replay_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS unit)
endfunction()

# pps_fuzz_library(LIB FROM LIBS...): the code under test, built again with the fuzzer's coverage
# and the sanitizers: LIB from the same sources as the target FROM, so that nothing is left out
# of the fuzzing by a list kept here; LIBS are what it links.
function(pps_fuzz_library lib from)
  get_target_property(_srcs ${from} SOURCES)
  get_target_property(_dir ${from} SOURCE_DIR)
  list(TRANSFORM _srcs PREPEND ${_dir}/)
  add_library(${lib} STATIC ${_srcs})
  target_include_directories(${lib} PUBLIC ${_dir})
  target_link_libraries(${lib} PUBLIC ${ARGN})
  target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                                        -fno-omit-frame-pointer)
endfunction()

# pps_fuzz_executable(NAME LIBS...): fuzz/fuzz_import_NAME.c as the libFuzzer target
# fuzz_import_NAME, linked with LIBS (pps_fuzz_library's).
function(pps_fuzz_executable name)
  add_executable(fuzz_import_${name} fuzz/fuzz_import_${name}.c)
  target_compile_definitions(fuzz_import_${name} PRIVATE PPS_LIBFUZZER)
  target_compile_options(fuzz_import_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_import_${name} PRIVATE ${ARGN})
  target_link_options(fuzz_import_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
endfunction()

pps_fuzz_replay(nsys pps_storage pps_common)
if(PPS_FUZZ)
  pps_fuzz_library(pps_storage_fuzz pps_storage pps_common SQLite::SQLite3 Threads::Threads m)
  pps_fuzz_executable(nsys pps_storage_fuzz pps_common)
endif()
