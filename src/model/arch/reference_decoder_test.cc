// An independent check of the decoders of model/arch/: a deliberately naive forward pass in double
// precision, written from the Hugging Face transformers modeling code of each family (Llama,
// Qwen2, Qwen3, Mixtral, Qwen3-MoE, Phi-3, Gemma 2, Gemma 3, gpt-oss, and EmbeddingGemma's
// bidirectional Gemma 3) over llama.cpp's GGUF names and layout, recomputing full causal (or
// bidirectional) attention from scratch for every position. It shares no code with the
// production model beyond GGUF parsing and dequantization. The model's logits of every position,
// run as one prefill and (causal models) as chunked prefill + decode steps in the hybrid KV cache
// layout, must match it within 1e-3 · max(1, max |logit|) (f32 against double); ablated references
// (one feature left out) must not, so each feature is shown to be checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "kernels/ops.h"
#include "model/kv_cache_layout.h"
#include "model/model.h"
#include "model/random_model.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;
using Vec = std::vector<double>;

// A feature the reference can leave out, to show that the comparison notices it.
enum class Ablation {
  kNone,
  kSwappedRopeStyle,       // NeoX pairs where the file wants interleaved ones and vice versa
  kNoQkNorm,               // Qwen3 / Gemma 3 per-head Q/K RMSNorm skipped
  kNoQkvBias,              // Qwen2 / gpt-oss Q/K/V biases skipped
  kNoMoeRenormalize,       // Mixtral / Qwen3-MoE: top-k router probabilities not renormalized
  kNoWindow,               // local layers attend globally
  kNoAttnSoftcap,          // Gemma 2 attention soft-cap skipped
  kNoFinalSoftcap,         // Gemma 2 final soft-cap skipped
  kNoPostNorms,            // Gemma post_attention_norm / post_ffw_norm skipped
  kNoSinks,                // gpt-oss attention sinks skipped
  kNoRopeScaling,          // linear (Gemma 3 global layers) or YaRN (gpt-oss) scaling skipped
  kGlobalRopeEverywhere,   // Gemma 3 local layers use the global base and scaling
  kNoExpertBiases,         // gpt-oss router and expert biases skipped
  kNoSwigluPlusOne,        // gpt-oss clamped SwiGLU multiplies by up instead of (up + 1)
  kUnclampedSwiglu,        // gpt-oss SwiGLU without its clamps at ±7
  kOtherLongRopeFactors,   // Phi-3: the short factors where the long ones apply and vice versa
  kHeadDimAttentionScale,  // Gemma 27B: scores scaled by head_dim^-1/2, not (hidden/heads)^-1/2
};

// A GGUF tensor in double: [rows][cols], cols the ggml shape's first (contiguous) dimension and
// rows all the others flattened (experts' matrices stacked: expert e owns rows [e·n, (e+1)·n)).
struct Matrix {
  int64_t rows = 0, cols = 0;
  Vec data;
  bool empty() const { return data.empty(); }
  const double* row(int64_t r) const { return data.data() + r * cols; }
};

Matrix LoadTensor(const GgufFile& file, const std::string& name) {
  Matrix m;
  const GgufTensor* tensor = file.FindTensor(name);
  if (tensor == nullptr) return m;
  m.cols = tensor->shape[0];
  m.rows = tensor->num_elements() / m.cols;
  const int64_t row_bytes = tensor->num_bytes / m.rows;
  std::vector<float> row(m.cols);
  m.data.resize(m.rows * m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    kernels::DequantizeRow(tensor->type, tensor->data + r * row_bytes, m.cols, row.data());
    std::copy(row.begin(), row.end(), m.data.begin() + r * m.cols);
  }
  return m;
}

// y: [num_rows] = W[first_row : first_row + num_rows] · x (+ bias row `bias_row`, when given).
Vec MatVec(const Matrix& w, const Vec& x, int64_t first_row = 0, int64_t num_rows = -1,
           const Matrix* bias = nullptr, int64_t bias_row = 0) {
  if (num_rows < 0) num_rows = w.rows;
  Vec y(num_rows, 0.0);
  for (int64_t r = 0; r < num_rows; ++r) {
    const double* row = w.row(first_row + r);
    for (int64_t c = 0; c < w.cols; ++c) y[r] += row[c] * x[c];
    if (bias != nullptr && !bias->empty()) y[r] += bias->row(bias_row)[r];
  }
  return y;
}

// x[0:n] ← x / sqrt(mean(x²) + eps) · w, in place.
void RmsNorm(double* x, int64_t n, const double* w, double eps) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  const double inv = 1.0 / std::sqrt(sum / n + eps);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * inv * w[i];
}

Vec Normed(const Vec& x, const Matrix& w, double eps) {
  Vec y = x;
  RmsNorm(y.data(), static_cast<int64_t>(y.size()), w.data.data(), eps);
  return y;
}

void AddTo(const Vec& y, Vec* x) {
  for (size_t i = 0; i < y.size(); ++i) (*x)[i] += y[i];
}

