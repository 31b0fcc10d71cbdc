#include "server/openai/logprobs_format.h"

#include <algorithm>

namespace vllm::server {
namespace {

constexpr float kMinLogprob = -9999.0f;  // vLLM clamps -inf to this

Json Bytes(const std::string& text) {
  Json bytes = Json::array();
  for (unsigned char byte : text) bytes.push_back(byte);
  return bytes;
}

// vLLM's return_tokens_as_token_ids name of a token.
std::string TokenIdName(int32_t token_id) { return "token_id:" + std::to_string(token_id); }

// How logprobs name a token: its text, or "token_id:<id>".
std::string TokenName(const Logprob& entry, int32_t token_id, bool tokens_as_ids) {
  return tokens_as_ids ? TokenIdName(token_id) : entry.decoded_token;
}

}  // namespace

int64_t CountCharacters(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; });
}

std::vector<std::pair<int32_t, const Logprob*>> OrderedLogprobs(const PositionLogprobs& position,
                                                                int32_t sampled_token_id) {
  std::vector<std::pair<int32_t, const Logprob*>> ordered;
  for (const auto& [token_id, logprob] : position) {
    if (token_id != sampled_token_id) ordered.emplace_back(token_id, &logprob);
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.second->rank < b.second->rank; });
  if (auto sampled = position.find(sampled_token_id); sampled != position.end()) {
    ordered.insert(ordered.begin(), {sampled_token_id, &sampled->second});
  }
  return ordered;
}

Json CompletionLogprobs(const Tokenizer& tokenizer, const std::vector<int32_t>& token_ids,
                        const std::vector<std::optional<PositionLogprobs>>& logprobs,
                        int num_top_logprobs, int64_t initial_text_offset, bool tokens_as_ids) {
  Json tokens = Json::array();
  Json token_logprobs = Json::array();
  Json top_logprobs = Json::array();
  Json text_offset = Json::array();
  int64_t offset = initial_text_offset;
  for (size_t i = 0; i < token_ids.size() && i < logprobs.size(); ++i) {
    std::string token;
    if (!logprobs[i] || logprobs[i]->count(token_ids[i]) == 0) {
      token =
          tokens_as_ids ? TokenIdName(token_ids[i]) : tokenizer.Decode({&token_ids[i], 1}, false);
      tokens.push_back(token);
      token_logprobs.push_back(nullptr);
      top_logprobs.push_back(nullptr);
    } else {
      const auto ordered = OrderedLogprobs(*logprobs[i], token_ids[i]);
      token = TokenName(*ordered.front().second, ordered.front().first, tokens_as_ids);
      tokens.push_back(token);
      token_logprobs.push_back(std::max(ordered.front().second->logprob, kMinLogprob));
      Json top = Json::object();
      for (size_t k = 0; k < ordered.size() && static_cast<int>(k) <= num_top_logprobs; ++k) {
        top[TokenName(*ordered[k].second, ordered[k].first, tokens_as_ids)] =
            std::max(ordered[k].second->logprob, kMinLogprob);
      }
      top_logprobs.push_back(std::move(top));
    }
    text_offset.push_back(offset);
    offset += CountCharacters(token);
  }
  return {{"text_offset", std::move(text_offset)},
          {"token_logprobs", std::move(token_logprobs)},
          {"tokens", std::move(tokens)},
          {"top_logprobs", std::move(top_logprobs)}};
}

Json ChatLogprobs(const std::vector<int32_t>& token_ids,
                  const std::vector<PositionLogprobs>& logprobs, int num_top_logprobs,
                  bool tokens_as_ids) {
  Json content = Json::array();
  for (size_t i = 0; i < token_ids.size() && i < logprobs.size(); ++i) {
    const auto ordered = OrderedLogprobs(logprobs[i], token_ids[i]);
    if (ordered.empty() || ordered.front().first != token_ids[i]) continue;
    const Logprob& sampled = *ordered.front().second;
    Json top = Json::array();
    for (size_t k = 0; k < ordered.size() && static_cast<int>(k) < num_top_logprobs; ++k) {
      const Logprob& entry = *ordered[k].second;
      const std::string token = TokenName(entry, ordered[k].first, tokens_as_ids);
      top.push_back({{"token", token},
                     {"logprob", std::max(entry.logprob, kMinLogprob)},
                     {"bytes", Bytes(token)}});
    }
    const std::string token = TokenName(sampled, token_ids[i], tokens_as_ids);
    content.push_back({{"token", token},
                       {"logprob", std::max(sampled.logprob, kMinLogprob)},
                       {"bytes", Bytes(token)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}};
}

Json PromptLogprobs(const std::vector<std::optional<PositionLogprobs>>& logprobs) {
  Json positions = Json::array();
  for (const auto& position : logprobs) {
    if (!position) {
      positions.push_back(nullptr);
      continue;
    }
    Json entries = Json::object();
    for (const auto& [token_id, logprob] : *position) {
      entries[std::to_string(token_id)] = {{"logprob", std::max(logprob.logprob, kMinLogprob)},
                                           {"rank", logprob.rank},
                                           {"decoded_token", logprob.decoded_token}};
    }
    positions.push_back(std::move(entries));
  }
  return positions;
}

}  // namespace vllm::server
