#include "train/weight_average.h"

#include <cmath>

#include "ops/elementwise.h"
#include "util/error.h"

namespace tt::train {

WeightAverage::WeightAverage(const nn::ParameterSet& weights, double decay) : decay_(decay) {
  if (!(decay > 0 && decay < 1)) throw InternalError("weight average: decay outside (0, 1)");
  for (const nn::Parameter& p : weights.all()) average_.declare(p.name, p.shape);
  average_.allocate(weights.values().backend(), false);
  scratch_ = tensor::Tensor::empty(weights.values().backend(), weights.values().shape());
}

void WeightAverage::start(const nn::ParameterSet& weights) { average_.values().copy_from(weights.values()); }

void WeightAverage::update(const nn::ParameterSet& weights) {
  scratch_.copy_from(weights.values());
  ops::scale(scratch_, static_cast<float>(1 - decay_));
  ops::scale(average_.values(), static_cast<float>(decay_));
  ops::add(average_.values(), average_.values(), scratch_);
}

void WeightAverage::swap(const nn::ParameterSet& weights) {
  scratch_.copy_from(weights.values());
  weights.values().copy_from(average_.values());
  average_.values().copy_from(scratch_);
}

}  // namespace tt::train
