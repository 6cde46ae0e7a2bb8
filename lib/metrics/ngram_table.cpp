#include "metrics/ngram_table.h"

namespace tt::metrics {

static inline uint32_t hash_key(uint64_t key) {
  key *= 0x9E3779B97F4A7C15ULL;
  return static_cast<uint32_t>(key >> 32);
}

void NgramTable::reset(size_t expected) {
  size_t capacity = 16;
  while (capacity < expected * 2) capacity *= 2;
  if (slots_.size() < capacity) {
    slots_.assign(capacity, Slot{});
  } else {
    for (uint32_t index : used_) slots_[index] = Slot{};
    capacity = slots_.size();
  }
  used_.clear();
  mask_ = static_cast<uint32_t>(capacity - 1);
}

uint32_t NgramTable::find(uint64_t key) const {
  uint32_t index = hash_key(key) & mask_;
  while (slots_[index].key != 0 && slots_[index].key != key) index = (index + 1) & mask_;
  return index;
}

void NgramTable::add_hyp(uint64_t key) {
  uint32_t index = find(key);
  Slot& s = slots_[index];
  if (s.key == 0) {
    s.key = key;
    used_.push_back(index);
  }
  ++s.hyp;
}

NgramTable::Slot* NgramTable::add_ref(uint64_t key, uint32_t ref) {
  Slot& s = slots_[find(key)];
  if (s.key == 0) return nullptr;
  if (s.stamp != ref) {
    s.stamp = ref;
    s.ref = 0;
  }
  ++s.ref;
  if (s.ref > s.ref_max) s.ref_max = s.ref;
  return &s;
}

}  // namespace tt::metrics
