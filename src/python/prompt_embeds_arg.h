// An EmbedsPrompt as the Python layer passes it to the engines' bindings (inputs.PromptEmbeds):
// torch.save's bytes, or (num_tokens, hidden_size, the row-major values).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <tuple>
#include <variant>
#include <vector>

#include "vllm/prompt_embeds.h"

namespace vllm::python {

using PythonPromptEmbeds =
    std::variant<pybind11::bytes, std::tuple<int64_t, int64_t, std::vector<float>>>;

// Throws std::invalid_argument (ValueError) when the bytes are not a readable tensor.
std::shared_ptr<const PromptEmbeds> ToPromptEmbeds(const PythonPromptEmbeds& given);

}  // namespace vllm::python
