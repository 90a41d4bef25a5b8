# The test stage: the programs that other uids or sandboxed commands must execute during the
# tests, copied out of the build tree into a directory of this build's own, so that the suite
# runs from any checkout. Two things in the build tree cannot be used directly:
#   - a checkout under /tmp (or $TMPDIR): the sandbox's default writable roots. codexd refuses
#     to run its sandbox helper from inside a writable root (a sandboxed command could replace
#     it), and bwrap hides the host /tmp behind the agent's private /tmp.
#   - a checkout that other users cannot reach (an ancestor without o+x): the tests run
#     codexctl, the daemon and probes as nobody and as created users.
# The stage mirrors the build tree's layout, which is what the daemon looks for beside its
# binary (companion_program_path: codexd-shim and codexd-sandbox-helper next to codexd;
# share/codexd/default.rules beside bin/):
#   <stage>/bin/{codexd,codexctl,codexd-shim,codexd-sandbox-helper,sandbox_probe,codexd_system_rpc}
#   <stage>/share/codexd/default.rules
# Root: /var/lib/codexd-tests/<build dir name>-<hash of its path>/, root-owned, 0755 all the way
# down. Configured by someone else: /var/tmp/codexd-tests-<uid>/... (that user's own; the tests
# that need other uids skip without root anyway).
#
# The copies are made by a CTest fixture (tests/support/stage_binaries.py): the test
# `test_stage.setup` runs before every test that names CODEXD_TEST_STAGE_FIXTURE in its
# FIXTURES_REQUIRED (ctest -R pulls it in), `test_stage.cleanup` removes the stage after them.
# A test binary started by hand needs the stage made first: `ctest --test-dir build -R test_stage.setup`.

execute_process(COMMAND id -u OUTPUT_VARIABLE _codexd_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_codexd_uid STREQUAL "0" AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(_codexd_stage_root /var/lib/codexd-tests)
else()
  set(_codexd_stage_root /var/tmp/codexd-tests-${_codexd_uid})
endif()
string(SHA256 _codexd_build_hash "${CMAKE_BINARY_DIR}")
string(SUBSTRING "${_codexd_build_hash}" 0 12 _codexd_build_hash)
get_filename_component(_codexd_build_name "${CMAKE_BINARY_DIR}" NAME)
set(CODEXD_TEST_STAGE_DIR "${_codexd_stage_root}/${_codexd_build_name}-${_codexd_build_hash}" CACHE PATH
    "Where the tests copy the programs other uids and sandboxed commands execute (cmake/TestStage.cmake)")
set(CODEXD_TEST_STAGE_BIN_DIR "${CODEXD_TEST_STAGE_DIR}/bin")
set(CODEXD_TEST_STAGE_FIXTURE codexd_test_stage)

# Registers the fixture's two tests. Called once every staged target exists (tests/CMakeLists.txt).
function(codexd_add_test_stage)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(programs codexd codexctl codexd-shim codexd-sandbox-helper sandbox_probe codexd_system_rpc)
  set(copies)
  foreach(program IN LISTS programs)
    if(TARGET ${program})
      list(APPEND copies "$<TARGET_FILE:${program}>=bin/${program}")
    endif()
  endforeach()
  list(APPEND copies "${CMAKE_BINARY_DIR}/share/codexd/default.rules=share/codexd/default.rules")
  set(script ${PROJECT_SOURCE_DIR}/tests/support/stage_binaries.py)
  add_test(NAME test_stage.setup COMMAND ${Python3_EXECUTABLE} ${script} setup ${CODEXD_TEST_STAGE_DIR} ${copies})
  add_test(NAME test_stage.cleanup COMMAND ${Python3_EXECUTABLE} ${script} cleanup ${CODEXD_TEST_STAGE_DIR})
  set_tests_properties(test_stage.setup PROPERTIES FIXTURES_SETUP ${CODEXD_TEST_STAGE_FIXTURE} LABELS stage TIMEOUT 120)
  set_tests_properties(test_stage.cleanup PROPERTIES FIXTURES_CLEANUP ${CODEXD_TEST_STAGE_FIXTURE} LABELS stage TIMEOUT 60)
endfunction()
