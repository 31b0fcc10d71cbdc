#include "engine/output_processor.h"

#include <algorithm>
#include <utility>

namespace vllm {

void OutputProcessor::AddRequest(const std::string& request_id, const std::string& prompt,
                                 const std::vector<int32_t>& prompt_token_ids,
                                 const SamplingParams& params,
                                 const std::vector<std::string>& child_ids) {
  RequestState state;
  state.added_at = std::chrono::steady_clock::now();
  state.prompt = prompt;
  state.prompt_token_ids = prompt_token_ids;
  state.params = params;
  if (params.prompt_logprobs) state.prompt_logprobs.emplace(1);  // none for the first token
  for (size_t i = 0; i < child_ids.size(); ++i) {
    Sequence sequence;
    if (tokenizer_) {
      sequence.detokenizer = std::make_unique<IncrementalDetokenizer>(*tokenizer_, prompt_token_ids,
                                                                      params.skip_special_tokens);
    }
    sequence.output.index = static_cast<int>(i);
    state.sequences.push_back(std::move(sequence));
    child_to_parent_[child_ids[i]] = {request_id, static_cast<int>(i)};
  }
  requests_[request_id] = std::move(state);
}

std::vector<std::string> OutputProcessor::ChildIds(const std::string& request_id) const {
  std::vector<std::string> ids;
  for (const auto& [child, parent] : child_to_parent_) {
    if (parent.first == request_id) ids.push_back(child);
  }
  return ids;
}

std::string OutputProcessor::DecodeToken(int32_t id) const {
  return tokenizer_ ? tokenizer_->Decode({&id, 1}, false) : std::string();
}

PositionLogprobs OutputProcessor::ToPositionLogprobs(const TokenLogprobs& logprobs) const {
  PositionLogprobs position;
  for (size_t rank = 0; rank < logprobs.top.size(); ++rank) {
    const auto [id, logprob] = logprobs.top[rank];
    position[id] = {logprob, static_cast<int>(rank) + 1, DecodeToken(id)};
  }
  position[logprobs.token_id] = {logprobs.logprob, logprobs.rank, DecodeToken(logprobs.token_id)};
  return position;
}

bool OutputProcessor::AppendText(const SamplingParams& params, const std::string& delta,
                                 Sequence* sequence) {
  std::string& text = sequence->output.text;
  const size_t old_size = text.size();
  text += delta;
  for (const std::string& stop : params.stop) {
    // A match may start inside the old text and end in the new.
    size_t search_from = old_size >= stop.size() - 1 ? old_size - (stop.size() - 1) : 0;
    size_t found = text.find(stop, search_from);
    if (found == std::string::npos) continue;
    text.resize(params.include_stop_str_in_output ? found + stop.size() : found);
    sequence->output.stop_reason = stop;
    sequence->output.finish_reason = "stop";
    return true;
  }
  return false;
}

std::vector<RequestOutput> OutputProcessor::Process(const std::vector<EngineCoreOutput>& outputs,
                                                    std::vector<std::string>* stopped_child_ids) {
  std::vector<std::string> touched;
  const auto now = std::chrono::steady_clock::now();  // when this step's tokens came
  for (const EngineCoreOutput& core_output : outputs) {
    auto link = child_to_parent_.find(core_output.request_id);
    if (link == child_to_parent_.end()) continue;
    const auto [parent_id, index] = link->second;
    RequestState& state = requests_.at(parent_id);
    Sequence& sequence = state.sequences[index];
    state.num_cached_tokens = std::max(state.num_cached_tokens, core_output.num_cached_tokens);
    if (core_output.queue_seconds && !state.queue_seconds) {
      state.queue_seconds = core_output.queue_seconds;
    }
    if (!core_output.new_token_ids.empty()) {
      if (!state.first_token_at) state.first_token_at = now;
      state.last_token_at = now;
    }
    if (index == 0 && state.prompt_logprobs) {
      for (const TokenLogprobs& logprobs : core_output.new_prompt_logprobs) {
        state.prompt_logprobs->push_back(ToPositionLogprobs(logprobs));
      }
    }
    if (sequence.output.finished()) continue;
    bool stopped = false;
    const auto& new_ids = core_output.new_token_ids;
    for (size_t i = 0; i < new_ids.size() && !stopped; ++i) {
      sequence.output.token_ids.push_back(new_ids[i]);
      if (i < core_output.new_logprobs.size()) {
        const TokenLogprobs& logprobs = core_output.new_logprobs[i];
        sequence.output.cumulative_logprob += logprobs.logprob;
        if (!sequence.output.logprobs) sequence.output.logprobs.emplace();
        sequence.output.logprobs->push_back(ToPositionLogprobs(logprobs));
      }
      // The EOS / stop token id that ends a sequence adds no text unless asked to.
      const bool is_stop_token = i + 1 == new_ids.size() &&
                                 core_output.status == RequestStatus::kFinishedStopped &&
                                 !state.params.include_stop_str_in_output;
      if (!is_stop_token && sequence.detokenizer) {
        stopped = AppendText(state.params, sequence.detokenizer->Step(new_ids[i]), &sequence);
      }
    }
    if (stopped) {
      stopped_child_ids->push_back(core_output.request_id);
    } else if (IsFinished(core_output.status)) {
      // The held-back tail may itself complete a stop string; that sets the reason.
      const std::string tail = sequence.detokenizer ? sequence.detokenizer->Flush() : "";
      if (!AppendText(state.params, tail, &sequence)) {
        sequence.output.finish_reason = FinishReason(core_output.status);
        if (core_output.stop_token_id) sequence.output.stop_reason = *core_output.stop_token_id;
      }
    }
    if (std::find(touched.begin(), touched.end(), parent_id) == touched.end()) {
      touched.push_back(parent_id);
    }
  }
  std::vector<RequestOutput> results;
  for (const std::string& id : touched) {
    RequestState& state = requests_.at(id);
    const bool finished = std::all_of(state.sequences.begin(), state.sequences.end(),
                                      [](const Sequence& s) { return s.output.finished(); });
    if (state.params.output_kind == RequestOutputKind::kFinalOnly && !finished) continue;
    results.push_back(MakeOutput(id, state, finished));
    if (finished) {
      for (auto it = child_to_parent_.begin(); it != child_to_parent_.end();) {
        it = it->second.first == id ? child_to_parent_.erase(it) : std::next(it);
      }
      requests_.erase(id);
    }
  }
  return results;
}

RequestOutput OutputProcessor::MakeOutput(const std::string& request_id, RequestState& state,
                                          bool finished) {
  const bool delta = state.params.output_kind == RequestOutputKind::kDelta;
  RequestOutput output;
  output.request_id = request_id;
  output.prompt = state.prompt;
  output.prompt_token_ids = state.prompt_token_ids;
  output.finished = finished;
  output.num_cached_tokens = state.num_cached_tokens;
  output.queue_seconds = state.queue_seconds;
  if (finished && state.first_token_at) {
    const auto first_scheduled_at =
        state.added_at + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(state.queue_seconds.value_or(0.0)));
    output.prefill_seconds = std::max(
        0.0, std::chrono::duration<double>(*state.first_token_at - first_scheduled_at).count());
    output.decode_seconds =
        std::chrono::duration<double>(state.last_token_at - *state.first_token_at).count();
  }
  const bool prompt_logprobs_complete =
      state.prompt_logprobs && state.prompt_logprobs->size() == state.prompt_token_ids.size();
  if (prompt_logprobs_complete && (!delta || !state.prompt_logprobs_sent)) {
    // Delta mode sends them once, and a finished request needs them no more: both hand them over.
    output.prompt_logprobs = delta || finished ? std::exchange(state.prompt_logprobs, std::nullopt)
                                               : state.prompt_logprobs;
    state.prompt_logprobs_sent = true;
  }
  // While a stop string could still complete, its first characters are held back.
  size_t hold_back = 0;
  for (const auto& stop : state.params.stop) hold_back = std::max(hold_back, stop.size() - 1);
  for (Sequence& sequence : state.sequences) {
    CompletionOutput& whole = sequence.output;
    const bool done = whole.finished();
    const size_t visible =
        done ? whole.text.size() : whole.text.size() - std::min(hold_back, whole.text.size());
    if (!delta) {
      // Every output holds all so far: a copy, or at the end the whole sequence itself.
      CompletionOutput completion = finished ? std::move(whole) : whole;
      completion.text.resize(visible);
      output.outputs.push_back(std::move(completion));
      continue;
    }
    // A sequence that finished in an earlier step (n > 1) has nothing more to say.
    if (sequence.finish_sent) continue;
    sequence.finish_sent = done;
    CompletionOutput part;
    part.index = whole.index;
    const size_t from = std::min(sequence.num_text_sent, visible);
    part.text = whole.text.substr(from, visible - from);
    sequence.num_text_sent = std::max(sequence.num_text_sent, visible);
    part.token_ids = std::exchange(whole.token_ids, {});
    if (whole.logprobs) part.logprobs = std::exchange(*whole.logprobs, {});
    part.cumulative_logprob = whole.cumulative_logprob;
    part.finish_reason = whole.finish_reason;
    part.stop_reason = whole.stop_reason;
    output.outputs.push_back(std::move(part));
  }
  return output;
}

size_t OutputProcessor::NumHeldLogprobPositions() const {
  size_t num_positions = 0;
  for (const auto& [id, state] : requests_) {
    for (const Sequence& sequence : state.sequences) {
      if (sequence.output.logprobs) num_positions += sequence.output.logprobs->size();
    }
  }
  return num_positions;
}

}  // namespace vllm
