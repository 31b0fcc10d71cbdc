#include "formats/torch_tensor_file.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/half.h"
#include "formats/zip_archive.h"

namespace vllm {
namespace {

constexpr size_t kMaxDims = 8;

Error Bad(const std::string& what) { return Error{"invalid torch.save file: " + what}; }

// What the restricted pickle machine builds. Values are shared, never copied, so a memo entry
// fetched many times costs nothing.
struct Value;
using ValuePtr = std::shared_ptr<const Value>;

struct Value {
  enum class Kind { kMark, kNone, kBool, kInt, kString, kGlobal, kTuple, kDict, kStorage, kTensor };
  Kind kind = Kind::kNone;
  int64_t integer = 0;                      // kBool, kInt; kStorage: numel
  std::string text;                         // kString; kGlobal: "module.name"; kStorage: its key
  std::vector<ValuePtr> items;              // kTuple
  TorchDtype dtype = TorchDtype::kFloat32;  // kStorage, kTensor
  // kTensor: its storage's key and numel, offset, size and stride.
  std::string storage_key;
  int64_t storage_numel = 0, storage_offset = 0;
  std::vector<int64_t> size, stride;
};

ValuePtr Make(Value value) { return std::make_shared<const Value>(std::move(value)); }

const char* StorageDtypeName(TorchDtype dtype) {
  switch (dtype) {
    case TorchDtype::kFloat32:
      return "float32";
    case TorchDtype::kBFloat16:
      return "bfloat16";
    case TorchDtype::kFloat16:
      return "float16";
  }
  return "";
}

size_t ElementBytes(TorchDtype dtype) { return dtype == TorchDtype::kFloat32 ? 4 : 2; }

// The globals a tensor's pickle may name; any other is refused before anything is built.
Expected<ValuePtr> Global(const std::string& module, const std::string& name) {
  const std::string full = module + "." + name;
  static const char* const kAllowed[] = {"torch._utils._rebuild_tensor_v2",
                                         "collections.OrderedDict", "torch.FloatStorage",
                                         "torch.BFloat16Storage", "torch.HalfStorage"};
  for (const char* allowed : kAllowed) {
    if (full == allowed) return Make({.kind = Value::Kind::kGlobal, .text = full});
  }
  if (module == "torch" && name.ends_with("Storage")) {
    return Bad("only float32, bfloat16 and float16 tensors are supported, not " + full);
  }
  return Bad("the pickle names " + full + ", which a saved tensor does not use");
}

// A tuple of ints (a tensor's size or stride).
Expected<std::vector<int64_t>> Ints(const ValuePtr& value, const char* what) {
  if (value->kind != Value::Kind::kTuple || value->items.size() > kMaxDims) {
    return Bad(std::string("the tensor's ") + what + " is not a tuple of at most 8 ints");
  }
  std::vector<int64_t> ints;
  for (const ValuePtr& item : value->items) {
    if (item->kind != Value::Kind::kInt || item->integer < 0) {
      return Bad(std::string("the tensor's ") + what + " holds a negative or non-int entry");
    }
    ints.push_back(item->integer);
  }
  return ints;
}

// The persistent id of a storage: ('storage', torch.<Type>Storage, key, location, numel).
Expected<ValuePtr> Storage(const ValuePtr& pid) {
  const auto& items = pid->items;
  if (pid->kind != Value::Kind::kTuple || items.size() != 5 ||
      items[0]->kind != Value::Kind::kString || items[0]->text != "storage" ||
      items[1]->kind != Value::Kind::kGlobal || items[2]->kind != Value::Kind::kString ||
      items[3]->kind != Value::Kind::kString || items[4]->kind != Value::Kind::kInt ||
      items[4]->integer < 0) {
    return Bad("a persistent id is not ('storage', type, key, location, numel)");
  }
  Value storage{
      .kind = Value::Kind::kStorage, .integer = items[4]->integer, .text = items[2]->text};
  const std::string& type = items[1]->text;
  if (type == "torch.FloatStorage") {
    storage.dtype = TorchDtype::kFloat32;
  } else if (type == "torch.BFloat16Storage") {
    storage.dtype = TorchDtype::kBFloat16;
  } else if (type == "torch.HalfStorage") {
    storage.dtype = TorchDtype::kFloat16;
  } else {
    return Bad("a persistent id names " + type + " as its storage type");
  }
  return Make(std::move(storage));
}

// callable(*args) for the two callables a tensor's pickle calls.
Expected<ValuePtr> Reduce(const ValuePtr& callable, const ValuePtr& args) {
  if (callable->kind != Value::Kind::kGlobal || args->kind != Value::Kind::kTuple) {
    return Bad("REDUCE needs a global and a tuple");
  }
  const auto& items = args->items;
  if (callable->text == "collections.OrderedDict") {
    if (!items.empty()) return Bad("OrderedDict is called with arguments");
    return Make({.kind = Value::Kind::kDict});
  }
  if (callable->text != "torch._utils._rebuild_tensor_v2") {
    return Bad(callable->text + " is not callable");
  }
  // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  if ((items.size() != 6 && items.size() != 7) || items[0]->kind != Value::Kind::kStorage ||
      items[1]->kind != Value::Kind::kInt || items[1]->integer < 0 ||
      items[4]->kind != Value::Kind::kBool || items[5]->kind != Value::Kind::kDict ||
      (items.size() == 7 && items[6]->kind != Value::Kind::kDict)) {
    return Bad("_rebuild_tensor_v2 is called with arguments a saved tensor does not have");
  }
  auto size = Ints(items[2], "size");
  if (!size) return Error{size.error()};
  auto stride = Ints(items[3], "stride");
  if (!stride) return Error{stride.error()};
  if (size->size() != stride->size()) return Bad("the tensor's size and stride differ in length");
  return Make({.kind = Value::Kind::kTensor,
               .dtype = items[0]->dtype,
               .storage_key = items[0]->text,
               .storage_numel = items[0]->integer,
               .storage_offset = items[1]->integer,
               .size = std::move(*size),
               .stride = std::move(*stride)});
}

// Reads little-endian fields from the pickle, each checked against its end.
class PickleReader {
 public:
  explicit PickleReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }
  Expected<uint64_t> Unsigned(size_t width) {
    if (bytes_.size() - at_ < width) return Bad("the pickle ends inside an opcode");
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) value |= uint64_t{bytes_[at_ + i]} << (8 * i);
    at_ += width;
    return value;
  }
  Expected<std::string> Bytes(uint64_t size) {
    if (bytes_.size() - at_ < size) return Bad("a string runs past the end of the pickle");
    std::string text(reinterpret_cast<const char*>(bytes_.data()) + at_, size);
    at_ += size;
    return text;
  }
  Expected<std::string> Line() {
    for (size_t end = at_; end < bytes_.size(); ++end) {
      if (bytes_[end] == '\n') {
        std::string line(reinterpret_cast<const char*>(bytes_.data()) + at_, end - at_);
        at_ = end + 1;
        return line;
      }
    }
    return Bad("a GLOBAL name is not ended by a newline");
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

// Runs the pickle; returns the tensor it rebuilds.
Expected<ValuePtr> Unpickle(std::span<const uint8_t> pickle) {
  PickleReader in(pickle);
  std::vector<ValuePtr> stack;
  std::map<uint64_t, ValuePtr> memo;
  const ValuePtr mark = Make({.kind = Value::Kind::kMark});
  auto pop = [&]() -> Expected<ValuePtr> {
    if (stack.empty() || stack.back() == mark) return Bad("the pickle's stack underflows");
    ValuePtr top = std::move(stack.back());
    stack.pop_back();
    return top;
  };
  // The items above the topmost mark, which is removed.
  auto pop_to_mark = [&]() -> Expected<std::vector<ValuePtr>> {
    for (size_t i = stack.size(); i-- > 0;) {
      if (stack[i] == mark) {
        std::vector<ValuePtr> items(stack.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                    stack.end());
        stack.resize(i);
        return items;
      }
    }
    return Bad("the pickle has no MARK where one is needed");
  };
  auto push_int = [&](int64_t value) {
    stack.push_back(Make({.kind = Value::Kind::kInt, .integer = value}));
  };
  auto put = [&](uint64_t index) -> Status {
    if (stack.empty() || stack.back() == mark) return Bad("the pickle memoizes nothing");
    memo[index] = stack.back();
    return Status::Ok();
  };
  auto get = [&](uint64_t index) -> Status {
    auto it = memo.find(index);
    if (it == memo.end()) return Bad("the pickle fetches memo " + std::to_string(index));
    stack.push_back(it->second);
    return Status::Ok();
  };
#define VLLM_READ_OR_RETURN(var, expr) \
  auto var = (expr);                   \
  if (!var) return Error {             \
      var.error()                      \
    }

  while (!in.done()) {
    VLLM_READ_OR_RETURN(opcode, in.Unsigned(1));
    switch (*opcode) {
      case 0x80: {  // PROTO
        VLLM_READ_OR_RETURN(protocol, in.Unsigned(1));
        if (*protocol < 2 || *protocol > 5) return Bad("unsupported pickle protocol");
        break;
      }
      case 0x95: {  // FRAME (protocol 4+): only a length hint
        VLLM_READ_OR_RETURN(frame, in.Unsigned(8));
        break;
      }
      case 'c': {  // GLOBAL
        VLLM_READ_OR_RETURN(module, in.Line());
        VLLM_READ_OR_RETURN(name, in.Line());
        VLLM_READ_OR_RETURN(global, Global(*module, *name));
        stack.push_back(std::move(*global));
        break;
      }
      case 'q': {  // BINPUT
        VLLM_READ_OR_RETURN(index, in.Unsigned(1));
        VLLM_RETURN_IF_ERROR(put(*index));
        break;
      }
      case 'r': {  // LONG_BINPUT
        VLLM_READ_OR_RETURN(index, in.Unsigned(4));
        VLLM_RETURN_IF_ERROR(put(*index));
        break;
      }
      case 0x94:  // MEMOIZE (protocol 4+)
        VLLM_RETURN_IF_ERROR(put(memo.size()));
        break;
      case 'h': {  // BINGET
        VLLM_READ_OR_RETURN(index, in.Unsigned(1));
        VLLM_RETURN_IF_ERROR(get(*index));
        break;
      }
      case 'j': {  // LONG_BINGET
        VLLM_READ_OR_RETURN(index, in.Unsigned(4));
        VLLM_RETURN_IF_ERROR(get(*index));
        break;
      }
      case '(':  // MARK
        stack.push_back(mark);
        break;
      case 't': {  // TUPLE
        VLLM_READ_OR_RETURN(items, pop_to_mark());
        stack.push_back(Make({.kind = Value::Kind::kTuple, .items = std::move(*items)}));
        break;
      }
      case ')':  // EMPTY_TUPLE
        stack.push_back(Make({.kind = Value::Kind::kTuple}));
        break;
      case 0x85:    // TUPLE1
      case 0x86:    // TUPLE2
      case 0x87: {  // TUPLE3
        std::vector<ValuePtr> items(*opcode - 0x84);
        for (size_t i = items.size(); i-- > 0;) {
          VLLM_READ_OR_RETURN(item, pop());
          items[i] = std::move(*item);
        }
        stack.push_back(Make({.kind = Value::Kind::kTuple, .items = std::move(items)}));
        break;
      }
      case 'K': {  // BININT1
        VLLM_READ_OR_RETURN(value, in.Unsigned(1));
        push_int(static_cast<int64_t>(*value));
        break;
      }
      case 'M': {  // BININT2
        VLLM_READ_OR_RETURN(value, in.Unsigned(2));
        push_int(static_cast<int64_t>(*value));
        break;
      }
      case 'J': {  // BININT: signed 32-bit
        VLLM_READ_OR_RETURN(value, in.Unsigned(4));
        push_int(static_cast<int32_t>(static_cast<uint32_t>(*value)));
        break;
      }
      case 0x8a: {  // LONG1: a little-endian two's-complement integer of n <= 8 bytes
        VLLM_READ_OR_RETURN(width, in.Unsigned(1));
        if (*width > 8) return Bad("an integer is wider than 64 bits");
        VLLM_READ_OR_RETURN(value, in.Unsigned(*width));
        uint64_t bits = *value;
        if (*width > 0 && *width < 8 && (bits >> (8 * *width - 1)) & 1) {
          bits |= ~uint64_t{0} << (8 * *width);  // sign-extend
        }
        push_int(static_cast<int64_t>(bits));
        break;
      }
      case 'X':     // BINUNICODE
      case 0x8c: {  // SHORT_BINUNICODE
        VLLM_READ_OR_RETURN(size, in.Unsigned(*opcode == 'X' ? 4 : 1));
        VLLM_READ_OR_RETURN(text, in.Bytes(*size));
        stack.push_back(Make({.kind = Value::Kind::kString, .text = std::move(*text)}));
        break;
      }
      case 'N':  // NONE
        stack.push_back(Make({.kind = Value::Kind::kNone}));
        break;
      case 0x88:  // NEWTRUE
      case 0x89:  // NEWFALSE
        stack.push_back(Make({.kind = Value::Kind::kBool, .integer = *opcode == 0x88}));
        break;
      case '}':  // EMPTY_DICT
        stack.push_back(Make({.kind = Value::Kind::kDict}));
        break;
      case 'u': {  // SETITEMS: a tensor's metadata dict; its contents do not matter here
        VLLM_READ_OR_RETURN(items, pop_to_mark());
        VLLM_READ_OR_RETURN(dict, pop());
        if ((*dict)->kind != Value::Kind::kDict || items->size() % 2 != 0) {
          return Bad("SETITEMS needs a dict and key-value pairs");
        }
        stack.push_back(std::move(*dict));
        break;
      }
      case 'Q': {  // BINPERSID
        VLLM_READ_OR_RETURN(pid, pop());
        VLLM_READ_OR_RETURN(storage, Storage(*pid));
        stack.push_back(std::move(*storage));
        break;
      }
      case 'R': {  // REDUCE
        VLLM_READ_OR_RETURN(args, pop());
        VLLM_READ_OR_RETURN(callable, pop());
        VLLM_READ_OR_RETURN(result, Reduce(*callable, *args));
        stack.push_back(std::move(*result));
        break;
      }
      case '.': {  // STOP
        if (!in.done()) return Bad("bytes follow the pickle's STOP");
        if (stack.size() != 1 || stack[0]->kind != Value::Kind::kTensor) {
          return Bad("the pickle does not hold exactly one tensor");
        }
        return stack[0];
      }
      default:
        return Bad("the pickle uses opcode 0x" + [&] {
          static const char* const kHex = "0123456789abcdef";
          return std::string{kHex[*opcode >> 4], kHex[*opcode & 15]};
        }() + ", which a saved tensor does not use");
    }
  }
#undef VLLM_READ_OR_RETURN
  return Bad("the pickle ends without STOP");
}

}  // namespace

