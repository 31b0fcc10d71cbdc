#include "cli/human_readable_int.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace vllm {

Expected<int64_t> ParseHumanReadableInt(const std::string& text) {
  const Error refused{
      "expected an integer, optionally with a suffix k/m/g/t (powers of 1000) "
      "or K/M/G/T (powers of 1024), got '" +
      text + "'"};
  if (text.empty()) return refused;
  constexpr std::string_view kDecimal = "kmgt";
  constexpr std::string_view kBinary = "KMGT";
  const char suffix = text.back();
  const size_t decimal_power = kDecimal.find(suffix);
  const size_t binary_power = kBinary.find(suffix);
  const bool has_suffix =
      decimal_power != std::string_view::npos || binary_power != std::string_view::npos;
  const std::string_view number(text.data(), text.size() - (has_suffix ? 1 : 0));
  const char* end = number.data() + number.size();
  if (binary_power != std::string_view::npos || !has_suffix) {  // integers only
    int64_t value = 0;
    auto [at, error] = std::from_chars(number.data(), end, value);
    if (error != std::errc() || at != end) return refused;
    if (!has_suffix) return value;
    const int shift = 10 * static_cast<int>(binary_power + 1);
    if (value < 0 || value > (INT64_MAX >> shift)) return refused;
    return value << shift;
  }
  double value = 0;
  auto [at, error] = std::from_chars(number.data(), end, value);
  const double scaled = value * std::pow(1000.0, static_cast<double>(decimal_power + 1));
  if (error != std::errc() || at != end || !(scaled >= 0) || scaled > 9e18 ||
      scaled != std::floor(scaled)) {
    return refused;
  }
  return static_cast<int64_t>(scaled);
}

}  // namespace vllm
