#include "backend/cpu/bf16_operand_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <string>

#include "util/error.h"

namespace tt::backend::cpu {
namespace {

uintptr_t address(const float* x) { return reinterpret_cast<uintptr_t>(x); }

// One past the last element the operand addresses, in elements from its first.
int64_t extent(const Bf16OperandCache::Layout& l) {
  return int64_t{l.batch1 - 1} * l.s.batch1 + int64_t{l.batch2 - 1} * l.s.batch2 + (l.rows - 1) * l.s.ld + l.cols;
}

}  // namespace

Bf16OperandCache::Pages::Pages(int64_t n) : bytes_(static_cast<size_t>(n) * sizeof(uint16_t)) {
  if (bytes_ == 0) return;
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    bytes_ = 0;
    throw Error("out of host memory allocating " + std::to_string(n * 2) + " bytes of bf16 operands",
                "use a smaller --batch-tokens or model");
  }
  if (bytes_ >= (size_t{4} << 20)) madvise(p, bytes_, MADV_HUGEPAGE);  // advice only, as CpuBackend::allocate
  data_ = static_cast<uint16_t*>(p);
}

Bf16OperandCache::Pages::~Pages() {
  if (data_) munmap(data_, bytes_);
}

Bf16OperandCache::Pages& Bf16OperandCache::Pages::operator=(Pages&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, bytes_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void Bf16OperandCache::keep(const float* x, int64_t n) {
  if (n <= 0) return;
  const uintptr_t begin = address(x), end = begin + static_cast<uintptr_t>(n) * sizeof(float);
  for (Range& r : ranges_)
    if (r.begin == begin && r.end == end) {
      ++r.count;
      return;
    }
  ranges_.push_back(Range{begin, end, 1, {}});
}

void Bf16OperandCache::forget(const float* x) {
  const uintptr_t begin = address(x);
  for (auto it = ranges_.rbegin(); it != ranges_.rend(); ++it)
    if (it->begin == begin) {
      if (--it->count > 0) return;
      for (Copy& c : it->copies) release(c);
      ranges_.erase(std::next(it).base());
      return;
    }
}

void Bf16OperandCache::clear() {
  for (Range& r : ranges_)
    for (Copy& c : r.copies) release(c);
  ranges_.clear();
  slots_.clear();
  top_ = 0;
  if (peak_ > capacity_) {  // this step overflowed: the next one gets room for all of it
    buffer_ = Pages();  // the old one goes first
    buffer_ = Pages(peak_);
    capacity_ = peak_;
  }
  peak_ = 0;
}

int64_t Bf16OperandCache::copies() const {
  int64_t n = 0;
  for (const Range& r : ranges_) n += static_cast<int64_t>(r.copies.size());
  return n;
}

uint16_t* Bf16OperandCache::find(const Layout& operand, bool& fresh) {
  fresh = false;
  if (ranges_.empty()) return nullptr;
  const uintptr_t begin = address(operand.x), end = begin + static_cast<uintptr_t>(extent(operand)) * sizeof(float);
  for (auto r = ranges_.rbegin(); r != ranges_.rend(); ++r) {
    if (begin < r->begin || end > r->end) continue;
    const int64_t n = operand.size();
    const Key key = operand.dense() ? Key{static_cast<int64_t>(begin), 1, 1, 1, n, n, n, n}
                                    : Key{static_cast<int64_t>(begin), operand.batch1, operand.batch2, operand.rows,
                                          operand.cols, operand.s.batch1, operand.s.batch2, operand.s.ld};
    for (Copy& c : r->copies)
      if (c.key == key) return c.data;
    r->copies.push_back(allocate(key, n));
    fresh = true;
    return r->copies.back().data;
  }
  return nullptr;
}

Bf16OperandCache::Copy Bf16OperandCache::allocate(const Key& key, int64_t n) {
  Copy c{key, nullptr, n, -1, Pages()};
  if (top_ + n <= capacity_) {
    c.data = buffer_.data() + top_;
    c.slot = static_cast<int64_t>(slots_.size());
    slots_.push_back(Slot{top_, true});
    top_ += n;
  } else {
    c.overflow = Pages(n);
    c.data = c.overflow.data();
    overflow_ += n;
  }
  peak_ = std::max(peak_, top_ + overflow_);
  return c;
}

void Bf16OperandCache::release(Copy& c) {
  if (c.slot < 0) {
    if (c.overflow.data()) overflow_ -= c.size;
    c.overflow = Pages();
  } else {
    slots_[static_cast<size_t>(c.slot)].live = false;
    while (!slots_.empty() && !slots_.back().live) {  // free the top, and what lies freed below it
      top_ = slots_.back().offset;
      slots_.pop_back();
    }
  }
  c.data = nullptr;
  c.slot = -1;
}

}  // namespace tt::backend::cpu
