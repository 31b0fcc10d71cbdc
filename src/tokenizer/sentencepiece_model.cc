#include "tokenizer/sentencepiece_model.h"

#include <bit>
#include <unordered_set>
#include <utility>

namespace vllm {
namespace {

// The GGUF loader's bound: no real vocabulary comes near it.
constexpr size_t kMaxPieces = size_t{1} << 24;

enum class WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

struct WireField {
  uint32_t number = 0;
  WireType wire_type = WireType::kVarint;
  uint64_t value = 0;      // kVarint: the number; kFixed32 / kFixed64: the raw bits
  std::string_view bytes;  // kLengthDelimited: the payload
};

// The fields of one message, in file order. Offsets in errors count from the file's start.
class WireReader {
 public:
  WireReader(std::string_view message, size_t base_offset, std::string context)
      : rest_(message), offset_(base_offset), context_(std::move(context)) {}

  bool done() const { return rest_.empty(); }
  size_t offset() const { return offset_; }
  const std::string& context() const { return context_; }

  Expected<WireField> Next() {
    const size_t key_offset = offset_;
    auto key = ReadVarint();
    if (!key) return Error{key.error()};
    WireField field;
    if ((*key >> 3) == 0 || (*key >> 3) > 0x1fffffff) {
      return Fail(key_offset, "field number " + std::to_string(*key >> 3) + " is invalid");
    }
    field.number = static_cast<uint32_t>(*key >> 3);
    const uint32_t wire_type = static_cast<uint32_t>(*key & 7);
    switch (wire_type) {
      case 0: {
        auto value = ReadVarint();
        if (!value) return Error{value.error()};
        field.value = *value;
        break;
      }
      case 1:
      case 5: {
        const size_t size = wire_type == 1 ? 8 : 4;
        if (rest_.size() < size) return Fail(offset_, "a fixed-size value runs past the end");
        for (size_t i = 0; i < size; ++i) {
          field.value |= uint64_t{static_cast<unsigned char>(rest_[i])} << (8 * i);
        }
        Advance(size);
        break;
      }
      case 2: {
        const size_t length_offset = offset_;
        auto length = ReadVarint();
        if (!length) return Error{length.error()};
        if (*length > rest_.size()) {
          return Fail(length_offset, "a length of " + std::to_string(*length) +
                                         " bytes runs past the end (" +
                                         std::to_string(rest_.size()) + " left)");
        }
        field.bytes = rest_.substr(0, *length);
        Advance(*length);
        break;
      }
      default:  // 3 / 4: proto2 groups, which ModelProto does not use; 6 / 7: undefined
        return Fail(key_offset, "wire type " + std::to_string(wire_type) + " of field " +
                                    std::to_string(field.number) + " is not supported");
    }
    field.wire_type = static_cast<WireType>(wire_type);
    return field;
  }

  Error Fail(size_t at, const std::string& what) const {
    return Error{"tokenizer.model: " + context_ + " at byte " + std::to_string(at) + ": " + what};
  }

 private:
  // Base-128 varint, at most 10 bytes (the 10th holding the 64th bit only).
  Expected<uint64_t> ReadVarint() {
    uint64_t value = 0;
    for (size_t i = 0; i < 10; ++i) {
      if (i >= rest_.size()) return Fail(offset_, "a varint runs past the end");
      const uint64_t byte = static_cast<unsigned char>(rest_[i]);
      if (i == 9 && byte > 1) return Fail(offset_, "a varint overflows 64 bits");
      value |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) {
        Advance(i + 1);
        return value;
      }
    }
    return Fail(offset_, "a varint is longer than 10 bytes");
  }

  void Advance(size_t size) {
    rest_.remove_prefix(size);
    offset_ += size;
  }

