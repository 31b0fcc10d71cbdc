#include "tokenizer/precompiled_charsmap.h"

#include "tokenizer/hf/unicode_chars.h"

namespace vllm {
namespace {

// darts-clone's unit layout.
bool HasLeaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t Value(uint32_t unit) { return unit & 0x7fffffffu; }
uint32_t Label(uint32_t unit) { return unit & (0x80000000u | 0xffu); }
uint32_t Offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

constexpr std::string_view kReplacementChar = "\xef\xbf\xbd";  // U+FFFD

}  // namespace

Expected<PrecompiledCharsmap> PrecompiledCharsmap::Parse(std::string_view blob) {
  PrecompiledCharsmap charsmap;
  if (blob.empty()) return charsmap;
  if (blob.size() < 4) return Error{"precompiled charsmap: shorter than its 4-byte header"};
  const auto* bytes = reinterpret_cast<const unsigned char*>(blob.data());
  const uint32_t trie_bytes =
      bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
  if (trie_bytes % 4 != 0 || trie_bytes > blob.size() - 4) {
    return Error{"precompiled charsmap: trie size " + std::to_string(trie_bytes) +
                 " does not fit the " + std::to_string(blob.size()) + "-byte blob"};
  }
  if (trie_bytes == 0) return Error{"precompiled charsmap: empty trie"};
  charsmap.units_.resize(trie_bytes / 4);
  for (size_t i = 0; i < charsmap.units_.size(); ++i) {
    const unsigned char* unit = bytes + 4 + 4 * i;
    charsmap.units_[i] =
        unit[0] | (unit[1] << 8) | (unit[2] << 16) | (static_cast<uint32_t>(unit[3]) << 24);
  }
  charsmap.replacements_.assign(blob.substr(4 + trie_bytes));
  return charsmap;
}

template <typename OnMatch>
void PrecompiledCharsmap::ForEachPrefixMatch(std::string_view text, OnMatch on_match) const {
  if (units_.empty()) return;
  size_t node = Offset(units_[0]);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == 0) return;  // keys hold no NUL
    node ^= byte;
    if (node >= units_.size()) return;
    const uint32_t unit = units_[node];
    if (Label(unit) != byte) return;
    node ^= Offset(unit);
    if (node >= units_.size()) return;
    if (HasLeaf(unit) && !on_match(i + 1, ReplacementAt(Value(units_[node])))) return;
  }
}

std::string_view PrecompiledCharsmap::ReplacementAt(uint32_t offset) const {
  if (offset >= replacements_.size()) return {};
  const std::string_view rest = std::string_view(replacements_).substr(offset);
  return rest.substr(0, rest.find('\0'));
}

size_t PrecompiledCharsmap::LongestMatch(std::string_view text,
                                         std::string_view* replacement) const {
  size_t longest = 0;
  ForEachPrefixMatch(text, [&](size_t length, std::string_view match) {
    longest = length;
    *replacement = match;
    return true;
  });
  return longest;
}

std::optional<std::string_view> PrecompiledCharsmap::ShortestMatch(std::string_view chunk) const {
  std::optional<std::string_view> result;
  ForEachPrefixMatch(chunk, [&](size_t, std::string_view match) {
    result = match;
    return false;
  });
  return result;
}

size_t PrecompiledCharsmap::NormalizePrefix(std::string_view text, std::string* out) const {
  std::string_view replacement;
  if (const size_t matched = LongestMatch(text, &replacement)) {
    out->append(replacement);
    return matched;
  }
  size_t length = 1;
  if (hf::DecodeUtf8At(text, 0, &length) == hf::kInvalidChar) {
    out->append(kReplacementChar);
  } else {
    out->append(text.substr(0, length));
  }
  return length;
}

}  // namespace vllm
