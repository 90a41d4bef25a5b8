# Warnings are errors everywhere in our own code.
add_compile_options(-Wall -Wextra -Werror)

if(CODEXD_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(CODEXD_SANITIZE=1)
endif()

# Hardening for the binaries we ship.
add_compile_options(-fstack-protector-strong)
add_compile_definitions($<$<NOT:$<CONFIG:Debug>>:_FORTIFY_SOURCE=2>)
add_link_options(-Wl,-z,relro,-z,now)