// The hyper-parameters of a file, read the way transformers' configs define them.
struct Spec {
  std::string arch;
  bool gemma = false, gpt_oss = false, phi3 = false;
  // EmbeddingGemma: every position sees the whole prompt; a local layer's window is symmetric,
  // window / 2 positions on either side (transformers' bidirectional sliding-window mask).
  bool bidirectional = false;
  // The engine's max_model_len (Phi-3 takes its long RoPE factors when it exceeds the original
  // context) and the attention scores' scale.
  int64_t max_model_len = 0;
  double attention_scale = 0;
  int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t top_k = 0;
  double eps = 1e-5;
  // Layer l is local when window > 0 and (pattern == 0 or (l + 1) % pattern != 0).
  int64_t window = 0, pattern = 0;
  double attn_softcap = 0, final_softcap = 0;
  bool IsLocal(int64_t layer) const {
    return window > 0 && (pattern == 0 || (layer + 1) % pattern != 0);
  }
};

int64_t IntKey(const GgufFile& file, const std::string& key, int64_t fallback) {
  auto value = file.GetInt(key);
  return value && value->has_value() ? **value : fallback;
}
double FloatKey(const GgufFile& file, const std::string& key, double fallback) {
  auto value = file.GetFloat(key);
  return value && value->has_value() ? **value : fallback;
}
std::string StringKey(const GgufFile& file, const std::string& key, const std::string& fallback) {
  auto value = file.GetString(key);
  return value && value->has_value() ? **value : fallback;
}

Spec ReadSpec(const GgufFile& file, int64_t max_model_len, Ablation ablation) {
  Spec s;
  s.arch = StringKey(file, "general.architecture", "");
  const std::string a = s.arch + ".";
  s.bidirectional = s.arch == "gemma-embedding";
  s.gemma = s.arch == "gemma2" || s.arch == "gemma3" || s.bidirectional;
  s.gpt_oss = s.arch == "gpt-oss";
  s.phi3 = s.arch == "phi3";
  s.hidden = IntKey(file, a + "embedding_length", 0);
  s.layers = IntKey(file, a + "block_count", 0);
  s.heads = IntKey(file, a + "attention.head_count", 0);
  s.kv_heads = IntKey(file, a + "attention.head_count_kv", s.heads);
  s.head_dim = IntKey(file, a + "attention.key_length", s.hidden / s.heads);
  s.top_k = IntKey(file, a + "expert_used_count", 0);
  s.eps = FloatKey(file, a + "attention.layer_norm_rms_epsilon", 1e-5);
  // Gemma 2, gpt-oss: every other layer global; Gemma 3: one in six (layer_types in HF configs);
  // others (Mistral): every layer local.
  s.window = IntKey(file, a + "attention.sliding_window", 0);
  const bool gemma3 = s.arch == "gemma3" || s.bidirectional;
  const int64_t default_pattern = gemma3 ? 6 : (s.gemma || s.gpt_oss ? 2 : 0);
  s.pattern = IntKey(file, a + "attention.sliding_window_pattern", default_pattern);
  s.attn_softcap = FloatKey(file, a + "attn_logit_softcapping", 0);
  s.final_softcap = FloatKey(file, a + "final_logit_softcapping", 0);
  s.max_model_len = max_model_len > 0 ? max_model_len : IntKey(file, a + "context_length", 0);
  // Gemma 2 / 3 27B (46 / 62 layers): query_pre_attn_scalar = hidden / heads; else head_dim.
  const bool gemma_27b =
      (s.arch == "gemma2" && s.layers == 46) || (s.arch == "gemma3" && s.layers == 62);
  const double scalar = gemma_27b && ablation != Ablation::kHeadDimAttentionScale
                            ? static_cast<double>(s.hidden / s.heads)
                            : static_cast<double>(s.head_dim);
  s.attention_scale = 1.0 / std::sqrt(scalar);
  return s;
}

// One layer's rotary embedding: inverse frequencies [rope_dim / 2] and a factor on cos and sin.
struct LayerRope {
  Vec inv_freq;
  double attention_factor = 1.0;
  bool neox = true;  // pairs (x[i], x[i + d/2]); else (x[2i], x[2i+1]) (llama.cpp's Llama Q/K)
};

