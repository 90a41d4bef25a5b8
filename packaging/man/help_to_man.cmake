# Renders `PROGRAM --help` (and `PROGRAM SUB --help` for each CLI11 subcommand) as a gzipped
# roff man page, so the package documents every flag without extra build tools.
#   cmake -DPROGRAM=... -DNAME=codexd -DSECTION=8 -DSUMMARY=... -DVERSION=... -DOUTPUT=x.8.gz -P help_to_man.cmake
foreach(var PROGRAM NAME SECTION SUMMARY VERSION OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "help_to_man.cmake: ${var} is not set")
  endif()
endforeach()

function(run_help out)
  execute_process(COMMAND ${PROGRAM} ${ARGN} --help
    OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGN} --help failed (${rc}): ${err}")
  endif()
  # Usage lines name the build-tree path; the page names the installed program.
  string(REPLACE "Usage: ${PROGRAM}" "Usage: ${NAME}" text "${text}")
  # roff: escape backslashes; a line starting with . or ' would be a request.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

run_help(main_help)
string(TOUPPER "${NAME}" upper)
set(page ".TH ${upper} ${SECTION} \"\" \"${NAME} ${VERSION}\" \"codexd\"\n")
string(APPEND page ".SH NAME\n${NAME} \\- ${SUMMARY}\n")
string(APPEND page ".SH OPTIONS\n.nf\n${main_help}.fi\n")

# CLI11 lists subcommands as "  name   description" after a "Subcommands:" line.
string(FIND "${main_help}" "Subcommands:\n" at)
if(NOT at EQUAL -1)
  string(SUBSTRING "${main_help}" ${at} -1 section)
  string(REGEX MATCHALL "\n  [a-z][a-z0-9-]*" names "${section}")
  foreach(entry IN LISTS names)
    string(STRIP "${entry}" sub)
    run_help(sub_help ${sub})
    string(APPEND page ".SH \"${upper} ${sub}\"\n.nf\n${sub_help}.fi\n")
  endforeach()
endif()
string(APPEND page ".SH SEE ALSO\n/usr/share/doc/codexd/service.md\n")

get_filename_component(out_dir "${OUTPUT}" DIRECTORY)
string(REGEX REPLACE "\\.gz$" "" plain "${OUTPUT}")
file(WRITE "${plain}" "${page}")
execute_process(COMMAND gzip -9nf "${plain}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${plain} failed")
endif()
