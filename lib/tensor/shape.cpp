#include "tensor/shape.h"

#include "util/check.h"

namespace tt::tensor {

Shape::Shape(std::initializer_list<int64_t> dims) {
  TT_CHECK_MSG(dims.size() <= 4, "rank > 4");
  for (int64_t d : dims) {
    TT_CHECK_MSG(d >= 0, "negative dimension");
    dims_[rank_++] = d;
  }
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[i];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] != o.dims_[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(dims_[i]);
  return s + "]";
}

}  // namespace tt::tensor
