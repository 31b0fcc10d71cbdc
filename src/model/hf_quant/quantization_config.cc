#include "model/hf_quant/quantization_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "common/join.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string JoinInts(const std::vector<int64_t>& values) {
  std::vector<std::string> texts;
  for (int64_t value : values) texts.push_back(std::to_string(value));
  return Join(texts, ", ");
}

bool Contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// Whether "re:" pattern `regex` matches `name` from its first character on (Python's re.match,
// as compressed-tensors and vLLM match their targets). An invalid pattern matches nothing; the
// reader refuses those before they get here.
bool RegexMatchesFromStart(const std::string& regex, const std::string& name) {
  try {
    return std::regex_search(name, std::regex(regex), std::regex_constants::match_continuous);
  } catch (const std::regex_error&) {
    return false;
  }
}

// Whether the dot-separated components of `pattern` occur as a contiguous run of `module`'s
// ("mlp.down_proj" in "model.layers.0.mlp.down_proj", but "layers.1" not in "layers.10").
bool MatchesComponents(const std::string& pattern, const std::string& module) {
  if (pattern.empty()) return false;
  for (size_t start = module.find(pattern); start != std::string::npos;
       start = module.find(pattern, start + 1)) {
    const size_t end = start + pattern.size();
    const bool starts_component = start == 0 || module[start - 1] == '.';
    const bool ends_component = end == module.size() || module[end] == '.';
    if (starts_component && ends_component) return true;
  }
  return false;
}

// One JSON object of the quantization config, read with the path its errors name
// ("quantization_config.config_groups.group_0.weights.") and the method they name.
class ConfigFields {
 public:
  ConfigFields(const Json& object, std::string prefix, std::string method)
      : object_(object), prefix_(std::move(prefix)), method_(std::move(method)) {}

  std::string Path(const std::string& key) const { return prefix_ + key; }
  const std::string& method() const { return method_; }