LayerRope RopeForLayer(const GgufFile& file, const Spec& s, int64_t layer, Ablation ablation) {
  const std::string a = s.arch + ".";
  LayerRope rope;
  rope.neox = (s.arch != "llama") != (ablation == Ablation::kSwappedRopeStyle);
  const int64_t d = IntKey(file, a + "rope.dimension_count", s.head_dim);
  double base = FloatKey(file, a + "rope.freq_base", 10000.0);
  std::string scaling = StringKey(file, a + "rope.scaling.type", "none");
  const double factor = FloatKey(file, a + "rope.scaling.factor", 1.0);
  // Gemma 3's local layers: rope_local_base_freq, default RoPE (no scaling).
  if ((s.arch == "gemma3" || s.bidirectional) && s.IsLocal(layer) &&
      ablation != Ablation::kGlobalRopeEverywhere) {
    base = FloatKey(file, a + "rope.freq_base_swa", 10000.0);
    scaling = "none";
  }
  if (ablation == Ablation::kNoRopeScaling) scaling = "none";
  for (int64_t i = 0; i < d / 2; ++i) {
    rope.inv_freq.push_back(std::pow(base, -2.0 * static_cast<double>(i) / d));
  }
  if (s.phi3 && ablation != Ablation::kNoRopeScaling) {  // Phi3LongRoPEScaledRotaryEmbedding
    const int64_t original = IntKey(file, a + "rope.scaling.original_context_length", 0);
    const bool use_long = (original > 0 && s.max_model_len > original) !=
                          (ablation == Ablation::kOtherLongRopeFactors);
    const Matrix factors =
        LoadTensor(file, use_long ? "rope_factors_long.weight" : "rope_factors_short.weight");
    for (size_t i = 0; i < factors.data.size(); ++i) rope.inv_freq[i] /= factors.data[i];
    rope.attention_factor = FloatKey(file, a + "rope.scaling.attn_factor", 1.0);
  }
  if (scaling == "linear") {  // _compute_linear_scaling_rope_parameters
    for (double& f : rope.inv_freq) f /= factor;
  } else if (scaling == "yarn") {  // _compute_yarn_parameters with truncate = false
    const double original = IntKey(file, a + "rope.scaling.original_context_length", 0);
    const double beta_fast = FloatKey(file, a + "rope.scaling.yarn_beta_fast", 32.0);
    const double beta_slow = FloatKey(file, a + "rope.scaling.yarn_beta_slow", 1.0);
    auto correction_dim = [&](double rotations) {
      return d * std::log(original / (rotations * 2 * M_PI)) / (2 * std::log(base));
    };
    const double low = std::max(correction_dim(beta_fast), 0.0);
    double high = std::min(correction_dim(beta_slow), d - 1.0);
    if (low == high) high += 0.001;
    for (int64_t i = 0; i < d / 2; ++i) {
      const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
      const double extrapolation_weight = 1.0 - ramp;
      const double extrapolation = rope.inv_freq[i], interpolation = extrapolation / factor;
      rope.inv_freq[i] =
          interpolation * (1 - extrapolation_weight) + extrapolation * extrapolation_weight;
    }
    rope.attention_factor = factor > 1 ? 0.1 * std::log(factor) + 1.0 : 1.0;
  }
  return rope;
}

// Rotates one head x: [head_dim] at position `pos`.
void ApplyRope(const LayerRope& rope, int64_t pos, double* x) {
  const int64_t half = static_cast<int64_t>(rope.inv_freq.size());
  for (int64_t i = 0; i < half; ++i) {
    const double angle = pos * rope.inv_freq[i];
    const double c = std::cos(angle) * rope.attention_factor;
    const double s = std::sin(angle) * rope.attention_factor;
    double& x0 = rope.neox ? x[i] : x[2 * i];
    double& x1 = rope.neox ? x[i + half] : x[2 * i + 1];
    const double a = x0, b = x1;
    x0 = a * c - b * s;
    x1 = b * c + a * s;
  }
}

// Causal attention of every position. q: [T][heads · head_dim], k, v: [T][kv_heads · head_dim];
// returns [T][heads · head_dim]. `sinks`: [heads] extra logits whose probability is dropped.
std::vector<Vec> Attention(const Spec& s, bool local, const std::vector<Vec>& q,
                           const std::vector<Vec>& k, const std::vector<Vec>& v,
                           const Matrix& sinks, Ablation ablation) {
  const int64_t T = static_cast<int64_t>(q.size()), hd = s.head_dim;
  const double scale = s.attention_scale;
  const bool windowed = local && ablation != Ablation::kNoWindow;
  const bool softcap = s.attn_softcap > 0 && ablation != Ablation::kNoAttnSoftcap;
  const bool use_sinks = !sinks.empty() && ablation != Ablation::kNoSinks;
  std::vector<Vec> out(T, Vec(s.heads * hd, 0.0));
  for (int64_t p = 0; p < T; ++p) {
    const int64_t reach = s.bidirectional ? s.window / 2 : s.window - 1;  // positions before p
    const int64_t first = windowed ? std::max<int64_t>(0, p - reach) : 0;
    const int64_t last = !s.bidirectional ? p : windowed ? std::min(T - 1, p + reach) : T - 1;
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t g = h / (s.heads / s.kv_heads);  // the query head's KV head
      Vec scores;                                    // [last - first + 1]
      for (int64_t j = first; j <= last; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < hd; ++i) dot += q[p][h * hd + i] * k[j][g * hd + i];
        double score = dot * scale;
        if (softcap) score = s.attn_softcap * std::tanh(score / s.attn_softcap);
        scores.push_back(score);
      }
      double max_score = *std::max_element(scores.begin(), scores.end());
      if (use_sinks) max_score = std::max(max_score, sinks.data[h]);
      double denominator = use_sinks ? std::exp(sinks.data[h] - max_score) : 0.0;
      for (double& score : scores) denominator += (score = std::exp(score - max_score));
      for (int64_t j = first; j <= last; ++j) {
        const double prob = scores[j - first] / denominator;
        for (int64_t i = 0; i < hd; ++i) out[p][h * hd + i] += prob * v[j][g * hd + i];
      }
    }
  }
  return out;
}

