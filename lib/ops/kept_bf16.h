// A product operand kept in bf16 from one product to a later one (Backend::keep_bf16_operand), as a
// move-only token: a layer keeps what its backward reads again, holds the token in its saved state, and
// releases it in backward once the last reader is done (or the token releases itself when destroyed).
// Releasing early matters: the backend's copies live on a stack that backward unwinds. A token that
// outlives its training step is a bug (the trainer checks after every step that none is alive).
// No effect outside a bf16 training step, on undefined tensors, or on bf16 tensors (their own copy).
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "tensor/tensor.h"

namespace tt::ops {

class KeptBf16 {
 public:
  KeptBf16() = default;
  // Keep x from now on. Kept before the kernel that produces x, its copy comes from that kernel.
  explicit KeptBf16(const tensor::Tensor& x);
  // The same for n floats at `values` on `be` (raw operands, as the attention composition has).
  KeptBf16(backend::Backend& be, const float* values, int64_t n);
  KeptBf16(KeptBf16&& o) noexcept : be_(o.be_), values_(o.values_) { o.be_ = nullptr; }
  KeptBf16& operator=(KeptBf16&& o) noexcept;
  KeptBf16(const KeptBf16&) = delete;
  KeptBf16& operator=(const KeptBf16&) = delete;
  ~KeptBf16() { release(); }

  // Forget the operand now; later calls do nothing. const because a backward releases what its saved
  // state (passed as const) holds: releasing changes no saved value, only when the copy may go.
  void release() const noexcept;
  bool held() const { return be_ != nullptr; }

  // Tokens alive on this thread (checked by the trainer: none once a training step is over).
  static int64_t alive();

 private:
  mutable backend::Backend* be_ = nullptr;
  const float* values_ = nullptr;
};

}  // namespace tt::ops