  std::string_view rest_;
  size_t offset_;
  std::string context_;
};

// The payload of a length-delimited field, as a reader of its own.
WireReader Submessage(const WireReader& parent, const WireField& field, std::string context) {
  const size_t payload_offset = parent.offset() - field.bytes.size();
  return WireReader(field.bytes, payload_offset, std::move(context));
}

Status ExpectWireType(const WireReader& reader, const WireField& field, WireType expected,
                      std::string_view name) {
  if (field.wire_type == expected) return Status::Ok();
  static const char* const kNames[] = {"varint", "fixed64", "length-delimited", "", "", "fixed32"};
  return reader.Fail(reader.offset(), std::string(name) + " should be " +
                                          kNames[static_cast<uint32_t>(expected)] +
                                          ", not wire type " +
                                          std::to_string(static_cast<uint32_t>(field.wire_type)));
}

// A proto int32 (negative values are sign-extended to 64 bits).
Expected<int32_t> Int32Field(const WireReader& reader, const WireField& field,
                             std::string_view name) {
  VLLM_RETURN_IF_ERROR(ExpectWireType(reader, field, WireType::kVarint, name));
  const auto value = static_cast<int64_t>(field.value);
  if (value < INT32_MIN || value > INT32_MAX) {
    return reader.Fail(reader.offset(),
                       std::string(name) + " = " + std::to_string(value) + " is not an int32");
  }
  return static_cast<int32_t>(value);
}

Expected<bool> BoolField(const WireReader& reader, const WireField& field, std::string_view name) {
  VLLM_RETURN_IF_ERROR(ExpectWireType(reader, field, WireType::kVarint, name));
  return field.value != 0;
}

Expected<std::string> BytesField(const WireReader& reader, const WireField& field,
                                 std::string_view name) {
  VLLM_RETURN_IF_ERROR(ExpectWireType(reader, field, WireType::kLengthDelimited, name));
  return std::string(field.bytes);
}

// Assigns `parsed` to *out, or returns its error.
template <typename T, typename U>
Status Store(Expected<T> parsed, U* out) {
  if (!parsed) return Error{parsed.error()};
  *out = static_cast<U>(*parsed);
  return Status::Ok();
}

Status ParsePiece(WireReader reader, SentencePieceModel::Piece* piece) {
  while (!reader.done()) {
    auto field = reader.Next();
    if (!field) return Error{field.error()};
    switch (field->number) {
      case 1:  // piece
        VLLM_RETURN_IF_ERROR(Store(BytesField(reader, *field, "piece"), &piece->text));
        break;
      case 2:  // score
        VLLM_RETURN_IF_ERROR(ExpectWireType(reader, *field, WireType::kFixed32, "score"));
        piece->score = std::bit_cast<float>(static_cast<uint32_t>(field->value));
        break;
      case 3: {  // type
        auto type = Int32Field(reader, *field, "type");
        if (!type) return Error{type.error()};
        if (*type < 1 || *type > 6) {
          return reader.Fail(reader.offset(),
                             "type " + std::to_string(*type) + " is not a SentencePiece type");
        }
        piece->type = static_cast<TokenType>(*type);
        break;
      }
      default:
        break;
    }
  }
  return Status::Ok();
}

Status ParseTrainerSpec(WireReader reader, SentencePieceModel* model) {
  while (!reader.done()) {
    auto field = reader.Next();
    if (!field) return Error{field.error()};
    switch (field->number) {
      case 3: {  // model_type
        auto type = Int32Field(reader, *field, "model_type");
        if (!type) return Error{type.error()};
        if (*type < 1 || *type > 4) {
          return reader.Fail(reader.offset(),
                             "model_type " + std::to_string(*type) + " is not a model type");
        }
        model->model_type = static_cast<SentencePieceModel::Type>(*type);
        break;
      }
      case 35:
        VLLM_RETURN_IF_ERROR(
            Store(BoolField(reader, *field, "byte_fallback"), &model->byte_fallback));
        break;
      case 40:
        VLLM_RETURN_IF_ERROR(Store(Int32Field(reader, *field, "unk_id"), &model->unk_id));
        break;
      case 41:
        VLLM_RETURN_IF_ERROR(Store(Int32Field(reader, *field, "bos_id"), &model->bos_id));
        break;
      case 42:
        VLLM_RETURN_IF_ERROR(Store(Int32Field(reader, *field, "eos_id"), &model->eos_id));
        break;
      case 43:
        VLLM_RETURN_IF_ERROR(Store(Int32Field(reader, *field, "pad_id"), &model->pad_id));
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

Status ParseNormalizerSpec(WireReader reader, SentencePieceModel* model) {
  while (!reader.done()) {
    auto field = reader.Next();
    if (!field) return Error{field.error()};
    switch (field->number) {
      case 1:
        VLLM_RETURN_IF_ERROR(Store(BytesField(reader, *field, "name"), &model->normalizer_name));
        break;
      case 2:
        VLLM_RETURN_IF_ERROR(Store(BytesField(reader, *field, "precompiled_charsmap"),
                                   &model->precompiled_charsmap));
        break;
      case 3:
        VLLM_RETURN_IF_ERROR(
            Store(BoolField(reader, *field, "add_dummy_prefix"), &model->add_dummy_prefix));
        break;
      case 4:
        VLLM_RETURN_IF_ERROR(Store(BoolField(reader, *field, "remove_extra_whitespaces"),
                                   &model->remove_extra_whitespaces));
        break;
      case 5:
        VLLM_RETURN_IF_ERROR(
            Store(BoolField(reader, *field, "escape_whitespaces"), &model->escape_whitespaces));
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

Status CheckSpecialId(int32_t id, const char* name, size_t num_pieces) {
  if (id == -1 || (id >= 0 && static_cast<size_t>(id) < num_pieces)) return Status::Ok();
  return Error{"tokenizer.model: trainer_spec." + std::string(name) + " = " + std::to_string(id) +
               " is outside the " + std::to_string(num_pieces) + " pieces"};
}

}  // namespace

Expected<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes) {
  SentencePieceModel model;
  WireReader reader(bytes, 0, "ModelProto");
  while (!reader.done()) {
    auto field = reader.Next();
    if (!field) return Error{field.error()};
    // pieces, trainer_spec and normalizer_spec are messages; a message field given twice merges.
    if (field->number < 1 || field->number > 3) continue;
    VLLM_RETURN_IF_ERROR(
        ExpectWireType(reader, *field, WireType::kLengthDelimited, "a ModelProto message field"));
    if (field->number == 1) {
      if (model.pieces.size() >= kMaxPieces) {
        return reader.Fail(reader.offset(), "more than " + std::to_string(kMaxPieces) + " pieces");
      }
      SentencePieceModel::Piece piece;
      VLLM_RETURN_IF_ERROR(ParsePiece(
          Submessage(reader, *field, "pieces[" + std::to_string(model.pieces.size()) + "]"),
          &piece));
      model.pieces.push_back(std::move(piece));
    } else if (field->number == 2) {
      VLLM_RETURN_IF_ERROR(ParseTrainerSpec(Submessage(reader, *field, "trainer_spec"), &model));
    } else {
      VLLM_RETURN_IF_ERROR(
          ParseNormalizerSpec(Submessage(reader, *field, "normalizer_spec"), &model));
    }
  }
  if (model.pieces.empty()) return Error{"tokenizer.model: no pieces (not a SentencePiece model?)"};
  std::unordered_set<std::string_view> seen;
  seen.reserve(model.pieces.size());
  for (size_t id = 0; id < model.pieces.size(); ++id) {
    const std::string& text = model.pieces[id].text;
    if (text.empty()) return Error{"tokenizer.model: piece " + std::to_string(id) + " is empty"};
    if (!seen.insert(text).second) {
      return Error{"tokenizer.model: piece " + std::to_string(id) + " ('" + text +
                   "') is defined twice"};
    }
  }
  VLLM_RETURN_IF_ERROR(CheckSpecialId(model.unk_id, "unk_id", model.pieces.size()));
  VLLM_RETURN_IF_ERROR(CheckSpecialId(model.bos_id, "bos_id", model.pieces.size()));
  VLLM_RETURN_IF_ERROR(CheckSpecialId(model.eos_id, "eos_id", model.pieces.size()));
  VLLM_RETURN_IF_ERROR(CheckSpecialId(model.pad_id, "pad_id", model.pieces.size()));
  return model;
}

}  // namespace vllm