// One layer's FFN weights: a dense gated MLP, or a router and experts (stacked, see Matrix).
struct FfnWeights {
  Matrix gate, up, down;       // dense: [ffn][hidden], [ffn][hidden], [hidden][ffn];
                               // experts: [experts · ffn][hidden] twice, [experts · hidden][ffn]
  Matrix router, router_bias;  // [experts][hidden], [1][experts]; empty: dense
  Matrix gate_bias, up_bias, down_bias;  // [experts][ffn], [experts][ffn], [experts][hidden]
};

FfnWeights LoadFfn(const GgufFile& file, const std::string& b, const Spec& s, Ablation ablation) {
  FfnWeights w;
  w.router = LoadTensor(file, b + "ffn_gate_inp.weight");
  const std::string suffix = w.router.empty() ? "" : "_exps";
  w.gate = LoadTensor(file, b + "ffn_gate" + suffix + ".weight");
  w.up = LoadTensor(file, b + "ffn_up" + suffix + ".weight");
  w.down = LoadTensor(file, b + "ffn_down" + suffix + ".weight");
  if (s.phi3) {  // ffn_up: [2 · ffn][hidden], the gate rows first
    const Matrix gate_up = w.up;
    const int64_t ffn = gate_up.rows / 2;
    w.gate = w.up = Matrix{.rows = ffn, .cols = gate_up.cols};
    w.gate.data.assign(gate_up.data.begin(), gate_up.data.begin() + ffn * gate_up.cols);
    w.up.data.assign(gate_up.data.begin() + ffn * gate_up.cols, gate_up.data.end());
  }
  if (s.gpt_oss && ablation != Ablation::kNoExpertBiases) {
    w.router_bias = LoadTensor(file, b + "ffn_gate_inp.bias");
    w.gate_bias = LoadTensor(file, b + "ffn_gate_exps.bias");
    w.up_bias = LoadTensor(file, b + "ffn_up_exps.bias");
    w.down_bias = LoadTensor(file, b + "ffn_down_exps.bias");
  }
  return w;
}

double Silu(double x) { return x / (1.0 + std::exp(-x)); }
double GeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// Dense gated MLP of one token x: [hidden]: down(act(gate(x)) · up(x)).
Vec GatedMlp(const FfnWeights& w, const Spec& s, const Vec& x) {
  Vec g = MatVec(w.gate, x);
  const Vec u = MatVec(w.up, x);
  for (size_t i = 0; i < g.size(); ++i) g[i] = (s.gemma ? GeluTanh(g[i]) : Silu(g[i])) * u[i];
  return MatVec(w.down, g);
}

// Mixture of experts of one token x: [hidden].
Vec Moe(const FfnWeights& w, const Spec& s, const Vec& x, Ablation ablation) {
  const int64_t experts = w.router.rows, ffn = w.gate.rows / experts;
  const Vec logits = MatVec(w.router, x, 0, -1, &w.router_bias);  // [experts]
  std::vector<int64_t> order(experts);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t i, int64_t j) { return logits[i] > logits[j]; });
  order.resize(s.top_k);  // the chosen experts, best first
  Vec weights(s.top_k);
  const double max_logit = logits[order[0]];
  if (s.gpt_oss) {  // GptOssTopKRouter: softmax over the top-k logits
    double sum = 0;
    for (int64_t i = 0; i < s.top_k; ++i) {
      sum += (weights[i] = std::exp(logits[order[i]] - max_logit));
    }
    for (double& weight : weights) weight /= sum;
  } else {  // Mixtral / Qwen3-MoE: softmax over all experts, top-k, renormalized
    double all = 0, top = 0;
    for (double logit : logits) all += std::exp(logit - max_logit);
    for (int64_t i = 0; i < s.top_k; ++i) {
      top += (weights[i] = std::exp(logits[order[i]] - max_logit) / all);
    }
    if (ablation != Ablation::kNoMoeRenormalize) {
      for (double& weight : weights) weight /= top;
    }
  }
  Vec out(s.hidden, 0.0);
  for (int64_t i = 0; i < s.top_k; ++i) {
    const int64_t e = order[i];
    Vec g = MatVec(w.gate, x, e * ffn, ffn, &w.gate_bias, e);
    const Vec u = MatVec(w.up, x, e * ffn, ffn, &w.up_bias, e);
    for (int64_t j = 0; j < ffn; ++j) {
      if (s.gpt_oss) {  // GptOssExperts: clamped SwiGLU, alpha 1.702, limit 7
        const bool clamp = ablation != Ablation::kUnclampedSwiglu;
        const double gj = clamp ? std::min(g[j], 7.0) : g[j];
        const double uj = clamp ? std::clamp(u[j], -7.0, 7.0) : u[j];
        const double glu = gj / (1.0 + std::exp(-1.702 * gj));
        g[j] = (ablation == Ablation::kNoSwigluPlusOne ? uj : uj + 1.0) * glu;
      } else {
        g[j] = Silu(g[j]) * u[j];
      }
    }
    const Vec y = MatVec(w.down, g, e * s.hidden, s.hidden, &w.down_bias, e);
    for (int64_t j = 0; j < s.hidden; ++j) out[j] += weights[i] * y[j];
  }
  return out;
}

