# Fuzzing (tests/fuzz/): one libFuzzer target per importer and one of the shard reader, and in
# every build a replay of each target's corpus through its code (label unit), so that the seeds,
# and what a fuzzing run found and saved beside them, keep being read without a crash. The fuzzing itself is not a test:
# `make fuzz` builds with clang and -DPPS_FUZZ=ON and runs each target for FUZZ_SECONDS.
option(PPS_FUZZ "Build the libFuzzer targets (needs clang)" OFF)

if(PPS_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PPS_FUZZ needs clang's libFuzzer: configure with CC=clang")
endif()

# The three pieces of a target, shared by the importers' (here and import_kineto.cmake), so that
# they are built and sanitized alike.
#
# The target of NAME: fuzz_import_NAME for an importer, fuzz_NAME for what is none (the shard
# reader), as its source file under fuzz/ is named.
function(_pps_fuzz_target name out)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_import_${name}.c)
    set(${out} fuzz_import_${name} PARENT_SCOPE)
  else()
    set(${out} fuzz_${name} PARENT_SCOPE)
  endif()
endfunction()

# pps_fuzz_replay(NAME LIBS...): fuzz/fuzz_import_NAME.c (or fuzz/fuzz_NAME.c) as a replayer,
# fuzz_replay_NAME, and the ctest of the same name over its corpus, fuzz/corpus/NAME.
function(pps_fuzz_replay name)
  _pps_fuzz_target(${name} _t)
  add_executable(fuzz_replay_${name} fuzz/${_t}.c)
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

# pps_fuzz_executable(NAME LIBS...): fuzz/fuzz_import_NAME.c (or fuzz/fuzz_NAME.c) as the
# libFuzzer target of the same name, linked with LIBS (pps_fuzz_library's).
function(pps_fuzz_executable name)
  _pps_fuzz_target(${name} _t)
  add_executable(${_t} fuzz/${_t}.c)
  target_compile_definitions(${_t} PRIVATE PPS_LIBFUZZER)
  target_compile_options(${_t} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${_t} PRIVATE ${ARGN})
  target_link_options(${_t} PRIVATE -fsanitize=fuzzer,address,undefined)
endfunction()

# The shard reader (pps_run_load(), behind report, view and merge) and the Nsight importer.
pps_fuzz_replay(shard pps_storage pps_common)
pps_fuzz_replay(nsys pps_storage pps_common)
if(PPS_FUZZ)
  pps_fuzz_library(pps_storage_fuzz pps_storage pps_common SQLite::SQLite3 Threads::Threads m)
  pps_fuzz_executable(shard pps_storage_fuzz pps_common)
  pps_fuzz_executable(nsys pps_storage_fuzz pps_common)
endif()

# The schedule file reader (schedule/text_read.c: sim and run --schedule-file). fuzz_common.h's
# replayer includes the importers' header: pps_storage for its path only.
pps_fuzz_replay(sched_text pps_schedule pps_storage pps_common)
if(PPS_FUZZ)
  pps_fuzz_library(pps_schedule_fuzz pps_schedule pps_common m)
  pps_fuzz_executable(sched_text pps_schedule_fuzz pps_storage pps_common)
endif()
