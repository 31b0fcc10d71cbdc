// Compiles a request's structured-output constraint (vLLM's StructuredOutputsParams: a JSON
// Schema, any JSON object, a regex, a choice or a grammar) into a grammar over one vocabulary,
// within limits: the constraint's size, the size of the grammar it becomes, and a time limit the
// compiler's loops check (compile_deadline.h). Compiled grammars are cached by constraint, so the
// requests of an agent that repeat one schema compile it once and share its token-mask cache.
#pragma once

#include <cstddef>
#include <functional>
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
// `params` passed StructuredOutputsParams::Validate where the request came in (a
// ValidatedSamplingParams' constraint has), so neither this nor the compiler checks it again.
Expected<std::string> ConstraintToGbnf(const StructuredOutputsParams& params);

// What one constraint may cost to compile (EngineArgs' --structured-outputs-* flags).
struct StructuredOutputLimits {
  // The constraint's text: the JSON schema, the regex, the grammar, or the choices together.
  size_t max_constraint_bytes = 4 << 20;
  // Seconds of CPU time one compile may take (0: no limit).
  double compile_timeout_seconds = 10.0;
  // The grammar it becomes (GBNF bytes, elements after expansion, parse stacks, ...).
  GrammarLimits grammar;
};

class StructuredOutputCompiler {
 public:
  explicit StructuredOutputCompiler(std::shared_ptr<const IndexedVocabulary> vocabulary,
                                    StructuredOutputLimits limits = {},
                                    size_t max_cached_grammars = 64);
  // The vocabulary comes from `index_vocabulary`, called on the first compile (indexing a
  // vocabulary takes a moment, which an engine that never sees a constraint need not spend).
  explicit StructuredOutputCompiler(
      std::function<std::shared_ptr<const IndexedVocabulary>()> index_vocabulary,
      StructuredOutputLimits limits = {}, size_t max_cached_grammars = 64);

  // Compiles on the calling thread (a cached grammar comes back at once). Thread-safe. Errors (a
  // schema, regex or grammar that cannot compile, a limit exceeded) name the problem, and a
  // limit by its flag. `cancelled` (may be empty) is polled while compiling: true stops the
  // compile with an error.
  Expected<std::shared_ptr<const CompiledGrammar>> Compile(
      const StructuredOutputsParams& params, const std::function<bool()>& cancelled = {});
  // What Compile checks before compiling: the constraint is within the size limit.
  Status Check(const StructuredOutputsParams& params) const;
  // The cached grammar of `params`, or null; never compiles. Thread-safe.
  std::shared_ptr<const CompiledGrammar> Lookup(const StructuredOutputsParams& params);
  // What constraints are cached by: equal keys compile to the same grammar.
  static std::string Key(const StructuredOutputsParams& params);
  const StructuredOutputLimits& limits() const { return limits_; }

 private:
  using CacheEntry = std::pair<std::string, std::shared_ptr<const CompiledGrammar>>;

  std::shared_ptr<const CompiledGrammar> LookupKey(const std::string& key);
  const std::shared_ptr<const IndexedVocabulary>& vocabulary();

  std::function<std::shared_ptr<const IndexedVocabulary>()> index_vocabulary_;
  std::once_flag vocabulary_indexed_;
  std::shared_ptr<const IndexedVocabulary> vocabulary_;  // set once vocabulary_indexed_
  const StructuredOutputLimits limits_;
  size_t max_cached_grammars_;
  std::mutex mutex_;
  std::list<CacheEntry> recently_used_;  // most recent first
  std::unordered_map<std::string, std::list<CacheEntry>::iterator> cache_;
};

// Tests: `hook` runs at the start of every compile that misses the cache, on the compiling thread
// and within its time limit (a test holds a compile in flight by blocking in it, or passes the
// limit by spending CPU time). Empty: none.
void SetStructuredOutputCompileHookForTesting(
    std::function<void(const StructuredOutputsParams&)> hook);

}  // namespace vllm
