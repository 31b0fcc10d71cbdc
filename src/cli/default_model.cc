// The default model's vocabulary, path and first-run writer (see default_model.h).
#include "cli/default_model.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/logging.h"
#include "formats/gguf_writer.h"
#include "model/random_model.h"

namespace vllm {
namespace {

// The shape of karpathy's stories260K (a real, trained Llama of 260k parameters).
constexpr char kShape[] = "stories260k";
constexpr char kFileName[] = "random-stories260k-byte-vocab.gguf";

// The template of tests/e2e/chat_template.jinja: <|role|> lines, then <|assistant|>.
constexpr char kChatTemplate[] =
    "{%- for message in messages -%}\n"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] | trim + '\\n' }}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "{{ '<|assistant|>\\n' }}\n"
    "{%- endif -%}\n";

// SentencePiece token types (llama.cpp's).
constexpr int32_t kTypeNormal = 1;
constexpr int32_t kTypeUnknown = 2;
constexpr int32_t kTypeControl = 3;
constexpr int32_t kTypeByte = 6;

GgufArray ArrayOf(GgufValueType type, std::vector<GgufValue> items) {
  return GgufArray{type, std::move(items)};
}

// A vocabulary-only GGUF: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF> and the space
// marker, with the chat template. Every text encodes (byte for byte).
Status WriteByteVocab(const std::string& path) {
  std::vector<GgufValue> tokens;
  std::vector<GgufValue> types;
  std::vector<GgufValue> scores;
  auto add = [&](std::string token, int32_t type) {
    tokens.push_back(GgufValue::String(std::move(token)));
    types.push_back(GgufValue::Int32(type));
    scores.push_back(GgufValue::Float32(0.0f));
  };
  add("<unk>", kTypeUnknown);
  add("<s>", kTypeControl);
  add("</s>", kTypeControl);
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    add(name, kTypeByte);
  }
  add("\xE2\x96\x81", kTypeNormal);  // "▁", SentencePiece's space
  GgufWriter writer;
  writer.AddMetadata("general.architecture", GgufValue::String("llama"));
  writer.AddMetadata("tokenizer.ggml.model", GgufValue::String("llama"));
  writer.AddMetadata("tokenizer.ggml.tokens",
                     GgufValue::Array(ArrayOf(GgufValueType::kString, std::move(tokens))));
  writer.AddMetadata("tokenizer.ggml.scores",
                     GgufValue::Array(ArrayOf(GgufValueType::kFloat32, std::move(scores))));
  writer.AddMetadata("tokenizer.ggml.token_type",
                     GgufValue::Array(ArrayOf(GgufValueType::kInt32, std::move(types))));
  writer.AddMetadata("tokenizer.ggml.unknown_token_id", GgufValue::Uint32(0));
  writer.AddMetadata("tokenizer.ggml.bos_token_id", GgufValue::Uint32(1));
  writer.AddMetadata("tokenizer.ggml.eos_token_id", GgufValue::Uint32(2));
  writer.AddMetadata("tokenizer.ggml.add_bos_token", GgufValue::Bool(true));
  writer.AddMetadata("tokenizer.ggml.add_space_prefix", GgufValue::Bool(false));
  writer.AddMetadata("tokenizer.chat_template", GgufValue::String(kChatTemplate));
  VLLM_RETURN_IF_ERROR(writer.Begin(path));
  return writer.Finish();
}

}  // namespace

Expected<std::string> DefaultModelPath() {
  std::filesystem::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    cache = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    cache = std::filesystem::path(home) / ".cache";
  } else {
    return Error{"neither XDG_CACHE_HOME nor HOME is set: give a model path"};
  }
  return (cache / "vllm-cpp" / kFileName).string();
}

Expected<std::string> EnsureDefaultModel() {
  auto path = DefaultModelPath();
  if (!path) return path;
  const std::string what = std::string("a tiny random-weight Llama (shape ") + kShape +
                           ", byte-level vocabulary; its output is noise)";
  std::error_code error;
  if (std::filesystem::exists(*path, error)) {
    VLLM_LOG(kInfo) << "no model given: serving the default model, " << what << ", from " << *path;
    return path;
  }
  const std::filesystem::path directory = std::filesystem::path(*path).parent_path();
  std::filesystem::create_directories(directory, error);
  if (error) {
    return Error{"cannot create " + directory.string() +
                 " for the default model: " + error.message()};
  }
  // Temporary names unique to this process; the rename makes the file appear whole.
  const std::string stem =
      (directory / ("." + std::string(kFileName) + "." + std::to_string(::getpid()))).string();
  RandomModelOptions options;
  options.shape = kShape;
  options.vocab_path = stem + ".vocab";
  options.output_path = stem + ".tmp";
  Status status = WriteByteVocab(options.vocab_path);
  if (status.ok()) status = WriteRandomModel(options);
  std::remove(options.vocab_path.c_str());
  if (status.ok()) {
    std::filesystem::rename(options.output_path, *path, error);
    if (error)
      status = Error{"cannot rename the default model into " + *path + ": " + error.message()};
  }
  if (!status.ok()) {
    std::remove(options.output_path.c_str());
    return Error{"writing the default model: " + status.message()};
  }
  VLLM_LOG(kInfo) << "no model given: wrote the default model, " << what << ", to " << *path
                  << " (give a model path to serve a real one)";
  return path;
}

}  // namespace vllm
