# Tests of tui/ (`ppscope view`): layout over every terminal size, the timeline index against
# brute force, the view's moves, keys and drawing without a terminal, texts never cut and unknown
# values never shown as numbers (label unit); --once and bad input through the CLI (label cli);
# the real program under tmux at fixed sizes (label tui, skipped without tmux; the live ones share
# cli/tmux_live_lib.sh).
pps_unit_test(test_tui_layout pps_tui)
pps_unit_test(test_tui_index pps_tui)
pps_unit_test(test_tui_view pps_tui pps_storage pps_schedule)
pps_unit_test(test_tui_help pps_tui pps_storage pps_schedule)
pps_unit_test(test_tui_text pps_tui pps_storage pps_schedule)
pps_unit_test(test_tui_flags pps_analysis pps_storage pps_schedule)

pps_cli_test(view_cli)
# What --max-spans keeps of a long run, and that the view says so (issue 13).
pps_cli_test(view_max_spans)
# A killed run's header says [NO WRITER], not [LIVE] forever (issue 11, item 9).
pps_cli_test(view_no_writer)

foreach(_t view_tmux view_tmux_live view_tmux_keep)
  add_test(NAME ${_t} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/${_t}.sh $<TARGET_FILE:ppscope>)
  set_tests_properties(${_t} PROPERTIES LABELS tui SKIP_RETURN_CODE 77 TIMEOUT 180)
endforeach()
# The live test's writer: a run written one iteration at a time, like a training job.
add_executable(test_tui_livewriter unit/test_tui_livewriter.c)
target_include_directories(test_tui_livewriter PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_tui_livewriter PRIVATE pps_storage pps_schedule pps_common m)
set_tests_properties(view_tmux_live view_tmux_keep PROPERTIES
                     ENVIRONMENT "PPS_LIVEWRITER=$<TARGET_FILE:test_tui_livewriter>")
# A summarised finished run opened through the index: frame for frame what reading it whole shows.
pps_cli_test(view_window)
