#include "cli/guided_decoding_flags.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "common/logging.h"

namespace vllm {
namespace {

constexpr std::array<std::string_view, 5> kVllmBackends = {"auto", "xgrammar", "guidance",
                                                           "outlines", "lm-format-enforcer"};

// --name / --no-name, recorded only when given.
void AddNegatable(CLI::App& serve, const std::string& name, std::optional<bool>& value,
                  const std::string& description) {
  serve.add_flag_function(
      name + ",!--no-" + name.substr(2), [&value](int64_t count) { value = count > 0; },
      description);
}

}  // namespace

void AddGuidedDecodingFlags(CLI::App& serve, GuidedDecodingFlags& flags) {
  serve.add_option("--guided-decoding-backend", flags.backend,
                   "vLLM 0.10's structured-output backend: auto|xgrammar|guidance|outlines|"
                   "lm-format-enforcer, all this build's own grammar engine");
  AddNegatable(serve, "--guided-decoding-disable-fallback", flags.disable_fallback,
               "vLLM 0.10's disable_fallback of --structured-outputs-config (one backend here)");
  AddNegatable(serve, "--guided-decoding-disable-any-whitespace", flags.disable_any_whitespace,
               "vLLM 0.10's disable_any_whitespace of --structured-outputs-config");
  AddNegatable(serve, "--guided-decoding-disable-additional-properties",
               flags.disable_additional_properties,
               "vLLM 0.10's disable_additional_properties of --structured-outputs-config");
}

Status ApplyGuidedDecodingFlags(const GuidedDecodingFlags& flags,
                                server::StructuredOutputsConfig* config) {
  if (flags.backend) {
    if (std::find(kVllmBackends.begin(), kVllmBackends.end(), *flags.backend) ==
        kVllmBackends.end()) {
      return Error{"--guided-decoding-backend " + *flags.backend +
                   ": not one of vLLM's backends (auto, xgrammar, guidance, outlines, "
                   "lm-format-enforcer)"};
    }
    if (*flags.backend != "auto") {
      VLLM_LOG(kInfo) << "--guided-decoding-backend " << *flags.backend
                      << ": structured outputs use this build's own grammar engine";
    }
  }
  if (flags.disable_any_whitespace) config->disable_any_whitespace = *flags.disable_any_whitespace;
  if (flags.disable_additional_properties) {
    config->disable_additional_properties = *flags.disable_additional_properties;
  }
  if (config->disable_any_whitespace && config->whitespace_pattern) {
    return Error{
        "--guided-decoding-disable-any-whitespace cannot be combined with "
        "--structured-outputs-config's whitespace_pattern"};
  }
  return Status::Ok();
}

}  // namespace vllm
