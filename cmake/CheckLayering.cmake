# The one direction of flow, checked on every configure (and as the `layering` test):
# each room may include only the rooms listed for it. A violation stops the build with the
# file, the include and the rule, e.g. policies/ including platform/.
#
#   base/                 nothing of ours
#   proto/ (codexd/v1)    nothing of ours
#   policies/             base
#   platform/posix        base
#   platform/sandbox      base (the OS-neutral interface knows no backend)
#   platform/limits       base, platform/posix (resource limits: OS-neutral types, rlimit fallback)
#   platform/linux|macos  base, platform/posix, platform/sandbox, platform/limits
#   platform/backends     base, platform/* (the one place that picks a backend)
#   daemon/config         base, codexd (api_constants.h), policies, platform/posix (root-ownership check), platform/sandbox, platform/limits,
#                         daemon/exec (value types only)
#   daemon/exec           base, platform/posix, platform/sandbox (the Backend value type), platform/limits
#   daemon/network        base, platform/posix (the splice relay)
#   daemon/shim           base, platform/posix, daemon/exec (the session shim: the wire format and the output ring)
#   daemon/orchestrator   base, policies, platform/posix (identity: users, groups, credentials), platform/limits,
#                         platform/sandbox, daemon/config, daemon/exec, daemon/network
#   daemon/server         everything below it, and the generated protobuf code
#   client/               base, policies, the generated protobuf code, client
#
# Run as a script: cmake -DCODEXD_SOURCE_DIR=<repo> -P cmake/CheckLayering.cmake
set(_rooms
  "base|base"
  "policies|base"
  "platform/posix|base"
  "platform/sandbox|base"
  "platform/limits|base,platform/posix"
  "platform/linux|base,platform/posix,platform/sandbox,platform/limits"
  "platform/macos|base,platform/posix,platform/sandbox,platform/limits"
  "platform/backends|base,platform/posix,platform/sandbox,platform/limits,platform/linux,platform/macos"
  "daemon/config|base,codexd,policies,platform/posix,platform/sandbox,platform/limits,daemon/exec"
  "daemon/exec|base,platform/posix,platform/sandbox,platform/limits"
  "daemon/network|base,platform/posix"
  "daemon/shim|base,platform/posix,daemon/exec"
  "daemon/orchestrator|base,policies,platform/posix,platform/sandbox,platform/limits,daemon/config,daemon/exec,daemon/network"
  "daemon/server|base,codexd,policies,platform/posix,platform/sandbox,platform/limits,platform/linux,platform/backends,daemon/config,daemon/exec,daemon/network,daemon/orchestrator"
  "client|base,codexd,policies,client"
)

function(codexd_room_of include out)
  string(REGEX MATCH "^(platform|daemon)/[^/]+" two "${include}")
  if(two)
    set(${out} "${two}" PARENT_SCOPE)
  else()
    string(REGEX MATCH "^[^/]+" one "${include}")
    set(${out} "${one}" PARENT_SCOPE)
  endif()
endfunction()

function(codexd_check_layering source_dir)
  set(violations "")
  foreach(entry IN LISTS _rooms)
    string(REPLACE "|" ";" parts "${entry}")
    string(REPLACE "," ";" parts "${parts}")
    list(GET parts 0 room)
    set(allowed ${parts})
    file(GLOB_RECURSE files "${source_dir}/${room}/*.h" "${source_dir}/${room}/*.cc" "${source_dir}/${room}/*.in")
    foreach(file IN LISTS files)
      file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
      foreach(line IN LISTS includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" include "${line}")
        if(NOT include MATCHES "/")
          continue()  # a sibling header in the same folder
        endif()
        codexd_room_of("${include}" target)
        list(FIND allowed "${target}" found)
        if(found EQUAL -1)
          file(RELATIVE_PATH rel "${source_dir}" "${file}")
          string(APPEND violations "  ${rel}: includes \"${include}\", but ${room}/ may include only: ${allowed}\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "layering: a room includes one it must not (cmake/CheckLayering.cmake):\n${violations}")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  codexd_check_layering("${CODEXD_SOURCE_DIR}")
  message(STATUS "layering: ok")
endif()
