// `_core.Engine`: the C++ LLM and its LLMEngine (add_request / step / abort_request, beam
// search, pooling tasks) for llm_engine.py and llm.py. Every call releases the GIL while the engine
// works, and a mutex keeps two Python threads from stepping the same engine at once. Calls that
// run many steps (beam search, pooling) end with KeyboardInterrupt on Ctrl-C.
#include <pybind11/stl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "engine/llm_engine.h"
#include "python/bindings.h"
#include "python/prompt_embeds_arg.h"
#include "vllm/llm.h"

namespace py = pybind11;

namespace vllm::python {
namespace {

// How often a blocking call looks for Ctrl-C: each look takes the GIL, which another Python
// thread may hold for up to its switch interval (5 ms).
constexpr auto kSignalCheckInterval = std::chrono::milliseconds(50);

// LLM's interrupt check for Python: between engine steps, at most every kSignalCheckInterval, it
// runs Python's signal handlers, and throws what one raised (KeyboardInterrupt for Ctrl-C), so that
// beam search and the pooling calls end as generate() does. Handlers run only on the main thread.
std::function<void()> PythonSignalCheck() {
  auto last_check = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last_check] {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last_check < kSignalCheckInterval) return;
    *last_check = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
}

class Engine {
 public:
  // Throws RuntimeError (std::runtime_error) with the reason when the model cannot load.
  explicit Engine(const EngineArgs& args) {
    py::gil_scoped_release release;
    llm_ = std::make_unique<LLM>(args);
    llm_->SetInterruptCheck(PythonSignalCheck());
    engine_ = &llm_->engine();
  }

  // Throws ValueError (std::invalid_argument) with vLLM's message when the engine refuses it.
  // The params are checked here, once: the binding is where a Python request comes in.
  // `prompt_embeds` (with an empty prompt): torch.save's bytes, or (num_tokens, hidden_size,
  // their row-major values).
  void AddRequest(const std::string& request_id, const PromptInput& prompt,
                  const SamplingParams& params, int priority,
                  const std::optional<PythonPromptEmbeds>& prompt_embeds,
                  const std::optional<LoraRequest>& lora_request) {
    auto validated = ValidatedSamplingParams::Validate(params);
    if (!validated) throw std::invalid_argument(validated.error());
    RequestOptions options{.priority = priority, .lora_request = lora_request};
    if (prompt_embeds) options.prompt_embeds = ToPromptEmbeds(*prompt_embeds);
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    Status status = engine_->AddRequest(request_id, prompt, *validated, options);
    if (!status.ok()) throw std::invalid_argument(status.message());
  }

  std::vector<RequestOutput> Step() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    auto outputs = engine_->Step();
    if (!outputs) throw std::runtime_error(outputs.error());
    return std::move(*outputs);
  }

