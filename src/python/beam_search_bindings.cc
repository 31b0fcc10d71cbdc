// Bindings of vLLM's beam search types (include/vllm/beam_search.h): BeamSearchParams as a
// mutable struct, the outputs read-only; beam_search.py holds vLLM's Python classes.
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "vllm/beam_search.h"

namespace py = pybind11;

namespace vllm::python {

void BindBeamSearch(py::module_& module) {
  py::class_<BeamSearchParams>(module, "BeamSearchParams")
      .def(py::init<>())
      .def_readwrite("beam_width", &BeamSearchParams::beam_width)
      .def_readwrite("max_tokens", &BeamSearchParams::max_tokens)
      .def_readwrite("ignore_eos", &BeamSearchParams::ignore_eos)
      .def_readwrite("temperature", &BeamSearchParams::temperature)
      .def_readwrite("length_penalty", &BeamSearchParams::length_penalty)
      .def_readwrite("include_stop_str_in_output", &BeamSearchParams::include_stop_str_in_output)
      .def_readwrite("skip_special_tokens", &BeamSearchParams::skip_special_tokens)
      // The empty string when valid; otherwise the message.
      .def("validate", &BeamSearchParams::Validate);

  py::class_<BeamSearchSequence>(module, "BeamSearchSequence")
      .def_readonly("tokens", &BeamSearchSequence::tokens)
      .def_readonly("logprobs", &BeamSearchSequence::logprobs)
      .def_readonly("cum_logprob", &BeamSearchSequence::cum_logprob)
      .def_property_readonly("text",
                             [](const BeamSearchSequence& self) { return ToPythonText(self.text); })
      .def_readonly("finish_reason", &BeamSearchSequence::finish_reason)
      .def_readonly("stop_reason", &BeamSearchSequence::stop_reason);

  py::class_<BeamSearchOutput>(module, "BeamSearchOutput")
      .def_readonly("sequences", &BeamSearchOutput::sequences);
}

}  // namespace vllm::python
