// AsyncLLM: the engine loop thread owns the LLMEngine; callers reach it only through a queue of
// commands, and it reaches them only through their output streams. A request with a
// structured-output constraint first waits for its grammar on the compile pool's threads, and
// reaches the engine thread with it.
#include "vllm/async_llm.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <stdexcept>
#include <thread>

#include "common/allocator_tuning.h"
#include "engine/llm_engine.h"
#include "model/layers/pooler.h"
#include "model/model_config.h"
#include "structured_output/grammar_compile_pool.h"
#include "tokenizer/tokenizer.h"

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

bool RequestOutputStream::overloaded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return overloaded_;
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

void RequestOutputStream::Fail(std::string message, bool rejected, bool overloaded) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::move(message);
    rejected_ = rejected;
    overloaded_ = overloaded;
    closed_ = true;
  }
  ready_.notify_all();
  if (listener_) listener_();
}

namespace {

constexpr char kCompilesFull[] =
    "Too many structured output constraints are compiling; try again later.";

// The final output of a request aborted before it reached the engine (as AbortRequests gives).
RequestOutput AbortedOutput(const std::string& request_id, const PromptInput& prompt, int n) {
  RequestOutput output{.request_id = request_id, .finished = true};
  if (const auto* text = std::get_if<std::string>(&prompt)) {
    output.prompt = *text;
  } else {
    output.prompt_token_ids = std::get<std::vector<int32_t>>(prompt);
  }
  for (int i = 0; i < n; ++i) output.outputs.push_back({.index = i, .finish_reason = "abort"});
  return output;
}

// Compile threads run at nice +10: when they and the engine's threads both want the CPU, a
// running stream's steps keep their pace (a compile's time limit counts its CPU time, so a
// slower compile is not a refused one).
constexpr int kCompileThreadNiceIncrement = 10;

}  // namespace

struct AsyncLLM::Impl {
  // A request whose structured-output constraint is compiling.
  struct Compiling {
    std::shared_ptr<RequestOutputStream> stream;
    PromptInput prompt;
    int n = 1;
    std::atomic<bool> aborted{false};  // set (and the entry removed) by Abort
  };

