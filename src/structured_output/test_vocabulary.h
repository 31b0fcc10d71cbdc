// Test helpers for the grammar engine: a JSON grammar, small vocabularies, the byte-level BPE
// vocabulary of a tokenizer.json, reading masks back as token lists, and the brute-force mask (each
// token run alone through a copy of the matcher).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "structured_output/grammar_matcher.h"
#include "structured_output/token_vocabulary.h"

namespace vllm {

// A JSON grammar in the style of llama.cpp's json.gbnf.
inline constexpr char kJsonGbnf[] = R"(
root   ::= value
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( member ( "," ws member )* )? "}" ws
member ::= string ":" ws value
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\"" ws
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )? ws
ws     ::= [ \t\n]*
)";

// A vocabulary whose token i is tokens[i].
TokenVocabulary MakeVocabulary(std::vector<std::string> tokens,
                               std::vector<int32_t> stop_token_ids = {});

// model.vocab of a byte-level BPE tokenizer.json (GPT-2 alphabet mapped back to bytes), with its
// non-special added tokens as plain text and its special tokens empty; the stop tokens are the
// special tokens named in `stop_token_contents`. nullopt when the file cannot be read.
std::optional<TokenVocabulary> LoadByteLevelVocabulary(
    const std::string& tokenizer_json_path, const std::vector<std::string>& stop_token_contents);

// The ids whose bits are set, in increasing order.
std::vector<int32_t> AllowedTokens(std::span<const uint32_t> mask, int64_t vocab_size);

// `gbnf` compiled over an empty vocabulary, for tests of text rather than tokens; null (and a
// test failure) when it does not compile.
std::shared_ptr<const CompiledGrammar> CompileGbnf(const std::string& gbnf);
// Whether `text` is a complete sentence of `grammar` (false for a null grammar).
bool Accepts(const std::shared_ptr<const CompiledGrammar>& grammar, std::string_view text);

// The matcher's mask, through its cache.
std::vector<int32_t> MaskedTokens(GrammarMatcher& matcher, int64_t vocab_size);

// The tokens a copy of `matcher` accepts one at a time (stop tokens included).
std::vector<int32_t> BruteForceAllowedTokens(const GrammarMatcher& matcher, int64_t vocab_size);

}  // namespace vllm
