// The pre-tokenizer of a byte-level BPE vocabulary, chosen by its tokenizer.ggml.pre name as
// llama.cpp chooses it: the regexes that split text into words, and the flags that go with them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vllm {

struct PreTokenizerConfig {
  // Applied in order; each splits the pieces of the previous one (see RegexSplitter).
  std::vector<std::string> patterns;
  // A word that is itself a vocabulary token is emitted whole, without merging (Llama 3, Tekken).
  bool ignore_merges = false;
  // Whether BOS is added when the file has no tokenizer.ggml.add_bos_token.
  bool add_bos_by_default = false;
};

// The config for a tokenizer.ggml.pre name ("" and "default" are the default); nullopt when the
// name is unknown.
std::optional<PreTokenizerConfig> FindPreTokenizerConfig(const std::string& pre);

// Every name FindPreTokenizerConfig knows, for error messages and tests.
std::vector<std::string> KnownPreTokenizerNames();

}  // namespace vllm
