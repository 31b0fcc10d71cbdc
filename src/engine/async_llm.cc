// AsyncLLM: the engine loop thread owns the LLMEngine; callers reach it only through a queue of
// commands, and it reaches them only through their output streams.
#include "vllm/async_llm.h"

#include <functional>
#include <future>
#include <map>
#include <stdexcept>
#include <thread>

#include "engine/llm_engine.h"
#include "model/layers/pooler.h"

namespace vllm {

std::optional<RequestOutput> RequestOutputStream::Next() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this] { return !outputs_.empty() || closed_; });
  if (outputs_.empty()) return std::nullopt;
  RequestOutput output = std::move(outputs_.front());
  outputs_.pop_front();
  return output;
}

std::optional<RequestOutput> RequestOutputStream::TryNext() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (outputs_.empty()) return std::nullopt;
  RequestOutput output = std::move(outputs_.front());
  outputs_.pop_front();
  return output;
}

bool RequestOutputStream::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_ && outputs_.empty();
}

std::string RequestOutputStream::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool RequestOutputStream::rejected() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rejected_;
}

void RequestOutputStream::Push(RequestOutput output) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (output.finished) closed_ = true;
    outputs_.push_back(std::move(output));
  }
  ready_.notify_all();
  if (listener_) listener_();
}

void RequestOutputStream::Fail(std::string message, bool rejected) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::move(message);
    rejected_ = rejected;
    closed_ = true;
  }
  ready_.notify_all();
  if (listener_) listener_();
}

struct AsyncLLM::Impl {
  std::unique_ptr<LLMEngine> engine;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> commands;  // run on the engine thread
  bool stop = false;
  std::map<std::string, std::shared_ptr<RequestOutputStream>> streams;  // engine thread only
  std::map<std::string, AsyncLLM::PoolingDone> pooling_done;            // engine thread only
  std::thread thread;
  mutable std::mutex stats_mutex;
  EngineStatsSnapshot stats;  // guarded by stats_mutex

  // Queues `fn` to run on the engine thread between steps.
  void Post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      commands.push_back(std::move(fn));
    }
    wake.notify_one();
  }

  void PublishStats() {
    const EngineStats current = engine->stats();
    std::lock_guard<std::mutex> lock(stats_mutex);
    stats = {current.num_running,       current.num_waiting,     current.kv_cache_usage,
             current.num_free_blocks,   current.num_preemptions, current.prefix_cache_queries,
             current.prefix_cache_hits, current.spec_decoding};
  }

  // Runs `fn` on the engine thread and waits for its result.
  template <typename Fn>
  auto Call(Fn fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    Post([&task] { task(); });
    return result.get();
  }

  void Deliver(std::vector<RequestOutput> outputs) {
    for (RequestOutput& output : outputs) {
      auto it = streams.find(output.request_id);
      if (it == streams.end()) continue;
      const bool finished = output.finished;
      it->second->Push(std::move(output));
      if (finished) streams.erase(it);
    }
  }

  // One step of a pooling engine: each finished request's `done` runs, or every one's with the
  // step's error.
  void StepPooling() {
    auto outputs = engine->StepPooling();
    PublishStats();
    if (!outputs) {
      std::vector<std::string> ids;
      for (auto& [id, done] : pooling_done) {
        done(nullptr, outputs.error(), false);
        ids.push_back(id);
      }
      engine->AbortPoolingRequests(ids);
      pooling_done.clear();
      return;
    }
    for (const PoolingRequestOutput& output : *outputs) {
      auto it = pooling_done.find(output.request_id);
      if (it == pooling_done.end()) continue;
      it->second(&output, "", false);
      pooling_done.erase(it);
    }
  }

  void Loop() {
    while (true) {
      std::deque<std::function<void()>> pending;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock,
                  [this] { return stop || !commands.empty() || engine->HasUnfinishedRequests(); });
        if (stop) break;
        pending.swap(commands);
      }
      for (auto& command : pending) command();  // between steps, never inside one
      if (!engine->HasUnfinishedRequests()) {
        PublishStats();
        continue;
      }
      if (!engine->pooling_tasks().empty()) {
        StepPooling();
        continue;
      }
      auto outputs = engine->Step();
      PublishStats();
      if (!outputs) {
        for (auto& [id, stream] : streams) stream->Fail(outputs.error(), false);
        std::vector<std::string> ids;
        for (auto& [id, stream] : streams) ids.push_back(id);
        engine->AbortRequests(ids);
        streams.clear();
        continue;
      }
      Deliver(std::move(*outputs));
    }
    for (auto& [id, stream] : streams) stream->Fail("the engine was shut down", false);
    for (auto& [id, done] : pooling_done) done(nullptr, "the engine was shut down", false);
  }
};

AsyncLLM::AsyncLLM(const EngineArgs& args) : impl_(std::make_unique<Impl>()) {
  auto engine = LLMEngine::Create(args);
  if (!engine) throw std::runtime_error(engine.error());
  impl_->engine = std::move(*engine);
  impl_->PublishStats();
  impl_->thread = std::thread([this] { impl_->Loop(); });
}

