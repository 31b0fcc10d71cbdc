// Parses GBNF text (llama.cpp's grammar format) into the grammar IR, lowering quantifiers into
// helper rules.
#pragma once

#include <string_view>

#include "common/expected.h"
#include "structured_output/grammar.h"

namespace vllm {

// An error names the problem and where: "line 3, column 7: expected `::=` after rule name", an
// undefined rule, a rule defined twice, no `root` rule, a grammar over `limits`.
Expected<Grammar> ParseGbnf(std::string_view text, const GrammarLimits& limits = {});

}  // namespace vllm
