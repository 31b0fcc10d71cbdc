#include "structured_output/structured_output_compiler.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/json_depth.h"
#include "structured_output/choice_grammar.h"
#include "structured_output/compile_deadline.h"
#include "structured_output/json_schema_grammar.h"
#include "structured_output/regex_grammar.h"

namespace vllm {
namespace {

// The deepest nesting a JSON Schema may have; checked by a linear scan before parsing.
constexpr int kMaxSchemaDepth = 64;

// The cache key: the kind of constraint, its options and its text.
std::string CacheKey(const StructuredOutputsParams& params) {
  std::string key = params.disable_any_whitespace ? "w" : "W";
  key += params.disable_additional_properties ? "a" : "A";
  if (params.whitespace_pattern) {  // (length first: it cannot run into what follows)
    key += std::to_string(params.whitespace_pattern->size()) + ":" + *params.whitespace_pattern;
  }
  if (params.json) return key + "json:" + *params.json;
  if (params.regex) return key + "regex:" + *params.regex;
  if (params.grammar) return key + "grammar:" + *params.grammar;
  if (params.json_object) return key + "json_object";
  std::string choices;
  for (const std::string& choice : *params.choice) {
    choices += std::to_string(choice.size()) + ":" + choice;
  }
  return key + "choice:" + choices;
}

// The bytes of the constraint's text (the choices together), checked against the limit before
// anything reads it.
size_t ConstraintBytes(const StructuredOutputsParams& params) {
  size_t bytes = params.whitespace_pattern ? params.whitespace_pattern->size() : 0;
  for (const auto* text : {&params.json, &params.regex, &params.grammar}) {
    if (*text) bytes += (*text)->size();
  }
  if (params.choice) {
    for (const std::string& choice : *params.choice) bytes += choice.size();
  }
  return bytes;
}

std::mutex compile_hook_mutex;
std::function<void(const StructuredOutputsParams&)> compile_hook;  // guarded by the mutex

std::function<void(const StructuredOutputsParams&)> CompileHook() {
  std::lock_guard<std::mutex> lock(compile_hook_mutex);
  return compile_hook;
}

}  // namespace

void SetStructuredOutputCompileHookForTesting(
    std::function<void(const StructuredOutputsParams&)> hook) {
  std::lock_guard<std::mutex> lock(compile_hook_mutex);
  compile_hook = std::move(hook);
}

Expected<std::string> ConstraintToGbnf(const StructuredOutputsParams& params) {
  if (params.grammar) return *params.grammar;
  if (params.regex) return RegexToGbnf(*params.regex);
  if (params.choice) return ChoiceToGbnf(*params.choice);
  const std::string whitespace_pattern = params.whitespace_pattern.value_or("");
  if (params.json_object) {
    return AnyJsonObjectGbnf(!params.disable_any_whitespace, whitespace_pattern);
  }
  if (!params.json) return Error{"The structured outputs constraint is empty."};
  if (JsonNestsDeeperThan(*params.json, kMaxSchemaDepth)) {
    return Error{"The JSON schema nests deeper than " + std::to_string(kMaxSchemaDepth) +
                 " levels."};
  }
  const auto schema = nlohmann::ordered_json::parse(*params.json, nullptr, false);
  if (schema.is_discarded()) return Error{"The JSON schema is not valid JSON."};
  return JsonSchemaToGbnf(schema,
                          {.any_whitespace = !params.disable_any_whitespace,
                           .whitespace_pattern = whitespace_pattern,
                           .disallow_additional_properties = params.disable_additional_properties});
}

std::string StructuredOutputCompiler::Key(const StructuredOutputsParams& params) {
  return CacheKey(params);
}

StructuredOutputCompiler::StructuredOutputCompiler(
    std::shared_ptr<const IndexedVocabulary> vocabulary, StructuredOutputLimits limits,
    size_t max_cached_grammars)
    : vocabulary_(std::move(vocabulary)),
      limits_(std::move(limits)),
      max_cached_grammars_(max_cached_grammars) {}

StructuredOutputCompiler::StructuredOutputCompiler(
    std::function<std::shared_ptr<const IndexedVocabulary>()> index_vocabulary,
    StructuredOutputLimits limits, size_t max_cached_grammars)
    : index_vocabulary_(std::move(index_vocabulary)),
      limits_(std::move(limits)),
      max_cached_grammars_(max_cached_grammars) {}

const std::shared_ptr<const IndexedVocabulary>& StructuredOutputCompiler::vocabulary() {
  std::call_once(vocabulary_indexed_, [this] {
    if (index_vocabulary_) vocabulary_ = index_vocabulary_();
  });
  return vocabulary_;
}

std::shared_ptr<const CompiledGrammar> StructuredOutputCompiler::LookupKey(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto hit = cache_.find(key);
  if (hit == cache_.end()) return nullptr;
  recently_used_.splice(recently_used_.begin(), recently_used_, hit->second);
  return hit->second->second;
}

std::shared_ptr<const CompiledGrammar> StructuredOutputCompiler::Lookup(
    const StructuredOutputsParams& params) {
  return LookupKey(CacheKey(params));
}

Status StructuredOutputCompiler::Check(const StructuredOutputsParams& params) const {
  if (const size_t bytes = ConstraintBytes(params); bytes > limits_.max_constraint_bytes) {
    return Error{"The structured output constraint is " + std::to_string(bytes) +
                 " bytes, more than the " + std::to_string(limits_.max_constraint_bytes) +
                 " allowed (--structured-outputs-max-bytes)."};
  }
  return Status::Ok();
}

Expected<std::shared_ptr<const CompiledGrammar>> StructuredOutputCompiler::Compile(
    const StructuredOutputsParams& params, const std::function<bool()>& cancelled) {
  VLLM_RETURN_IF_ERROR(Check(params));
  const std::string key = CacheKey(params);
  if (auto hit = LookupKey(key)) return hit;
  std::shared_ptr<const IndexedVocabulary> indexed = vocabulary();  // (not within the time limit)
  const double timeout = limits_.compile_timeout_seconds;
  ScopedCompileDeadline scope(timeout, cancelled);
  auto interrupted = [&]() -> Error {
    if (scope.cancelled()) {
      return Error{"Compiling the structured output constraint was cancelled."};
    }
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeout);
    return Error{"The structured output constraint took more than " + std::string(seconds) +
                 " s of CPU time to compile (--structured-outputs-compile-timeout)."};
  };
  if (auto hook = CompileHook()) hook(params);
  auto gbnf = ConstraintToGbnf(params);
  // A stage that saw the interruption returned a partial result: whatever it is, stop here.
  if (scope.CheckNow()) return interrupted();
  if (!gbnf) return Error{gbnf.error()};
  auto grammar = CompiledGrammar::Compile(*gbnf, std::move(indexed), limits_.grammar);
  // (an interrupted CompiledGrammar::Compile fails; one that finished is kept)
  if (!grammar) return scope.interrupted() ? interrupted() : Error{grammar.error()};
  std::lock_guard<std::mutex> lock(mutex_);
  if (cache_.count(key) == 0) {
    recently_used_.emplace_front(key, *grammar);
    cache_[key] = recently_used_.begin();
    if (recently_used_.size() > max_cached_grammars_) {
      cache_.erase(recently_used_.back().first);
      recently_used_.pop_back();
    }
  }
  return *grammar;
}

}  // namespace vllm
