#include "model/lora_base_shape_of.h"

#include "model/architecture.h"

namespace vllm {

lora::LoraBaseShape LoraBaseShapeOf(const ModelConfig& config, bool gguf_file) {
  const Architecture* architecture = FindArchitecture(config.architecture);
  lora::LoraBaseShape base{
      .architecture = config.architecture,
      .num_layers = config.num_layers,
      .hidden_size = config.hidden_size,
      .q_size = config.num_heads * config.head_dim,
      .kv_size = config.num_kv_heads * config.head_dim,
      .intermediate_size = config.intermediate_size,
      .num_heads = config.num_heads,
      .num_kv_heads = config.num_kv_heads,
      .head_dim = config.head_dim,
      .gguf_permutes_qk_rows =
          architecture != nullptr && architecture->gguf_rope_style == RopeStyle::kInterleaved};
  base.qk_rows_permuted_for_rope = gguf_file && base.gguf_permutes_qk_rows;
  if (config.num_experts > 0) {
    for (lora::LoraTarget target :
         {lora::LoraTarget::kGate, lora::LoraTarget::kUp, lora::LoraTarget::kDown}) {
      base.has_target[static_cast<int>(target)] = false;
    }
  }
  return base;
}

}  // namespace vllm
