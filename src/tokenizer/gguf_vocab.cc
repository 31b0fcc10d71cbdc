#include "tokenizer/gguf_vocab.h"

namespace vllm {
namespace {

template <typename T>
Status Read(Expected<std::optional<T>> value, T* out) {
  if (!value) return Error{value.error()};
  if (value->has_value()) *out = std::move(**value);
  return Status::Ok();
}

Status ReadId(const GgufFile& file, const std::string& key, int64_t vocab_size, int32_t* out) {
  auto value = file.GetInt(key);
  if (!value) return Error{value.error()};
  if (!value->has_value()) return Status::Ok();
  // llama.cpp writes -1 (as uint32 0xffffffff) for "none".
  if (**value == -1 || **value == 0xffffffff) return Status::Ok();
  if (**value < 0 || **value >= vocab_size) {
    return Error{key + " = " + std::to_string(**value) + " is outside the vocabulary"};
  }
  *out = static_cast<int32_t>(**value);
  return Status::Ok();
}

Status ReadFlag(const GgufFile& file, const std::string& key, std::optional<bool>* out) {
  auto value = file.GetBool(key);
  if (!value) return Error{value.error()};
  *out = *value;
  return Status::Ok();
}

void SetDefaultSpecialIds(const std::string& model, int64_t vocab_size, GgufVocab* vocab) {
  auto set = [vocab_size](int32_t id, int32_t* out) {
    if (id < vocab_size) *out = id;
  };
  if (model == "llama") {
    set(0, &vocab->unk_id);
    set(1, &vocab->bos_id);
    set(2, &vocab->eos_id);
  } else if (model == "bert") {
    set(0, &vocab->pad_id);
    set(100, &vocab->unk_id);
    set(101, &vocab->cls_id);
    set(102, &vocab->sep_id);
  } else if (model == "t5") {
    set(0, &vocab->pad_id);
    set(1, &vocab->eos_id);
    set(2, &vocab->unk_id);
  }
}

}  // namespace

Expected<GgufVocab> LoadGgufVocab(const GgufFile& file) {
  GgufVocab vocab;
  VLLM_RETURN_IF_ERROR(Read(file.GetString("tokenizer.ggml.model"), &vocab.model));
  if (vocab.model.empty()) return Error{"the model file has no tokenizer (tokenizer.ggml.model)"};
  VLLM_RETURN_IF_ERROR(Read(file.GetString("tokenizer.ggml.pre"), &vocab.pre));
  VLLM_RETURN_IF_ERROR(Read(file.GetStringArray("tokenizer.ggml.tokens"), &vocab.tokens));
  const int64_t size = static_cast<int64_t>(vocab.tokens.size());
  if (size == 0) return Error{"tokenizer.ggml.tokens is missing or empty"};
  if (size > (int64_t{1} << 24)) return Error{"tokenizer.ggml.tokens is implausibly large"};

  std::vector<double> scores;
  VLLM_RETURN_IF_ERROR(Read(file.GetFloatArray("tokenizer.ggml.scores"), &scores));
  if (!scores.empty() && static_cast<int64_t>(scores.size()) != size) {
    return Error{"tokenizer.ggml.scores has " + std::to_string(scores.size()) + " entries for " +
                 std::to_string(size) + " tokens"};
  }
  vocab.scores.assign(size, 0.0f);
  for (size_t i = 0; i < scores.size(); ++i) vocab.scores[i] = static_cast<float>(scores[i]);

  std::vector<int64_t> types;
  VLLM_RETURN_IF_ERROR(Read(file.GetIntArray("tokenizer.ggml.token_type"), &types));
  if (!types.empty() && static_cast<int64_t>(types.size()) != size) {
    return Error{"tokenizer.ggml.token_type has " + std::to_string(types.size()) + " entries for " +
                 std::to_string(size) + " tokens"};
  }
  vocab.types.assign(size, TokenType::kNormal);
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] < 0 || types[i] > 6) {
      return Error{"tokenizer.ggml.token_type has invalid type " + std::to_string(types[i])};
    }
    vocab.types[i] = static_cast<TokenType>(types[i]);
  }
  VLLM_RETURN_IF_ERROR(Read(file.GetStringArray("tokenizer.ggml.merges"), &vocab.merges));
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& merge = vocab.merges[rank];
    const size_t space = merge.find(' ', 1);
    if (merge.empty() || space == std::string::npos || space + 1 == merge.size()) {
      return Error{"tokenizer.ggml.merges entry " + std::to_string(rank) + " ('" + merge +
                   "') is not two tokens separated by a space"};
    }
  }

  SetDefaultSpecialIds(vocab.model, size, &vocab);

  VLLM_RETURN_IF_ERROR(ReadId(file, "tokenizer.ggml.bos_token_id", size, &vocab.bos_id));
  VLLM_RETURN_IF_ERROR(ReadId(file, "tokenizer.ggml.eos_token_id", size, &vocab.eos_id));
  VLLM_RETURN_IF_ERROR(ReadId(file, "tokenizer.ggml.unknown_token_id", size, &vocab.unk_id));
  VLLM_RETURN_IF_ERROR(ReadId(file, "tokenizer.ggml.padding_token_id", size, &vocab.pad_id));
  VLLM_RETURN_IF_ERROR(ReadId(file, "tokenizer.ggml.seperator_token_id", size, &vocab.sep_id));
  VLLM_RETURN_IF_ERROR(ReadId(file, "tokenizer.ggml.cls_token_id", size, &vocab.cls_id));
  VLLM_RETURN_IF_ERROR(ReadFlag(file, "tokenizer.ggml.add_bos_token", &vocab.add_bos));
  VLLM_RETURN_IF_ERROR(ReadFlag(file, "tokenizer.ggml.add_eos_token", &vocab.add_eos));
  VLLM_RETURN_IF_ERROR(ReadFlag(file, "tokenizer.ggml.add_sep_token", &vocab.add_sep));
  vocab.add_space_prefix = vocab.model == "llama" || vocab.model == "t5";
  VLLM_RETURN_IF_ERROR(
      Read(file.GetBool("tokenizer.ggml.add_space_prefix"), &vocab.add_space_prefix));
  VLLM_RETURN_IF_ERROR(Read(file.GetBool("tokenizer.ggml.remove_extra_whitespaces"),
                            &vocab.remove_extra_whitespaces));
  std::vector<int64_t> charsmap;
  VLLM_RETURN_IF_ERROR(Read(file.GetIntArray("tokenizer.ggml.precompiled_charsmap"), &charsmap));
  vocab.precompiled_charsmap.reserve(charsmap.size());
  for (int64_t byte : charsmap) {
    if (byte < -128 || byte > 255) {
      return Error{"tokenizer.ggml.precompiled_charsmap holds " + std::to_string(byte) +
                   ", which is not a byte"};
    }
    vocab.precompiled_charsmap += static_cast<char>(byte);
  }

  vocab.token_to_id.reserve(size);
  for (int64_t id = 0; id < size; ++id) vocab.token_to_id.emplace(vocab.tokens[id], id);
  return vocab;
}

}  // namespace vllm
