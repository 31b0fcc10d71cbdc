// The default model's vocabulary, path and first-run writer (see default_model.h).
#include "cli/default_model.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common/byte_hash.h"
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

// The checksum beside the model file: one line naming the hash and its value in hex. A file
// without one (from a version that wrote none), or whose bytes do not hash to it, is written again.
constexpr char kChecksumSuffix[] = ".checksum";

std::string ChecksumLine(uint64_t hash) {
  char line[48];
  std::snprintf(line, sizeof(line), "fnv1a64-splitmix %016" PRIx64 "\n", hash);
  return line;
}

Expected<uint64_t> HashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot be read"};
  std::vector<char> chunk(1 << 20);
  uint64_t hash = kByteHashSeed;
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    hash = FeedBytes(hash, chunk.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Error{"cannot be read"};
  return FinalizeHash(hash);
}

// Why the cached model at `path` must be written again; empty when its checksum holds.
std::string ProblemWithCachedModel(const std::string& path) {
  auto hash = HashFile(path);
  if (!hash) return hash.error();
  std::ifstream checksum(path + kChecksumSuffix, std::ios::binary);
  if (!checksum) return "has no checksum file";
  std::string expected(64, '\0');
  checksum.read(expected.data(), static_cast<std::streamsize>(expected.size()));
  expected.resize(static_cast<size_t>(checksum.gcount()));
  if (expected != ChecksumLine(*hash)) return "does not match its checksum (damaged or truncated)";
  return "";
}

// Flushes the file or directory at `path` to the disk.
Status Sync(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  ::close(fd);
  if (!synced) return Error{"cannot flush " + path + ": " + std::strerror(sync_errno)};
  return Status::Ok();
}

Status WriteSmallFile(const std::string& path, const std::string& bytes) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return Error{"cannot create " + path + ": " + std::strerror(errno)};
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  if (std::fclose(file) != 0 || !written) return Error{"cannot write " + path};
  return Sync(path);
}

// Writes the model and its checksum under temporary names unique to this process, flushes both,
// then renames them into place: a concurrent or interrupted run never sees half a file, and a
// crash between the two renames leaves a pair that does not match, written again on the next
// start.
Status WriteDefaultModel(const std::string& path) {
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    return Error{"cannot create " + directory.string() + ": " + error.message()};
  }
  const std::string stem =
      (directory / ("." + std::string(kFileName) + "." + std::to_string(::getpid()))).string();
  RandomModelOptions options;
  options.shape = kShape;
  options.vocab_path = stem + ".vocab";
  options.output_path = stem + ".tmp";
  const std::string checksum_path = stem + kChecksumSuffix;
  Status status = WriteByteVocab(options.vocab_path);
  if (status.ok()) status = WriteRandomModel(options);
  std::remove(options.vocab_path.c_str());
  if (status.ok()) status = Sync(options.output_path);
  if (status.ok()) {
    auto hash = HashFile(options.output_path);
    status = hash ? WriteSmallFile(checksum_path, ChecksumLine(*hash))
                  : Error{options.output_path + " " + hash.error()};
  }
  if (status.ok()) {
    std::filesystem::rename(options.output_path, path, error);
    if (!error) std::filesystem::rename(checksum_path, path + kChecksumSuffix, error);
    if (error) status = Error{"cannot rename the new file into " + path + ": " + error.message()};
  }
  std::remove(options.output_path.c_str());
  std::remove(checksum_path.c_str());
  if (!status.ok()) return status;
  // Makes the renames durable; a file system that cannot flush a directory still has the files.
  Sync(directory.string());
  return Status::Ok();
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
  const bool present = std::filesystem::exists(*path, error);
  if (present) {
    const std::string problem = ProblemWithCachedModel(*path);
    if (problem.empty()) {
      VLLM_LOG(kInfo) << "no model given: serving the default model, " << what << ", from "
                      << *path;
      return path;
    }
    VLLM_LOG(kWarning) << "the default model " << *path << " " << problem << ": writing it again";
  }
  if (Status status = WriteDefaultModel(*path); !status.ok()) {
    std::string message = "writing the default model: " + status.message();
    if (present) message += " (delete " + *path + " and start again)";
    return Error{message};
  }
  VLLM_LOG(kInfo) << "no model given: wrote the default model, " << what << ", to " << *path
                  << " (give a model path to serve a real one)";
  return path;
}

}  // namespace vllm
