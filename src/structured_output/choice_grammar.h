// Grammars for vLLM's guided_choice (exactly one of a list of strings) and json_object mode
// (any JSON object, as vLLM with xgrammar compiles it: the schema {"type": "object"}).
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"

namespace vllm {

// A grammar whose `root` matches exactly one of `choices` (raw text, no JSON quoting, as vLLM).
// An Error for an empty list or a choice that is not valid UTF-8.
Expected<std::string> ChoiceToGbnf(const std::vector<std::string>& choices);

// A grammar whose `root` matches any JSON object; whitespace as JsonSchemaToGbnf's with these
// options (an Error when whitespace_pattern does not compile).
Expected<std::string> AnyJsonObjectGbnf(bool any_whitespace = true,
                                        const std::string& whitespace_pattern = "");

}  // namespace vllm