Expected<TorchTensor> ReadTorchTensor(std::span<const uint8_t> file) {
  auto entries = ReadStoredZip(file);
  if (!entries) return Bad(entries.error());
  const ZipEntry* pickle = nullptr;
  for (const ZipEntry& entry : *entries) {
    std::string_view name = entry.name;
    // <name>/data.pkl: one level down, as torch writes it.
    if (name.ends_with("/data.pkl") && name.find('/') == name.size() - 9) {
      if (pickle != nullptr) return Bad("the archive holds two data.pkl entries");
      pickle = &entry;
    }
  }
  if (pickle == nullptr) return Bad("the archive holds no <name>/data.pkl");
  const std::string prefix = pickle->name.substr(0, pickle->name.size() - 8);
  auto find = [&](const std::string& name) -> const ZipEntry* {
    for (const ZipEntry& entry : *entries) {
      if (entry.name == name) return &entry;
    }
    return nullptr;
  };
  if (const ZipEntry* byteorder = find(prefix + "byteorder");
      byteorder != nullptr &&
      std::string_view(reinterpret_cast<const char*>(byteorder->data.data()),
                       byteorder->data.size()) != "little") {
    return Bad("only little-endian files are supported");
  }
  auto unpickled = Unpickle(pickle->data);
  if (!unpickled) return Error{unpickled.error()};
  const Value& tensor = **unpickled;
  const ZipEntry* storage = find(prefix + "data/" + tensor.storage_key);
  if (storage == nullptr) return Bad("the storage " + tensor.storage_key + " is missing");
  const size_t element_bytes = ElementBytes(tensor.dtype);
  if (tensor.storage_numel > static_cast<int64_t>(file.size()) ||
      storage->data.size() != static_cast<size_t>(tensor.storage_numel) * element_bytes) {
    return Bad("the storage holds " + std::to_string(storage->data.size()) + " bytes, not " +
               std::to_string(tensor.storage_numel) + " " + StorageDtypeName(tensor.dtype) +
               " elements");
  }
  // Contiguous (row-major) and inside the storage. Every size is checked against the storage
  // before it multiplies, so no product overflows.
  int64_t numel = std::find(tensor.size.begin(), tensor.size.end(), 0) != tensor.size.end() ? 0 : 1;
  for (int64_t size : tensor.size) {
    if (numel == 0) break;
    if (size > tensor.storage_numel) return Bad("the tensor is larger than its storage");
    numel *= size;
    if (numel > tensor.storage_numel) return Bad("the tensor is larger than its storage");
  }
  int64_t expected_stride = 1;
  for (size_t d = tensor.size.size(); d-- > 0;) {
    if (tensor.size[d] != 1 && tensor.stride[d] != expected_stride) {
      return Bad("only contiguous tensors are supported");
    }
    expected_stride *= tensor.size[d];
  }
  if (numel > 0 && tensor.storage_offset > tensor.storage_numel - numel) {
    return Bad("the tensor runs past the end of its storage");
  }
  TorchTensor result{.dtype = tensor.dtype, .shape = tensor.size};
  result.values.resize(numel);
  const uint8_t* data = storage->data.data() + tensor.storage_offset * element_bytes;
  for (int64_t i = 0; i < numel; ++i) {
    const uint8_t* element = data + i * element_bytes;
    if (tensor.dtype == TorchDtype::kFloat32) {
      std::memcpy(&result.values[i], element, 4);
    } else {
      const auto bits = static_cast<uint16_t>(element[0] | element[1] << 8);
      result.values[i] =
          tensor.dtype == TorchDtype::kBFloat16 ? Bf16ToFp32(bits) : Fp16ToFp32(bits);
    }
  }
  return result;
}

}  // namespace vllm
