// Compiles a request's structured-output constraint (vLLM's StructuredOutputsParams: a JSON
// Schema, any JSON object, a regex, a choice or a grammar) into a grammar over one vocabulary.
// Compiled grammars are cached by constraint, so the requests of an agent that repeat one schema
// compile it once and share its token-mask cache.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/expected.h"
#include "structured_output/grammar_matcher.h"
#include "structured_output/token_vocabulary.h"
#include "vllm/sampling_params.h"

namespace vllm {

// The constraint as GBNF text. Errors say what is wrong with the schema, regex or choice.
Expected<std::string> ConstraintToGbnf(const StructuredOutputsParams& params);

class StructuredOutputCompiler {
 public:
  explicit StructuredOutputCompiler(std::shared_ptr<const IndexedVocabulary> vocabulary,
                                    size_t max_cached_grammars = 64);

  // Thread-safe. Errors (a schema, regex or grammar that cannot compile) name the problem.
  Expected<std::shared_ptr<const CompiledGrammar>> Compile(const StructuredOutputsParams& params);

 private:
  using CacheEntry = std::pair<std::string, std::shared_ptr<const CompiledGrammar>>;

  std::shared_ptr<const IndexedVocabulary> vocabulary_;
  size_t max_cached_grammars_;
  std::mutex mutex_;
  std::list<CacheEntry> recently_used_;  // most recent first
  std::unordered_map<std::string, std::list<CacheEntry>::iterator> cache_;
};

}  // namespace vllm
