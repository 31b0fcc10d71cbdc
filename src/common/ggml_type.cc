#include "common/ggml_type.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace vllm {
namespace {

struct SupportedType {
  GgmlType type;
  GgmlTypeTraits traits;
};

// Block sizes and bytes as ggml defines them (ggml-common.h's block structs).
constexpr std::array<SupportedType, 16> kSupportedTypes = {{
    {GgmlType::kF32, {"f32", 1, 4}},
    {GgmlType::kF16, {"f16", 1, 2}},
    {GgmlType::kBF16, {"bf16", 1, 2}},
    {GgmlType::kQ4_0, {"q4_0", kQuantBlockSize, 18}},
    {GgmlType::kQ4_1, {"q4_1", kQuantBlockSize, 20}},
    {GgmlType::kQ5_0, {"q5_0", kQuantBlockSize, 22}},
    {GgmlType::kQ5_1, {"q5_1", kQuantBlockSize, 24}},
    {GgmlType::kQ8_0, {"q8_0", kQuantBlockSize, 34}},
    {GgmlType::kQ2_K, {"q2_K", kSuperBlockSize, 84}},
    {GgmlType::kQ3_K, {"q3_K", kSuperBlockSize, 110}},
    {GgmlType::kQ4_K, {"q4_K", kSuperBlockSize, 144}},
    {GgmlType::kQ5_K, {"q5_K", kSuperBlockSize, 176}},
    {GgmlType::kQ6_K, {"q6_K", kSuperBlockSize, 210}},
    {GgmlType::kIQ4_NL, {"iq4_nl", kQuantBlockSize, 18}},
    {GgmlType::kIQ4_XS, {"iq4_xs", kSuperBlockSize, 136}},
    {GgmlType::kMXFP4, {"mxfp4", kQuantBlockSize, 17}},
}};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::optional<GgmlTypeTraits> GetSupportedTypeTraits(GgmlType type) {
  for (const SupportedType& supported : kSupportedTypes) {
    if (supported.type == type) return supported.traits;
  }
  return std::nullopt;
}

const std::string& SupportedTypeNames() {
  static const std::string names = [] {
    std::string joined;
    for (const SupportedType& supported : kSupportedTypes) {
      joined += (joined.empty() ? "" : ", ") + std::string(supported.traits.name);
    }
    return joined;
  }();
  return names;
}

std::string GgmlTypeName(uint32_t type) {
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
  for (const SupportedType& supported : kSupportedTypes) {
    if (Lower(supported.traits.name) == lower) return supported.type;
  }
  return std::nullopt;
}

}  // namespace vllm