// Logits of every position of `tokens`: [T][vocab].
std::vector<Vec> ReferenceLogits(const GgufFile& file, const std::vector<int32_t>& tokens,
                                 int64_t max_model_len, Ablation ablation = Ablation::kNone) {
  const Spec s = ReadSpec(file, max_model_len, ablation);
  const int64_t T = static_cast<int64_t>(tokens.size()), hd = s.head_dim;
  const Matrix embedding = LoadTensor(file, "token_embd.weight");  // [vocab][hidden]
  std::vector<Vec> x(T);                                           // residual stream [T][hidden]
  for (int64_t p = 0; p < T; ++p) {
    const double* row = embedding.row(tokens[p]);
    x[p].assign(row, row + s.hidden);
    if (s.gemma) {
      for (double& value : x[p]) value *= std::sqrt(static_cast<double>(s.hidden));
    }
  }
  const bool post_norms = s.gemma && ablation != Ablation::kNoPostNorms;
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    auto tensor = [&](const std::string& name) { return LoadTensor(file, b + name); };
    const Matrix attn_norm = tensor("attn_norm.weight");
    const Matrix wo = tensor("attn_output.weight");
    // Phi-3's fused attn_qkv: [(heads + 2 · kv_heads) · head_dim][hidden], rows q, k, v.
    const Matrix wqkv = tensor("attn_qkv.weight");
    const Matrix wq = wqkv.empty() ? tensor("attn_q.weight") : wqkv;
    const Matrix wk = wqkv.empty() ? tensor("attn_k.weight") : wqkv;
    const Matrix wv = wqkv.empty() ? tensor("attn_v.weight") : wqkv;
    const int64_t q_rows = s.heads * hd, kv_rows = s.kv_heads * hd;
    const int64_t k_first = wqkv.empty() ? 0 : q_rows,
                  v_first = wqkv.empty() ? 0 : q_rows + kv_rows;
    const bool qkv_bias = ablation != Ablation::kNoQkvBias;
    const Matrix bq = qkv_bias ? tensor("attn_q.bias") : Matrix{};
    const Matrix bk = qkv_bias ? tensor("attn_k.bias") : Matrix{};
    const Matrix bv = qkv_bias ? tensor("attn_v.bias") : Matrix{};
    const Matrix bo = tensor("attn_output.bias");
    const Matrix q_norm = ablation != Ablation::kNoQkNorm ? tensor("attn_q_norm.weight") : Matrix{};
    const Matrix k_norm = ablation != Ablation::kNoQkNorm ? tensor("attn_k_norm.weight") : Matrix{};
    const Matrix sinks = tensor("attn_sinks.weight");
    const LayerRope rope = RopeForLayer(file, s, l, ablation);
    std::vector<Vec> q(T), k(T), v(T);  // [T][heads or kv_heads · head_dim]
    for (int64_t p = 0; p < T; ++p) {
      const Vec h = Normed(x[p], attn_norm, s.eps);
      q[p] = MatVec(wq, h, 0, q_rows, &bq);
      k[p] = MatVec(wk, h, k_first, kv_rows, &bk);
      v[p] = MatVec(wv, h, v_first, kv_rows, &bv);
      for (int64_t head = 0; head < s.heads; ++head) {
        if (!q_norm.empty()) RmsNorm(&q[p][head * hd], hd, q_norm.data.data(), s.eps);
        ApplyRope(rope, p, &q[p][head * hd]);
      }
      for (int64_t head = 0; head < s.kv_heads; ++head) {
        if (!k_norm.empty()) RmsNorm(&k[p][head * hd], hd, k_norm.data.data(), s.eps);
        ApplyRope(rope, p, &k[p][head * hd]);
      }
    }
    const std::vector<Vec> attn = Attention(s, s.IsLocal(l), q, k, v, sinks, ablation);
    // gpt-oss names its pre-FFN norm post_attention_norm; Gemma's is a post-norm.
    const Matrix post_attention_norm =
        s.gemma || s.gpt_oss ? tensor("post_attention_norm.weight") : Matrix{};
    const Matrix ffn_norm = s.gpt_oss ? post_attention_norm : tensor("ffn_norm.weight");
    const Matrix post_ffw_norm = post_norms ? tensor("post_ffw_norm.weight") : Matrix{};
    const FfnWeights ffn = LoadFfn(file, b, s, ablation);
    for (int64_t p = 0; p < T; ++p) {
      Vec a = MatVec(wo, attn[p], 0, -1, &bo);
      if (post_norms) a = Normed(a, post_attention_norm, s.eps);
      AddTo(a, &x[p]);
      const Vec h = Normed(x[p], ffn_norm, s.eps);
      Vec f = ffn.router.empty() ? GatedMlp(ffn, s, h) : Moe(ffn, s, h, ablation);
      if (post_norms) f = Normed(f, post_ffw_norm, s.eps);
      AddTo(f, &x[p]);
    }
  }
  const Matrix output_norm = LoadTensor(file, "output_norm.weight");
  const Matrix output = LoadTensor(file, "output.weight");
  const Matrix& head = output.empty() ? embedding : output;  // tied embeddings
  std::vector<Vec> logits(T);
  for (int64_t p = 0; p < T; ++p) {
    logits[p] = MatVec(head, Normed(x[p], output_norm, s.eps));
    if (s.final_softcap > 0 && ablation != Ablation::kNoFinalSoftcap) {
      for (double& l : logits[p]) l = s.final_softcap * std::tanh(l / s.final_softcap);
    }
  }
  return logits;
}

