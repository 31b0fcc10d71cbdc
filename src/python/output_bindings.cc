// Read-only bindings of RequestOutput and its parts; outputs.py turns them into vLLM's classes.
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "vllm/outputs.h"

namespace py = pybind11;

namespace vllm::python {

void BindOutputs(py::module_& module) {
  py::class_<Logprob>(module, "Logprob")
      .def_readonly("logprob", &Logprob::logprob)
      .def_readonly("rank", &Logprob::rank)
      .def_property_readonly("decoded_token",
                             [](const Logprob& self) { return ToPythonText(self.decoded_token); });

  py::class_<CompletionOutput>(module, "CompletionOutput")
      .def_readonly("index", &CompletionOutput::index)
      .def_property_readonly("text",
                             [](const CompletionOutput& self) { return ToPythonText(self.text); })
      .def_readonly("token_ids", &CompletionOutput::token_ids)
      .def_readonly("cumulative_logprob", &CompletionOutput::cumulative_logprob)
      .def_readonly("logprobs", &CompletionOutput::logprobs)
      .def_readonly("finish_reason", &CompletionOutput::finish_reason)
      .def_readonly("stop_reason", &CompletionOutput::stop_reason);

  py::class_<RequestOutput>(module, "RequestOutput")
      .def_readonly("request_id", &RequestOutput::request_id)
      .def_property_readonly("prompt",
                             [](const RequestOutput& self) { return ToPythonText(self.prompt); })
      .def_readonly("prompt_token_ids", &RequestOutput::prompt_token_ids)
      .def_readonly("prompt_logprobs", &RequestOutput::prompt_logprobs)
      .def_readonly("outputs", &RequestOutput::outputs)
      .def_readonly("finished", &RequestOutput::finished)
      .def_readonly("num_cached_tokens", &RequestOutput::num_cached_tokens)
      .def_readonly("queue_seconds", &RequestOutput::queue_seconds);
}

}  // namespace vllm::python