  // The value of `key` when present and not null.
  const Json* Find(const std::string& key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  // The first of `keys` present (AWQ's w_bit / bits), or the first key when none is.
  std::string FirstPresent(const std::vector<std::string>& keys) const {
    for (const std::string& key : keys) {
      if (Find(key) != nullptr) return key;
    }
    return keys.front();
  }
  // The object under `key` (which must be one).
  Expected<ConfigFields> Child(const std::string& key) const {
    const Json* value = Find(key);
    if (value == nullptr || !value->is_object()) return KindError(key, "an object");
    return ConfigFields(*value, Path(key) + ".", method_);
  }

  Status Require(const std::string& key) const {
    if (Find(key) != nullptr) return Status::Ok();
    return Error{Path(key) + " is missing (" + method_ + " needs it)"};
  }
  template <typename Int>
  Status ReadInt(const std::string& key, Int* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status::Ok();
    if (!value->is_number_integer()) return KindError(key, "an integer");
    // Out of Int's range (or beyond int64) would wrap into a supported value.
    const bool fits = value->is_number_unsigned()
                          ? value->get<uint64_t>() <= uint64_t{std::numeric_limits<Int>::max()}
                          : value->get<int64_t>() >= std::numeric_limits<Int>::min() &&
                                value->get<int64_t>() <= std::numeric_limits<Int>::max();
    if (!fits) return Error{Path(key) + " = " + value->dump() + " is out of range"};
    *out = value->get<Int>();
    return Status::Ok();
  }
  Status ReadBool(const std::string& key, bool* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status::Ok();
    if (!value->is_boolean()) return KindError(key, "a boolean");
    *out = value->get<bool>();
    return Status::Ok();
  }
  Status ReadString(const std::string& key, std::string* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status::Ok();
    if (!value->is_string()) return KindError(key, "a string");
    *out = value->get<std::string>();
    return Status::Ok();
  }
  Status ReadInts(const std::string& key, std::vector<int64_t>* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status::Ok();
    if (!value->is_array()) return KindError(key, "a list of integers");
    out->clear();
    for (const Json& item : *value) {
      if (!item.is_number_integer()) return KindError(key, "a list of integers");
      out->push_back(item.get<int64_t>());
    }
    return Status::Ok();
  }
  // A list of module names or "re:" patterns; the patterns must compile.
  Status ReadModuleNames(const std::string& key, std::vector<std::string>* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status::Ok();
    if (!value->is_array()) return KindError(key, "a list of strings");
    for (const Json& item : *value) {
      if (!item.is_string()) return KindError(key, "a list of strings");
      const std::string name = item.get<std::string>();
      if (name.rfind("re:", 0) == 0) {
        try {
          std::regex compiled(name.substr(3));
        } catch (const std::regex_error&) {
          return Error{Path(key) + ": \"" + name + "\" is not a valid regular expression"};
        }
      }
      out->push_back(name);
    }
    return Status::Ok();
  }

  // "quantization_config.bits = 5 is not supported for gptq (supported: 2, 3, 4, 8)".
  Error Unsupported(const std::string& key, const std::string& supported) const {
    const Json* value = Find(key);
    return UnsupportedValue(key, value != nullptr ? value->dump() : "null", supported);
  }
  // The same for a value given as JSON text (a default or an inferred value).
  Error UnsupportedValue(const std::string& key, const std::string& value,
                         const std::string& supported) const {
    return Error{Path(key) + " = " + value + " is not supported for " + method_ +
                 " (supported: " + supported + ")"};
  }
  // A field whose presence is refused ("dynamic", "sparsity_config", ...).
  Error Refused(const std::string& key, const std::string& why) const {
    return Error{Path(key) + " is not supported for " + method_ + " (" + why + ")"};
  }

 private:
  Error KindError(const std::string& key, const char* kind) const {
    const Json* value = Find(key);
    return Error{Path(key) + " must be " + kind + ", not " +
                 (value != nullptr ? value->dump() : "null")};
  }

  const Json& object_;
  std::string prefix_;
  std::string method_;
};

Status ParseGptq(const ConfigFields& fields, GptqConfig* gptq) {
  VLLM_RETURN_IF_ERROR(fields.Require("bits"));
  VLLM_RETURN_IF_ERROR(fields.Require("group_size"));
  VLLM_RETURN_IF_ERROR(fields.ReadInt("bits", &gptq->bits));
  if (gptq->bits != 2 && gptq->bits != 3 && gptq->bits != 4 && gptq->bits != 8) {
    return fields.Unsupported("bits", "2, 3, 4, 8");
  }
  VLLM_RETURN_IF_ERROR(fields.ReadInt("group_size", &gptq->group_size));
  const std::vector<int64_t> group_sizes = {-1, 32, 64, 128};
  if (std::find(group_sizes.begin(), group_sizes.end(), gptq->group_size) == group_sizes.end()) {
    return fields.Unsupported("group_size", JoinInts(group_sizes));
  }
  VLLM_RETURN_IF_ERROR(fields.ReadBool("sym", &gptq->sym));
  VLLM_RETURN_IF_ERROR(fields.ReadBool("desc_act", &gptq->desc_act));
  std::string checkpoint_format;
  VLLM_RETURN_IF_ERROR(fields.ReadString("checkpoint_format", &checkpoint_format));
  if (checkpoint_format != "" && checkpoint_format != "gptq" && checkpoint_format != "gptq_v2") {
    return fields.Unsupported("checkpoint_format", "gptq, gptq_v2");
  }
  gptq->zeros_minus_one = checkpoint_format != "gptq_v2";
  // GPTQModel's per-module overrides of bits / group_size would give layers different schemes.
  if (const Json* dynamic = fields.Find("dynamic")) {
    if (!dynamic->is_object()) return Error{fields.Path("dynamic") + " must be an object"};
    if (!dynamic->empty()) {
      return fields.Refused("dynamic", "per-module overrides; every layer must share one scheme");
    }
  }
  return Status::Ok();
}

Status ParseAwq(const ConfigFields& fields, AwqConfig* awq, std::vector<std::string>* ignore) {
  // AutoAWQ's own quant_config.json spells them w_bit and q_group_size.
  const std::string bits_key = fields.FirstPresent({"bits", "w_bit"});
  const std::string group_size_key = fields.FirstPresent({"group_size", "q_group_size"});
  VLLM_RETURN_IF_ERROR(fields.Require(bits_key));
  VLLM_RETURN_IF_ERROR(fields.Require(group_size_key));
  VLLM_RETURN_IF_ERROR(fields.ReadInt(bits_key, &awq->bits));
  if (awq->bits != 4) return fields.Unsupported(bits_key, "4");
  VLLM_RETURN_IF_ERROR(fields.ReadInt(group_size_key, &awq->group_size));
  const std::vector<int64_t> group_sizes = {-1, 32, 64, 128};
  if (std::find(group_sizes.begin(), group_sizes.end(), awq->group_size) == group_sizes.end()) {
    return fields.Unsupported(group_size_key, JoinInts(group_sizes));
  }
  VLLM_RETURN_IF_ERROR(fields.ReadBool("zero_point", &awq->zero_point));
  VLLM_RETURN_IF_ERROR(fields.ReadString("version", &awq->version));
  awq->version = Lowercase(awq->version);
  if (awq->version != "gemm" && awq->version != "gemv") {
    return fields.Unsupported("version", "gemm, gemv");
  }
  return fields.ReadModuleNames("modules_to_not_convert", ignore);
}

Status ParseFp8(const ConfigFields& fields, Fp8Config* fp8, std::vector<std::string>* ignore) {
  VLLM_RETURN_IF_ERROR(fields.Require("activation_scheme"));
  std::string activation_scheme;
  VLLM_RETURN_IF_ERROR(fields.ReadString("activation_scheme", &activation_scheme));
  if (activation_scheme != "dynamic" && activation_scheme != "static") {
    return fields.Unsupported("activation_scheme", "dynamic, static");
  }
  fp8->dynamic_activations = activation_scheme == "dynamic";
  VLLM_RETURN_IF_ERROR(fields.ReadInts("weight_block_size", &fp8->weight_block_size));
  if (fields.Find("weight_block_size") != nullptr) {
    const std::vector<int64_t>& block = fp8->weight_block_size;
    if (block.size() != 2 || block[0] <= 0 || block[1] <= 0) {
      return fields.Unsupported("weight_block_size", "[rows, cols], both positive");
    }
    // As vLLM: block scales come with per-token activation scales computed at run time.
    if (!fp8->dynamic_activations) {
      return fields.Unsupported("activation_scheme", "dynamic, with weight_block_size");
    }
  }
  // Recent checkpoints spell ignored_layers modules_to_not_convert.
  VLLM_RETURN_IF_ERROR(fields.ReadModuleNames(
      fields.FirstPresent({"ignored_layers", "modules_to_not_convert"}), ignore));
  return Status::Ok();
}

// compressed-tensors' QuantizationArgs, with its defaults: a strategy left out follows from the
// group size (positive: group, -1: channel) or the block structure, else tensor.
Status ParseCtQuantArgs(const ConfigFields& fields, CtQuantArgs* args) {
  VLLM_RETURN_IF_ERROR(fields.ReadInt("num_bits", &args->num_bits));
  VLLM_RETURN_IF_ERROR(fields.ReadString("type", &args->type));
  if (args->type != "int" && args->type != "float") return fields.Unsupported("type", "int, float");
  VLLM_RETURN_IF_ERROR(fields.ReadBool("symmetric", &args->symmetric));
  std::optional<int64_t> group_size;
  if (fields.Find("group_size") != nullptr) {
    int64_t value = 0;
    VLLM_RETURN_IF_ERROR(fields.ReadInt("group_size", &value));
    group_size = value;
  }
  if (const Json* block = fields.Find("block_structure"); block != nullptr && block->is_string()) {
    // Older releases wrote "128x128".
    int64_t rows = 0, cols = 0;
    char separator = 0;
    std::istringstream text(block->get<std::string>());
    if (!(text >> rows >> separator >> cols) || separator != 'x' || !text.eof()) {
      return fields.Unsupported("block_structure", "[rows, cols] or \"ROWSxCOLS\"");
    }
    args->block_structure = {rows, cols};
  } else {
    VLLM_RETURN_IF_ERROR(fields.ReadInts("block_structure", &args->block_structure));
  }
  std::string strategy;
  VLLM_RETURN_IF_ERROR(fields.ReadString("strategy", &strategy));
  if (strategy.empty()) {
    if (group_size && *group_size > 0) {
      strategy = "group";
    } else if (group_size && *group_size == -1) {
      strategy = "channel";
    } else if (!args->block_structure.empty()) {
      strategy = "block";
    } else {
      strategy = "tensor";
    }
  }
  args->strategy = strategy;
  if (strategy == "group") {
    if (!group_size || *group_size <= 0) {
      return Error{fields.Path("group_size") +
                   " must be a positive integer with strategy \"group\""};
    }
    args->group_size = *group_size;
  }
  if (strategy == "block") {
    const std::vector<int64_t>& block = args->block_structure;
    if (block.size() != 2 || block[0] <= 0 || block[1] <= 0) {
      return fields.Unsupported("block_structure", "[rows, cols], both positive");
    }
  }
  // dynamic "local" is NVFP4's per-group global scale: no scheme here takes it.
  VLLM_RETURN_IF_ERROR(fields.ReadBool("dynamic", &args->dynamic));
  // actorder: true means "group", false none.
  if (const Json* actorder = fields.Find("actorder");
      actorder != nullptr && actorder->is_boolean()) {
    args->actorder = actorder->get<bool>() ? "group" : "";
  } else {
    VLLM_RETURN_IF_ERROR(fields.ReadString("actorder", &args->actorder));
  }
  if (args->actorder != "" && args->actorder != "group" && args->actorder != "weight") {
    return fields.Unsupported("actorder", "null, group, weight");
  }
  return Status::Ok();
}

Status CheckCtWeights(const ConfigFields& fields, const CtQuantArgs& weights) {
  if (weights.dynamic) return fields.Unsupported("dynamic", "false");
  if (weights.type == "int") {
    if (weights.num_bits != 4 && weights.num_bits != 8) {
      return fields.UnsupportedValue("num_bits", std::to_string(weights.num_bits), "4, 8");
    }
    if (weights.strategy != "channel" && weights.strategy != "group" &&
        weights.strategy != "tensor") {
      return fields.UnsupportedValue("strategy", Json(weights.strategy).dump(),
                                     "channel, group, tensor for int weights");
    }
  } else {
    if (weights.num_bits != 8) {
      return fields.UnsupportedValue("num_bits", std::to_string(weights.num_bits),
                                     "8 for float weights");
    }
    if (weights.strategy != "tensor" && weights.strategy != "channel" &&
        weights.strategy != "block") {
      return fields.UnsupportedValue("strategy", Json(weights.strategy).dump(),
                                     "tensor, channel, block for float weights");
    }
  }
  if (!weights.actorder.empty() && weights.strategy != "group") {
    return Error{fields.Path("actorder") + " needs strategy \"group\""};
  }
  return Status::Ok();
}

// The activations are quantized by the kernels themselves at run time, so any 8-bit scheme loads.
Status CheckCtInputActivations(const ConfigFields& fields, const CtQuantArgs& activations) {
  if (activations.num_bits != 8) {
    return fields.UnsupportedValue("num_bits", std::to_string(activations.num_bits), "8");
  }
  if (activations.strategy != "token" && activations.strategy != "tensor" &&
      activations.strategy != "group") {
    return fields.UnsupportedValue("strategy", Json(activations.strategy).dump(),
                                   "token, tensor, group");
  }
  return Status::Ok();
}

Status ParseCompressedTensors(const ConfigFields& fields, CompressedTensorsConfig* config,
                              std::vector<std::string>* ignore) {
  const std::vector<std::string> formats = {"int-quantized", "float-quantized", "pack-quantized",
                                            "naive-quantized"};
  std::string top_format;
  VLLM_RETURN_IF_ERROR(fields.ReadString("format", &top_format));
  // "mixed-precision" leaves the format to each group.
  if (top_format == "mixed-precision") top_format.clear();
  if (!top_format.empty() && !Contains(formats, top_format)) {
    return fields.Unsupported("format", Join(formats, ", "));
  }
  // kv_cache_scheme (FP8 KV-cache scales, self_attn.k_scale / v_scale) is read as vLLM reads it
  // with --kv-cache-dtype auto: the scales go unused (HfTensorSource skips them).
  if (const Json* sparsity = fields.Find("sparsity_config");
      sparsity != nullptr && !sparsity->empty()) {
    std::string sparsity_format;
    auto sparsity_fields = fields.Child("sparsity_config");
    if (!sparsity_fields) return Error{sparsity_fields.error()};
    VLLM_RETURN_IF_ERROR(sparsity_fields->ReadString("format", &sparsity_format));
    if (sparsity_format != "dense") {
      return fields.Refused("sparsity_config", "sparse weights do not load here");
    }
  }
  if (fields.Find("transform_config") != nullptr) {
    return fields.Refused("transform_config", "rotated weights do not load here");
  }
  VLLM_RETURN_IF_ERROR(fields.Require("config_groups"));
  auto groups = fields.Child("config_groups");
  if (!groups) return Error{groups.error()};
  const Json& groups_json = *fields.Find("config_groups");
  if (groups_json.empty()) return Error{fields.Path("config_groups") + " is empty"};
  for (const auto& item : groups_json.items()) {
    auto group = groups->Child(item.key());
    if (!group) return Error{group.error()};
    CtScheme scheme;
    VLLM_RETURN_IF_ERROR(group->Require("targets"));
    VLLM_RETURN_IF_ERROR(group->ReadModuleNames("targets", &scheme.targets));
    if (scheme.targets.empty()) return Error{group->Path("targets") + " is empty"};
    VLLM_RETURN_IF_ERROR(group->Require("weights"));
    auto weights = group->Child("weights");
    if (!weights) return Error{weights.error()};
    VLLM_RETURN_IF_ERROR(ParseCtQuantArgs(*weights, &scheme.weights));
    VLLM_RETURN_IF_ERROR(CheckCtWeights(*weights, scheme.weights));
    if (group->Find("input_activations") != nullptr) {
      auto activations = group->Child("input_activations");
      if (!activations) return Error{activations.error()};
      CtQuantArgs args;
      VLLM_RETURN_IF_ERROR(ParseCtQuantArgs(*activations, &args));
      VLLM_RETURN_IF_ERROR(CheckCtInputActivations(*activations, args));
      scheme.input_activations = args;
    }
    if (group->Find("output_activations") != nullptr) {
      return group->Refused("output_activations", "only weights and input activations");
    }
    std::string group_format;
    VLLM_RETURN_IF_ERROR(group->ReadString("format", &group_format));
    if (!group_format.empty() && !Contains(formats, group_format)) {
      return group->Unsupported("format", Join(formats, ", "));
    }
    const std::string& format = group_format.empty() ? top_format : group_format;
    if (format.empty()) {
      return Error{fields.Path("format") + " is missing (compressed-tensors needs it)"};
    }
    if (!config->format.empty() && config->format != format) {
      return Error{fields.Path("config_groups") + " mix formats " + config->format + " and " +
                   format + ": compressed-tensors loads one format per checkpoint here"};
    }
    config->format = format;
    config->schemes.push_back(std::move(scheme));
  }
  return fields.ReadModuleNames("ignore", ignore);
}

Status ParseBitsAndBytes(const ConfigFields& fields, BitsAndBytesConfig* bnb,
                         std::vector<std::string>* ignore) {
  // transformers writes both load_in_4bit and its private twin _load_in_4bit.
  VLLM_RETURN_IF_ERROR(
      fields.ReadBool(fields.FirstPresent({"load_in_4bit", "_load_in_4bit"}), &bnb->load_in_4bit));
  VLLM_RETURN_IF_ERROR(
      fields.ReadBool(fields.FirstPresent({"load_in_8bit", "_load_in_8bit"}), &bnb->load_in_8bit));
  if (bnb->load_in_4bit == bnb->load_in_8bit) {
    return Error{fields.Path("load_in_4bit") + " and " + fields.Path("load_in_8bit") +
                 ": bitsandbytes needs exactly one of them true"};
  }
  VLLM_RETURN_IF_ERROR(fields.ReadString("bnb_4bit_quant_type", &bnb->quant_type));
  if (bnb->quant_type != "nf4" && bnb->quant_type != "fp4") {
    return fields.Unsupported("bnb_4bit_quant_type", "nf4, fp4");
  }
  VLLM_RETURN_IF_ERROR(fields.ReadBool("bnb_4bit_use_double_quant", &bnb->double_quant));
  std::string quant_storage = "uint8";
  VLLM_RETURN_IF_ERROR(fields.ReadString("bnb_4bit_quant_storage", &quant_storage));
  if (quant_storage != "uint8") return fields.Unsupported("bnb_4bit_quant_storage", "uint8");
  bool has_fp16_weight = false;
  VLLM_RETURN_IF_ERROR(fields.ReadBool("llm_int8_has_fp16_weight", &has_fp16_weight));
  if (has_fp16_weight) return fields.Unsupported("llm_int8_has_fp16_weight", "false");
  return fields.ReadModuleNames("llm_int8_skip_modules", ignore);
}

// config.json's quantization section: quantization_config, or compression_config as
// compressed-tensors first named it.
const Json* FindQuantizationSection(const Json& config) {
  for (const char* key : {"quantization_config", "compression_config"}) {
    auto it = config.find(key);
    if (it != config.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

}  // namespace

bool QuantizationConfig::Ignores(const std::string& module) const {
  for (const std::string& entry : ignore) {
    if (entry.rfind("re:", 0) == 0) {
      if (RegexMatchesFromStart(entry.substr(3), module)) return true;
    } else if (MatchesComponents(entry, module)) {
      return true;
    }
  }
  return false;
}

// As vLLM ranks targets: a group naming the module (exactly or as a dotted suffix) wins over one
// whose regex matches it, which wins over "Linear"; the first group wins within a rank.
const CtScheme* QuantizationConfig::SchemeFor(const std::string& module) const {
  enum class Rank { kName, kRegex, kLinear };
  auto matches = [&](const std::string& target, Rank rank) {
    const bool is_regex = target.rfind("re:", 0) == 0;
    switch (rank) {
      case Rank::kName:
        return !is_regex && target != "Linear" &&
               (module == target || (module.size() > target.size() && module.ends_with(target) &&
                                     module[module.size() - target.size() - 1] == '.'));
      case Rank::kRegex:
        return is_regex && RegexMatchesFromStart(target.substr(3), module);
      case Rank::kLinear:
        return target == "Linear";
    }
    return false;
  };
  for (Rank rank : {Rank::kName, Rank::kRegex, Rank::kLinear}) {
    for (const CtScheme& scheme : compressed_tensors.schemes) {
      for (const std::string& target : scheme.targets) {
        if (matches(target, rank)) return &scheme;
      }
    }
  }
  return nullptr;
}

std::optional<QuantMethod> ParseQuantMethod(const std::string& name) {
  if (name == "gptq" || name == "gptq_marlin") return QuantMethod::kGptq;
  if (name == "awq" || name == "awq_marlin") return QuantMethod::kAwq;
  if (name == "fp8") return QuantMethod::kFp8;
  if (name == "compressed-tensors") return QuantMethod::kCompressedTensors;
  if (name == "bitsandbytes") return QuantMethod::kBitsAndBytes;
  return std::nullopt;
}

const std::vector<std::string>& QuantMethodNames() {
  static const std::vector<std::string> names = {
      "awq", "awq_marlin", "gptq", "gptq_marlin", "fp8", "compressed-tensors", "bitsandbytes"};
  return names;
}

const char* QuantMethodName(QuantMethod method) {
  switch (method) {
    case QuantMethod::kNone:
      return "none";
    case QuantMethod::kGptq:
      return "gptq";
    case QuantMethod::kAwq:
      return "awq";
    case QuantMethod::kFp8:
      return "fp8";
    case QuantMethod::kCompressedTensors:
      return "compressed-tensors";
    case QuantMethod::kBitsAndBytes:
      return "bitsandbytes";
  }
  return "none";
}

Expected<QuantizationConfig> ReadQuantizationConfig(const std::string& dir, const Json& config,
                                                    const std::string& requested) {
  std::optional<QuantMethod> requested_method;
  if (!requested.empty()) {
    requested_method = ParseQuantMethod(requested);
    if (!requested_method) {
      return Error{"unsupported --quantization '" + requested +
                   "' for a model directory (supported: " + Join(QuantMethodNames(), ", ") + ")"};
    }
  }
  QuantizationConfig result;
  const Json* section = config.is_object() ? FindQuantizationSection(config) : nullptr;
  std::string section_name = "quantization_config";
  // Older GPTQ checkpoints keep the same keys at the top level of quantize_config.json.
  Json file_section;
  if (section == nullptr) {
    const std::filesystem::path path = std::filesystem::path(dir) / "quantize_config.json";
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error)) {
      std::ifstream file(path, std::ios::binary);
      std::stringstream text;
      text << file.rdbuf();
      file_section = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
      if (file_section.is_discarded()) return Error{path.string() + " is not valid JSON"};
      section = &file_section;
      section_name = "quantize_config.json";
    }
  }
  if (section == nullptr) {
    if (!requested_method) return result;
    if (*requested_method != QuantMethod::kFp8) {
      return Error{"--quantization " + requested +
                   ": the model has no quantization_config in config.json (only fp8 quantizes an "
                   "unquantized model at load)"};
    }
    result.method = QuantMethod::kFp8;
    result.fp8.quantize_at_load = true;
    return result;
  }
  if (!section->is_object()) return Error{section_name + " must be a JSON object"};
  // Field paths: "quantization_config.bits", or "quantize_config.json: bits".
  const std::string prefix = section_name + (section == &file_section ? ": " : ".");
  std::string quant_method;
  {
    ConfigFields top(*section, prefix, "quantization_config");
    VLLM_RETURN_IF_ERROR(top.ReadString("quant_method", &quant_method));
    quant_method = Lowercase(quant_method);
    if (quant_method == "compressed_tensors") quant_method = "compressed-tensors";
    if (quant_method.empty()) {
      if (section != &file_section) {
        return Error{top.Path("quant_method") +
                     " is missing (supported: " + Join(QuantMethodNames(), ", ") + ")"};
      }
      quant_method = requested_method == QuantMethod::kAwq ? requested : "gptq";
    }
    auto method = ParseQuantMethod(quant_method);
    if (!method) {
      return Error{top.Path("quant_method") + " = \"" + quant_method +
                   "\" is not supported (supported: " + Join(QuantMethodNames(), ", ") + ")"};
    }
    result.method = *method;
  }
  if (requested_method && *requested_method != result.method) {
    return Error{"Quantization method specified in the model config (" + quant_method +
                 ") does not match the quantization method specified in the `quantization` "
                 "argument (" +
                 requested + ")."};
  }
  const ConfigFields fields(*section, prefix, QuantMethodName(result.method));
  switch (result.method) {
    case QuantMethod::kGptq:
      VLLM_RETURN_IF_ERROR(ParseGptq(fields, &result.gptq));
      break;
    case QuantMethod::kAwq:
      VLLM_RETURN_IF_ERROR(ParseAwq(fields, &result.awq, &result.ignore));
      break;
    case QuantMethod::kFp8:
      VLLM_RETURN_IF_ERROR(ParseFp8(fields, &result.fp8, &result.ignore));
      break;
    case QuantMethod::kCompressedTensors:
      VLLM_RETURN_IF_ERROR(
          ParseCompressedTensors(fields, &result.compressed_tensors, &result.ignore));
      break;
    case QuantMethod::kBitsAndBytes:
      VLLM_RETURN_IF_ERROR(ParseBitsAndBytes(fields, &result.bitsandbytes, &result.ignore));
      break;
    case QuantMethod::kNone:
      break;
  }
  return result;
}

}  // namespace vllm
