// The parts of the `vllm_cpp._core` extension module: each Bind* function adds one group of
// classes to the module (see module.cc).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string_view>

#include "tokenizer/tokenizer.h"
#include "vllm/sampling_params.h"

namespace vllm::python {

// Text the model produced (or a model file holds) as a Python str. A token can end inside a
// UTF-8 character, so such text may hold invalid or incomplete sequences: each becomes U+FFFD,
// as vLLM's detokenizer and the server's JSON write them, where pybind11's own std::string
// conversion would raise UnicodeDecodeError and lose a whole batch.
inline pybind11::str ToPythonText(std::string_view text) {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (decoded == nullptr) throw pybind11::error_already_set();
  return pybind11::reinterpret_steal<pybind11::str>(decoded);
}

// EngineArgs, SpeculativeConfig, SamplingParams, StructuredOutputsParams, RequestOutputKind.
void BindParams(pybind11::module_& module);
// Logprob, CompletionOutput, RequestOutput (read-only views the Python layer converts).
void BindOutputs(pybind11::module_& module);
// BeamSearchParams, BeamSearchSequence, BeamSearchOutput.
void BindBeamSearch(pybind11::module_& module);
// Tokenizer (a view of an engine's) and render_chat_template.
void BindTokenizer(pybind11::module_& module);
// Engine: LLMEngine behind a mutex, with the GIL released while it works.
void BindEngine(pybind11::module_& module);
// AsyncEngine and OutputStream: AsyncLLM, whose streams wake a Python callback.
void BindAsyncEngine(pybind11::module_& module);

// Defines the read-only properties an engine class shares: tokenizer, chat_template,
// default_sampling_params and max_model_len, read from `model(self)` (an LLMEngine or an
// AsyncLLM, which name them alike).
template <typename Class, typename Model>
void DefModelProperties(pybind11::class_<Class>& cls, Model model) {
  namespace py = pybind11;
  cls.def_property_readonly(
         "tokenizer",
         // None under skip_tokenizer_init.
         [model](const Class& self) -> const Tokenizer* {
           return model(self).has_tokenizer() ? &model(self).tokenizer() : nullptr;
         },
         py::return_value_policy::reference_internal)
      .def_property_readonly(
          "chat_template",
          [model](const Class& self) { return ToPythonText(model(self).chat_template()); })
      .def_property_readonly(
          "default_sampling_params",
          [model](const Class& self) { return model(self).default_sampling_params(); })
      .def_property_readonly("max_model_len",
                             [model](const Class& self) { return model(self).max_model_len(); });
}

}  // namespace vllm::python
