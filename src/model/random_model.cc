// The shapes make-random-model knows and the writer of their GGUF files.
#include "model/random_model.h"

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "model/architecture.h"
#include "model/quant_recipe.h"
#include "model/random_encoder.h"
#include "model/random_model_plan.h"

namespace vllm {
const std::vector<ModelShape>& KnownModelShapes() {
  static const std::vector<ModelShape> shapes = {
      {"tinyllama-1.1b", 2048, 22, 32, 4, 5632, 2048, 10000.0f, false},
      {"stories260k", 64, 5, 8, 4, 172, 2048, 10000.0f, false},
      {"smollm2-135m", 576, 30, 9, 3, 1536, 8192, 100000.0f, true},
      {"llama-tiny", 128, 4, 4, 2, 384, 1024, 10000.0f, false},
      {"llama-d256", 256, 3, 8, 4, 768, 1024, 10000.0f, false},  // the quantized oracles' shape
      // Tensor parallel 2 of K-quants: 256 columns per rank of attn_output; 2 KV heads.
      {"llama-d512", 512, 2, 8, 2, 1024, 1024, 10000.0f, false},
      {"qwen3-0.6b", 1024, 28, 16, 8, 3072, 40960, 1000000.0f, true, "qwen3", 128},
      {"qwen2-tiny", 128, 4, 4, 2, 384, 1024, 1000000.0f, true, "qwen2"},
      {"qwen3-tiny", 128, 4, 4, 2, 384, 1024, 1000000.0f, true, "qwen3", 64},
      {"mixtral-tiny", 128, 4, 4, 2, 256, 1024, 1000000.0f, false, "llama", 0, 8, 2},
      {"mixtral-8x7b", 4096, 32, 32, 8, 14336, 32768, 1000000.0f, false, "llama", 0, 8, 2},
      {"qwen3-30b-a3b", 2048, 48, 32, 4, 768, 40960, 1000000.0f, false, "qwen3moe", 128, 128, 8},
      {"qwen3moe-tiny", 128, 4, 4, 2, 64, 1024, 1000000.0f, false, "qwen3moe", 48, 8, 4},
      {"gemma2-tiny", 128, 4, 4, 2, 256, 1024, 10000.0f, true, "gemma2", 32, 0, 0, 8},
      // Gemma 2 27B's layer count (46), whose queries are scaled by (hidden / heads)^-1/2 rather
      // than head_dim^-1/2, at a test size with head_dim != hidden / heads.
      {"gemma2-27b-tiny", 128, 46, 4, 2, 256, 1024, 10000.0f, true, "gemma2", 16, 0, 0, 8},
      {"gemma2-2b", 2304, 26, 8, 4, 9216, 8192, 10000.0f, true, "gemma2", 256, 0, 0, 4096},
      {"gemma3-1b", 1152, 26, 4, 1, 6912, 32768, 1000000.0f, true, "gemma3", 256, 0, 0, 512},
      // Five local layers (window 8) to one global, whose positions are scaled by 8.
      {"gemma3-tiny", 128, 6, 4, 1, 256, 1024, 1000000.0f, true, "gemma3", 64, 0, 0, 8, 0, 0, 8.0f},
      {"gemma3-4b", 2560, 34, 8, 4, 10240, 131072, 1000000.0f, true, "gemma3", 256, 0, 0, 1024, 0,
       0, 8.0f},
      // Phi-3 shapes: partial rotary (3/4 of a head), LongRoPE over a 4k (tiny: 256) pretraining
      // context.
      {"phi3-tiny", 128, 4, 4, 2, 256, 1024, 10000.0f, false, "phi3", 32, 0, 0, 0, 24, 256},
      {"phi4-mini", 3072, 32, 24, 8, 8192, 131072, 10000.0f, true, "phi3", 128, 0, 0, 0, 96, 4096},
      {"gpt-oss-tiny", 128, 4, 4, 2, 128, 1024, 150000.0f, false, "gpt-oss", 32, 8, 2, 8},
      {"gpt-oss-20b", 2880, 24, 64, 8, 2880, 131072, 150000.0f, false, "gpt-oss", 64, 32, 4, 128},
      // Pooling models (the last field, llama.cpp's pooling_type): Qwen3-Embedding (3, last
      // token), Qwen3-Reranker (4, rank head), EmbeddingGemma (1, mean; bidirectional Gemma 3
      // with Dense modules).
      {"qwen3-embedding-0.6b", 1024, 28, 16, 8, 3072, 32768, 1000000.0f, true, "qwen3", 128, 0, 0,
       0, 0, 0, 0.0f, 3},
      {"qwen3-embedding-tiny", 128, 4, 4, 2, 384, 1024, 1000000.0f, true, "qwen3", 64, 0, 0, 0, 0,
       0, 0.0f, 3},
      {"qwen3-reranker-tiny", 128, 4, 4, 2, 384, 1024, 1000000.0f, true, "qwen3", 64, 0, 0, 0, 0, 0,
       0.0f, 4},
      {"embeddinggemma-300m", 768, 24, 3, 1, 1152, 2048, 1000000.0f, true, "gemma-embedding", 256,
       0, 0, 512, 0, 0, 0.0f, 1},
      {"embeddinggemma-tiny", 128, 6, 4, 2, 256, 1024, 1000000.0f, true, "gemma-embedding", 32, 0,
       0, 8, 0, 0, 0.0f, 1},
  };
  return shapes;
}

const ModelShape* FindModelShape(const std::string& name) {
  for (const auto& shape : KnownModelShapes()) {
    if (shape.name == name) return &shape;
  }
  return nullptr;
}

Status WriteRandomModel(const RandomModelOptions& options) {
  if (const EncoderShape* encoder = FindEncoderShape(options.shape)) {
    if (options.residual_scale != 1.0f) return Error{"--residual-scale: decoder shapes only"};
    return WriteRandomEncoder(options, *encoder);
  }
  const ModelShape* found = FindModelShape(options.shape);
  if (found == nullptr) {
    std::string names;
    for (const auto& shape : KnownModelShapes()) names += (names.empty() ? "" : ", ") + shape.name;
    return Error{"unknown shape '" + options.shape + "' (known: " + names + ")"};
  }
  ModelShape shape = *found;
  if (options.num_layers_override > 0) shape.num_layers = options.num_layers_override;
  const Architecture* architecture = FindArchitecture(shape.architecture);
  if (architecture == nullptr || architecture->plan_random_model == nullptr) {
    return Error{"no random-model writer for architecture '" + shape.architecture + "'"};
  }
  auto recipe = QuantRecipe::Parse(options.dtype);
  if (!recipe) return Error{"--dtype: " + recipe.error()};
  auto vocab = GgufFile::Open(options.vocab_path);
  if (!vocab) return Error{"vocabulary: " + vocab.error()};
  auto tokens = (*vocab)->GetStringArray("tokenizer.ggml.tokens");
  if (!tokens || !tokens->has_value()) {
    return Error{"vocabulary file has no tokenizer.ggml.tokens"};
  }
  const int64_t vocab_size = static_cast<int64_t>((*tokens)->size());
  const int64_t hidden = shape.hidden_size;

  // Scales keep activations O(1) through the residual stream: 1/sqrt(fan_in) per matrix.
  // Matrices start in the recipe's base type; its mix and fallbacks are applied below.
  RandomModelPlan model(shape, recipe->base_type());
  model.residual_scale = options.residual_scale;
  const int64_t head_dim = model.head_dim();
  model.AddKey("vocab_size", GgufValue::Uint32(static_cast<uint32_t>(vocab_size)));
  model.AddKey("context_length", GgufValue::Uint32(shape.context_length));
  model.AddKey("embedding_length", GgufValue::Uint32(hidden));
  model.AddKey("block_count", GgufValue::Uint32(shape.num_layers));
  model.AddKey("feed_forward_length", GgufValue::Uint32(shape.intermediate_size));
  model.AddKey("rope.dimension_count",
               GgufValue::Uint32(shape.rope_dim > 0 ? shape.rope_dim : head_dim));
  model.AddKey("attention.head_count", GgufValue::Uint32(shape.num_heads));
  model.AddKey("attention.head_count_kv", GgufValue::Uint32(shape.num_kv_heads));
  model.AddKey("attention.key_length", GgufValue::Uint32(head_dim));
  model.AddKey("attention.value_length", GgufValue::Uint32(head_dim));
  model.AddKey("attention.layer_norm_rms_epsilon", GgufValue::Float32(1e-5f));
  model.AddKey("rope.freq_base", GgufValue::Float32(shape.rope_theta));
  if (shape.num_experts > 0) {
    model.AddKey("expert_count", GgufValue::Uint32(shape.num_experts));
    model.AddKey("expert_used_count", GgufValue::Uint32(shape.num_experts_per_token));
    model.AddKey("expert_feed_forward_length", GgufValue::Uint32(shape.intermediate_size));
  }
  if (shape.sliding_window > 0) {
    model.AddKey("attention.sliding_window", GgufValue::Uint32(shape.sliding_window));
  }
  model.AddMatrix("token_embd.weight", {hidden, vocab_size}, /*scale=*/1.0f);
  architecture->plan_random_model(&model);
  model.AddNorm("output_norm.weight", hidden);
  if (!shape.tie_word_embeddings) model.AddMatrix("output.weight", {hidden, vocab_size});

  GgufWriter writer;
  writer.AddMetadata("general.architecture", GgufValue::String(shape.architecture));
  writer.AddMetadata("general.name", GgufValue::String("random " + shape.name));
  writer.AddMetadata("general.file_type", GgufValue::Uint32(recipe->file_type()));
  if (GetSupportedTypeTraits(recipe->base_type())->block_size > 1) {
    writer.AddMetadata("general.quantization_version", GgufValue::Uint32(2));
  }
  for (const auto& [key, value] : model.keys()) writer.AddMetadata(key, value);
  for (const auto& key : (*vocab)->metadata_order()) {
    if (key.rfind("tokenizer.", 0) == 0) writer.AddMetadata(key, *(*vocab)->Find(key));
  }
  for (auto& tensor : model.tensors()) {
    if (tensor.shape.size() >= 2 && tensor.type != GgmlType::kF32) {
      tensor.type = recipe->TypeFor(tensor.name, shape.num_layers, tensor.shape[0]);
    }
  }
  return WriteRandomTensors(model.tensors(), options.seed, options.output_path, &writer);
}

}  // namespace vllm
