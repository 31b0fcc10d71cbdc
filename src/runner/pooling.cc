#include "runner/pooling.h"

#include <span>

#include "model/layers/pooler.h"
#include "runner/model_runner.h"

namespace vllm {

Expected<std::vector<float>> PoolOutput(const Model& model, const PoolingSpec& spec,
                                        const float* hidden, int64_t num_tokens) {
  const int64_t hidden_size = model.config().hidden_size;
  std::vector<float> pooled = PoolSequence(spec.pooling_type, hidden, num_tokens, hidden_size);
  if (spec.classify) {
    std::vector<float> scores(model.config().num_labels);  // [num_labels]
    VLLM_RETURN_IF_ERROR(model.Classify(pooled.data(), 1, scores.data()));
    if (spec.activation == PoolingActivation::kSoftmax) SoftmaxInPlace(scores);
    if (spec.activation == PoolingActivation::kSigmoid) SigmoidInPlace(scores);
    return scores;
  }
  const int64_t num_rows = static_cast<int64_t>(pooled.size()) / hidden_size;
  VLLM_RETURN_IF_ERROR(model.ProjectPooled(pooled.data(), num_rows));
  const int64_t width = spec.dimensions > 0 ? spec.dimensions : hidden_size;
  std::vector<float> out;  // [num_rows, width]
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* row = pooled.data() + r * hidden_size;
    out.insert(out.end(), row, row + width);
    if (spec.normalize) NormalizeL2(std::span<float>(out).subspan(r * width, width));
  }
  return out;
}

Expected<ModelRunnerOutput> ModelRunner::ExecutePooling(
    std::span<const ScheduledSequence> sequences, std::span<const PoolingSpec* const> specs) {
  const ModelConfig& config = model_.config();
  batch_ = ForwardBatch();
  for (size_t i = 0; i < sequences.size(); ++i) {
    const ScheduledSequence& sequence = sequences[i];
    if (sequence.num_computed_tokens != 0 ||
        sequence.num_new_tokens != static_cast<int64_t>(sequence.prompt_token_ids.size())) {
      return Error{"pooling request " + std::string(sequence.request_id) +
                   " must be computed whole in one step"};
    }
    if (config.is_encoder) {  // packed, no KV cache
      for (size_t t = 0; t < sequence.prompt_token_ids.size(); ++t) {
        batch_.token_ids.push_back(sequence.prompt_token_ids[t]);
        batch_.positions.push_back(static_cast<int32_t>(t));
      }
      if (batch_.query_start_loc.empty()) batch_.query_start_loc.push_back(0);
      batch_.query_start_loc.push_back(static_cast<int32_t>(batch_.token_ids.size()));
      batch_.seq_lens.push_back(static_cast<int32_t>(sequence.prompt_token_ids.size()));
    } else {  // a decoder's prefill through the paged KV cache, freed when it finishes
      VLLM_RETURN_IF_ERROR(AppendSequence(sequence.prompt_token_ids, 0, sequence.block_tables,
                                          kv_->options().block_size, batch_));
    }
    const std::vector<int32_t>& types = specs[i]->token_type_ids;
    if (!types.empty() && types.size() != sequence.prompt_token_ids.size()) {
      return Error{"token_type_ids must have one entry per prompt token"};
    }
    batch_.token_type_ids.insert(batch_.token_type_ids.end(), types.begin(), types.end());
    if (types.empty()) {
      batch_.token_type_ids.insert(batch_.token_type_ids.end(), sequence.prompt_token_ids.size(),
                                   0);
    }
  }
  // Each sequence's adapter, when any has one (EngineCore takes adapters for decoders only).
  for (size_t i = 0; i < sequences.size(); ++i) {
    const lora::LoraWeights* lora = LoraOf(sequences[i].request_id);
    if (lora == nullptr) continue;
    batch_.seq_loras.resize(sequences.size(), nullptr);
    batch_.seq_loras[i] = lora;
  }
  std::vector<float> hidden(batch_.num_tokens() * config.hidden_size);  // [num_tokens, hidden]
  VLLM_RETURN_IF_ERROR(model_.ForwardHidden(batch_, *kv_, hidden.data()));
  ModelRunnerOutput outputs(sequences.size());
  for (size_t i = 0; i < sequences.size(); ++i) {
    const int64_t begin = batch_.query_start_loc[i];
    auto output = PoolOutput(model_, *specs[i], hidden.data() + begin * config.hidden_size,
                             batch_.query_start_loc[i + 1] - begin);
    if (!output) return Error{output.error()};
    outputs.pooled[i] = std::move(*output);
  }
  return outputs;
}

}  // namespace vllm
