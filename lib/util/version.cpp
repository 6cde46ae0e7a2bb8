#include "util/version.h"

namespace tt {
std::string version() { return TT_VERSION; }
}  // namespace tt
