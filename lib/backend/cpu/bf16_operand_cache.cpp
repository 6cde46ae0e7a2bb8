#include "backend/cpu/bf16_operand_cache.h"

#include <algorithm>

namespace tt::backend::cpu {
namespace {

uintptr_t address(const float* x) { return reinterpret_cast<uintptr_t>(x); }

// One past the last element the operand addresses, in elements from its first.
int64_t extent(const Bf16OperandCache::Layout& l) {
  return int64_t{l.batch1 - 1} * l.s.batch1 + int64_t{l.batch2 - 1} * l.s.batch2 + (l.rows - 1) * l.s.ld + l.cols;
}

}  // namespace

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
      recycle(*it);
      ranges_.erase(std::next(it).base());
      return;
    }
}

void Bf16OperandCache::clear() {
  for (Range& r : ranges_) recycle(r);
  ranges_.clear();
  // Keep as many free elements as the busiest step held at once (a quarter more for shapes that vary
  // between steps), the largest buffers first: what a step with new shapes does not reuse is freed.
  std::sort(free_.begin(), free_.end(), [](const Buffer& a, const Buffer& b) { return a.capacity > b.capacity; });
  int64_t kept = 0;
  size_t i = 0;
  while (i < free_.size() && kept + free_[i].capacity <= peak_live_ + peak_live_ / 4) kept += free_[i++].capacity;
  free_.resize(i);
  peak_live_ = 0;
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
    const Key key{static_cast<int64_t>(begin), operand.batch1, operand.batch2, operand.rows, operand.cols,
                  operand.s.batch1, operand.s.batch2, operand.s.ld};
    for (Copy& c : r->copies)
      if (c.key == key) return c.buffer.data.get();
    const int64_t n = int64_t{operand.batch1} * operand.batch2 * operand.rows * operand.cols;
    r->copies.push_back(Copy{key, take(n)});
    fresh = true;
    return r->copies.back().buffer.data.get();
  }
  return nullptr;
}

// The smallest free buffer that holds n elements without wasting more than half of itself, else a new one.
Bf16OperandCache::Buffer Bf16OperandCache::take(int64_t n) {
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if (it->capacity >= n && it->capacity <= 2 * n && (best == free_.end() || it->capacity < best->capacity)) best = it;
  Buffer b;
  if (best != free_.end()) {
    b = std::move(*best);
    free_.erase(best);
  } else {
    b.data.reset(new uint16_t[static_cast<size_t>(n)]);  // uninitialised: the caller converts into it
    b.capacity = n;
  }
  live_ += b.capacity;
  peak_live_ = std::max(peak_live_, live_);
  return b;
}

void Bf16OperandCache::recycle(Range& r) {
  for (Copy& c : r.copies) {
    live_ -= c.buffer.capacity;
    free_.push_back(std::move(c.buffer));
  }
  r.copies.clear();
}

}  // namespace tt::backend::cpu
