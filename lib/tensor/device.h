// Where a buffer lives.
#pragma once

#include <string>

namespace tt::tensor {

enum class Device { cpu, cuda };

inline std::string device_name(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

}  // namespace tt::tensor
