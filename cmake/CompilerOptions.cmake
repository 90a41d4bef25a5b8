# Warnings are errors everywhere in our own code.
add_compile_options(-Wall -Wextra -Werror)

set(CODEXD_SANITIZE_COMPILE_OPTIONS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
if(CODEXD_SANITIZE)
  add_compile_options(${CODEXD_SANITIZE_COMPILE_OPTIONS})
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(CODEXD_SANITIZE=1)
endif()
# libFuzzer needs coverage from the code under test, not only from the fuzz target: every
# library the targets link is instrumented; tests/fuzz adds -fsanitize=fuzzer to the targets.
if(CODEXD_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined)
endif()

# Hardening for the binaries we ship.
add_compile_options(-fstack-protector-strong)
set(CODEXD_FORTIFY_DEFINITION $<$<NOT:$<CONFIG:Debug>>:_FORTIFY_SOURCE=2>)
add_compile_definitions(${CODEXD_FORTIFY_DEFINITION})
add_link_options(-Wl,-z,relro,-z,now)

# Test sources (tests/) are compiled for build speed: without optimisation, debug info or
# sanitizer instrumentation. They are most of the build's compile time (gtest, gmock and gRPC
# headers in every file; measured: a test file takes 25 s at -O2, 9 s at -O0) and none of the
# code under test. What the tests exercise keeps its flags: every product library they link
# and every binary they start (codexd, the sandbox helper, codexctl) is -O2 in Release and
# ASan+UBSan in the sanitizer build, whose link flags the test executables keep.
macro(codexd_use_test_compile_options)
  get_directory_property(_codexd_options COMPILE_OPTIONS)
  list(REMOVE_ITEM _codexd_options ${CODEXD_SANITIZE_COMPILE_OPTIONS})
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "${_codexd_options}")
  get_directory_property(_codexd_definitions COMPILE_DEFINITIONS)
  list(REMOVE_ITEM _codexd_definitions ${CODEXD_FORTIFY_DEFINITION})  # glibc refuses it at -O0
  set_directory_properties(PROPERTIES COMPILE_DEFINITIONS "${_codexd_definitions}")
  add_compile_options(-O0 -g0)
endmacro()
