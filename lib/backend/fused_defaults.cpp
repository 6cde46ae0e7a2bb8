// The fused kernels' defaults (backend.h): never reached, since ops/ asks Backend::fuses() first and
// composes the primitives where a backend does not fuse; and the swish / gelu activation a device may lack.
#include "backend/backend.h"

#include "util/error.h"

namespace tt::backend {
namespace {

[[noreturn]] void not_fused(const Backend& be, const char* kernel) {
  throw InternalError(std::string(kernel) + ": backend " + be.name() + " does not fuse it in this mode");
}

}  // namespace

void Backend::residual_layer_norm_forward(float*, float*, float*, float*, uint8_t*, const float*, const float*,
                                          const float*, const float*, const float*, int64_t, int, float, float,
                                          DropoutKey) {
  not_fused(*this, "residual_layer_norm_forward");
}

void Backend::residual_layer_norm_backward(float*, float*, float*, float*, float*, const float*, const float*,
                                           const float*, const float*, const uint8_t*, const float*, int64_t, int,
                                           float, DropoutKey) {
  not_fused(*this, "residual_layer_norm_backward");
}

void Backend::attention_forward(const AttentionForwardArgs&) { not_fused(*this, "attention_forward"); }

void Backend::attention_backward(const AttentionBackwardArgs&) { not_fused(*this, "attention_backward"); }

void Backend::log_softmax_topk(float*, int32_t*, float*, float*, int64_t, int, int) {
  not_fused(*this, "log_softmax_topk");
}

// A device without the kernel refuses the model by name.
void Backend::bias_activation_forward(float*, const float*, const float*, int64_t, int, Activation a) {
  throw ConfigError(name() + " has no kernel for the " + (a == Activation::gelu ? "gelu" : "swish") +
                        " activation this model uses",
                    "run it on the CPU (--device cpu)");
}

}  // namespace tt::backend
