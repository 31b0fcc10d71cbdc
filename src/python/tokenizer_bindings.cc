// Bindings of the engine's tokenizer (text <-> token ids) and of the project's own chat template
// engine (chat_template/), which tokenizer.py's apply_chat_template renders with.
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "chat_template/chat_template.h"
#include "python/bindings.h"
#include "tokenizer/tokenizer.h"

namespace py = pybind11;

namespace vllm::python {
namespace {

// Renders `source` with the template variables given as JSON text (Python's json.dumps keeps
// the dicts' key order, which tojson prints). A syntax or rendering error raises ValueError.
std::string RenderChatTemplate(const std::string& source, const std::string& variables_json) {
  auto variables =
      nlohmann::ordered_json::parse(variables_json, nullptr, /*allow_exceptions=*/false);
  if (variables.is_discarded() || !variables.is_object()) {
    throw std::invalid_argument("chat template variables must be a JSON object");
  }
  py::gil_scoped_release release;
  auto chat_template = ChatTemplate::Parse(source);
  if (!chat_template.ok()) {
    throw std::invalid_argument("Invalid chat template: " + chat_template.error());
  }
  auto rendered = chat_template->Render(variables);
  if (!rendered.ok()) throw std::invalid_argument(rendered.error());
  return std::move(*rendered);
}

}  // namespace

void BindTokenizer(py::module_& module) {
  py::class_<Tokenizer>(module, "Tokenizer")
      .def("encode", &Tokenizer::Encode, py::arg("text"), py::arg("add_special_tokens"))
      .def(
          "decode",
          [](const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
             bool skip_special_tokens) {
            return ToPythonText(tokenizer.Decode(ids, skip_special_tokens));
          },
          py::arg("ids"), py::arg("skip_special_tokens"))
      .def("token_to_piece", [](const Tokenizer& tokenizer,
                                int32_t id) { return ToPythonText(tokenizer.TokenToPiece(id)); })
      .def("is_special", &Tokenizer::IsSpecial)
      .def_property_readonly("vocab_size", &Tokenizer::vocab_size)
      .def_property_readonly("bos_id", &Tokenizer::bos_id)
      .def_property_readonly("eos_id", &Tokenizer::eos_id);

  module.def(
      "render_chat_template",
      [](const std::string& source, const std::string& variables_json) {
        return ToPythonText(RenderChatTemplate(source, variables_json));
      },
      py::arg("source"), py::arg("variables_json"));
}

}  // namespace vllm::python
