# Compiler cache and warning policy shared by every onejob target.

find_program(ONEJOB_CCACHE ccache)
if(ONEJOB_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${ONEJOB_CCACHE}")
endif()

# clang 14 (the sanitized and libFuzzer presets): Boost 1.74 does not detect its C++20 coroutines
# over libstdc++, so Asio's awaitables are switched on by hand; and UBSan's `function` check
# cannot be assembled around coroutines at -O0 ("Cannot represent a difference across
# sections"), so it is left out (GCC has no such check).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_compile_definitions(BOOST_ASIO_HAS_CO_AWAIT=1 BOOST_ASIO_HAS_STD_COROUTINE=1)
  if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*undefined")
    add_compile_options(-fno-sanitize=function)
  endif()
endif()

# Our own code builds with warnings as errors; third-party headers come from imported
# targets or /usr/include and are therefore system includes, exempt from these flags.
add_library(onejob_warnings INTERFACE)
target_compile_options(onejob_warnings INTERFACE -Wall -Wextra -Werror -Wpedantic -Wshadow
                                                 -Wnon-virtual-dtor -Wold-style-cast)

# Every onejob target includes headers by their path from the repository root,
# e.g. "system/domain/job.hpp".
add_library(onejob_root_includes INTERFACE)
target_include_directories(onejob_root_includes INTERFACE "${PROJECT_SOURCE_DIR}")

add_compile_definitions(BOOST_ASIO_NO_DEPRECATED)

# Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>; whether a file
# compiles must not depend on include order (which clang-format may change), so every
# translation unit gets <utility> first.
target_compile_options(onejob_root_includes INTERFACE -include utility)

include(${CMAKE_CURRENT_LIST_DIR}/OnejobUnity.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/OnejobAllocator.cmake)
