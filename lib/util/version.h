// The project version, set once in CMakeLists.txt.
#pragma once

#include <string>

namespace tt {
std::string version();
}
