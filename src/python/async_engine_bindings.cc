// `_core.AsyncEngine`: vLLM's AsyncLLM, whose engine loop runs on its own thread. Each request's
// OutputStream calls a Python callback (with the GIL taken) whenever it has something new;
// async_llm.py passes one that wakes the asyncio loop through call_soon_threadsafe.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <variant>

#include "common/expected.h"
#include "python/bindings.h"
#include "python/prompt_embeds_arg.h"
#include "tokenizer/tokenizer.h"
#include "vllm/async_llm.h"

namespace py = pybind11;

namespace vllm::python {
namespace {

// True once Python objects may no longer be touched (the interpreter is shutting down).
bool PythonIsGone() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// A Python callable that the engine thread may call and drop: both take the GIL first. Once the
// interpreter is finalizing, neither touches Python any more.
class PythonCallback {
 public:
  explicit PythonCallback(py::function callback) : callback_(std::move(callback)) {}
  ~PythonCallback() {
    if (PythonIsGone()) {
      callback_.release();  // leaked: Python objects cannot be freed any more
      return;
    }
    py::gil_scoped_acquire gil;
    callback_ = py::function();
  }
  PythonCallback(const PythonCallback&) = delete;
  PythonCallback& operator=(const PythonCallback&) = delete;

  // `make_args` builds the call's arguments once the GIL is held.
  template <typename MakeArgs>
  void CallWith(MakeArgs make_args) {
    if (PythonIsGone()) return;
    py::gil_scoped_acquire gil;
    try {
      std::apply(callback_, make_args());
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("vllm_cpp stream callback");
    }
  }

  void operator()() {
    if (PythonIsGone()) return;
    py::gil_scoped_acquire gil;
    try {
      callback_();
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("vllm_cpp stream callback");
    }
  }

 private:
  py::function callback_;
};

class AsyncEngine {
 public:
  explicit AsyncEngine(const EngineArgs& args) {
    py::gil_scoped_release release;
    llm_ = std::make_unique<AsyncLLM>(args);
  }

  // Adds a request without waiting; a refusal ends the stream with rejected() true.
  // `prompt_embeds` (with an empty prompt): the prompt as embeddings; unreadable bytes raise
  // ValueError here.
  std::shared_ptr<RequestOutputStream> Submit(
      const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
      const SamplingParams& params, int priority, py::function on_output,
      const std::optional<PythonPromptEmbeds>& prompt_embeds,
      const std::optional<LoraRequest>& lora_request) {
    RequestOptions options{.priority = priority, .lora_request = lora_request};
    if (prompt_embeds) options.prompt_embeds = ToPromptEmbeds(*prompt_embeds);
    auto callback = std::make_shared<PythonCallback>(std::move(on_output));
    py::gil_scoped_release release;
    return Running().Submit(request_id, prompt, params, options, [callback] { (*callback)(); });
  }

  void Abort(const std::string& request_id) { Running().Abort(request_id); }

  // vLLM's add_lora / remove_lora / list_loras: add_lora raises ValueError with the loader's
  // message; the adapter is read here, off the engine thread.
  bool AddLora(const LoraRequest& lora_request) {
    Status added = [&] {
      py::gil_scoped_release release;
      return Running().AddLora(lora_request);
    }();
    if (!added.ok()) throw std::invalid_argument(added.message());
    return true;
  }
  bool RemoveLora(int64_t lora_int_id) { return Running().RemoveLora(lora_int_id); }
  std::vector<int64_t> ListLoras() { return Running().ListLoras(); }

  // vLLM's sleep mode (RuntimeError when the engine refuses): these wait for the engine thread.
  void Sleep(int level, bool abort_unfinished) {
    py::gil_scoped_release release;
    Running().Sleep(level, abort_unfinished);
  }
  void WakeUp(const std::vector<std::string>& tags) {
    py::gil_scoped_release release;
    Running().WakeUp(tags);
  }
  bool IsSleeping() {
    py::gil_scoped_release release;
    return Running().is_sleeping();
  }
  int NumUnfinishedRequests() {
    py::gil_scoped_release release;
    return Running().num_unfinished_requests();
  }

