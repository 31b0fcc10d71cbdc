#include "model/architecture.h"

#include <cctype>

namespace vllm {

std::string FormatTensorName(const std::string& pattern, int64_t layer, int64_t expert) {
  std::string name;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 3, "{L}") == 0) {
      name += std::to_string(layer);
      i += 2;
    } else if (pattern.compare(i, 3, "{E}") == 0) {
      name += std::to_string(expert);
      i += 2;
    } else {
      name += pattern[i];
    }
  }
  return name;
}

bool MatchTensorName(const std::string& pattern, const std::string& name, int64_t* layer,
                     int64_t* expert) {
  size_t at = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const bool is_layer = pattern.compare(i, 3, "{L}") == 0;
    if (is_layer || pattern.compare(i, 3, "{E}") == 0) {
      size_t end = at;
      while (end < name.size() && end - at < 9 &&
             std::isdigit(static_cast<unsigned char>(name[end]))) {
        ++end;
      }
      if (end == at) return false;
      *(is_layer ? layer : expert) = std::stoll(name.substr(at, end - at));
      at = end;
      i += 2;
    } else if (at >= name.size() || name[at++] != pattern[i]) {
      return false;
    }
  }
  return at == name.size();
}

std::string TranslateTensorName(const std::vector<TensorNamePair>& pairs, const std::string& name,
                                bool to_gguf) {
  for (const TensorNamePair& pair : pairs) {
    int64_t layer = -1, expert = -1;
    if (MatchTensorName(to_gguf ? pair.hf : pair.gguf, name, &layer, &expert)) {
      return FormatTensorName(to_gguf ? pair.gguf : pair.hf, layer, expert);
    }
  }
  return "";
}

std::vector<TensorNamePair> LlamaHfTensorNames() {
  return {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
      {"model.layers.{L}.input_layernorm.weight", "blk.{L}.attn_norm.weight"},
      {"model.layers.{L}.self_attn.q_proj.weight", "blk.{L}.attn_q.weight"},
      {"model.layers.{L}.self_attn.k_proj.weight", "blk.{L}.attn_k.weight"},
      {"model.layers.{L}.self_attn.v_proj.weight", "blk.{L}.attn_v.weight"},
      {"model.layers.{L}.self_attn.o_proj.weight", "blk.{L}.attn_output.weight"},
      {"model.layers.{L}.self_attn.q_proj.bias", "blk.{L}.attn_q.bias"},
      {"model.layers.{L}.self_attn.k_proj.bias", "blk.{L}.attn_k.bias"},
      {"model.layers.{L}.self_attn.v_proj.bias", "blk.{L}.attn_v.bias"},
      {"model.layers.{L}.self_attn.q_norm.weight", "blk.{L}.attn_q_norm.weight"},
      {"model.layers.{L}.self_attn.k_norm.weight", "blk.{L}.attn_k_norm.weight"},
      {"model.layers.{L}.post_attention_layernorm.weight", "blk.{L}.ffn_norm.weight"},
      {"model.layers.{L}.mlp.gate_proj.weight", "blk.{L}.ffn_gate.weight"},
      {"model.layers.{L}.mlp.up_proj.weight", "blk.{L}.ffn_up.weight"},
      {"model.layers.{L}.mlp.down_proj.weight", "blk.{L}.ffn_down.weight"},
  };
}

std::vector<TensorNamePair> LlamaHfTensorNamesWithPostAttentionNorm() {
  std::vector<TensorNamePair> names = LlamaHfTensorNames();
  for (TensorNamePair& pair : names) {
    if (pair.hf == "model.layers.{L}.post_attention_layernorm.weight") {
      pair.gguf = "blk.{L}.post_attention_norm.weight";
    }
  }
  return names;
}

}  // namespace vllm
