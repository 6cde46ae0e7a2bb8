// Which kind of device a backend computes on (and where its buffers live).
#pragma once

namespace tt::backend {

enum class Device { cpu, cuda };

}  // namespace tt::backend