AsyncLLM::~AsyncLLM() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->wake.notify_one();
  impl_->thread.join();
}

std::shared_ptr<RequestOutputStream> AsyncLLM::Generate(
    const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
    const SamplingParams& params, int priority) {
  auto stream = std::make_shared<RequestOutputStream>();
  Status status = impl_->Call([&] {
    Status added = impl_->engine->AddRequest(request_id, prompt, params, {.priority = priority});
    if (added.ok()) impl_->streams[request_id] = stream;
    return added;
  });
  if (!status.ok()) throw std::invalid_argument(status.message());
  return stream;
}

std::shared_ptr<RequestOutputStream> AsyncLLM::Submit(
    const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
    const SamplingParams& params, const RequestOptions& options, std::function<void()> listener) {
  auto stream = std::make_shared<RequestOutputStream>();
  stream->SetListener(std::move(listener));
  impl_->Post([this, stream, request_id, prompt, params, options] {
    Status added = impl_->engine->AddRequest(request_id, prompt, params, options);
    if (added.ok()) {
      impl_->streams[request_id] = stream;
    } else {
      stream->Fail(added.message(), true);
    }
  });
  return stream;
}

void AsyncLLM::SubmitPooling(const std::string& request_id, PoolingInput input,
                             const std::string& task, const PoolingParams& params,
                             PoolingDone done) {
  impl_->Post([this, request_id, input = std::move(input), task, params, done = std::move(done)] {
    vllm::PoolingInput prompt;
    if (const auto* pair = std::get_if<std::pair<std::string, std::string>>(&input)) {
      prompt = TextPair{pair->first, pair->second};
    } else if (const auto* text = std::get_if<std::string>(&input)) {
      prompt = *text;
    } else {
      prompt = std::get<std::vector<int32_t>>(input);
    }
    Status added = impl_->engine->AddPoolingRequest(request_id, prompt, task, params);
    if (added.ok()) {
      impl_->pooling_done[request_id] = done;
    } else {
      done(nullptr, added.message(), true);
    }
  });
}

void AsyncLLM::SubmitScore(const std::string& request_id, std::pair<std::string, std::string> texts,
                           const PoolingParams& params, PoolingDone done) {
  if (has_classifier()) return SubmitPooling(request_id, std::move(texts), "score", params, done);
  // Both embeddings, then their cosine similarity; `done` runs once, on the engine thread.
  struct Halves {
    std::optional<PoolingRequestOutput> first, second;
    bool failed = false;
  };
  auto halves = std::make_shared<Halves>();
  auto half_done = [halves, request_id, done](bool is_first) {
    return [halves, request_id, done, is_first](const PoolingRequestOutput* output,
                                                const std::string& error, bool rejected) {
      if (halves->failed) return;
      if (output == nullptr) {
        halves->failed = true;
        return done(nullptr, error, rejected);
      }
      (is_first ? halves->first : halves->second) = *output;
      if (!halves->first || !halves->second) return;
      PoolingRequestOutput scored = {
          .request_id = request_id,
          .prompt_token_ids = halves->first->prompt_token_ids,
          .finished = true,
          .outputs = {.data = {CosineSimilarity(halves->first->outputs.data,
                                                halves->second->outputs.data)}}};
      scored.prompt_token_ids.insert(scored.prompt_token_ids.end(),
                                     halves->second->prompt_token_ids.begin(),
                                     halves->second->prompt_token_ids.end());
      done(&scored, "", false);
    };
  };
  SubmitPooling(request_id + "-1", std::move(texts.first), "score", params, half_done(true));
  SubmitPooling(request_id + "-2", std::move(texts.second), "score", params, half_done(false));
}

std::vector<std::string> AsyncLLM::pooling_tasks() const { return impl_->engine->pooling_tasks(); }

bool AsyncLLM::has_classifier() const { return impl_->engine->model_config().num_labels > 0; }

std::vector<std::string> AsyncLLM::classifier_labels() const {
  return impl_->engine->model_config().id2label;
}

void AsyncLLM::Abort(const std::string& request_id) {
  impl_->Post([this, request_id] { impl_->Deliver(impl_->engine->AbortRequests({request_id})); });
}

EngineStatsSnapshot AsyncLLM::stats() const {
  std::lock_guard<std::mutex> lock(impl_->stats_mutex);
  return impl_->stats;
}

const Tokenizer& AsyncLLM::tokenizer() const { return impl_->engine->tokenizer(); }

int64_t AsyncLLM::max_model_len() const { return impl_->engine->max_model_len(); }

SamplingParams AsyncLLM::default_sampling_params() const {
  return impl_->engine->default_sampling_params();
}

std::string AsyncLLM::chat_template() const { return impl_->engine->chat_template(); }

int AsyncLLM::num_running_requests() {
  return impl_->Call([&] { return impl_->engine->stats().num_running; });
}

int64_t AsyncLLM::num_free_kv_blocks() {
  return impl_->Call([&] { return impl_->engine->stats().num_free_blocks; });
}

}  // namespace vllm