// How the model is run over a sequence.
enum class Schedule {
  kPrefill,  // one prefill of every token, one KV cache group of every layer, blocks of 16
  // As an engine serves it: prefill chunks of 10 and 5 tokens, then one token a step, in the
  // hybrid KV cache layout (KvCacheLayoutOf) with blocks of 4. Each group has its own blocks; a
  // sliding group's table holds the null block, filled with NaN, where its blocks left the window
  // of every token of the step.
  kStepped,
};

// The production model's logits of every position of `tokens`: [T · vocab].
std::vector<float> ModelLogits(const GgufFile& file, const std::vector<int32_t>& tokens,
                               int64_t max_model_len, Schedule schedule) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto model = LoadModelFromGguf(file, {.pool = &pool, .max_model_len = max_model_len});
  EXPECT_TRUE(model.ok()) << model.error();
  if (!model.ok()) return {};
  const ModelConfig& config = (*model)->config();
  const auto T = static_cast<int32_t>(tokens.size());
  const bool stepped = schedule == Schedule::kStepped;
  const int32_t block_size = stepped ? 4 : 16;
  const int32_t blocks_per_table = (T + block_size - 1) / block_size;
  const KvCacheLayout layout =
      stepped ? KvCacheLayoutOf(config) : SingleGroupKvCacheLayout(config.num_layers);
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = 1 + layout.num_groups() * blocks_per_table,
                               .block_size = block_size,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim,
                               .layout = layout});
  EXPECT_TRUE(kv.ok()) << kv.error();
  if (!kv.ok()) return {};
  for (int64_t layer = 0; layer < config.num_layers; ++layer) {  // the null block: NaN
    for (int32_t offset = 0; offset < block_size; ++offset) {
      for (int64_t h = 0; h < config.num_kv_heads; ++h) {
        std::fill_n((*kv)->key(layer, KvStorage::kNullBlockId, offset, h), config.head_dim, NAN);
        std::fill_n((*kv)->value(layer, KvStorage::kNullBlockId, offset, h), config.head_dim, NAN);
      }
    }
  }
  std::vector<float> logits(tokens.size() * config.vocab_size);
  for (int32_t begin = 0; begin < T;) {
    const int32_t end = !stepped ? T : std::min(T, begin < 10 ? 10 : begin < 15 ? 15 : begin + 1);
    std::vector<std::vector<int32_t>> tables(layout.num_groups());  // [group][block]
    for (int32_t g = 0; g < layout.num_groups(); ++g) {
      const int64_t window = layout.groups[g].sliding_window;
      const int64_t first_visible = window > 0 ? std::max<int64_t>(0, begin - window + 1) : 0;
      for (int32_t b = 0; b < (end + block_size - 1) / block_size; ++b) {
        const bool left = (b + 1) * block_size <= first_visible;
        tables[g].push_back(left ? KvStorage::kNullBlockId : 1 + g * blocks_per_table + b);
      }
    }
    ForwardBatch batch;
    const std::vector<int32_t> chunk(tokens.begin() + begin, tokens.begin() + end);
    Status status = AppendSequence(chunk, begin, tables, block_size, batch);
    EXPECT_TRUE(status.ok()) << status.message();
    for (int32_t t = 0; t < end - begin; ++t) batch.logits_indices.push_back(t);
    status = (*model)->Forward(batch, **kv, logits.data() + begin * config.vocab_size);
    EXPECT_TRUE(status.ok()) << status.message();
    begin = end;
  }
  return logits;
}

// Variants of the random shapes. Some have f32 weights scaled up, so that features acting only on
// large values act: Gemma 2's attention soft-cap at 50 and gpt-oss's SwiGLU clamps at ±7 (leaving
// either out of the reference goes unnoticed on the plain shapes, whose scores and expert
// activations are small). Others change the engine's max_model_len (Phi-3's short RoPE factors
// within the pretraining context).
struct StressedShape {
  const char* name;
  const char* shape;
  std::vector<std::string> scaled;  // tensor name suffixes
  float factor = 1.0f;
  int64_t max_model_len = 0;  // > 0: the engine's, instead of the model's context length
};