  std::unique_ptr<LLMEngine> engine;
  std::unique_ptr<GrammarCompilePool> compile_pool;
  std::mutex compiling_mutex;
  std::map<std::string, std::shared_ptr<Compiling>> compiling;  // guarded by compiling_mutex
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
    EngineStats current = engine->stats();
    {
      // Requests whose constraint compiles wait too (vLLM's WAITING_FOR_FSM).
      std::lock_guard<std::mutex> lock(compiling_mutex);
      current.num_waiting += static_cast<int>(compiling.size());
    }
    std::lock_guard<std::mutex> lock(stats_mutex);
    stats = {current.num_running,
             current.num_waiting,
             current.kv_cache_usage,
             current.num_free_blocks,
             current.num_preemptions,
             current.prefix_cache_queries,
             current.prefix_cache_hits,
             current.spec_decoding,
             current.iteration_tokens,
             std::move(current.running_lora_ids),
             std::move(current.waiting_lora_ids)};
  }

  // Runs `fn` on the engine thread and waits for its result.
  template <typename Fn>
  auto Call(Fn fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    Post([&task] { task(); });
    return result.get();
  }

  // Engine thread: adds a request whose constraint compiled (or failed to), unless it was
  // aborted meanwhile (Abort then ended its stream).
  void AddCompiled(const std::string& request_id, const std::shared_ptr<Compiling>& entry,
                   GrammarCompilePool::Result grammar, const ValidatedSamplingParams& params,
                   const RequestOptions& options) {
    {
      std::lock_guard<std::mutex> lock(compiling_mutex);
      if (entry->aborted) return;
      compiling.erase(request_id);
    }
    if (!grammar) return entry->stream->Fail(grammar.error(), true);
    Status added =
        engine->AddRequest(request_id, entry->prompt, params, options, std::move(*grammar));
    if (added.ok()) {
      streams[request_id] = entry->stream;
    } else {
      entry->stream->Fail(added.message(), true);
    }
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

  // Heap pages that finished requests freed go back to the OS once the engine has had no work for
  // this long: under load glibc keeps up to 1 GiB of them for reuse (allocator_tuning.h), which
  // after one very large request would otherwise stay resident for good.
  static constexpr std::chrono::seconds kIdleBeforeHeapTrim{1};

  void Loop() {
    bool stepped_since_heap_trim = false;
    while (true) {
      std::deque<std::function<void()>> pending;
      {
        std::unique_lock<std::mutex> lock(mutex);
        auto has_work = [this] {
          return stop || !commands.empty() || engine->HasUnfinishedRequests();
        };
        if (stepped_since_heap_trim && !wake.wait_for(lock, kIdleBeforeHeapTrim, has_work)) {
          lock.unlock();
          ReturnFreeHeapPages();
          stepped_since_heap_trim = false;
          continue;
        }
        wake.wait(lock, has_work);
        if (stop) break;
        pending.swap(commands);
      }
      for (auto& command : pending) command();  // between steps, never inside one
      if (!engine->HasUnfinishedRequests()) {
        PublishStats();
        continue;
      }
      stepped_since_heap_trim = true;
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
  impl_->compile_pool = std::make_unique<GrammarCompilePool>(
      impl_->engine->structured_output_compiler(),
      GrammarCompilePool::Options{.num_threads = args.structured_outputs_compile_threads,
                                  .nice_increment = kCompileThreadNiceIncrement});
  impl_->PublishStats();
  impl_->thread = std::thread([this] { impl_->Loop(); });
}

AsyncLLM::~AsyncLLM() {
  impl_->compile_pool.reset();  // cancels the compiles under way
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->wake.notify_one();
  impl_->thread.join();
  // Requests whose grammar came too late for the engine thread.
  for (auto& [id, entry] : impl_->compiling) entry->stream->Fail("the engine was shut down", false);
}

std::shared_ptr<RequestOutputStream> AsyncLLM::Generate(
    const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
    const SamplingParams& unchecked_params, int priority) {
  auto params = ValidatedSamplingParams::Validate(unchecked_params);
  if (!params) throw std::invalid_argument(params.error());
  auto stream = std::make_shared<RequestOutputStream>();
  std::shared_ptr<const CompiledGrammar> grammar;
  if ((*params)->structured_outputs) {  // compiled here, on the compile threads
    std::promise<GrammarCompilePool::Result> compiled;
    auto result = compiled.get_future();
    if (!impl_->compile_pool->Submit(*(*params)->structured_outputs, {},
                                     [&compiled](GrammarCompilePool::Result done) {
                                       compiled.set_value(std::move(done));
                                     })) {
      throw std::invalid_argument(kCompilesFull);
    }
    auto done = result.get();
    if (!done) throw std::invalid_argument(done.error());
    grammar = std::move(*done);
  }
  Status status = impl_->Call([&] {
    Status added =
        impl_->engine->AddRequest(request_id, prompt, *params, {.priority = priority}, grammar);
    if (added.ok()) impl_->streams[request_id] = stream;
    return added;
  });
  if (!status.ok()) throw std::invalid_argument(status.message());
  return stream;
}

std::shared_ptr<RequestOutputStream> AsyncLLM::Submit(
    const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
    const SamplingParams& params, const RequestOptions& options, std::function<void()> listener) {
  auto validated = ValidatedSamplingParams::Validate(params);
  if (validated) return Submit(request_id, prompt, *validated, options, std::move(listener));
  auto stream = std::make_shared<RequestOutputStream>();
  stream->SetListener(std::move(listener));
  // On the engine thread, as every refusal is, so the listener never runs on the caller's.
  impl_->Post([stream, error = validated.error()] { stream->Fail(error, true); });
  return stream;
}

std::shared_ptr<RequestOutputStream> AsyncLLM::Submit(
    const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
    const ValidatedSamplingParams& params, const RequestOptions& options,
    std::function<void()> listener) {
  auto stream = std::make_shared<RequestOutputStream>();
  stream->SetListener(std::move(listener));
  if (params->structured_outputs) {
    SubmitConstrained(request_id, prompt, params, options, stream);
    return stream;
  }
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

void AsyncLLM::SubmitConstrained(const std::string& request_id, const PromptInput& prompt,
                                 const ValidatedSamplingParams& params,
                                 const RequestOptions& options,
                                 std::shared_ptr<RequestOutputStream> stream) {
  auto entry = std::make_shared<Impl::Compiling>();
  entry->stream = stream;
  entry->prompt = prompt;
  entry->n = params->n;
  {
    std::lock_guard<std::mutex> lock(impl_->compiling_mutex);
    if (!impl_->compiling.emplace(request_id, entry).second) {
      impl_->Post([stream, request_id] {
        stream->Fail("request id '" + request_id + "' is already in use", true);
      });
      return;
    }
  }
  const bool queued = impl_->compile_pool->Submit(
      *params->structured_outputs, [entry] { return entry->aborted.load(); },
      [this, entry, request_id, params, options](GrammarCompilePool::Result grammar) {
        impl_->Post([this, entry, request_id, params, options, grammar = std::move(grammar)] {
          impl_->AddCompiled(request_id, entry, grammar, params, options);
        });
      });
  if (!queued) {
    {
      std::lock_guard<std::mutex> lock(impl_->compiling_mutex);
      impl_->compiling.erase(request_id);
    }
    impl_->Post([stream] { stream->Fail(kCompilesFull, false, /*overloaded=*/true); });
  }
}

void AsyncLLM::SubmitPooling(const std::string& request_id, PoolingInput input,
                             const std::string& task, const PoolingParams& params, PoolingDone done,
                             const std::optional<LoraRequest>& lora_request) {
  impl_->Post([this, request_id, input = std::move(input), task, params, done = std::move(done),
               lora_request] {
    vllm::PoolingInput prompt;
    if (const auto* pair = std::get_if<std::pair<std::string, std::string>>(&input)) {
      prompt = TextPair{pair->first, pair->second};
    } else if (const auto* text = std::get_if<std::string>(&input)) {
      prompt = *text;
    } else {
      prompt = std::get<std::vector<int32_t>>(input);
    }
    Status added = impl_->engine->AddPoolingRequest(request_id, prompt, task, params, lora_request);
    if (added.ok()) {
      impl_->pooling_done[request_id] = done;
    } else {
      done(nullptr, added.message(), true);
    }
  });
}

void AsyncLLM::SubmitScore(const std::string& request_id, std::pair<std::string, std::string> texts,
                           const PoolingParams& params, PoolingDone done,
                           const std::optional<LoraRequest>& lora_request) {
  if (has_classifier()) {
    return SubmitPooling(request_id, std::move(texts), "score", params, done, lora_request);
  }
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
  SubmitPooling(request_id + "-1", std::move(texts.first), "score", params, half_done(true),
                lora_request);
  SubmitPooling(request_id + "-2", std::move(texts.second), "score", params, half_done(false),
                lora_request);
}

std::vector<std::string> AsyncLLM::pooling_tasks() const { return impl_->engine->pooling_tasks(); }

bool AsyncLLM::has_classifier() const { return impl_->engine->model_config().num_labels > 0; }

std::vector<std::string> AsyncLLM::classifier_labels() const {
  return impl_->engine->model_config().id2label;
}

void AsyncLLM::Abort(const std::string& request_id) {
  {
    // Still compiling: its stream ends now, and the compile stops unless others wait for it.
    std::lock_guard<std::mutex> lock(impl_->compiling_mutex);
    if (auto it = impl_->compiling.find(request_id); it != impl_->compiling.end()) {
      std::shared_ptr<Impl::Compiling> entry = it->second;
      entry->aborted = true;
      impl_->compiling.erase(it);
      impl_->Post([entry, request_id] {
        entry->stream->Push(AbortedOutput(request_id, entry->prompt, entry->n));
      });
      return;
    }
  }
  impl_->Post([this, request_id] { impl_->Deliver(impl_->engine->AbortRequests({request_id})); });
}

void AsyncLLM::Sleep(int level, bool abort_unfinished) {
  if (abort_unfinished) {
    std::vector<std::string> compiling_ids;
    {
      std::lock_guard<std::mutex> lock(impl_->compiling_mutex);
      for (const auto& [id, entry] : impl_->compiling) compiling_ids.push_back(id);
    }
    for (const std::string& id : compiling_ids) Abort(id);  // queued before the sleep below
  }
  Status slept = impl_->Call([&] {
    if (abort_unfinished) {
      std::vector<std::string> ids;
      for (const auto& [id, stream] : impl_->streams) ids.push_back(id);
      impl_->Deliver(impl_->engine->AbortRequests(ids));
      std::vector<std::string> pooling_ids;
      for (auto& [id, done] : impl_->pooling_done) {
        done(nullptr, "the request was aborted: the engine went to sleep", false);
        pooling_ids.push_back(id);
      }
      impl_->engine->AbortPoolingRequests(pooling_ids);
      impl_->pooling_done.clear();
    }
    Status status = impl_->engine->Sleep(level);
    impl_->PublishStats();
    return status;
  });
  if (!slept.ok()) throw std::runtime_error(slept.message());
}

void AsyncLLM::WakeUp(const std::vector<std::string>& tags) {
  Status woken = impl_->Call([&] { return impl_->engine->WakeUp(tags); });
  if (!woken.ok()) throw std::runtime_error(woken.message());
}

bool AsyncLLM::is_sleeping() {
  return impl_->Call([&] { return impl_->engine->is_sleeping(); });
}

int AsyncLLM::num_unfinished_requests() {
  int num_compiling = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->compiling_mutex);
    num_compiling = static_cast<int>(impl_->compiling.size());
  }
  return num_compiling + impl_->Call([&] {
    return static_cast<int>(impl_->streams.size() + impl_->pooling_done.size());
  });
}

Status AsyncLLM::AddLora(const LoraRequest& lora_request) {
  return impl_->engine->AddLora(lora_request);
}
bool AsyncLLM::RemoveLora(int64_t lora_int_id) { return impl_->engine->RemoveLora(lora_int_id); }
std::vector<int64_t> AsyncLLM::ListLoras() const { return impl_->engine->ListLoras(); }

EngineStatsSnapshot AsyncLLM::stats() const {
  std::lock_guard<std::mutex> lock(impl_->stats_mutex);
  return impl_->stats;
}

std::optional<std::string> AsyncLLM::dead_error() const { return impl_->engine->failure(); }

bool AsyncLLM::has_tokenizer() const { return impl_->engine->has_tokenizer(); }
int64_t AsyncLLM::prompt_vocab_size() const {
  const LLMEngine& engine = *impl_->engine;
  return engine.has_tokenizer() ? engine.tokenizer().vocab_size()
                                : engine.model_config().vocab_size;
}
const Tokenizer& AsyncLLM::tokenizer() const { return impl_->engine->tokenizer(); }

int64_t AsyncLLM::max_model_len() const { return impl_->engine->max_model_len(); }
bool AsyncLLM::enable_prompt_embeds() const { return impl_->engine->enable_prompt_embeds(); }

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
