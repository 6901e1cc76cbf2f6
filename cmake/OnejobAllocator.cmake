# The allocator onejob's executables link.
#
# A simulated run allocates a great many small, short-lived blocks: events, coroutine frames,
# boxed handlers, JSON nodes. glibc's malloc spends a quarter of a 100k-job run in its own
# bookkeeping (malloc_consolidate, unlink_chunk); tcmalloc's per-thread caches do the same work
# in less (README.md#performance has the side-by-side figures). The allocator changes no
# behaviour: no trace depends on an address, and the catalogue's hashes are the same either way.
#
# ONEJOB_MALLOC: auto (tcmalloc when found and the build is not sanitized), tcmalloc (required),
# or system (glibc's malloc). Sanitizer builds always keep the allocator the sanitizer brings.
set(ONEJOB_MALLOC "auto" CACHE STRING "Allocator for onejob's executables: auto, tcmalloc or system")
set_property(CACHE ONEJOB_MALLOC PROPERTY STRINGS auto tcmalloc system)

set(ONEJOB_MALLOC_LIBRARY "")
if(NOT ONEJOB_MALLOC MATCHES "^(auto|tcmalloc|system)$")
  message(FATAL_ERROR "ONEJOB_MALLOC is '${ONEJOB_MALLOC}': use auto, tcmalloc or system")
endif()
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  if(ONEJOB_MALLOC STREQUAL "tcmalloc")
    message(FATAL_ERROR "ONEJOB_MALLOC=tcmalloc cannot be combined with -fsanitize")
  endif()
elseif(NOT ONEJOB_MALLOC STREQUAL "system")
  # Debian's libtcmalloc-minimal4 ships the runtime only (no unversioned .so), so the versioned
  # name is searched too.
  find_library(ONEJOB_TCMALLOC NAMES tcmalloc_minimal libtcmalloc_minimal.so.4)
  if(ONEJOB_TCMALLOC)
    set(ONEJOB_MALLOC_LIBRARY "${ONEJOB_TCMALLOC}")
  elseif(ONEJOB_MALLOC STREQUAL "tcmalloc")
    message(FATAL_ERROR "ONEJOB_MALLOC=tcmalloc: libtcmalloc_minimal not found "
                        "(apt-get install libtcmalloc-minimal4)")
  endif()
endif()
if(ONEJOB_MALLOC_LIBRARY)
  message(STATUS "onejob allocator: ${ONEJOB_MALLOC_LIBRARY}")
else()
  message(STATUS "onejob allocator: the C library's (or the sanitizer's)")
endif()

# Links the chosen allocator into an executable.
function(onejob_link_allocator target)
  if(ONEJOB_MALLOC_LIBRARY)
    target_link_libraries(${target} PRIVATE "${ONEJOB_MALLOC_LIBRARY}")
  endif()
endfunction()
