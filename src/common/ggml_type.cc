#include "common/ggml_type.h"

#include <algorithm>
#include <cctype>

namespace vllm {

std::optional<GgmlTypeTraits> GetSupportedTypeTraits(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
      return GgmlTypeTraits{"f32", 1, 4};
    case GgmlType::kF16:
      return GgmlTypeTraits{"f16", 1, 2};
    case GgmlType::kBF16:
      return GgmlTypeTraits{"bf16", 1, 2};
    case GgmlType::kQ8_0:
      return GgmlTypeTraits{"q8_0", kQuantBlockSize, sizeof(BlockQ8_0)};
    case GgmlType::kQ4_0:
      return GgmlTypeTraits{"q4_0", kQuantBlockSize, sizeof(BlockQ4_0)};
    default:
      return std::nullopt;
  }
}

std::string GgmlTypeName(uint32_t type) {
  static const char* const kNames[] = {
      "f32",  "f16",  "q4_0", "q4_1", "type 4", "type 5", "q5_0", "q5_1", "q8_0", "q8_1", "q2_K",
      "q3_K", "q4_K", "q5_K", "q6_K", "q8_K",   "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl",
      "iq3_s", "iq2_s", "iq4_xs", "i8", "i16",  "i32",    "i64",    "f64",   "iq1_m", "bf16"};
  if (type < sizeof(kNames) / sizeof(kNames[0])) return kNames[type];
  return "type " + std::to_string(type);
}

std::optional<GgmlType> ParseGgmlType(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (GgmlType type :
       {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0}) {
    if (GetSupportedTypeTraits(type)->name == lower) return type;
  }
  return std::nullopt;
}

}  // namespace vllm
