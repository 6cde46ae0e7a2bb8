// Fused label-smoothed cross-entropy: loss, nll and the gradient in place of the logits.
//   logits: [N, V] (gradient on exit)   targets, loss, nll: [N]
// One block per row: one read for (max, sum exp, sum x) by an online softmax, one pass writing
// (softmax - q) * grad_scale. Smoothed target q = (1 - eps) * onehot + eps / V. The loss is assembled in
// double from the row sums, as on the CPU:
//   loss = -(1 - eps) * logp[t] - eps / V * sum_k logp[k],   sum_k logp[k] = sum_k x[k] - V * lse.
// Targets are validated by ops/ (the CPU backend re-checks on the host); an out-of-range target here reads
// nothing out of bounds and gives a NaN loss.
#include <cmath>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernel_utils.h"
#include "backend/cuda/online_softmax.h"

namespace tt::backend {

using namespace cuda_kernels;

namespace {

constexpr int kVocabBlock = 512;  // threads per row

__global__ void cross_entropy_kernel(float* loss, float* nll, float* logits, const int32_t* targets, int64_t N,
                                     int V, float eps, int32_t ignore_id, float grad_scale) {
  __shared__ float shared_max[kWarp], shared_sum[kWarp];
  const float smooth = eps / static_cast<float>(V);
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    float* x = logits + i * V;
    const int32_t t = targets[i];
    if (t == ignore_id) {
      for (int k = threadIdx.x; k < V; k += blockDim.x) x[k] = 0.0f;
      if (threadIdx.x == 0) {
        loss[i] = 0.0f;
        nll[i] = 0.0f;
      }
      continue;  // uniform across the block: no barrier is skipped by only some threads
    }
    const bool valid = t >= 0 && t < V;
    const float xt = valid ? x[t] : NAN;  // read before any thread overwrites the row
    OnlineSoftmax acc;
    float sx = 0.0f;
    for (int k = threadIdx.x; k < V; k += blockDim.x) {
      float v = x[k];
      acc.add(v);
      sx += v;
    }
    acc = block_merge(acc, shared_max, shared_sum);  // its barriers also order the reads above before the writes
    sx = block_sum(sx, shared_sum);
    const float a = grad_scale / acc.sum, b = -smooth * grad_scale;
    const float target_shift = (1.0f - eps) * grad_scale;
    for (int k = threadIdx.x; k < V; k += blockDim.x) {
      float g = fmaf(expf(x[k] - acc.max), a, b);
      if (k == t) g -= target_shift;
      x[k] = g;
    }
    if (threadIdx.x == 0) {
      const double lse = static_cast<double>(acc.max) + log(static_cast<double>(acc.sum));
      const double logp_t = static_cast<double>(xt) - lse;
      const double sum_logp = static_cast<double>(sx) - static_cast<double>(V) * lse;
      nll[i] = static_cast<float>(-logp_t);
      loss[i] = static_cast<float>(-(1.0 - eps) * logp_t - static_cast<double>(smooth) * sum_logp);
    }
  }
}

}  // namespace

void CudaBackend::cross_entropy_forward_backward(float* loss, float* nll, float* logits, const int32_t* targets,
                                                 int64_t N, int V, float eps, int32_t ignore_id,
                                                 float grad_scale) {
  if (N <= 0 || V <= 0) return;
  cross_entropy_kernel<<<grid_for(N, 1), kVocabBlock, 0, stream_.get()>>>(loss, nll, logits, targets, N, V, eps,
                                                                         ignore_id, grad_scale);
  TT_CUDA_CHECK_LAUNCH();
}

}  // namespace tt::backend
