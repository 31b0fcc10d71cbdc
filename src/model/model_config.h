// Architecture hyper-parameters of a decoder-only transformer, read from model metadata.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "model/pooling_config.h"

namespace vllm {

// How RoPE pairs the dimensions of a head.
enum class RopeStyle {
  kInterleaved,  // (x[2i], x[2i+1]) — GGUF Llama (llama.cpp permutes Q/K at conversion)
  kNeox,         // (x[i], x[i + rope_dim / 2]) — Hugging Face layout, Qwen2/Qwen3 GGUFs
};

struct ModelConfig {
  std::string architecture;  // e.g. "llama"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 0;
  float rms_norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  int64_t rope_dim = 0;              // leading dims of each head that rotate (usually head_dim)
  float rope_position_scale = 1.0f;  // linear scaling: positions are multiplied by this
  RopeStyle rope_style = RopeStyle::kInterleaved;

  // Attention (0: the default)
  float attention_scale = 0.0f;      // multiplies q·k; 0: 1 / sqrt(head_dim)
  float attn_logit_softcap = 0.0f;   // Gemma 2: scores become cap * tanh(score / cap)
  float final_logit_softcap = 0.0f;  // Gemma 2: logits become cap * tanh(logit / cap)
  // Sliding-window attention: a local layer's token at position p sees [p - W + 1, p].
  int64_t sliding_window = 0;          // W; 0: every layer attends globally
  int64_t sliding_window_pattern = 0;  // N > 0: every N-th layer (1-based) is global; 0: none is
  float rope_theta_swa = 0.0f;         // RoPE base of the local layers (Gemma 3); 0: rope_theta

  // Mixture of experts
  int64_t num_experts = 0;               // experts per MoE layer; 0: dense FFN
  int64_t num_experts_per_token = 0;     // experts each token is routed to (top-k)
  int64_t expert_intermediate_size = 0;  // each expert's FFN width
  bool moe_normalize_top_k = true;       // renormalize the top-k router weights to sum to 1
  // RoPE scaling beyond linear position scaling
  int64_t rope_original_context_length = 0;  // LongRoPE: long factors past it; YaRN: its base
  float rope_attn_factor = 1.0f;             // multiplies the rotation's cos and sin (LongRoPE)
  float rope_yarn_factor = 0.0f;             // YaRN context extension factor; 0: no YaRN
  float rope_yarn_beta_fast = 32.0f;
  float rope_yarn_beta_slow = 1.0f;
  bool rope_yarn_truncate = true;  // round YaRN's correction range to whole dimensions

  // Encoders (BERT, XLM-RoBERTa): bidirectional attention, post-LayerNorm blocks, learned
  // absolute positions and token-type embeddings; no KV cache, no logits.
  bool is_encoder = false;
  float layer_norm_eps = 1e-12f;
  int64_t type_vocab_size = 0;  // token-type (segment) embeddings; 0: none
  int64_t position_offset = 0;  // token i reads position row i + offset (XLM-R: padding_idx + 1)
  // Decoders whose layers attend both ways over the whole prompt (EmbeddingGemma: no causal
  // mask; a sliding-window layer's token sees the positions within sliding_window / 2 on either
  // side). They only pool: each prompt is computed whole, in one step.
  bool bidirectional_attention = false;
  // A sequence-classification head's outputs (cross-encoders, rerankers); 0: none.
  int64_t num_labels = 0;
  std::vector<std::string> id2label;  // [num_labels] or empty
  PoolerConfig pooler;                // as the model's files fix it

  // The sliding window of `layer` (0: global attention).
  int64_t LayerSlidingWindow(int64_t layer) const {
    if (sliding_window <= 0) return 0;
    const bool global =
        sliding_window_pattern > 0 && layer % sliding_window_pattern == sliding_window_pattern - 1;
    return global ? 0 : sliding_window;
  }
  float AttentionScale() const;
  // vLLM's derived max_model_len: the context length raised by rope_scaling's factor (YaRN's from
  // its original context); llama3 and LongRoPE scaling, and Gemma 3 (whose context already counts
  // its scaling), keep the context length.
  int64_t DerivedMaxModelLen() const;

  Status Validate() const;
};

// Reads "<arch>.*" keys as llama.cpp writes them, the common ones here and the family's own in its
// architecture file; vocab_size falls back to the token list length.
Expected<ModelConfig> ModelConfigFromGguf(const GgufFile& file);

// Reads an integer / float GGUF key into `out` when present (for the architecture files).
Status ReadGgufInt(const GgufFile& file, const std::string& key, int64_t* out);
Status ReadGgufFloat(const GgufFile& file, const std::string& key, float* out);

}  // namespace vllm
