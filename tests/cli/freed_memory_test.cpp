// return_large_frees_to_system: a large block freed no longer raises glibc's mapping limit, so a later,
// smaller large block still gets a mapping of its own (returned to the system when freed) instead of heap
// memory that stays resident.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "cli/freed_memory.h"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#define TT_GLIBC_MALLOC 1
#endif

namespace {

void* touched(size_t bytes) {  // written, so that the compiler keeps the allocation
  void* p = std::malloc(bytes);
  REQUIRE(p);
  static_cast<volatile char*>(p)[0] = 1;
  return p;
}

}  // namespace

TEST_CASE("after return_large_frees_to_system, a 1 MiB block is mapped even after a 16 MiB one was freed", "[cli]") {
#if defined(TT_GLIBC_MALLOC)
  tt::cli::return_large_frees_to_system();
  std::free(touched(size_t{16} << 20));  // by default this raises the limit to 16 MiB
  const size_t before = mallinfo2().hblkhd;
  void* block = touched(size_t{1} << 20);
  const size_t mapped = mallinfo2().hblkhd - before;
  std::free(block);
  CHECK(mapped >= (size_t{1} << 20));
#else
  WARN("not glibc's malloc (or a sanitizer's): nothing to check");
#endif
}
