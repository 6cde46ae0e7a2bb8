#include "cli/freed_memory.h"

#include <cstdlib>  // defines __GLIBC__ where it applies

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tt::cli {

void return_large_frees_to_system() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);  // setting it also stops glibc from raising it
#endif
}

}  // namespace tt::cli
