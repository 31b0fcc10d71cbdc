// vLLM's sleep mode for the runner: the KV cache storage (most of the memory after the weights)
// is unmapped while the engine sleeps and mapped again, empty, when it wakes.
#include "runner/draft_model_proposer.h"
#include "runner/model_runner.h"

namespace vllm {

void ModelRunner::ReleaseKvCache() {
  if (!kv_) return;
  released_kv_options_ = kv_->options();
  kv_.reset();
  if (draft_model_proposer_) draft_model_proposer_->ReleaseKvCache();
}

Status ModelRunner::RestoreKvCache() {
  if (kv_) return Status::Ok();
  auto kv = KvStorage::Create(released_kv_options_);
  if (!kv) return Error{"cannot restore the KV cache: " + kv.error()};
  kv_ = std::move(*kv);
  if (draft_model_proposer_) return draft_model_proposer_->RestoreKvCache();
  return Status::Ok();
}

void DraftModelProposer::ReleaseKvCache() {
  if (!kv_) return;
  released_kv_options_ = kv_->options();
  kv_.reset();
}

Status DraftModelProposer::RestoreKvCache() {
  if (kv_) return Status::Ok();
  auto kv = KvStorage::Create(released_kv_options_);
  if (!kv) return Error{"cannot restore the draft model's KV cache: " + kv.error()};
  kv_ = std::move(*kv);
  return Status::Ok();
}

}  // namespace vllm
