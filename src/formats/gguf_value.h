// GGUF metadata values: scalars, strings and (possibly nested) arrays.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace vllm {

enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

const char* GgufValueTypeName(GgufValueType type);

struct GgufValue;

struct GgufArray {
  GgufValueType element_type = GgufValueType::kUint8;
  std::vector<GgufValue> items;
};

// Unsigned integers are held as uint64_t, signed as int64_t, floats as double; `type` keeps the
// exact on-disk type so a file can be written back unchanged.
struct GgufValue {
  GgufValueType type = GgufValueType::kUint8;
  std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray> data;

  static GgufValue Uint32(uint32_t v) { return {GgufValueType::kUint32, uint64_t{v}}; }
  static GgufValue Int32(int32_t v) { return {GgufValueType::kInt32, int64_t{v}}; }
  static GgufValue Float32(float v) { return {GgufValueType::kFloat32, double{v}}; }
  static GgufValue Bool(bool v) { return {GgufValueType::kBool, v}; }
  static GgufValue String(std::string v) { return {GgufValueType::kString, std::move(v)}; }
  static GgufValue Array(GgufArray v) { return {GgufValueType::kArray, std::move(v)}; }
};

}  // namespace vllm
