# Turns a file into a C array, at build time, with CMake alone (no xxd): what compiles a shipped
# file into a library, so the program finds it with no file lookup, from any directory, installed
# or not. Run as a script:
#
#   cmake -DIN=text.txt -DOUT=text.c -DNAME=pps__text -P PpsEmbed.cmake
#
# OUT defines `const unsigned char NAME[]` (the bytes, then one NUL that is not counted, so an
# empty file still makes valid C) and `const size_t NAME_len` (the file's size in bytes).
foreach(_var IN ITEMS IN OUT NAME)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "PpsEmbed.cmake: -D${_var}=... is required")
  endif()
endforeach()

file(READ "${IN}" _hex HEX)
string(LENGTH "${_hex}" _digits)
math(EXPR _len "${_digits} / 2")
# Every byte as "0x..,", sixteen to a line (CMake's regular expressions have no {16}).
string(REPEAT "[0-9a-f][0-9a-f]" 16 _line)
string(REGEX REPLACE "(${_line})" "\\1\n" _bytes "${_hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1, " _bytes "${_bytes}")
string(REPLACE ", \n" ",\n    " _bytes "${_bytes}")
get_filename_component(_in_name "${IN}" NAME)

file(WRITE "${OUT}"
  "/* Generated from ${_in_name} by cmake/PpsEmbed.cmake at build time: do not edit. */\n"
  "#include <stddef.h>\n"
  "\n"
  "extern const unsigned char ${NAME}[];\n"
  "extern const size_t ${NAME}_len;\n"
  "\n"
  "const unsigned char ${NAME}[] = {\n"
  "    ${_bytes}0x00};\n"
  "const size_t ${NAME}_len = ${_len};\n")
