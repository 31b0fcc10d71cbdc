#include "python/prompt_embeds_arg.h"

#include <stdexcept>
#include <string>

#include "engine/prompt_embeds_request.h"

namespace vllm::python {

std::shared_ptr<const PromptEmbeds> ToPromptEmbeds(const PythonPromptEmbeds& given) {
  if (const auto* saved = std::get_if<pybind11::bytes>(&given)) {
    auto embeds = LoadPromptEmbeds(static_cast<std::string>(*saved));
    if (!embeds) throw std::invalid_argument(embeds.error());
    return std::move(*embeds);
  }
  const auto& [num_tokens, hidden_size, values] =
      std::get<std::tuple<int64_t, int64_t, std::vector<float>>>(given);
  return std::make_shared<const PromptEmbeds>(
      PromptEmbeds{.num_tokens = num_tokens, .hidden_size = hidden_size, .values = values});
}

}  // namespace vllm::python
