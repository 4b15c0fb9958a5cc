# One AUTO/ON/OFF switch per optional dependency (the curl way). AUTO uses the dependency when it
# is found, ON fails the configure when it is not, OFF never looks. The result is PPS_HAVE_<NAME>,
# written into the generated pps_config.h. Each result is noted for pps_summary(), which prints
# them together at the end of the configure: one short block a user reads, not a line per check.
function(pps_option name doc)
  set(PPS_WITH_${name} AUTO CACHE STRING "${doc} (AUTO, ON or OFF)")
  set_property(CACHE PPS_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
  set_property(GLOBAL PROPERTY PPS_DOC_${name} "${doc}")
endfunction()

# pps_note(NAME HAVE WHY [DOC]): records one entry of the summary; HAVE is 1 or 0, WHY says why
# not; DOC says what it is for, where no pps_option() said it (a dependency without a switch).
function(pps_note name have why)
  if(ARGC GREATER 3)
    set_property(GLOBAL PROPERTY PPS_DOC_${name} "${ARGV3}")
  endif()
  set_property(GLOBAL APPEND PROPERTY PPS_NOTED ${name})
  set_property(GLOBAL PROPERTY PPS_NOTE_HAVE_${name} ${have})
  set_property(GLOBAL PROPERTY PPS_NOTE_WHY_${name} "${why}")
endfunction()

# pps_resolve(NAME FOUND [WHY]): sets PPS_HAVE_<NAME> in the caller from the switch and FOUND;
# WHY says why it was not found where "not found" would not be true (it needs CUDA, say).
macro(pps_resolve name found)
  if(PPS_WITH_${name} STREQUAL "OFF")
    set(PPS_HAVE_${name} 0)
    pps_note(${name} 0 "switched off: PPS_WITH_${name}=OFF")
  elseif(${found})
    set(PPS_HAVE_${name} 1)
    pps_note(${name} 1 "")
  elseif(PPS_WITH_${name} STREQUAL "ON")
    message(FATAL_ERROR "PPS_WITH_${name}=ON but ${name} was not found")
  else()
    set(PPS_HAVE_${name} 0)
    if(${ARGC} GREATER 2)
      pps_note(${name} 0 "${ARGV2}")
    else()
      pps_note(${name} 0 "not found")
    endif()
  endif()
  message(VERBOSE "ppscope: ${name} ${PPS_WITH_${name}} -> ${PPS_HAVE_${name}}")
endmacro()

# pps_summary(): what this configure found, as a NOTICE, so that `cmake --log-level=NOTICE` (the
# Makefile's quiet configure) still shows it while hiding CMake's own progress lines:
#
#   ppscope 0.1.0: RelWithDebInfo, GNU 12.2.0, warnings are errors (PPS_WERROR=ON)
#     with:    CUDA CUBLAS CUPTI NCCL MPI BLAS CURSES NVTX
#     without: -
#
# and for each dependency not used, a line saying what is missing and why.
function(pps_summary)
  get_property(_names GLOBAL PROPERTY PPS_NOTED)
  set(_with "")
  set(_without "")
  foreach(_n IN LISTS _names)
    get_property(_have GLOBAL PROPERTY PPS_NOTE_HAVE_${_n})
    if(_have)
      string(APPEND _with " ${_n}")
    else()
      get_property(_doc GLOBAL PROPERTY PPS_DOC_${_n})
      get_property(_why GLOBAL PROPERTY PPS_NOTE_WHY_${_n})
      string(LENGTH "${_n}" _w)
      math(EXPR _pad "10 - ${_w}")
      set(_sp "")
      if(_pad GREATER 0)
        string(REPEAT " " ${_pad} _sp)
      endif()
      string(APPEND _without "\n    ${_n}${_sp}${_doc} (${_why})")
    endif()
  endforeach()
  if(_with STREQUAL "")
    set(_with " -")
  endif()
  if(_without STREQUAL "")
    set(_without " -")
  endif()
  if(PPS_WERROR)
    set(_werror "warnings are errors (PPS_WERROR=ON)")
  else()
    set(_werror "warnings are not errors (PPS_WERROR=OFF)")
  endif()
  set(_type "${CMAKE_BUILD_TYPE}")
  if(_type STREQUAL "")
    set(_type "multi-config")
  endif()
  message(NOTICE "ppscope ${PROJECT_VERSION}: ${_type}, ${CMAKE_C_COMPILER_ID} "
                 "${CMAKE_C_COMPILER_VERSION}, ${_werror}\n"
                 "  with:   ${_with}\n"
                 "  without:${_without}")
endfunction()
