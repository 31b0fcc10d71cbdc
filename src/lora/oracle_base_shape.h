// The base of the shared LoRA oracles (../shared/oracles/lora/base.gguf: llama, 3 layers, dim 256,
// 8 heads (4 KV) of 32, ffn 768), for the tests and the fuzzer that read its adapters: as its GGUF
// holds it (q / k rows permuted for RoPE) or as an HF checkpoint of the same weights would.
#pragma once

#include "lora/lora_base_shape.h"

namespace vllm::lora {

inline LoraBaseShape OracleBase(bool gguf_base) {
  return LoraBaseShape{.architecture = "llama",
                       .num_layers = 3,
                       .hidden_size = 256,
                       .q_size = 256,
                       .kv_size = 128,
                       .intermediate_size = 768,
                       .num_heads = 8,
                       .num_kv_heads = 4,
                       .head_dim = 32,
                       .qk_rows_permuted_for_rope = gguf_base,
                       .gguf_permutes_qk_rows = true};
}

}  // namespace vllm::lora
