// Checks of a parsed grammar that the matcher relies on: no left recursion (a rule that can
// reach itself, before consuming input, with something still to match after).
#pragma once

#include "common/expected.h"
#include "structured_output/grammar.h"

namespace vllm {

// Ok, or an error "left recursion in rule `x`" naming a user rule on the cycle.
Status CheckNoLeftRecursion(const Grammar& grammar);

}  // namespace vllm
