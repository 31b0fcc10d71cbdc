#include "engine/prompt_embeds_request.h"

#include <cstdio>

#include "common/byte_hash.h"
#include "formats/torch_tensor_file.h"

namespace vllm {

Expected<std::shared_ptr<const PromptEmbeds>> LoadPromptEmbeds(std::string_view torch_saved) {
  auto tensor = ReadTorchTensor(
      std::span(reinterpret_cast<const uint8_t*>(torch_saved.data()), torch_saved.size()));
  if (!tensor) return Error{"prompt_embeds: " + tensor.error()};
  std::vector<int64_t> shape = std::move(tensor->shape);
  if (shape.size() == 3 && shape[0] == 1) shape.erase(shape.begin());
  if (shape.size() != 2) return Error{"prompt_embeds must be of shape (seq_len, hidden_size)."};
  auto embeds = std::make_shared<PromptEmbeds>();
  embeds->num_tokens = shape[0];
  embeds->hidden_size = shape[1];
  embeds->values = std::move(tensor->values);
  return std::shared_ptr<const PromptEmbeds>(std::move(embeds));
}

Expected<std::shared_ptr<const PromptEmbeds>> PreparePromptEmbeds(
    std::shared_ptr<const PromptEmbeds> embeds, const SamplingParams& params, bool enabled,
    int64_t model_hidden_size) {
  if (!enabled) return Error{kPromptEmbedsNotEnabled};
  if (embeds->hidden_size != model_hidden_size) {
    return Error{"prompt_embeds has hidden size " + std::to_string(embeds->hidden_size) +
                 ", but the model's hidden_size is " + std::to_string(model_hidden_size)};
  }
  if (embeds->num_tokens < 0 ||
      static_cast<int64_t>(embeds->values.size()) != embeds->num_tokens * embeds->hidden_size) {
    return Error{"prompt_embeds: its values are not num_tokens x hidden_size"};
  }
  if (params.prompt_logprobs) return Error{"prompt_logprobs is not compatible with prompt embeds."};
  if (params.truncate_prompt_tokens && embeds->num_tokens > *params.truncate_prompt_tokens) {
    auto kept = std::make_shared<PromptEmbeds>();
    kept->num_tokens = *params.truncate_prompt_tokens;
    kept->hidden_size = embeds->hidden_size;
    kept->values.assign(embeds->values.end() - kept->num_tokens * kept->hidden_size,
                        embeds->values.end());
    embeds = std::move(kept);
  }
  if (embeds->num_tokens == 0) return Error{"The decoder prompt cannot be empty"};
  return embeds;
}

std::string PromptEmbedsCacheSalt(const std::string& cache_salt, const PromptEmbeds& embeds) {
  const size_t num_bytes = embeds.values.size() * sizeof(float);
  // Two 64-bit hashes from different seeds, over the shape and the values.
  std::string salt = cache_salt + "\x1fprompt_embeds:";
  for (uint64_t seed : {kByteHashSeed, ~kByteHashSeed}) {
    uint64_t hash = FeedBytes(seed, &embeds.hidden_size, sizeof(embeds.hidden_size));
    hash = FinalizeHash(FeedBytes(hash, embeds.values.data(), num_bytes));
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
    salt += hex;
  }
  return salt;
}

}  // namespace vllm
