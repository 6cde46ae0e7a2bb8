#include "metrics/ngram_table.h"

namespace tt::metrics {

static inline uint32_t hash_key(const NgramKey& key, uint32_t order) {
  uint64_t h = key.lo * 0x9E3779B97F4A7C15ULL ^ (key.hi + order) * 0xC2B2AE3D27D4EB4FULL;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

void NgramTable::reset(size_t expected) {
  size_t capacity = 16;
  while (capacity < expected * 2) capacity *= 2;
  if (slots_.size() < capacity) {
    slots_.assign(capacity, Slot{});
    used_.clear();
  } else {
    for (uint32_t index : used_) slots_[index] = Slot{};
    used_.clear();
    capacity = slots_.size();
  }
  mask_ = static_cast<uint32_t>(capacity - 1);
}

uint32_t NgramTable::find(const NgramKey& key, uint32_t order) const {
  uint32_t index = hash_key(key, order) & mask_;
  while (slots_[index].order != 0 && !(slots_[index].order == order && slots_[index].key == key)) {
    index = (index + 1) & mask_;
  }
  return index;
}

void NgramTable::add_hyp(const NgramKey& key, uint32_t order) {
  uint32_t index = find(key, order);
  Slot& s = slots_[index];
  if (s.order == 0) {
    s.key = key;
    s.order = order;
    used_.push_back(index);
  }
  ++s.hyp;
}

NgramTable::Slot* NgramTable::add_ref(const NgramKey& key, uint32_t order, uint32_t ref) {
  Slot& s = slots_[find(key, order)];
  if (s.order == 0) return nullptr;
  if (s.stamp != ref) {
    s.stamp = ref;
    s.ref = 0;
  }
  ++s.ref;
  if (s.ref > s.ref_max) s.ref_max = s.ref;
  return &s;
}

}  // namespace tt::metrics
