#include "model/weight_loader.h"

namespace vllm {
namespace {
std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}
}  // namespace

Expected<const GgufTensor*> WeightLoader::Tensor(const std::string& name,
                                                 const std::vector<int64_t>& shape) const {
  const GgufTensor* tensor = source_.Find(name);
  if (tensor == nullptr) return Error{"model file is missing tensor '" + name + "'"};
  if (tensor->shape != shape) {
    return Error{"tensor '" + name + "' has shape " + ShapeString(tensor->shape) + ", expected " +
                 ShapeString(shape)};
  }
  return tensor;
}

Expected<WeightLoader::LinearBytes> WeightLoader::BytesOf(const std::string& name,
                                                          const std::vector<int64_t>& shape) {
  auto tensor = Tensor(name, shape);
  if (!tensor) return Error{tensor.error()};
  const int64_t cols = shape[0];
  int64_t rows = 1;
  for (size_t i = 1; i < shape.size(); ++i) rows *= shape[i];
  const GgmlType stored = (*tensor)->type;
  const std::optional<GgmlType> target = ConversionType(name);
  if (!target || *target == stored) {
    return LinearBytes{stored, (*tensor)->data, {}};
  }
  // Converted once, row by row through f32.
  auto traits = GetSupportedTypeTraits(*target);
  if (!traits || cols % traits->block_size != 0) {
    return Error{"tensor '" + name + "' cannot be converted to " +
                 GgmlTypeName(static_cast<uint32_t>(*target))};
  }
  const int64_t row_bytes = RowBytes(*traits, cols);
  const int64_t stored_row_bytes = (*tensor)->num_bytes / rows;
  LinearBytes bytes{*target, nullptr, std::vector<uint8_t>(rows * row_bytes)};
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    kernels::DequantizeRow(stored, (*tensor)->data + r * stored_row_bytes, cols, row.data());
    kernels::QuantizeRow(*target, row.data(), cols, bytes.converted.data() + r * row_bytes);
  }
  bytes.data = bytes.converted.data();
  return bytes;
}

Expected<std::unique_ptr<kernels::LinearWeight>> WeightLoader::Linear(const std::string& name,
                                                                      int64_t rows, int64_t cols) {
  auto bytes = BytesOf(name, {cols, rows});
  if (!bytes) return Error{bytes.error()};
  auto weight = bytes->converted.empty()
                    ? kernels::LinearWeight::Create(bytes->type, bytes->data, rows, cols)
                    : kernels::LinearWeight::CreateOwned(bytes->type, std::move(bytes->converted),
                                                         rows, cols);
  return WithInputOrderOf(name, std::move(weight));
}

std::optional<GgmlType> WeightLoader::ConversionType(const std::string& name) const {
  if (source_.IsQuantizedLinear(name)) return std::nullopt;
  return linear_type_;
}

bool WeightLoader::SameInputOrder(const std::string& a, const std::string& b) const {
  static const std::vector<int32_t> kInOrder;  // no input order
  const std::vector<int32_t>* order_a = source_.InputOrder(a);
  const std::vector<int32_t>* order_b = source_.InputOrder(b);
  return *(order_a ? order_a : &kInOrder) == *(order_b ? order_b : &kInOrder);
}

Expected<std::unique_ptr<kernels::LinearWeight>> WeightLoader::WithInputOrderOf(
    const std::string& name, Expected<std::unique_ptr<kernels::LinearWeight>> weight) {
  if (!weight) return Error{"tensor '" + name + "': " + weight.error()};
  const std::vector<int32_t>* order = source_.InputOrder(name);
  if (order != nullptr && !order->empty()) {
    weight = kernels::LinearWeight::WithInputOrder(std::move(weight).value(), *order);
    if (!weight) return Error{"tensor '" + name + "': " + weight.error()};
  }
  linear_bytes_ += (*weight)->resident_bytes();
  return weight;
}

Expected<std::optional<std::vector<WeightLoader::LinearBytes>>> WeightLoader::SameTypeBytes(
    const std::vector<FusedPart>& parts, int64_t cols) {
  std::optional<GgmlType> type;
  for (const FusedPart& part : parts) {
    const GgufTensor* tensor = source_.Find(part.name);
    if (tensor == nullptr) return Error{"model file is missing tensor '" + part.name + "'"};
    if (!type) type = ComputedType(part.name, *tensor);
    if (ComputedType(part.name, *tensor) != *type) {
      return std::optional<std::vector<LinearBytes>>();
    }
    if (!SameInputOrder(parts.front().name, part.name)) {
      return std::optional<std::vector<LinearBytes>>();
    }
  }
  std::vector<LinearBytes> bytes;
  bytes.reserve(parts.size());
  for (const FusedPart& part : parts) {
    auto part_bytes = BytesOf(part.name, {cols, part.rows});
    if (!part_bytes) return Error{part_bytes.error()};
    bytes.push_back(std::move(*part_bytes));
  }
  return std::optional(std::move(bytes));
}

Expected<std::unique_ptr<kernels::LinearWeight>> WeightLoader::FusedLinear(
    const std::vector<FusedPart>& parts, int64_t cols) {
  auto bytes = SameTypeBytes(parts, cols);
  if (!bytes) return Error{bytes.error()};
  if (!*bytes) return std::unique_ptr<kernels::LinearWeight>();
  std::vector<kernels::LinearWeight::Part> weight_parts;
  for (size_t i = 0; i < parts.size(); ++i)
    weight_parts.push_back({(**bytes)[i].data, parts[i].rows});
  // The parts share the first's input order (SameTypeBytes).
  return WithInputOrderOf(parts.front().name, kernels::LinearWeight::CreateFused(
                                                  (**bytes).front().type, weight_parts, cols));
}

