#include "ops/kept_bf16.h"

namespace tt::ops {
namespace {

// Per thread: a training step runs on one thread, from its first keep to its last release, and ranks may
// be threads of one process (tests), each checking its own steps.
thread_local int64_t alive_tokens = 0;

}  // namespace

KeptBf16::KeptBf16(const tensor::Tensor& x) {
  // A bf16 tensor is its own copy: nothing to keep.
  if (x.defined() && x.numel() > 0 && x.dtype() == tensor::DType::f32)
    *this = KeptBf16(x.backend(), x.f32(), x.numel());
}

KeptBf16::KeptBf16(backend::Backend& be, const float* values, int64_t n) : be_(&be), values_(values) {
  be.keep_bf16_operand(values, n);
  ++alive_tokens;
}

KeptBf16& KeptBf16::operator=(KeptBf16&& o) noexcept {
  if (this != &o) {
    release();
    be_ = o.be_;
    values_ = o.values_;
    o.be_ = nullptr;
  }
  return *this;
}

void KeptBf16::release() const noexcept {
  if (!be_) return;
  be_->forget_bf16_operand(values_);
  be_ = nullptr;
  --alive_tokens;
}

int64_t KeptBf16::alive() { return alive_tokens; }

}  // namespace tt::ops
