#include "lora/peft_adapter.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string_view>

#include "common/json_depth.h"
#include "formats/safetensors_file.h"

namespace vllm::lora {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kMaxConfigBytes = int64_t{1} << 20;
constexpr int kMaxConfigDepth = 32;
constexpr size_t kMaxPatternChars = 1024;
constexpr size_t kMaxTensorNameChars = 1024;

// PEFT's module names this loader maps to targets; a fused module lists its parts in the order of
// its weight's rows (Phi-3's qkv_proj and gate_up_proj).
struct PeftModule {
  std::string_view name;
  std::vector<LoraTarget> targets;
};

const std::vector<PeftModule>& PeftModules() {
  static const std::vector<PeftModule> modules = {
      {"q_proj", {LoraTarget::kQ}},
      {"k_proj", {LoraTarget::kK}},
      {"v_proj", {LoraTarget::kV}},
      {"o_proj", {LoraTarget::kO}},
      {"gate_proj", {LoraTarget::kGate}},
      {"up_proj", {LoraTarget::kUp}},
      {"down_proj", {LoraTarget::kDown}},
      {"qkv_proj", {LoraTarget::kQ, LoraTarget::kK, LoraTarget::kV}},
      {"gate_up_proj", {LoraTarget::kGate, LoraTarget::kUp}},
  };
  return modules;
}

const PeftModule* FindPeftModule(std::string_view name) {
  for (const PeftModule& module : PeftModules()) {
    if (module.name == name) return &module;
  }
  return nullptr;
}

std::string PeftModuleNames() {
  std::string names;
  for (const PeftModule& module : PeftModules()) {
    names += (names.empty() ? "" : ", ") + std::string(module.name);
  }
  return names;
}

bool IsEmbeddingModule(std::string_view name) {
  return name == "embed_tokens" || name == "lm_head";
}

// A module path's last component: "q_proj" of "model.layers.0.self_attn.q_proj".
std::string_view ShortName(std::string_view path) {
  const size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

Expected<std::regex> CompilePattern(const std::string& field, const std::string& pattern) {
  if (pattern.size() > kMaxPatternChars) {
    return Error{"adapter_config.json: " + field + " pattern is longer than " +
                 std::to_string(kMaxPatternChars) + " characters"};
  }
  try {
    return std::regex(pattern);
  } catch (const std::regex_error& error) {
    return Error{"adapter_config.json: " + field + " '" + pattern +
                 "' is not a valid regular expression (" + error.what() + ")"};
  }
}

// One rank_pattern / alpha_pattern entry: a module whose path matches (.*\.)?(key)$ from its
// start takes `value` (PEFT's rule; the first key in file order that matches wins).
struct PatternValue {
  std::regex pattern;
  double value = 0;
};

struct PeftConfig {
  int64_t r = 0;
  double lora_alpha = 0;
  bool use_rslora = false;
  bool all_linear = false;                   // target_modules "all-linear"
  std::vector<std::string> target_names;     // target_modules as a list
  std::optional<std::regex> target_pattern;  // target_modules as a regex string (full match)
  std::vector<PatternValue> rank_pattern;
  std::vector<PatternValue> alpha_pattern;
};

Expected<std::string> ReadConfigText(const std::filesystem::path& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return Error{"cannot read " + path.string() + ": " + error.message()};
  if (size > static_cast<uintmax_t>(kMaxConfigBytes)) {
    return Error{path.string() + " is larger than " + std::to_string(kMaxConfigBytes) + " bytes"};
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Error{"cannot read " + path.string()};
  return text.str();
}

Status ReadPatterns(const Json& config, const std::string& field, bool integer,
                    std::vector<PatternValue>* out) {
  auto it = config.find(field);
  if (it == config.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return Error{"adapter_config.json: " + field + " must be an object"};
  for (const auto& [key, value] : it->items()) {
    if (integer ? !value.is_number_integer() || value.get<int64_t>() <= 0 : !value.is_number()) {
      return Error{"adapter_config.json: " + field + "['" + key + "'] must be a " +
                   (integer ? "positive integer" : "number")};
    }
    auto pattern = CompilePattern(field, "(.*\\.)?(" + key + ")");
    if (!pattern) return Error{pattern.error()};
    out->push_back({std::move(*pattern), value.get<double>()});
  }
  return Status::Ok();
}

Status ReadTargetModules(const Json& config, PeftConfig* out) {
  auto it = config.find("target_modules");
  if (it == config.end() || it->is_null()) {
    return Error{"adapter_config.json has no target_modules"};
  }
  if (it->is_string()) {
    const std::string pattern = it->get<std::string>();
    if (pattern == "all-linear") {
      out->all_linear = true;
      return Status::Ok();
    }
    auto regex = CompilePattern("target_modules", pattern);
    if (!regex) return Error{regex.error()};
    out->target_pattern = std::move(*regex);
    return Status::Ok();
  }
  if (!it->is_array()) return Error{"adapter_config.json: target_modules must be a list or string"};
  for (const Json& name : *it) {
    if (!name.is_string()) return Error{"adapter_config.json: target_modules holds a non-string"};
    const std::string module = name.get<std::string>();
    if (IsEmbeddingModule(ShortName(module))) {
      return Error{"adapter_config.json: target module '" + module +
                   "' is not supported (embedding and lm_head LoRA)"};
    }
    if (FindPeftModule(ShortName(module)) == nullptr) {
      return Error{"adapter_config.json: unknown target module '" + module +
                   "' (supported: " + PeftModuleNames() + ")"};
    }
    out->target_names.push_back(module);
  }
  return Status::Ok();
}

// The fields vLLM refuses, and those a LoRA of plain matrices cannot hold.
Status RefuseUnsupportedFields(const Json& config) {
  if (auto it = config.find("peft_type"); it != config.end() && *it != "LORA") {
    return Error{"adapter_config.json: peft_type " + it->dump() + " is not LORA"};
  }
  if (auto it = config.find("modules_to_save");
      it != config.end() && !it->is_null() && !(it->is_array() && it->empty())) {
    return Error{"adapter_config.json: modules_to_save " + it->dump() +
                 " is not supported (only modules_to_save being null)"};
  }
  if (auto it = config.find("use_dora"); it != config.end() && *it == true) {
    return Error{"adapter_config.json: use_dora is true: DoRA adapters are not supported"};
  }
  if (auto it = config.find("bias"); it != config.end() && !it->is_null() && *it != "none") {
    return Error{"adapter_config.json: bias " + it->dump() + " is not supported (only \"none\")"};
  }
  if (auto it = config.find("lora_bias"); it != config.end() && *it == true) {
    return Error{"adapter_config.json: lora_bias is true: LoRA bias is not supported"};
  }
  return Status::Ok();
}

// fan_in_fan_out is left alone: it describes Conv1D bases (GPT-2), and PEFT itself resets it to
// false on the Linear layers of every family here, so the matrices are in the usual orientation.
Expected<PeftConfig> ParseConfig(const std::string& text) {
  if (JsonNestsDeeperThan(text, kMaxConfigDepth)) {
    return Error{"adapter_config.json nests deeper than " + std::to_string(kMaxConfigDepth)};
  }
  const Json config = Json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    return Error{"adapter_config.json is not a JSON object"};
  }
  VLLM_RETURN_IF_ERROR(RefuseUnsupportedFields(config));
  PeftConfig out;
  auto r = config.find("r");
  if (r == config.end() || !r->is_number_integer() || r->get<int64_t>() <= 0) {
    return Error{"adapter_config.json: r must be a positive integer"};
  }
  out.r = r->get<int64_t>();
  auto alpha = config.find("lora_alpha");
  if (alpha == config.end() || !alpha->is_number()) {
    return Error{"adapter_config.json: lora_alpha must be a number"};
  }
  out.lora_alpha = alpha->get<double>();
  if (auto it = config.find("use_rslora"); it != config.end() && !it->is_null()) {
    if (!it->is_boolean()) return Error{"adapter_config.json: use_rslora must be true or false"};
    out.use_rslora = it->get<bool>();
  }
  VLLM_RETURN_IF_ERROR(ReadTargetModules(config, &out));
  VLLM_RETURN_IF_ERROR(ReadPatterns(config, "rank_pattern", true, &out.rank_pattern));
  VLLM_RETURN_IF_ERROR(ReadPatterns(config, "alpha_pattern", false, &out.alpha_pattern));
  return out;
}

// Whether target_modules names the module at `path` (PEFT: a list entry equal to the path or a
// dotted suffix of it; a string a full match of the path).
bool IsTargeted(const PeftConfig& config, const std::string& path) {
  if (config.all_linear) return true;
  if (config.target_pattern) return std::regex_match(path, *config.target_pattern);
  for (const std::string& name : config.target_names) {
    if (path == name || path.ends_with("." + name)) return true;
  }
  return false;
}

double PatternValueOr(const std::vector<PatternValue>& patterns, const std::string& path,
                      double fallback) {
  for (const PatternValue& entry : patterns) {
    if (std::regex_match(path, entry.pattern)) return entry.value;
  }
  return fallback;
}

// A LoRA tensor's name taken apart: model.layers.<layer>.<...>.<module>.lora_<A|B>[.x][.weight]
struct PeftTensorName {
  std::string module_path;  // "model.layers.0.self_attn.q_proj" (no "base_model.model.")
  const PeftModule* module = nullptr;
  int64_t layer = 0;
  bool is_b = false;
};

std::vector<std::string_view> SplitDots(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find('.', start);
    parts.push_back(text.substr(start, dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

Expected<PeftTensorName> ParseTensorName(const std::string& name) {
  // Module paths go through std::regex, whose matcher recurses per character.
  if (name.size() > kMaxTensorNameChars) {
    return Error{"a tensor name is longer than " + std::to_string(kMaxTensorNameChars) +
                 " characters"};
  }
  std::string_view stripped = name;
  if (stripped.starts_with("base_model.model.")) stripped.remove_prefix(17);
  const std::vector<std::string_view> parts = SplitDots(stripped);
  const std::string quoted = "tensor '" + name + "'";
  size_t lora = 0;
  while (lora < parts.size() && !parts[lora].starts_with("lora_")) ++lora;
  if (lora == parts.size()) {
    if (name.find("embed") != std::string::npos || name.find("lm_head") != std::string::npos) {
      return Error{quoted +
                   ": embedding and lm_head weights (extra vocabulary, modules_to_save) "
                   "are not supported"};
    }
    return Error{quoted + " is not a LoRA matrix (lora_A / lora_B)"};
  }
  const std::string_view kind = parts[lora];
  if (kind.starts_with("lora_embedding_")) {
    return Error{quoted + ": embedding LoRA (" + std::string(kind) + ") is not supported"};
  }
  if (kind == "lora_magnitude_vector") {
    return Error{quoted + ": DoRA (lora_magnitude_vector) is not supported"};
  }
  if (kind != "lora_A" && kind != "lora_B") {
    return Error{quoted + ": unknown LoRA tensor kind '" + std::string(kind) + "'"};
  }
  // What may follow lora_A / lora_B: an adapter name ("default") and "weight", each optional.
  const size_t tail = parts.size() - lora - 1;
  if (parts.back() == "bias") return Error{quoted + ": LoRA bias is not supported"};
  if (tail > 2 || (tail == 2 && parts.back() != "weight")) {
    return Error{quoted + ": unexpected name after " + std::string(kind)};
  }
  if (lora == 0) return Error{quoted + " names no module"};
  PeftTensorName out;
  out.is_b = kind == "lora_B";
  const std::string_view short_name = parts[lora - 1];
  out.module_path = std::string(stripped.substr(0, parts[lora].data() - stripped.data() - 1));
  if (IsEmbeddingModule(short_name)) {
    return Error{quoted + ": embedding and lm_head LoRA is not supported"};
  }
  out.module = FindPeftModule(short_name);
  if (out.module == nullptr) {
    return Error{quoted + " targets unknown module '" + std::string(short_name) +
                 "' (supported: " + PeftModuleNames() + ")"};
  }
  size_t layers = 0;
  while (layers + 2 < lora && parts[layers] != "layers") ++layers;
  if (layers + 2 >= lora) return Error{quoted + " has no layer index (layers.N)"};
  const std::string_view index = parts[layers + 1];
  const auto [end, error] = std::from_chars(index.data(), index.data() + index.size(), out.layer);
  if (error != std::errc() || end != index.data() + index.size() || out.layer < 0) {
    return Error{quoted + ": layer index '" + std::string(index) + "' is not a number"};
  }
  return out;
}

struct ModuleTensors {
  PeftTensorName name;
  const SafetensorsTensor* a = nullptr;
  const SafetensorsTensor* b = nullptr;
};

// Checks one module's A [r, in] and B [out, r] against each other and the config, and reads them.
Expected<LoraFilePair> ReadModulePair(const PeftConfig& config, const ModuleTensors& module) {
  const SafetensorsTensor& a = *module.a;
  const SafetensorsTensor& b = *module.b;
  if (a.shape.size() != 2 || b.shape.size() != 2) {
    return Error{"tensors '" + a.name + "' and '" + b.name + "' must both be 2-D"};
  }
  const int64_t rank = a.shape[0];
  if (b.shape[1] != rank) {
    return Error{"tensor '" + a.name + "' has rank " + std::to_string(rank) + " but '" + b.name +
                 "' has " + std::to_string(b.shape[1]) + " columns"};
  }
  const std::string& path = module.name.module_path;
  const double module_rank = PatternValueOr(config.rank_pattern, path, double(config.r));
  if (static_cast<double>(rank) != module_rank) {
    return Error{"tensor '" + a.name + "' has rank " + std::to_string(rank) +
                 ", adapter_config.json gives r = " + std::to_string(int64_t(module_rank))};
  }
  const double alpha = PatternValueOr(config.alpha_pattern, path, config.lora_alpha);
  LoraFilePair pair;
  pair.layer = module.name.layer;
  pair.tensor_name = a.name;
  pair.scale = static_cast<float>(config.use_rslora ? alpha / std::sqrt(double(rank))
                                                    : alpha / double(rank));
  auto a_values = TensorValuesF32(a.name, a.type, a.data, a.num_bytes, a.shape[0], a.shape[1]);
  if (!a_values) return Error{a_values.error()};
  auto b_values = TensorValuesF32(b.name, b.type, b.data, b.num_bytes, b.shape[0], b.shape[1]);
  if (!b_values) return Error{b_values.error()};
  pair.matrices = {rank, a.shape[1], b.shape[0], std::move(*a_values), std::move(*b_values)};
  return pair;
}

}  // namespace

Expected<LoraFilePairs> ReadPeftDirectory(const std::string& directory, const LoraBaseShape& base) {
  const std::filesystem::path dir(directory);
  std::error_code error;
  if (!std::filesystem::is_regular_file(dir / "adapter_config.json", error)) {
    return Error{"no adapter_config.json in " + directory};
  }
  auto text = ReadConfigText(dir / "adapter_config.json");
  if (!text) return Error{text.error()};
  const std::filesystem::path weights_path = dir / "adapter_model.safetensors";
  if (!std::filesystem::is_regular_file(weights_path, error)) {
    if (std::filesystem::exists(dir / "adapter_model.bin", error)) {
      return Error{
          "adapter_model.bin (a PyTorch pickle) is not read: convert the adapter to "
          "safetensors (adapter_model.safetensors)"};
    }
    return Error{"no adapter_model.safetensors in " + directory};
  }
  auto weights = SafetensorsFile::Open(weights_path.string());
  if (!weights) return Error{"adapter_model.safetensors: " + weights.error()};
  return ReadPeftAdapter(*text, **weights, base);
}

Expected<LoraFilePairs> ReadPeftAdapter(const std::string& config_text,
                                        const SafetensorsFile& weights, const LoraBaseShape& base) {
  auto config = ParseConfig(config_text);
  if (!config) return Error{config.error()};
  std::map<std::string, ModuleTensors> modules;  // by module path, in path order
  for (const SafetensorsTensor& tensor : weights.tensors()) {
    auto name = ParseTensorName(tensor.name);
    if (!name) return Error{name.error()};
    if (!IsTargeted(*config, name->module_path)) {
      return Error{"tensor '" + tensor.name + "' targets '" + name->module_path +
                   "', which target_modules does not name"};
    }
    ModuleTensors& module = modules[name->module_path];
    const SafetensorsTensor*& slot = name->is_b ? module.b : module.a;
    if (slot != nullptr) {
      return Error{"tensors '" + slot->name + "' and '" + tensor.name + "' are the same matrix"};
    }
    slot = &tensor;
    module.name = std::move(*name);
  }
  LoraFilePairs out;
  for (const auto& [path, module] : modules) {
    if (module.a == nullptr || module.b == nullptr) {
      const SafetensorsTensor* present = module.a != nullptr ? module.a : module.b;
      return Error{"tensor '" + present->name + "' has no " + (module.a ? "lora_B" : "lora_A")};
    }
    auto pair = ReadModulePair(*config, module);
    if (!pair) return Error{pair.error()};
    VLLM_RETURN_IF_ERROR(
        AddLoraFilePairs(base, module.name.module->targets, std::move(*pair), &out));
  }
  return out;
}

}  // namespace vllm::lora
