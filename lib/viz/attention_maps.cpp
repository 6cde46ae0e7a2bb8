#include "viz/attention_maps.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace tt::viz {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::encoder_self: return "encoder_self";
    case Kind::decoder_self: return "decoder_self";
    case Kind::cross: return "cross";
  }
  return "?";
}

const std::vector<float>& SentenceAttention::maps(Kind k) const {
  return k == Kind::encoder_self ? encoder_self : k == Kind::decoder_self ? decoder_self : cross;
}
std::vector<float>& SentenceAttention::maps(Kind k) {
  return k == Kind::encoder_self ? encoder_self : k == Kind::decoder_self ? decoder_self : cross;
}

std::vector<SentenceAttention> capture_attention(nn::Transformer& model, tensor::Arena& arena,
                                                 const std::vector<std::vector<int32_t>>& sources,
                                                 const std::vector<std::vector<int32_t>>& targets,
                                                 const KindSet& kinds) {
  if (sources.size() != targets.size())
    throw InternalError("capture_attention: " + std::to_string(sources.size()) + " sources but " +
                        std::to_string(targets.size()) + " targets");
  std::vector<SentenceAttention> out(sources.size());
  if (sources.empty()) return out;
  const nn::ModelConfig& c = model.config();
  nn::Batch b;
  b.B = static_cast<int>(sources.size());
  b.pad_id = c.pad_id;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].empty()) throw InternalError("capture_attention: empty source (it needs at least </s>)");
    b.S = std::max(b.S, static_cast<int>(sources[i].size()));
    b.T = std::max(b.T, static_cast<int>(targets[i].size()) + 1);
  }
  if (b.S > c.max_positions || b.T > c.max_positions)
    throw ConfigError("a sentence of " + std::to_string(std::max(b.S, b.T)) + " tokens exceeds the model's " +
                      std::to_string(c.max_positions) + " positions");
  b.src.assign(static_cast<size_t>(b.B) * b.S, c.pad_id);
  b.tgt_in.assign(static_cast<size_t>(b.B) * b.T, c.pad_id);
  b.tgt_out = b.tgt_in;
  for (int i = 0; i < b.B; ++i) {
    const auto& s = sources[static_cast<size_t>(i)];
    const auto& t = targets[static_cast<size_t>(i)];
    std::copy(s.begin(), s.end(), b.src.begin() + static_cast<ptrdiff_t>(i) * b.S);
    const auto in = b.tgt_in.begin() + static_cast<ptrdiff_t>(i) * b.T;
    const auto target_out = b.tgt_out.begin() + static_cast<ptrdiff_t>(i) * b.T;
    *in = c.bos_id;
    std::copy(t.begin(), t.end(), in + 1);
    std::copy(t.begin(), t.end(), target_out);
    target_out[static_cast<ptrdiff_t>(t.size())] = c.eos_id;
    b.src_lengths.push_back(static_cast<int32_t>(s.size()));
    b.tgt_lengths.push_back(static_cast<int32_t>(t.size()) + 1);
  }

  tensor::ArenaScope scope(arena);
  nn::AttentionCapture capture;
  const int H = c.heads;
  for (int l = 0; kinds.encoder_self && l < c.n_layers_enc; ++l)
    capture.encoder.push_back(arena.allocate(tensor::Shape{b.B, H, b.S, b.S}));
  for (int l = 0; kinds.decoder_self && l < c.n_layers_dec; ++l)
    capture.decoder_self.push_back(arena.allocate(tensor::Shape{b.B, H, b.T, b.T}));
  for (int l = 0; kinds.cross && l < c.n_layers_dec; ++l)
    capture.decoder_cross.push_back(arena.allocate(tensor::Shape{b.B, H, b.T, b.S}));
  model.forward_logits(b, arena, &capture);

  for (int i = 0; i < b.B; ++i) {
    SentenceAttention& a = out[static_cast<size_t>(i)];
    a.source = sources[static_cast<size_t>(i)];
    a.target.push_back(c.bos_id);
    a.target.insert(a.target.end(), targets[static_cast<size_t>(i)].begin(), targets[static_cast<size_t>(i)].end());
    a.layers_enc = c.n_layers_enc;
    a.layers_dec = c.n_layers_dec;
    a.heads = H;
  }
  // Copy each layer's [B, H, Rp, Cp] capture into the sentences' cropped [H, R, C] blocks.
  auto crop = [&](Kind kind, const std::vector<tensor::Tensor>& layers, int Rp, int Cp) {
    for (size_t l = 0; l < layers.size(); ++l) {
      const std::vector<float> all = layers[l].to_host_f32();
      for (int i = 0; i < b.B; ++i) {
        SentenceAttention& a = out[static_cast<size_t>(i)];
        const int R = a.rows(kind), C = a.cols(kind);
        std::vector<float>& dst = a.maps(kind);
        if (l == 0) dst.resize(static_cast<size_t>(a.layers(kind)) * H * R * C);
        for (int h = 0; h < H; ++h)
          for (int r = 0; r < R; ++r) {
            const float* from = all.data() + ((static_cast<size_t>(i) * H + h) * Rp + r) * Cp;
            std::copy(from, from + C, dst.begin() + static_cast<ptrdiff_t>(a.offset(kind, static_cast<int>(l), h) +
                                                                            static_cast<size_t>(r) * C));
          }
      }
    }
  };
  crop(Kind::encoder_self, capture.encoder, b.S, b.S);
  crop(Kind::decoder_self, capture.decoder_self, b.T, b.T);
  crop(Kind::cross, capture.decoder_cross, b.T, b.S);
  return out;
}

}  // namespace tt::viz
