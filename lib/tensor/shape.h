// Shapes, row-major, rank <= 4.
//
// Dimension letters used project-wide (comments, variable names, kernel signatures):
//   B batch   S source length   T target length   D d_model   H heads   Dh head dim (D / H)
//   F FFN inner dim   V vocabulary   L layers   N rows (flattened B*S or B*T)
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace tt::tensor {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t numel() const;
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "[2, 3, 4]"

 private:
  std::array<int64_t, 4> dims_{};
  int rank_ = 0;
};

}  // namespace tt::tensor