const StressedShape* FindStressedShape(const std::string& name) {
  static const std::vector<StressedShape> stressed = {
      {"gemma2-tiny-large-scores", "gemma2-tiny", {"attn_q.weight"}, 32.0f},
      {"gpt-oss-tiny-large-experts",
       "gpt-oss-tiny",
       {"ffn_gate_exps.weight", "ffn_up_exps.weight"},
       8.0f},
      {"phi3-tiny-within-original-context", "phi3-tiny", {}, 1.0f, 256},
  };
  for (const auto& s : stressed) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// Copies the f32 GGUF `in` to `path`, multiplying the tensors `stressed` names by its factor.
Status WriteStressedCopy(const GgufFile& in, const StressedShape& stressed,
                         const std::string& path) {
  GgufWriter writer;
  for (const auto& key : in.metadata_order()) writer.AddMetadata(key, *in.Find(key));
  for (const auto& tensor : in.tensors()) writer.AddTensor(tensor.name, tensor.shape, tensor.type);
  VLLM_RETURN_IF_ERROR(writer.Begin(path));
  for (size_t i = 0; i < in.tensors().size(); ++i) {
    const GgufTensor& tensor = in.tensors()[i];
    std::vector<uint8_t> bytes(tensor.data, tensor.data + tensor.num_bytes);
    for (const auto& suffix : stressed.scaled) {
      if (!tensor.name.ends_with(suffix)) continue;
      if (tensor.type != GgmlType::kF32) return Error{tensor.name + " is not f32"};
      std::vector<float> values(tensor.num_elements());
      std::memcpy(values.data(), bytes.data(), bytes.size());
      for (float& value : values) value *= stressed.factor;
      std::memcpy(bytes.data(), values.data(), bytes.size());
    }
    VLLM_RETURN_IF_ERROR(writer.WriteTensorData(i, bytes.data(), bytes.size()));
  }
  return writer.Finish();
}

// A random f32 model of a known or stressed shape (written in `dir`), or else an oracle GGUF.
std::string ModelPath(const std::string& name, const fs::path& dir) {
  const StressedShape* stressed = FindStressedShape(name);
  const std::string shape = stressed != nullptr ? stressed->shape : name;
  if (FindModelShape(shape) == nullptr) {
    return std::string(VLLM_SHARED_DIR) + "/oracles/models/" + name + ".gguf";
  }
  const std::string path = (dir / (shape + ".gguf")).string();
  Status written = WriteRandomModel(
      {.shape = shape,
       .dtype = "f32",
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
       .output_path = path,
       .seed = 5});
  EXPECT_TRUE(written.ok()) << written.message();
  if (stressed == nullptr || stressed->scaled.empty()) return path;
  auto file = GgufFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.error();
  const std::string stressed_path = (dir / (name + ".gguf")).string();
  if (file.ok()) {
    written = WriteStressedCopy(**file, *stressed, stressed_path);
    EXPECT_TRUE(written.ok()) << written.message();
  }
  return stressed_path;
}

// 24 tokens (past the test shapes' windows of 8 and 12) spread over the vocabulary.
std::vector<int32_t> TestTokens(int64_t vocab) {
  std::vector<int32_t> tokens = {1};
  while (tokens.size() < 24) {
    tokens.push_back(static_cast<int32_t>((tokens.back() * 7919 + 104729) % vocab));
  }
  return tokens;
}

struct Difference {
  double max_difference = 0, max_logit = 0;
  bool Within() const { return max_difference <= 1e-3 * std::max(1.0, max_logit); }
};

// Runs the model and the (possibly ablated) reference over the file `name` names.
Difference CompareWithReference(const std::string& name, Ablation ablation,
                                Schedule schedule = Schedule::kPrefill) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("reference_decoder_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Difference difference;
  auto file = GgufFile::Open(ModelPath(name, dir));
  EXPECT_TRUE(file.ok()) << file.error();
  if (file.ok()) {
    const int64_t vocab = (*file)->FindTensor("token_embd.weight")->shape[1];
    const std::vector<int32_t> tokens = TestTokens(vocab);
    const StressedShape* stressed = FindStressedShape(name);
    const int64_t max_model_len = stressed != nullptr ? stressed->max_model_len : 0;
    const std::vector<float> actual = ModelLogits(**file, tokens, max_model_len, schedule);
    const std::vector<Vec> expected = ReferenceLogits(**file, tokens, max_model_len, ablation);
    EXPECT_EQ(actual.size(), tokens.size() * vocab);
    for (size_t p = 0; p < tokens.size() && actual.size() == tokens.size() * vocab; ++p) {
      for (int64_t t = 0; t < vocab; ++t) {
        const double e = expected[p][t], error = std::fabs(e - actual[p * vocab + t]);
        difference.max_logit = std::max(difference.max_logit, std::fabs(e));
        difference.max_difference =
            std::max(difference.max_difference, std::isnan(error) ? INFINITY : error);
      }
    }
  }
  fs::remove_all(dir);
  return difference;
}

// Causal decoders: the whole prompt at once, then in chunks and single decode steps.
constexpr const char* kCausalShapes[] = {"llama-tiny",
                                         "qwen2-tiny",
                                         "qwen3-tiny",
                                         "mixtral-tiny",
                                         "gemma2-tiny",
                                         "gpt-oss-tiny",
                                         "gemma2-tiny-large-scores",
                                         "gpt-oss-tiny-large-experts",
                                         "tiny-gemma3",
                                         "tiny-qwen3moe",
                                         "phi3-tiny",
                                         "phi3-tiny-within-original-context",
                                         "tiny-phi3",
                                         "gemma2-27b-tiny"};
// Bidirectional decoders only pool, each prompt computed whole in one step.
constexpr const char* kBidirectionalShapes[] = {"embeddinggemma-tiny"};

std::string ShapeTestName(const ::testing::TestParamInfo<const char*>& shape_info) {
  std::string name = shape_info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class ReferenceDecoderTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ReferenceDecoderTest, PrefillLogitsMatchTheReference) {
  const Difference d = CompareWithReference(GetParam(), Ablation::kNone);
  EXPECT_TRUE(d.Within()) << "max |logit| " << d.max_logit << ", max difference "
                          << d.max_difference;
  std::printf("[ reference ] %s: max |logit| %.4f, max difference %.3g\n", GetParam(), d.max_logit,
              d.max_difference);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ReferenceDecoderTest, ::testing::ValuesIn(kCausalShapes),
                         ShapeTestName);
INSTANTIATE_TEST_SUITE_P(Bidirectional, ReferenceDecoderTest,
                         ::testing::ValuesIn(kBidirectionalShapes), ShapeTestName);

class SteppedReferenceDecoderTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SteppedReferenceDecoderTest, ChunkedPrefillAndDecodeLogitsMatchTheReference) {
  const Difference d = CompareWithReference(GetParam(), Ablation::kNone, Schedule::kStepped);
  EXPECT_TRUE(d.Within()) << "max |logit| " << d.max_logit << ", max difference "
                          << d.max_difference;
  std::printf("[ stepped   ] %s: max |logit| %.4f, max difference %.3g\n", GetParam(), d.max_logit,
              d.max_difference);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SteppedReferenceDecoderTest, ::testing::ValuesIn(kCausalShapes),
                         ShapeTestName);

