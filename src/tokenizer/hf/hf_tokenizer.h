// Tokenizers from Hugging Face tokenizer directories: tokenizer.json (the `tokenizers` library's
// pipeline: added tokens, normalizer, pre-tokenizer, model, post-processor, decoder) with
// tokenizer_config.json and special_tokens_map.json (BOS / EOS, add_bos_token / add_eos_token,
// extra added tokens). Encode and Decode give what Hugging Face's encode / decode give.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/added_tokens.h"
#include "tokenizer/hf/decoders.h"
#include "tokenizer/hf/model.h"
#include "tokenizer/hf/normalizers.h"
#include "tokenizer/hf/post_processors.h"
#include "tokenizer/hf/pre_tokenizers.h"
#include "tokenizer/tokenizer.h"

namespace vllm {

class HfTokenizer : public Tokenizer {
 public:
  // tokenizer.json, tokenizer_config.json and special_tokens_map.json, parsed (the last two may
  // be null).
  static Expected<std::unique_ptr<HfTokenizer>> Create(const hf::Json& tokenizer,
                                                       const hf::Json& config,
                                                       const hf::Json& special_tokens_map);

  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const override;
  std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens) const override;
  std::string DecodeBytes(std::span<const int32_t> ids) const override;
  std::string_view TokenToPiece(int32_t id) const override;
  int64_t vocab_size() const override { return vocab_size_; }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  bool IsSpecial(int32_t id) const override;
  // The post-processor's pair template (TemplateProcessing's "pair", BertProcessing's
  // [CLS] A [SEP] B [SEP], RobertaProcessing's <s> A </s></s> B </s>).
  EncodedPair EncodePair(std::string_view first, std::string_view second) const override;

  // tokenizer_config.json's model_max_length; nullopt when absent or not a usable integer.
  std::optional<int64_t> model_max_length() const { return model_max_length_; }
  // The id of a token's text: an added token's or the model vocabulary's.
  std::optional<int32_t> TokenToId(std::string_view token) const;

 private:
  HfTokenizer() = default;
  // Normalizes, pre-tokenizes and tokenizes text that holds no raw-matched added token.
  void EncodeText(std::string_view text, bool at_input_start, std::vector<int32_t>* ids) const;
  std::string DecodeWith(std::span<const int32_t> ids, bool skip_special_tokens,
                         bool keep_bytes) const;

  std::unique_ptr<hf::Model> model_;
  std::unique_ptr<hf::Normalizer> normalizer_;
  std::unique_ptr<hf::PreTokenizer> pre_tokenizer_;
  std::unique_ptr<hf::Decoder> decoder_;
  hf::SpecialTokenFrame frame_;                              // what add_special_tokens adds
  std::unique_ptr<hf::AddedTokenMatcher> raw_added_;         // normalized = false
  std::unique_ptr<hf::AddedTokenMatcher> normalized_added_;  // normalized = true
  std::unordered_map<int32_t, hf::AddedToken> added_by_id_;
  std::unordered_map<std::string, int32_t, hf::StringHash, std::equal_to<>> added_by_content_;
  int64_t vocab_size_ = 0;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  std::optional<int64_t> model_max_length_;
};

// Loads DIR/tokenizer.json with DIR/tokenizer_config.json and DIR/special_tokens_map.json when
// present.
Expected<std::unique_ptr<Tokenizer>> LoadTokenizerFromHfDir(const std::string& dir);

// A directory's chat template: DIR/chat_template.jinja, else tokenizer_config.json's
// "chat_template" (a string, or the entry named "default" of a list of {name, template}); empty
// when it has none.
Expected<std::string> ReadHfChatTemplate(const std::string& dir);

// The same from the files' text; empty config / special-tokens-map text means no file.
Expected<std::unique_ptr<Tokenizer>> LoadTokenizerFromHfJson(
    std::string_view tokenizer_json, std::string_view config_json = {},
    std::string_view special_tokens_map_json = {});

}  // namespace vllm
