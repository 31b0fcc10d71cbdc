// `serve --config FILE.yaml` as vLLM reads it: a YAML mapping of flag names (with or without the
// leading dashes, '_' or '-') to values, applied before the command line, which overrides it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/expected.h"

namespace vllm {

// `args` is a command line without the program name. When it runs `serve` with a `--config FILE`
// (or --config=FILE), returns it without that flag and with the file's flags appended, less
// those the command line gives: `key: value` as --key value, `key: true` as --key,
// `key: false` as --no-key (left out where there is none), a list as --key v1 v2, a mapping as
// its JSON, and `model:` as the model when the command line names none. Refuses a file that does
// not parse, is not a mapping, or names a key that `serve` has no flag for (naming its line).
Expected<std::vector<std::string>> ApplyServeConfigFile(std::vector<std::string> args,
                                                        const CLI::App& serve);

}  // namespace vllm