Expected<std::unique_ptr<kernels::LinearWeight>> WeightLoader::GatedPairLinear(
    const std::string& gate_name, const std::string& up_name, int64_t rows, int64_t cols) {
  // Gate and up, or both in one tensor.
  auto bytes = Has(gate_name) ? SameTypeBytes({{gate_name, rows}, {up_name, rows}}, cols)
                              : SameTypeBytes({{up_name, 2 * rows}}, cols);
  if (!bytes) return Error{bytes.error()};
  if (!*bytes) return std::unique_ptr<kernels::LinearWeight>();
  const GgmlType type = (**bytes).front().type;
  const auto traits = GetSupportedTypeTraits(type);
  if (!traits) {
    return Error{"tensor '" + up_name + "' has unsupported type " +
                 GgmlTypeName(static_cast<uint32_t>(type))};
  }
  const uint8_t* gate = (**bytes).front().data;
  const uint8_t* up =
      (**bytes).size() == 2 ? (**bytes).back().data : gate + rows * RowBytes(*traits, cols);
  // Gate and up share up's input order (SameTypeBytes).
  return WithInputOrderOf(
      up_name, kernels::LinearWeight::CreateGatedPair(type, {gate, rows}, {up, rows}, cols));
}

Expected<std::vector<std::unique_ptr<kernels::LinearWeight>>> WeightLoader::ExpertLinears(
    const std::string& name, int64_t num_experts, int64_t rows, int64_t cols) {
  if (!Has(name) && name.ends_with("_exps.weight")) {           // one tensor per expert
    const std::string stem = name.substr(0, name.size() - 12);  // "blk.N.ffn_gate"
    std::vector<std::unique_ptr<kernels::LinearWeight>> experts;
    for (int64_t e = 0; e < num_experts; ++e) {
      auto weight = Linear(stem + "." + std::to_string(e) + ".weight", rows, cols);
      if (!weight) return Error{weight.error()};
      experts.push_back(std::move(*weight));
    }
    return experts;
  }
  auto bytes = BytesOf(name, {cols, rows, num_experts});
  if (!bytes) return Error{bytes.error()};
  auto traits = GetSupportedTypeTraits(bytes->type);
  if (!traits) {
    return Error{"tensor '" + name + "' has unsupported type " +
                 GgmlTypeName(static_cast<uint32_t>(bytes->type))};
  }
  const int64_t expert_bytes = RowBytes(*traits, cols) * rows;
  std::vector<std::unique_ptr<kernels::LinearWeight>> experts;
  for (int64_t e = 0; e < num_experts; ++e) {
    const uint8_t* slice = bytes->data + e * expert_bytes;
    auto weight = WithInputOrderOf(
        name,
        bytes->converted.empty()
            ? kernels::LinearWeight::Create(bytes->type, slice, rows, cols)
            : kernels::LinearWeight::CreateOwned(
                  bytes->type, std::vector<uint8_t>(slice, slice + expert_bytes), rows, cols));
    if (!weight) return Error{weight.error()};
    experts.push_back(std::move(*weight));
  }
  return experts;
}

Expected<std::vector<std::unique_ptr<kernels::LinearWeight>>> WeightLoader::FusedExpertLinears(
    const std::string& gate_name, const std::string& up_name, int64_t num_experts, int64_t rows,
    int64_t cols) {
  using Weights = std::vector<std::unique_ptr<kernels::LinearWeight>>;
  if (!Has(gate_name) || !Has(up_name)) {  // one tensor per expert
    auto per_expert = [](const std::string& name, int64_t e) {
      return name.substr(0, name.size() - 12) + "." + std::to_string(e) + ".weight";
    };
    Weights experts;
    for (int64_t e = 0; e < num_experts; ++e) {
      auto weight =
          FusedLinear({{per_expert(gate_name, e), rows}, {per_expert(up_name, e), rows}}, cols);
      if (!weight) return Error{weight.error()};
      if (*weight == nullptr) return Weights();
      experts.push_back(std::move(*weight));
    }
    return experts;
  }
  if (ComputedType(gate_name, *source_.Find(gate_name)) !=
          ComputedType(up_name, *source_.Find(up_name)) ||
      !SameInputOrder(gate_name, up_name)) {
    return Weights();
  }
  auto gate = BytesOf(gate_name, {cols, rows, num_experts});
  if (!gate) return Error{gate.error()};
  auto up = BytesOf(up_name, {cols, rows, num_experts});
  if (!up) return Error{up.error()};
  auto traits = GetSupportedTypeTraits(gate->type);
  if (!traits) return Error{"tensor '" + gate_name + "' has an unsupported type"};
  const int64_t expert_bytes = RowBytes(*traits, cols) * rows;
  Weights experts;
  for (int64_t e = 0; e < num_experts; ++e) {
    auto weight = WithInputOrderOf(
        gate_name,
        kernels::LinearWeight::CreateFused(
            gate->type,
            {{gate->data + e * expert_bytes, rows}, {up->data + e * expert_bytes, rows}}, cols));
    if (!weight) return Error{weight.error()};
    experts.push_back(std::move(*weight));
  }
  return experts;
}

Expected<std::vector<float>> WeightLoader::Vector(const std::string& name, int64_t size) const {
  auto tensor = Tensor(name, {size});
  if (!tensor) return Error{tensor.error()};
  std::vector<float> values(size);
  kernels::DequantizeRow((*tensor)->type, (*tensor)->data, size, values.data());
  return values;
}

}  // namespace vllm
