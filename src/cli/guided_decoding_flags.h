// vLLM 0.10's --guided-decoding-* flags, the older spelling of --structured-outputs-config's keys:
// a given one replaces its key of the JSON, as vLLM 0.11 forwards them.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "common/expected.h"
#include "server/openai/structured_outputs_request.h"

namespace vllm {

// What was given (unset: not given).
struct GuidedDecodingFlags {
  std::optional<std::string> backend;
  std::optional<bool> disable_fallback;
  std::optional<bool> disable_any_whitespace;
  std::optional<bool> disable_additional_properties;
};

// --guided-decoding-backend NAME and --[no-]guided-decoding-disable-{fallback,any-whitespace,
// additional-properties}.
void AddGuidedDecodingFlags(CLI::App& serve, GuidedDecodingFlags& flags);

// Folds the given flags into `config`. vLLM's backends (auto, xgrammar, guidance, outlines,
// lm-format-enforcer) all become this build's grammar engine, with one info line for a named one;
// another name is an error naming it, as is disable_any_whitespace with a whitespace_pattern.
Status ApplyGuidedDecodingFlags(const GuidedDecodingFlags& flags,
                                server::StructuredOutputsConfig* config);

}  // namespace vllm