  // A pooling request ("encode", "embed", "classify") without waiting, with `lora_request`'s
  // adapter (None: the base model): `on_done` gets ((request_id, prompt_token_ids, values), "",
  // False) once it finishes, or (None, error, rejected) when the engine refused or failed it.
  void SubmitPooling(const std::string& request_id,
                     const std::variant<std::string, std::vector<int32_t>>& prompt,
                     const std::string& task, const PoolingParams& params, py::function on_done,
                     const std::optional<LoraRequest>& lora_request) {
    auto callback = std::make_shared<PythonCallback>(std::move(on_done));
    AsyncLLM::PoolingInput input;
    if (const auto* text = std::get_if<std::string>(&prompt)) {
      input = *text;
    } else {
      input = std::get<std::vector<int32_t>>(prompt);
    }
    py::gil_scoped_release release;
    Running().SubmitPooling(
        request_id, std::move(input), task, params,
        [callback](const PoolingRequestOutput* output, const std::string& error, bool rejected) {
          callback->CallWith([&] {
            py::object row = py::none();
            if (output != nullptr) {
              row = py::make_tuple(output->request_id, output->prompt_token_ids,
                                   output->outputs.data);
            }
            return std::make_tuple(row, error, rejected);
          });
        },
        lora_request);
  }

  // Stops the engine thread; unfinished streams end with an error. Idempotent.
  void Shutdown() {
    py::gil_scoped_release release;
    llm_.reset();
  }

  bool is_running() const { return llm_ != nullptr; }

  AsyncLLM& Running() const {
    if (!llm_) throw std::runtime_error("the engine has been shut down");
    return *llm_;
  }

 private:
  std::unique_ptr<AsyncLLM> llm_;
};

}  // namespace

void BindAsyncEngine(py::module_& module) {
  py::class_<RequestOutputStream, std::shared_ptr<RequestOutputStream>>(module, "OutputStream")
      .def("try_next", &RequestOutputStream::TryNext)
      .def_property_readonly("done", &RequestOutputStream::done)
      .def_property_readonly("error", &RequestOutputStream::error)
      .def_property_readonly("rejected", &RequestOutputStream::rejected);

  py::class_<AsyncEngine> async_engine(module, "AsyncEngine");
  async_engine.def(py::init<const EngineArgs&>(), py::arg("args"))
      .def("submit", &AsyncEngine::Submit, py::arg("request_id"), py::arg("prompt"),
           py::arg("params"), py::arg("priority"), py::arg("on_output"),
           py::arg("prompt_embeds") = py::none(), py::arg("lora_request") = py::none())
      .def("abort", &AsyncEngine::Abort, py::arg("request_id"))
      .def("add_lora", &AsyncEngine::AddLora, py::arg("lora_request"))
      .def("remove_lora", &AsyncEngine::RemoveLora, py::arg("lora_int_id"))
      .def("list_loras", &AsyncEngine::ListLoras)
      .def("sleep", &AsyncEngine::Sleep, py::arg("level"), py::arg("abort_unfinished"))
      .def("wake_up", &AsyncEngine::WakeUp, py::arg("tags"))
      .def_property_readonly("is_sleeping", &AsyncEngine::IsSleeping)
      .def_property_readonly("num_unfinished_requests", &AsyncEngine::NumUnfinishedRequests)
      .def("submit_pooling", &AsyncEngine::SubmitPooling, py::arg("request_id"), py::arg("prompt"),
           py::arg("task"), py::arg("params"), py::arg("on_done"),
           py::arg("lora_request") = py::none())
      .def("shutdown", &AsyncEngine::Shutdown)
      .def_property_readonly("is_running", &AsyncEngine::is_running);
  DefModelProperties(async_engine,
                     [](const AsyncEngine& self) -> AsyncLLM& { return self.Running(); });
}

}  // namespace vllm::python
