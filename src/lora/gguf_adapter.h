// A llama.cpp GGUF LoRA file (convert_lora_to_gguf.py): general.type "adapter", adapter.type
// "lora", adapter.lora.alpha, and per layer and weight
//   blk.N.attn_q.weight.lora_a   ggml ne [in, r]   = row-major [r, in]
//   blk.N.attn_q.weight.lora_b   ggml ne [r, out]  = row-major [out, r]
// for attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down (and the fused attn_qkv,
// and ffn_up holding gate and up, of Phi-3). lora_B of q / k is in the row order of a GGUF base
// of the same family (LoraBaseShape::gguf_permutes_qk_rows).
#pragma once

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "lora/lora_base_shape.h"
#include "lora/lora_file_pairs.h"

namespace vllm::lora {

Expected<LoraFilePairs> ReadGgufAdapter(const GgufFile& file, const LoraBaseShape& base);

}  // namespace vllm::lora
