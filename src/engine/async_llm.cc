// AsyncLLM: the engine loop thread owns the LLMEngine; callers reach it only through a queue of
// commands, and it reaches them only through their output streams.
#include "vllm/async_llm.h"

#include <functional>
#include <future>
#include <map>
#include <stdexcept>
#include <thread>

#include "engine/llm_engine.h"

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
