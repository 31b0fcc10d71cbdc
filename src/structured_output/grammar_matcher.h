// Structured output: a GBNF grammar compiled against a vocabulary (CompiledGrammar, shared by the
// requests that use the same constraint) and one request's position in it (GrammarMatcher), which
// gives the bitmask of the tokens that may come next and advances over the sampled token.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "structured_output/byte_grammar.h"
#include "structured_output/grammar.h"
#include "structured_output/parser_states.h"
#include "structured_output/token_mask_cache.h"
#include "structured_output/token_vocabulary.h"

namespace vllm {

// A grammar compiled against one vocabulary: immutable to users, shared by all requests that
// use the same constraint (it holds an internal, mutex-protected cache of token masks).
class CompiledGrammar {
 public:
  // An error names the problem: a syntax error with its line and column, an undefined rule, left
  // recursion, a grammar over `limits`.
  static Expected<std::shared_ptr<const CompiledGrammar>> Compile(
      std::string_view gbnf, std::shared_ptr<const IndexedVocabulary> vocabulary,
      const GrammarLimits& limits = {});

  int64_t vocab_size() const { return vocabulary_->vocab_size(); }
  const IndexedVocabulary& vocabulary() const { return *vocabulary_; }
  const ByteGrammar& byte_grammar() const { return byte_grammar_; }
  const GrammarLimits& limits() const { return limits_; }
  TokenMaskCache& mask_cache() const { return mask_cache_; }

 private:
  CompiledGrammar(ByteGrammar byte_grammar, std::shared_ptr<const IndexedVocabulary> vocabulary,
                  const GrammarLimits& limits);

  ByteGrammar byte_grammar_;
  std::shared_ptr<const IndexedVocabulary> vocabulary_;
  GrammarLimits limits_;
  mutable TokenMaskCache mask_cache_;
};

// One request's position in a compiled grammar. Not thread-safe; one per request.
class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  // bitmask: [TokenBitmaskWords(vocab_size)]; sets bit i iff token i may come next. Stop tokens
  // are allowed iff IsCompleted(). After termination only the stop tokens are allowed. Words past
  // the span's end are not written.
  void FillNextTokenBitmask(std::span<uint32_t> bitmask);
  // Advances over a token; false (state unchanged) when the token is not allowed. A stop token
  // (when allowed) terminates the matcher.
  bool AcceptToken(int32_t token_id);
  // Advances over raw bytes (tests, and forced text); false (state unchanged) when not allowed.
  bool AcceptString(std::string_view bytes);
  // The output so far is a complete sentence of the grammar.
  bool IsCompleted() const;
  // A stop token was accepted, or the output is complete and no further byte is possible.
  bool IsTerminated() const;

  // Computes the mask by walking the vocabulary trie even when the grammar's cache holds it
  // (benchmarks, and tests of the cache); does not store it in the cache.
  void FillNextTokenBitmaskUncached(std::span<uint32_t> bitmask);
  // Bytes of the memoized parser states: about limits().max_parser_state_bytes at most, or twice
  // what the current state needs (its stacks grow with the input's nesting) when that is more.
  size_t parser_state_bytes() const { return states_.memory_bytes(); }

 private:
  void FillMask(std::span<uint32_t> bitmask, bool use_cache);
  // Writes the allowed tokens of the current state into `mask` (stop tokens included).
  void ComputeMask(std::span<uint32_t> mask);
  // The parser state after `byte` from roots[from]. Past limits().max_parser_state_bytes, first
  // compacts the parser states down to the sets in `roots` (rewriting their ids; roots[0] is
  // the current state).
  int32_t StepWithinBudget(std::span<int32_t> roots, size_t from, uint8_t byte);
  bool StatesOver(size_t max_bytes) const;
  // Frees the parser states that the current position no longer needs, when they grew large.
  void CompactIfLarge();

  std::shared_ptr<const CompiledGrammar> grammar_;
  ParserStates states_;
  int32_t current_set_ = ParserStates::kDeadSet;
  bool stop_token_accepted_ = false;
  // Reused between calls.
  std::vector<uint32_t> mask_words_;  // [TokenBitmaskWords(vocab_size)]
  std::vector<int32_t> state_key_;    // the canonical key of the current parser state
  std::vector<int32_t> path_sets_;    // [max_token_length + 1]: the trie walk's parser states
};

}  // namespace vllm