// Each feature the reference checks matters in these tests: leaving it out of the reference
// makes the model disagree with it.
struct AblationCase {
  const char* model;
  Ablation ablation;
  const char* name;
};

class ReferenceAblationTest : public ::testing::TestWithParam<AblationCase> {};

TEST_P(ReferenceAblationTest, AblatedReferenceDisagrees) {
  const Difference d = CompareWithReference(GetParam().model, GetParam().ablation);
  EXPECT_FALSE(d.Within()) << "max |logit| " << d.max_logit << ", max difference "
                           << d.max_difference;
  std::printf("[ ablation  ] %s without %s: max |logit| %.4f, max difference %.3g\n",
              GetParam().model, GetParam().name, d.max_logit, d.max_difference);
}

INSTANTIATE_TEST_SUITE_P(
    Features, ReferenceAblationTest,
    ::testing::Values(
        AblationCase{"llama-tiny", Ablation::kSwappedRopeStyle, "RopeStyle"},
        AblationCase{"qwen2-tiny", Ablation::kSwappedRopeStyle, "RopeStyle"},
        AblationCase{"qwen2-tiny", Ablation::kNoQkvBias, "QkvBias"},
        AblationCase{"qwen3-tiny", Ablation::kNoQkNorm, "QkNorm"},
        AblationCase{"mixtral-tiny", Ablation::kNoMoeRenormalize, "Renormalize"},
        AblationCase{"tiny-qwen3moe", Ablation::kNoMoeRenormalize, "Renormalize"},
        AblationCase{"gemma2-tiny", Ablation::kNoWindow, "Window"},
        AblationCase{"embeddinggemma-tiny", Ablation::kNoWindow, "Window"},
        AblationCase{"gemma2-tiny-large-scores", Ablation::kNoAttnSoftcap, "AttnSoftcap"},
        AblationCase{"gemma2-tiny", Ablation::kNoFinalSoftcap, "FinalSoftcap"},
        AblationCase{"gemma2-tiny", Ablation::kNoPostNorms, "PostNorms"},
        AblationCase{"gpt-oss-tiny", Ablation::kNoWindow, "Window"},
        AblationCase{"gpt-oss-tiny", Ablation::kNoSinks, "Sinks"},
        AblationCase{"gpt-oss-tiny", Ablation::kNoRopeScaling, "Yarn"},
        AblationCase{"gpt-oss-tiny", Ablation::kNoQkvBias, "QkvBias"},
        AblationCase{"gpt-oss-tiny", Ablation::kNoExpertBiases, "ExpertBiases"},
        AblationCase{"gpt-oss-tiny", Ablation::kNoSwigluPlusOne, "SwigluPlusOne"},
        AblationCase{"gpt-oss-tiny-large-experts", Ablation::kUnclampedSwiglu, "SwigluClamp"},
        AblationCase{"tiny-gemma3", Ablation::kNoWindow, "Window"},
        AblationCase{"tiny-gemma3", Ablation::kNoRopeScaling, "LinearScaling"},
        AblationCase{"tiny-gemma3", Ablation::kGlobalRopeEverywhere, "LocalBase"},
        AblationCase{"tiny-gemma3", Ablation::kNoQkNorm, "QkNorm"},
        AblationCase{"phi3-tiny", Ablation::kNoRopeScaling, "LongRope"},
        AblationCase{"phi3-tiny", Ablation::kOtherLongRopeFactors, "LongFactors"},
        AblationCase{"phi3-tiny-within-original-context", Ablation::kOtherLongRopeFactors,
                     "ShortFactors"},
        AblationCase{"tiny-phi3", Ablation::kNoRopeScaling, "LongRope"},
        AblationCase{"gemma2-27b-tiny", Ablation::kHeadDimAttentionScale, "Gemma27bScale"}),
    [](const ::testing::TestParamInfo<AblationCase>& case_info) {
      std::string name = std::string(case_info.param.model) + "_" + case_info.param.name;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

}  // namespace
}  // namespace vllm
