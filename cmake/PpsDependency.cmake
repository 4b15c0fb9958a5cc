# One AUTO/ON/OFF switch per optional dependency (the curl way). AUTO uses the dependency when it
# is found, ON fails the configure when it is not, OFF never looks. The result is PPS_HAVE_<NAME>,
# written into the generated pps_config.h.
function(pps_option name doc)
  set(PPS_WITH_${name} AUTO CACHE STRING "${doc} (AUTO, ON or OFF)")
  set_property(CACHE PPS_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# pps_resolve(NAME FOUND): sets PPS_HAVE_<NAME> in the caller from the switch and FOUND.
macro(pps_resolve name found)
  if(PPS_WITH_${name} STREQUAL "OFF")
    set(PPS_HAVE_${name} 0)
  elseif(${found})
    set(PPS_HAVE_${name} 1)
  elseif(PPS_WITH_${name} STREQUAL "ON")
    message(FATAL_ERROR "PPS_WITH_${name}=ON but ${name} was not found")
  else()
    set(PPS_HAVE_${name} 0)
  endif()
  message(STATUS "ppscope: ${name} ${PPS_WITH_${name}} -> ${PPS_HAVE_${name}}")
endmacro()
