#include "structured_output/structured_output_compiler.h"

#include <nlohmann/json.hpp>

#include "common/json_depth.h"
#include "structured_output/choice_grammar.h"
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

}  // namespace

Expected<std::string> ConstraintToGbnf(const StructuredOutputsParams& params) {
  if (std::string error = params.Validate(); !error.empty()) return Error{error};
  if (params.grammar) return *params.grammar;
  if (params.regex) return RegexToGbnf(*params.regex);
  if (params.choice) return ChoiceToGbnf(*params.choice);
  if (params.json_object) return AnyJsonObjectGbnf(!params.disable_any_whitespace);
  if (JsonNestsDeeperThan(*params.json, kMaxSchemaDepth)) {
    return Error{"The JSON schema nests deeper than " + std::to_string(kMaxSchemaDepth) +
                 " levels."};
  }
  const auto schema = nlohmann::ordered_json::parse(*params.json, nullptr, false);
  if (schema.is_discarded()) return Error{"The JSON schema is not valid JSON."};
  return JsonSchemaToGbnf(schema,
                          {.any_whitespace = !params.disable_any_whitespace,
                           .disallow_additional_properties = params.disable_additional_properties});
}

StructuredOutputCompiler::StructuredOutputCompiler(
    std::shared_ptr<const IndexedVocabulary> vocabulary, size_t max_cached_grammars)
    : vocabulary_(std::move(vocabulary)), max_cached_grammars_(max_cached_grammars) {}

Expected<std::shared_ptr<const CompiledGrammar>> StructuredOutputCompiler::Compile(
    const StructuredOutputsParams& params) {
  if (std::string error = params.Validate(); !error.empty()) return Error{error};
  const std::string key = CacheKey(params);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto hit = cache_.find(key); hit != cache_.end()) {
      recently_used_.splice(recently_used_.begin(), recently_used_, hit->second);
      return hit->second->second;
    }
  }
  auto gbnf = ConstraintToGbnf(params);
  if (!gbnf) return Error{gbnf.error()};
  auto grammar = CompiledGrammar::Compile(*gbnf, vocabulary_);
  if (!grammar) return Error{grammar.error()};
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
