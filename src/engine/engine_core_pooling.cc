// EngineCore's step for pooling runners: the scheduled prompts (each whole) go through the model
// and the pooler in one batch, and every one finishes with its pooled output.
#include "engine/engine_core.h"

namespace vllm {

Expected<std::vector<EngineCoreOutput>> EngineCore::StepPooling(const SchedulerOutput& schedule) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<ScheduledSequence> sequences;
  std::vector<const PoolingSpec*> specs;
  std::map<std::string, double> queue_seconds;
  for (const ScheduledRequest& scheduled : schedule.scheduled) {
    const Request& request = *scheduled.request;
    sequences.push_back({request.request_id, request.prompt_token_ids, request.output_token_ids,
                         request.num_computed_tokens, scheduled.num_new_tokens,
                         scheduled.block_tables, scheduled.spec_token_ids});
    specs.push_back(&pooling_specs_.at(request.request_id));
    queue_seconds[request.request_id] =
        std::chrono::duration<double>(now - arrivals_.at(request.request_id).added_at).count();
  }
  auto pooled = runner_->ExecutePooling(sequences, specs);
  if (!pooled) return Error{pooled.error()};
  std::map<std::string, std::vector<float>> pooled_of;
  for (size_t i = 0; i < sequences.size(); ++i) {
    pooled_of[std::string(sequences[i].request_id)] = std::move((*pooled)[i]);
  }
  Scheduler::StepResult result = scheduler_->Update(schedule, {});
  std::vector<EngineCoreOutput> outputs;
  for (auto& request : result.finished) {
    Forget(request->request_id);
    EngineCoreOutput& output = outputs.emplace_back();
    output.request_id = request->request_id;
    output.status = request->status;
    output.queue_seconds = queue_seconds[request->request_id];
    output.pooled = std::move(pooled_of[request->request_id]);
  }
  return outputs;
}

}  // namespace vllm
