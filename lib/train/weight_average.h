// tt-train --ema-decay D: an exponential moving average of the weights (Polyak averaging, as Marian,
// fairseq and OpenNMT-py keep it): after every optimizer step, average = D * average + (1 - D) * weights,
// in fp32 on the weights' device, starting from the weights the run starts from. The average is a
// ParameterSet of the model's names and layout, so it is written, read and averaged (tt-average) as any
// model's weights; a checkpoint's model.safetensors holds it when it is on (train/checkpoint.h).
#pragma once

#include "nn/params.h"
#include "tensor/tensor.h"

namespace tt::train {

class WeightAverage {
 public:
  // decay in (0, 1). The average's values are allocated (zero) like `weights`: call start() once they
  // are set.
  WeightAverage(const nn::ParameterSet& weights, double decay);
  // The average equals `weights` (a fresh run; a resumed one reads it instead).
  void start(const nn::ParameterSet& weights);
  // After an optimizer step.
  void update(const nn::ParameterSet& weights);
  // Exchanges the average's values and `weights`' (twice: back as they were); validation sees the average.
  void swap(const nn::ParameterSet& weights);

  nn::ParameterSet& params() { return average_; }
  const nn::ParameterSet& params() const { return average_; }
  double decay() const { return decay_; }

 private:
  double decay_;
  nn::ParameterSet average_;
  tensor::Tensor scratch_;  // one flat buffer: the (1 - D) * weights term, or the swap's temporary
};

// Swaps the average in for the lifetime of the scope (nothing without an average).
class AverageInScope {
 public:
  AverageInScope(WeightAverage* average, const nn::ParameterSet& weights) : average_(average), weights_(weights) {
    if (average_) average_->swap(weights_);
  }
  ~AverageInScope() {
    if (average_) average_->swap(weights_);
  }
  AverageInScope(const AverageInScope&) = delete;
  AverageInScope& operator=(const AverageInScope&) = delete;

 private:
  WeightAverage* average_;
  const nn::ParameterSet& weights_;
};

}  // namespace tt::train
