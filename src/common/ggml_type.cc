#include "common/ggml_type.h"

#include <algorithm>
#include <cctype>

namespace vllm {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

const std::string& SupportedTypeNames() {
  static const std::string names = [] {
    std::string joined;
    for (const GgmlTypeTraits& supported : kSupportedTypes) {
      joined += (joined.empty() ? "" : ", ") + std::string(supported.name);
    }
    return joined;
  }();
  return names;
}

std::string GgmlTypeName(uint32_t type) {
  // Ours beyond ggml's numbers (Q4_Z) by their rows.
  if (const GgmlTypeTraits* supported = FindSupportedType(static_cast<GgmlType>(type))) {
    return supported->name;
  }
  static const char* const kNames[] = {
      "f32",   "f16",        "q4_0",       "q4_1",       "type 4",   "type 5",   "q5_0",
      "q5_1",  "q8_0",       "q8_1",       "q2_K",       "q3_K",     "q4_K",     "q5_K",
      "q6_K",  "q8_K",       "iq2_xxs",    "iq2_xs",     "iq3_xxs",  "iq1_s",    "iq4_nl",
      "iq3_s", "iq2_s",      "iq4_xs",     "i8",         "i16",      "i32",      "i64",
      "f64",   "iq1_m",      "bf16",       "q4_0_4_4",   "q4_0_4_8", "q4_0_8_8", "tq1_0",
      "tq2_0", "iq4_nl_4_4", "iq4_nl_4_8", "iq4_nl_8_8", "mxfp4",    "nvfp4",    "q1_0",
      "q2_0"};
  if (type < sizeof(kNames) / sizeof(kNames[0])) return kNames[type];
  return "type " + std::to_string(type);
}

std::optional<GgmlType> ParseGgmlType(const std::string& name) {
  const std::string lower = Lower(name);
  for (const GgmlTypeTraits& supported : kSupportedTypes) {
    if (Lower(supported.name) == lower) return supported.type;
  }
  return std::nullopt;
}

}  // namespace vllm
