// Tests of UTF-8 range splitting: the sequences match exactly the encodings of the set's code
// points (checked over every code point, and by counting the byte strings the sequences match).
#include "structured_output/utf8_ranges.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace vllm {
namespace {

bool SequenceMatches(const Utf8RangeSequence& sequence, const uint8_t* bytes, int32_t length) {
  if (sequence.length != length) return false;
  for (int32_t i = 0; i < length; ++i) {
    if (bytes[i] < sequence.bytes[i].first || bytes[i] > sequence.bytes[i].last) return false;
  }
  return true;
}

void ExpectExactSplit(const std::vector<UnicodeRange>& ranges) {
  const std::vector<Utf8RangeSequence> sequences = SplitIntoUtf8Sequences(ranges);
  uint64_t num_in_set = 0;
  for (uint32_t code_point = 0; code_point <= kMaxUnicodeScalar; ++code_point) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;
    bool in_set = false;
    for (const UnicodeRange& range : ranges) {
      in_set |= range.first <= code_point && code_point <= range.last;
    }
    num_in_set += in_set;
    uint8_t bytes[4];
    const int32_t length = EncodeUtf8(code_point, bytes);
    int num_matching = 0;
    for (const Utf8RangeSequence& sequence : sequences) {
      num_matching += SequenceMatches(sequence, bytes, length);
    }
    ASSERT_EQ(num_matching, in_set ? 1 : 0) << std::hex << code_point;
  }
  // As many byte strings as code points: the sequences match nothing else.
  uint64_t num_byte_strings = 0;
  for (const Utf8RangeSequence& sequence : sequences) {
    uint64_t product = 1;
    for (int32_t i = 0; i < sequence.length; ++i) {
      product *= sequence.bytes[i].last - sequence.bytes[i].first + 1;
    }
    num_byte_strings += product;
  }
  EXPECT_EQ(num_byte_strings, num_in_set);
}

TEST(Utf8RangesTest, EncodesEachLength) {
  uint8_t bytes[4];
  ASSERT_EQ(EncodeUtf8(0x41, bytes), 1);
  EXPECT_EQ(bytes[0], 0x41);
  ASSERT_EQ(EncodeUtf8(0xE9, bytes), 2);
  EXPECT_EQ(bytes[0], 0xC3);
  EXPECT_EQ(bytes[1], 0xA9);
  ASSERT_EQ(EncodeUtf8(0x4E2D, bytes), 3);
  EXPECT_EQ(bytes[2], 0xAD);
  ASSERT_EQ(EncodeUtf8(0x1F600, bytes), 4);
  EXPECT_EQ(bytes[0], 0xF0);
  EXPECT_EQ(bytes[3], 0x80);
}

TEST(Utf8RangesTest, AnyCharacterIsTheStandardNineSequences) {
  const std::vector<Utf8RangeSequence> sequences =
      SplitIntoUtf8Sequences(std::vector<UnicodeRange>{{0, 0xD7FF}, {0xE000, 0x10FFFF}});
  ASSERT_EQ(sequences.size(), 9u);
  EXPECT_EQ(sequences[0].length, 1);
  EXPECT_EQ(sequences[0].bytes[0], (ByteRange{0x00, 0x7F}));
  EXPECT_EQ(sequences[1].bytes[0], (ByteRange{0xC2, 0xDF}));
  EXPECT_EQ(sequences[2].bytes[1], (ByteRange{0xA0, 0xBF}));  // E0: no overlong forms
  EXPECT_EQ(sequences[4].bytes[0], (ByteRange{0xED, 0xED}));
  EXPECT_EQ(sequences[4].bytes[1], (ByteRange{0x80, 0x9F}));  // ED: no surrogates
  EXPECT_EQ(sequences[8].bytes[0], (ByteRange{0xF4, 0xF4}));
  EXPECT_EQ(sequences[8].bytes[1], (ByteRange{0x80, 0x8F}));  // F4: nothing past U+10FFFF
  ExpectExactSplit({{0, 0xD7FF}, {0xE000, 0x10FFFF}});
}

TEST(Utf8RangesTest, RandomSetsSplitExactly) {
  std::mt19937 rng(7);
  const uint32_t boundaries[] = {0x7F,   0x80,   0x7FF,   0x800,   0xFFF,   0x1000,  0xD7FF,
                                 0xE000, 0xFFFF, 0x10000, 0x3FFFF, 0x40000, 0x10FFFF};
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<uint32_t> points;
    for (int i = 0; i < 6; ++i) {
      uint32_t point = std::uniform_int_distribution<uint32_t>(0, kMaxUnicodeScalar)(rng);
      if (i % 2 == 0) point = boundaries[std::uniform_int_distribution<int>(0, 12)(rng)];
      if (point >= 0xD800 && point <= 0xDFFF) point = 0xE000;
      points.push_back(point);
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::vector<UnicodeRange> ranges;
    for (size_t i = 0; i + 1 < points.size(); i += 2) {
      if (points[i] <= 0xD7FF && points[i + 1] >= 0xE000) {
        ranges.push_back({points[i], 0xD7FF});
        ranges.push_back({0xE000, points[i + 1]});
      } else {
        ranges.push_back({points[i], points[i + 1]});
      }
    }
    ExpectExactSplit(ranges);
  }
}

}  // namespace
}  // namespace vllm
