// --speculative-config: vLLM's JSON object of SpeculativeConfig keys, parsed into the native
// struct at the edge (values are checked when the engine starts, see engine/speculative_config.h).
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"
#include "vllm/engine_args.h"
#include "vllm/spec_decoding_stats.h"

namespace vllm {

// Keys: method, model, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min (null:
// unset). Invalid JSON, another key or a value of the wrong type is an error naming it.
Expected<SpeculativeConfig> ParseSpeculativeConfig(std::string_view json_text);

// One line for the CLI's reports: drafts, accepted tokens and the mean acceptance length (or that
// no draft was proposed).
std::string SpecDecodingSummary(const SpecDecodingStats& stats);

}  // namespace vllm
