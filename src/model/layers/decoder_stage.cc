// The pipeline-stage side of Decoder (decoder.h, pipeline_parallel.h): loading a stage, its KV
// storage, the micro-batches of a step through the stages, and the bubble report.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/logging.h"
#include "dist/communicator.h"
#include "model/forward_batch_split.h"
#include "model/kv_cache_layout.h"
#include "model/layers/decoder.h"

namespace vllm {

Decoder::~Decoder() {
  if (pipeline_ == nullptr || forward_seconds_ <= 0) return;
  char shares[96];
  std::snprintf(shares, sizeof(shares), "waited %.1f %% of its %.3f s of forward steps",
                100.0 * waited_seconds_ / forward_seconds_, forward_seconds_);
  VLLM_LOG(kInfo) << "pipeline stage " << stage_.stage << " of " << stage_.num_stages << " (layers "
                  << stage_.first_layer << "-" << stage_.end_layer - 1 << "): " << shares
                  << " for its input (the pipeline bubble)";
}

void Decoder::SetStage(dist::Communicator* group, PipelineStage stage) {
  pipeline_ = group;
  stage_ = stage;
}

KvStorage::Options Decoder::KvStorageOptionsOf(const KvStorage::Options& whole) const {
  if (pipeline_ == nullptr) return whole;
  KvStorage::Options stage = whole;
  const KvCacheLayout layout =
      whole.layout.groups.empty() ? SingleGroupKvCacheLayout(whole.num_layers) : whole.layout;
  stage.layout = StageKvCacheLayout(layout, stage_.first_layer, stage_.end_layer);
  return stage;
}

Status Decoder::ForwardStage(const ForwardBatch& batch, KvStorage& kv, float* logits) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  double waited_seconds = 0;
  auto waiting = [&](const std::function<Status()>& receive) {
    const Clock::time_point before = Clock::now();
    Status received = receive();
    waited_seconds += std::chrono::duration<double>(Clock::now() - before).count();
    return received;
  };
  // Every stage refuses a bad batch here, before any stage waits for another (its micro-batches
  // are then consistent too).
  VLLM_RETURN_IF_ERROR(CheckBatch(batch, kv));
  const int64_t hidden = config_.hidden_size;
  const int64_t vocab = config_.vocab_size;
  const int64_t step_logits_bytes =
      static_cast<int64_t>(batch.logits_indices.size()) * vocab * sizeof(float);
  // The last stage's logits of the whole step, sent to the first at the end: [logits, vocab].
  std::vector<float> step_logits(stage_.is_last() ? step_logits_bytes / sizeof(float) : 0);
  std::vector<float> x;            // [part tokens, hidden], the residual stream
  std::vector<float> part_logits;  // [part logits, vocab]
  const int64_t num_parts = NumMicroBatches(batch.num_tokens(), stage_.num_stages);
  for (const MicroBatch& part : SplitForwardBatch(batch, num_parts, hidden)) {
    const int64_t bytes = part.batch.num_tokens() * hidden * sizeof(float);
    if (!stage_.is_first()) {
      x.resize(part.batch.num_tokens() * hidden);
      VLLM_RETURN_IF_ERROR(
          waiting([&] { return pipeline_->Receive(x.data(), bytes, stage_.stage - 1); }));
    }
    VLLM_RETURN_IF_ERROR(RunLayers(part.batch, kv, &x));
    if (!stage_.is_last()) {
      VLLM_RETURN_IF_ERROR(pipeline_->Send(x.data(), bytes, stage_.stage + 1));
      continue;
    }
    part_logits.resize(part.logits_rows.size() * vocab);
    VLLM_RETURN_IF_ERROR(
        ends_.Logits(x.data(), part.batch.logits_indices, pool_, part_logits.data()));
    for (size_t r = 0; r < part.logits_rows.size(); ++r) {
      std::copy_n(part_logits.data() + r * vocab, vocab,
                  step_logits.data() + int64_t{part.logits_rows[r]} * vocab);
    }
  }
  if (step_logits_bytes > 0 && stage_.is_last()) {
    VLLM_RETURN_IF_ERROR(pipeline_->Send(step_logits.data(), step_logits_bytes, 0));
  }
  if (step_logits_bytes > 0 && stage_.is_first()) {
    VLLM_RETURN_IF_ERROR(waiting(
        [&] { return pipeline_->Receive(logits, step_logits_bytes, stage_.num_stages - 1); }));
  }
  forward_seconds_ += std::chrono::duration<double>(Clock::now() - started).count();
  waited_seconds_ += waited_seconds;
  return Status::Ok();
}

}  // namespace vllm
