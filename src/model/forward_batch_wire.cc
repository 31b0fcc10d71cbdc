#include "model/forward_batch_wire.h"

#include <cstring>
#include <string>
#include <type_traits>

namespace vllm {
namespace {

// Leading bytes of each message kind, so one read as the other fails.
constexpr uint32_t kBatchMagic = 0x31424656;      // "VFB1"
constexpr uint32_t kKvOptionsMagic = 0x31534b56;  // "VKS1"

class Writer {
 public:
  template <typename T>
  void Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  // A count, then the elements.
  template <typename T>
  void PutVector(std::span<const T> values) {
    Put<int64_t>(static_cast<int64_t>(values.size()));
    const auto* p = reinterpret_cast<const uint8_t*>(values.data());
    bytes_.insert(bytes_.end(), p, p + values.size_bytes());
  }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

class Reader {
 public:
  // `message` names the message kind in errors.
  Reader(std::span<const uint8_t> bytes, const char* message) : bytes_(bytes), message_(message) {}

  template <typename T>
  Expected<T> Get(const char* what) {
    if (bytes_.size() - at_ < sizeof(T)) return Truncated(what);
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  // A count, then that many elements; the count must fit in the bytes left.
  template <typename T>
  Expected<std::vector<T>> GetVector(const char* what) {
    auto count = Get<int64_t>(what);
    if (!count) return Error{count.error()};
    if (*count < 0 || static_cast<uint64_t>(*count) > (bytes_.size() - at_) / sizeof(T)) {
      return Error{std::string(message_) + " message: " + what + " count " +
                   std::to_string(*count) + " exceeds the " + std::to_string(bytes_.size() - at_) +
                   " bytes left"};
    }
    std::vector<T> values(static_cast<size_t>(*count));
    std::memcpy(values.data(), bytes_.data() + at_, values.size() * sizeof(T));
    at_ += values.size() * sizeof(T);
    return values;
  }
  // The number of entries of a list whose entries take at least min_entry_bytes each.
  Expected<int64_t> GetListSize(const char* what, size_t min_entry_bytes) {
    auto count = Get<int64_t>(what);
    if (!count) return Error{count.error()};
    if (*count < 0 || static_cast<uint64_t>(*count) > (bytes_.size() - at_) / min_entry_bytes) {
      return Error{std::string(message_) + " message: " + what + " count " +
                   std::to_string(*count) + " exceeds the bytes left"};
    }
    return *count;
  }
  Status CheckMagic(uint32_t magic) {
    auto read = Get<uint32_t>("its kind");
    if (!read) return Error{read.error()};
    if (*read != magic) return Error{std::string("not a ") + message_ + " message"};
    return Status::Ok();
  }
  Status CheckEnd() const {
    if (at_ == bytes_.size()) return Status::Ok();
    return Error{std::string(message_) + " message: " + std::to_string(bytes_.size() - at_) +
                 " bytes after its end"};
  }

 private:
  Error Truncated(const char* what) const {
    return Error{std::string(message_) + " message: truncated at " + what};
  }
  std::span<const uint8_t> bytes_;
  const char* message_;
  size_t at_ = 0;
};

// Assigns the vector read into `field`, or returns its error from the enclosing function.
#define VLLM_READ_VECTOR(reader, type, field, what)      \
  do {                                                   \
    auto read_values = (reader).GetVector<type>(what);   \
    if (!read_values) return Error{read_values.error()}; \
    (field) = std::move(*read_values);                   \
  } while (false)

}  // namespace

Expected<std::vector<uint8_t>> SerializeForwardBatch(const ForwardBatch& batch) {
  for (const lora::LoraWeights* adapter : batch.seq_loras) {
    if (adapter != nullptr) {
      return Error{
          "LoRA adapters are not supported with tensor parallelism or pipeline parallelism yet"};
    }
  }
  Writer writer;
  writer.Put(kBatchMagic);
  writer.PutVector<int32_t>(batch.token_ids);
  writer.PutVector<int32_t>(batch.positions);
  writer.PutVector<int32_t>(batch.query_start_loc);
  writer.PutVector<int32_t>(batch.seq_lens);
  writer.PutVector<int32_t>(batch.logits_indices);
  writer.PutVector<int32_t>(batch.token_type_ids);
  writer.Put<int64_t>(static_cast<int64_t>(batch.kv_groups.size()));
  for (const KvGroupTables& group : batch.kv_groups) {
    writer.PutVector<int64_t>(group.slot_mapping);
    writer.Put<int64_t>(static_cast<int64_t>(group.block_tables.size()));
    for (const std::vector<int32_t>& table : group.block_tables) writer.PutVector<int32_t>(table);
  }
  writer.Put<int64_t>(static_cast<int64_t>(batch.input_embeds.size()));
  for (const InputEmbedsRows& rows : batch.input_embeds) {
    writer.Put<int32_t>(rows.first_row);
    writer.PutVector<float>(rows.values);
  }
  return writer.Take();
}

Expected<WireForwardBatch> DeserializeForwardBatch(std::span<const uint8_t> bytes) {
  Reader reader(bytes, "forward batch");
  VLLM_RETURN_IF_ERROR(reader.CheckMagic(kBatchMagic));
  WireForwardBatch wire;
  ForwardBatch& batch = wire.batch;
  VLLM_READ_VECTOR(reader, int32_t, batch.token_ids, "token_ids");
  VLLM_READ_VECTOR(reader, int32_t, batch.positions, "positions");
  VLLM_READ_VECTOR(reader, int32_t, batch.query_start_loc, "query_start_loc");
  VLLM_READ_VECTOR(reader, int32_t, batch.seq_lens, "seq_lens");
  VLLM_READ_VECTOR(reader, int32_t, batch.logits_indices, "logits_indices");
  VLLM_READ_VECTOR(reader, int32_t, batch.token_type_ids, "token_type_ids");
  // Each group holds at least its two counts, each embeddings entry its row and count.
  auto num_groups = reader.GetListSize("kv_groups", 2 * sizeof(int64_t));
  if (!num_groups) return Error{num_groups.error()};
  batch.kv_groups.resize(*num_groups);
  for (KvGroupTables& group : batch.kv_groups) {
    VLLM_READ_VECTOR(reader, int64_t, group.slot_mapping, "slot_mapping");
    auto num_tables = reader.GetListSize("block_tables", sizeof(int64_t));
    if (!num_tables) return Error{num_tables.error()};
    group.block_tables.resize(*num_tables);
    for (std::vector<int32_t>& table : group.block_tables) {
      VLLM_READ_VECTOR(reader, int32_t, table, "block_table");
    }
  }
  auto num_embeds = reader.GetListSize("input_embeds", sizeof(int32_t) + sizeof(int64_t));
  if (!num_embeds) return Error{num_embeds.error()};
  wire.input_embeds_values.resize(*num_embeds);
  for (std::vector<float>& values : wire.input_embeds_values) {
    auto first_row = reader.Get<int32_t>("input_embeds first_row");
    if (!first_row) return Error{first_row.error()};
    VLLM_READ_VECTOR(reader, float, values, "input_embeds values");
    batch.input_embeds.push_back({.first_row = *first_row, .values = values});
  }
  VLLM_RETURN_IF_ERROR(reader.CheckEnd());
  return wire;
}

std::vector<uint8_t> SerializeKvStorageOptions(const KvStorage::Options& options) {
  Writer writer;
  writer.Put(kKvOptionsMagic);
  writer.Put<int64_t>(options.num_layers);
  writer.Put<int64_t>(options.num_blocks);
  writer.Put<int64_t>(options.block_size);
  writer.Put<int64_t>(options.num_kv_heads);
  writer.Put<int64_t>(options.head_dim);
  writer.Put<int32_t>(static_cast<int32_t>(options.dtype));
  const KvCacheLayout& layout = options.layout;
  writer.Put<int64_t>(layout.group_size);
  writer.Put<int64_t>(static_cast<int64_t>(layout.groups.size()));
  for (const KvCacheLayout::Group& group : layout.groups) {
    writer.Put<int64_t>(group.sliding_window);
    writer.PutVector<int64_t>(group.layers);
  }
  writer.PutVector<int32_t>(layout.group_of_layer);
  writer.PutVector<int32_t>(layout.place_in_group);
  return writer.Take();
}

Expected<KvStorage::Options> DeserializeKvStorageOptions(std::span<const uint8_t> bytes) {
  Reader reader(bytes, "KV storage options");
  VLLM_RETURN_IF_ERROR(reader.CheckMagic(kKvOptionsMagic));
  KvStorage::Options options;
  for (int64_t* field : {&options.num_layers, &options.num_blocks, &options.block_size,
                         &options.num_kv_heads, &options.head_dim}) {
    auto value = reader.Get<int64_t>("KV storage sizes");
    if (!value) return Error{value.error()};
    *field = *value;
  }
  auto dtype = reader.Get<int32_t>("KV cache dtype");
  if (!dtype) return Error{dtype.error()};
  if (*dtype < static_cast<int32_t>(kernels::KvCacheDtype::kFloat32) ||
      *dtype > static_cast<int32_t>(kernels::KvCacheDtype::kInt8)) {
    return Error{"KV storage options message: unknown KV cache dtype " + std::to_string(*dtype)};
  }
  options.dtype = static_cast<kernels::KvCacheDtype>(*dtype);
  auto group_size = reader.Get<int64_t>("KV layout group_size");
  if (!group_size) return Error{group_size.error()};
  options.layout.group_size = *group_size;
  auto num_groups = reader.GetListSize("KV layout groups", 2 * sizeof(int64_t));
  if (!num_groups) return Error{num_groups.error()};
  options.layout.groups.resize(*num_groups);
  for (KvCacheLayout::Group& group : options.layout.groups) {
    auto window = reader.Get<int64_t>("KV layout sliding_window");
    if (!window) return Error{window.error()};
    group.sliding_window = *window;
    VLLM_READ_VECTOR(reader, int64_t, group.layers, "KV layout layers");
  }
  VLLM_READ_VECTOR(reader, int32_t, options.layout.group_of_layer, "KV layout group_of_layer");
  VLLM_READ_VECTOR(reader, int32_t, options.layout.place_in_group, "KV layout place_in_group");
  VLLM_RETURN_IF_ERROR(reader.CheckEnd());
  return options;
}

}  // namespace vllm
