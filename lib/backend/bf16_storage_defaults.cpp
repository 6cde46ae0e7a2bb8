// The bf16 storage calls of the Backend base class (backend.h). The primitives throw: bf16_storage() is
// false on a backend without them, so a layer never stores an activation in bf16 there, and reaching one
// is a bug in the caller.
#include "backend/backend.h"

#include "util/error.h"

namespace tt::backend {
namespace {

[[noreturn]] void no_bf16_storage(const Backend& be, const char* call) {
  throw InternalError(std::string(call) + ": backend " + be.name() + " stores no bf16 activations");
}

}  // namespace

void Backend::round_to_bf16(uint16_t*, const float*, int, int, int64_t, int64_t, MatrixStrides) {
  no_bf16_storage(*this, "round_to_bf16");
}

void Backend::bias_relu_dropout_forward_bf16(uint16_t*, const float*, const float*, int64_t, int, float, DropoutKey) {
  no_bf16_storage(*this, "bias_relu_dropout_forward_bf16");
}

void Backend::dropout_forward_bf16(uint16_t*, const float*, int64_t, float, DropoutKey) {
  no_bf16_storage(*this, "dropout_forward_bf16");
}

void Backend::relu_dropout_backward_bf16(float*, const float*, const uint16_t*, int64_t, float) {
  no_bf16_storage(*this, "relu_dropout_backward_bf16");
}

void Backend::gemm_bf16_operand(bool, bool, int, int, int, float, const void*, int64_t, bool, const void*, int64_t,
                                bool, float, float*, int64_t) {
  no_bf16_storage(*this, "gemm_bf16_operand");
}

void Backend::gemm_batched_bf16_operand(bool, bool, int, int, int, int, int, float, const void*, MatrixStrides, bool,
                                        const void*, MatrixStrides, bool, float, float*, MatrixStrides) {
  no_bf16_storage(*this, "gemm_batched_bf16_operand");
}

}  // namespace tt::backend
