// Every flag of vLLM's `vllm serve` (0.10 / 0.11) and what this build does with it: one table
// that registers the flags with no real option here, rewrites vLLM's multi-letter short forms
// and writes docs/serve_flags.md.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace vllm {

enum class ServeFlagUse {
  kImplemented,  // a real option of this build does what vLLM's does (registered elsewhere)
  kMapped,       // a real option of this build gives vLLM's GPU meaning its CPU equivalent
  kIgnored,      // accepted with its value; one warning at start names it (none for `same_here`)
  kRefused,      // accepted as `same_here` only; another value stops `serve` with `note`
};

enum class ServeFlagArity {
  kFlag,       // no value: --name (store_true)
  kNegatable,  // no value: --name / --no-name (argparse's BooleanOptionalAction)
  kValue,      // one value: --name V or --name=V
  kValues,     // one or more values: --name V1 V2 ...
};

struct ServeFlag {
  std::string_view name;        // the long form, "--tensor-parallel-size"
  std::string_view short_name;  // vLLM's short form, "-tp" (empty: none)
  ServeFlagArity arity = ServeFlagArity::kValue;
  ServeFlagUse use = ServeFlagUse::kIgnored;
  // The values that mean what this build does anyway, '|'-separated ("true" / "false" for a flag
  // given as --name / --no-name): accepted silently. Empty: any value of a kIgnored flag warns.
  std::string_view same_here;
  std::string_view note;  // what this build does with it (the docs' text, the warning's reason)
};

// The table, in vLLM's --help order.
std::span<const ServeFlag> VllmServeFlags();

// The values given to the flags RegisterVllmServeFlags added, by flag, for CheckGivenFlags.
struct GivenServeFlags {
  std::map<std::string_view, std::string> values;  // flag name -> value (joined by ' ')
};

// Adds to `serve` every kIgnored and kRefused flag of the table that it has no option for yet
// (so it takes them with their values), recording what is given.
std::shared_ptr<GivenServeFlags> RegisterVllmServeFlags(CLI::App& serve);

// Once parsed: one warning per kIgnored flag given a value other than `same_here`; the error of
// the first kRefused flag given another value than `same_here`.
Status CheckGivenFlags(const GivenServeFlags& given);

// The spellings vLLM's parser accepts, as CLI11 reads them: multi-letter short forms (-tp 2,
// -tp=2, -O3) as their long forms (CLI11 would read `-tp` as `-t p`), and underscores in a long
// flag's name as dashes (--max_model_len). Values and other arguments are left as they are.
std::vector<std::string> NormalizeVllmFlagSpellings(std::vector<std::string> args);

// docs/serve_flags.md's table: one row per flag with its short form and what this build does.
std::string ServeFlagsMarkdownTable();

}  // namespace vllm
