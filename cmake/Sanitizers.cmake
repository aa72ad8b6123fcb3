if(SWITCHBOARD_SANITIZE)
  # GCC's -fsanitize=undefined leaves out float-cast-overflow (clang's
  # includes it): name it, or a double too large for an integer cast passes
  # unnoticed in build-asan.
  set(_sanitizers address,undefined,float-cast-overflow)
  add_compile_options(-fsanitize=${_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_sanitizers})
endif()

# ThreadSanitizer, in a tree of its own (build-tsan; `make test-tsan`). It
# cannot be combined with AddressSanitizer. nats.c is not instrumented, but
# its pthread calls are intercepted, so the ordering it provides is seen.
option(SWITCHBOARD_TSAN "Build with ThreadSanitizer (make test-tsan)" OFF)
if(SWITCHBOARD_TSAN)
  if(SWITCHBOARD_SANITIZE)
    message(FATAL_ERROR "SWITCHBOARD_TSAN and SWITCHBOARD_SANITIZE need separate build trees")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
