if(SWITCHBOARD_SANITIZE)
  # GCC's -fsanitize=undefined leaves out float-cast-overflow (clang's
  # includes it): name it, or a double too large for an integer cast passes
  # unnoticed in build-asan (issue 8).
  set(_sanitizers address,undefined,float-cast-overflow)
  add_compile_options(-fsanitize=${_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_sanitizers})
endif()
