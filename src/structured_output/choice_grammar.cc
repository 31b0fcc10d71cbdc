// Choice and any-JSON-object grammars.
#include "structured_output/choice_grammar.h"

#include <nlohmann/json.hpp>

#include "structured_output/gbnf_text.h"
#include "structured_output/json_schema_grammar.h"
#include "structured_output/literal_alternatives.h"

namespace vllm {

Expected<std::string> ChoiceToGbnf(const std::vector<std::string>& choices) {
  if (choices.empty()) return Error{"choice: the list of choices is empty"};
  for (size_t i = 0; i < choices.size(); ++i) {
    if (!DecodeUtf8(choices[i])) {
      return Error{"choice: choice " + std::to_string(i) + " is not valid UTF-8"};
    }
  }
  std::vector<std::pair<std::string, std::string>> rules;
  int num_rules = 0;
  const std::string root = LiteralAlternatives(
      choices, [&]() { return "choice-" + std::to_string(++num_rules); }, &rules);
  std::string gbnf = "root ::= " + root + "\n";
  for (const auto& [name, body] : rules) gbnf += name + " ::= " + body + "\n";
  return gbnf;
}

Expected<std::string> AnyJsonObjectGbnf(bool any_whitespace,
                                        const std::string& whitespace_pattern) {
  return JsonSchemaToGbnf(
      nlohmann::ordered_json{{"type", "object"}},
      {.any_whitespace = any_whitespace, .whitespace_pattern = whitespace_pattern});
}

}  // namespace vllm