  std::vector<RequestOutput> Abort(const std::vector<std::string>& request_ids) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return engine_->AbortRequests(request_ids);
  }

  // vLLM's LLM.beam_search over every prompt (ValueError for refused params or prompts), each
  // prompt with its adapter in lora_requests (empty: all on the base model).
  std::vector<BeamSearchOutput> BeamSearch(const std::vector<PromptInput>& prompts,
                                           const BeamSearchParams& params,
                                           const LLM::LoraRequests& lora_requests) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return llm_->BeamSearch(prompts, params, lora_requests);
  }

  // Pooling models (vLLM's LLM.embed / classify / encode / score), ValueError when the model
  // does not serve the task: per prompt, (request_id, prompt_token_ids, output values). Each
  // prompt runs with its adapter in lora_requests (empty: all on the base model).
  using PooledRow = std::tuple<std::string, std::vector<int32_t>, std::vector<float>>;
  std::vector<PooledRow> Pool(const std::string& task, const std::vector<PromptInput>& prompts,
                              const PoolingParams& params, const LLM::LoraRequests& lora_requests) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<PooledRow> rows;
    auto add = [&rows](const auto& outputs, auto values_of) {
      for (const auto& output : outputs) {
        rows.emplace_back(output.request_id, output.prompt_token_ids, values_of(output.outputs));
      }
    };
    if (task == "embed") {
      add(llm_->Embed(prompts, params, lora_requests),
          [](const EmbeddingOutput& o) { return o.embedding; });
    } else if (task == "classify") {
      add(llm_->Classify(prompts, params, lora_requests),
          [](const ClassificationOutput& o) { return o.probs; });
    } else if (task == "encode") {
      add(llm_->Encode(prompts, params, lora_requests),
          [](const PoolingOutput& o) { return o.data; });
    } else {
      throw std::invalid_argument("unknown pooling task '" + task + "'");
    }
    return rows;
  }

  // vLLM's LLM.score: text_1 (one, or one per text_2) against each of text_2, each pair with its
  // adapter in lora_requests (empty: all on the base model).
  std::vector<std::tuple<std::string, std::vector<int32_t>, float>> Score(
      const std::vector<std::string>& text_1, const std::vector<std::string>& text_2,
      const PoolingParams& params, const LLM::LoraRequests& lora_requests) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::tuple<std::string, std::vector<int32_t>, float>> rows;
    for (const ScoringRequestOutput& output : llm_->Score(text_1, text_2, params, lora_requests)) {
      rows.emplace_back(output.request_id, output.prompt_token_ids, output.outputs.score);
    }
    return rows;
  }

  // vLLM's add_lora / remove_lora / list_loras. add_lora: ValueError with the loader's message.
  bool AddLora(const LoraRequest& lora_request) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    if (Status status = engine_->AddLora(lora_request); !status.ok()) {
      throw std::invalid_argument(status.message());
    }
    return true;
  }
  bool RemoveLora(int64_t lora_int_id) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return engine_->RemoveLora(lora_int_id);
  }
  std::vector<int64_t> ListLoras() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return engine_->ListLoras();
  }

  bool HasUnfinishedRequests() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return engine_->HasUnfinishedRequests();
  }

  // vLLM's sleep mode: RuntimeError when the engine refuses (unfinished requests, a bad level).
  void Sleep(int level) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    if (Status status = engine_->Sleep(level); !status.ok()) {
      throw std::invalid_argument(status.message());
    }
  }
  void WakeUp(const std::vector<std::string>& tags) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    if (Status status = engine_->WakeUp(tags); !status.ok()) {
      throw std::invalid_argument(status.message());
    }
  }
  bool IsSleeping() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return engine_->is_sleeping();
  }
  bool ResetPrefixCache() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return engine_->ResetPrefixCache();
  }

  // The engine's counters as a dict (LLM.get_metrics turns them into vLLM's Metric objects).
  py::dict Stats() {
    EngineStats stats;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      stats = engine_->stats();
    }
    py::dict result;
    result["num_running"] = stats.num_running;
    result["num_waiting"] = stats.num_waiting;
    result["kv_cache_usage"] = stats.kv_cache_usage;
    result["num_free_blocks"] = stats.num_free_blocks;
    result["num_preemptions"] = stats.num_preemptions;
    result["prefix_cache_queries"] = stats.prefix_cache_queries;
    result["prefix_cache_hits"] = stats.prefix_cache_hits;
    result["spec_decode_num_drafts"] = stats.spec_decoding.num_drafts;
    result["spec_decode_num_draft_tokens"] = stats.spec_decoding.num_draft_tokens;
    result["spec_decode_num_accepted_tokens"] = stats.spec_decoding.num_accepted_tokens;
    result["spec_decode_num_accepted_tokens_per_pos"] =
        stats.spec_decoding.num_accepted_tokens_per_pos;
    const IterationTokensStats& iterations = stats.iteration_tokens;
    result["iteration_tokens_upper_bounds"] = std::vector<int64_t>(
        IterationTokensStats::kUpperBounds.begin(), IterationTokensStats::kUpperBounds.end());
    result["iteration_tokens_steps_by_bucket"] = std::vector<int64_t>(
        iterations.num_steps_by_bucket.begin(), iterations.num_steps_by_bucket.end());
    result["iteration_tokens_sum"] = iterations.num_tokens;
    return result;
  }

  // Immutable after Create: read without the mutex.
  const LLMEngine& engine() const { return *engine_; }

 private:
  std::mutex mutex_;
  std::unique_ptr<LLM> llm_;
  LLMEngine* engine_ = nullptr;  // llm_'s
};

}  // namespace

void BindEngine(py::module_& module) {
  py::class_<Engine> engine(module, "Engine");
  engine.def(py::init<const EngineArgs&>(), py::arg("args"))
      .def("add_request", &Engine::AddRequest, py::arg("request_id"), py::arg("prompt"),
           py::arg("params"), py::arg("priority") = 0, py::arg("prompt_embeds") = py::none(),
           py::arg("lora_request") = py::none())
      .def("step", &Engine::Step)
      .def("abort", &Engine::Abort, py::arg("request_ids"))
      .def("beam_search", &Engine::BeamSearch, py::arg("prompts"), py::arg("params"),
           py::arg("lora_requests") = LLM::LoraRequests())
      .def("pool", &Engine::Pool, py::arg("task"), py::arg("prompts"), py::arg("params"),
           py::arg("lora_requests") = LLM::LoraRequests())
      .def("score", &Engine::Score, py::arg("text_1"), py::arg("text_2"), py::arg("params"),
           py::arg("lora_requests") = LLM::LoraRequests())
      .def("add_lora", &Engine::AddLora, py::arg("lora_request"))
      .def("remove_lora", &Engine::RemoveLora, py::arg("lora_int_id"))
      .def("list_loras", &Engine::ListLoras)
      .def("has_unfinished_requests", &Engine::HasUnfinishedRequests)
      .def("sleep", &Engine::Sleep, py::arg("level"))
      .def("wake_up", &Engine::WakeUp, py::arg("tags"))
      .def_property_readonly("is_sleeping", &Engine::IsSleeping)
      .def("reset_prefix_cache", &Engine::ResetPrefixCache)
      .def("stats", &Engine::Stats);
  DefModelProperties(engine, [](const Engine& self) -> const LLMEngine& { return self.engine(); });
}

}  // namespace vllm::python
