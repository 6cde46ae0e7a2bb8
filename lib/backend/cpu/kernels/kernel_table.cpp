// This variant's entry in the run-time dispatch (kernel_table.h).
#include "backend/cpu/kernels/kernel_functions.h"

namespace tt::backend::cpu::TT_CPU_ISA {

extern const KernelTable kernel_table;
const KernelTable kernel_table{
    .isa = TT_CPU_ISA_NAME,
    .add_bias = add_bias,
    .bias_backward = bias_backward,
    .add = add,
    .axpy = axpy,
    .scale = scale,
    .sum_squares = sum_squares,
    .bias_relu_dropout_forward = bias_relu_dropout_forward,
    .bias_activation_forward = bias_activation_forward,
    .relu_dropout_backward = relu_dropout_backward,
    .relu_dropout_backward_bf16 = relu_dropout_backward_bf16,
    .dropout_add_forward = dropout_add_forward,
    .dropout_forward = dropout_forward,
    .dropout_backward = dropout_backward,
    .layer_norm_forward = layer_norm_forward,
    .layer_norm_backward = layer_norm_backward,
    .residual_layer_norm_forward = residual_layer_norm_forward,
    .residual_layer_norm_backward = residual_layer_norm_backward,
    .attention_softmax_forward = attention_softmax_forward,
    .attention_softmax_backward = attention_softmax_backward,
    .attention_forward = attention_forward,
    .attention_backward = attention_backward,
    .embedding_forward = embedding_forward,
    .embedding_backward = embedding_backward,
    .positions_backward = positions_backward,
    .cross_entropy_forward_backward = cross_entropy_forward_backward,
    .log_softmax = log_softmax,
    .adam_step = adam_step,
    .convert_to_bf16 = convert_to_bf16,
    .gather_rows = gather_rows,
    .attention_decode = attention_decode,
    .topk = topk,
    .log_softmax_topk = log_softmax_topk,
    .quantize_rows_s8 = quantize_rows_s8,
    .dequantize_s32 = dequantize_s32,
};

}  // namespace tt::backend::cpu::TT_CPU_ISA
