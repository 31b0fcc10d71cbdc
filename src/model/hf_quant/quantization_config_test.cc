// config.json's quantization_config as vLLM reads it: every method's fields, the schemes that do
// not load refused with the method and the field named, and --quantization confirming it.
#include "model/hf_quant/quantization_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/temp_test_dir.h"
#include "model/hf_quant_writer.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

// A config.json with `quantization_config`, read from a directory with no other files.
Expected<QuantizationConfig> Read(const Json& quantization_config,
                                  const std::string& requested = "") {
  return ReadQuantizationConfig("/nonexistent", {{"quantization_config", quantization_config}},
                                requested);
}

// The error of reading `quantization_config` (empty when it reads).
std::string ReadError(const Json& quantization_config, const std::string& requested = "") {
  auto config = Read(quantization_config, requested);
  return config.ok() ? "" : config.error();
}

Json Gptq(int bits, int group_size) {
  return {{"quant_method", "gptq"},
          {"bits", bits},
          {"group_size", group_size},
          {"desc_act", false},
          {"sym", true},
          {"damp_percent", 0.01},
          {"true_sequential", true},
          {"checkpoint_format", "gptq"}};
}

TEST(QuantizationConfigTest, NoQuantizationConfigIsUnquantized) {
  auto config = ReadQuantizationConfig("/nonexistent", {{"hidden_size", 64}}, "");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kNone);
}

TEST(QuantizationConfigTest, ReadsGptqFields) {
  Json json = Gptq(4, 64);
  json["sym"] = false;
  json["desc_act"] = true;
  auto config = Read(json);
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kGptq);
  EXPECT_EQ(config->gptq.bits, 4);
  EXPECT_EQ(config->gptq.group_size, 64);
  EXPECT_FALSE(config->gptq.sym);
  EXPECT_TRUE(config->gptq.desc_act);
  EXPECT_TRUE(config->gptq.zeros_minus_one);

  json["checkpoint_format"] = "gptq_v2";
  json["group_size"] = -1;
  json["bits"] = 3;
  json["dynamic"] = Json::object();  // no overrides
  config = Read(json);
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_FALSE(config->gptq.zeros_minus_one);
  EXPECT_EQ(config->gptq.group_size, -1);
  EXPECT_EQ(config->gptq.bits, 3);
}

TEST(QuantizationConfigTest, RefusesGptqSchemesThatDoNotLoad) {
  EXPECT_EQ(ReadError(Gptq(5, 128)),
            "quantization_config.bits = 5 is not supported for gptq (supported: 2, 3, 4, 8)");
  EXPECT_EQ(ReadError(Gptq(4, 48)),
            "quantization_config.group_size = 48 is not supported for gptq (supported: -1, 32, "
            "64, 128)");
  Json json = Gptq(4, 128);
  json["checkpoint_format"] = "marlin";
  EXPECT_EQ(ReadError(json),
            "quantization_config.checkpoint_format = \"marlin\" is not supported for gptq "
            "(supported: gptq, gptq_v2)");
  json = Gptq(4, 128);
  json["dynamic"] = {{"-:.*down_proj", Json::object()}};
  EXPECT_NE(ReadError(json).find("quantization_config.dynamic is not supported for gptq"),
            std::string::npos)
      << ReadError(json);
  json = Gptq(4, 128);
  json.erase("bits");
  EXPECT_EQ(ReadError(json), "quantization_config.bits is missing (gptq needs it)");
}

TEST(QuantizationConfigTest, WrongJsonKindNamesTheField) {
  Json json = Gptq(4, 128);
  json["bits"] = "4";
  EXPECT_EQ(ReadError(json), "quantization_config.bits must be an integer, not \"4\"");
  json = Gptq(4, 128);
  json["desc_act"] = 1;
  EXPECT_EQ(ReadError(json), "quantization_config.desc_act must be a boolean, not 1");
  json = Gptq(4, 128);
  json["bits"] = (int64_t{1} << 32) + 4;  // would wrap to 4 as an int
  EXPECT_EQ(ReadError(json), "quantization_config.bits = 4294967300 is out of range");
  json["bits"] = uint64_t{1} << 63;
  EXPECT_EQ(ReadError(json), "quantization_config.bits = 9223372036854775808 is out of range");
  EXPECT_EQ(ReadError(Json::array()), "quantization_config must be a JSON object");
  EXPECT_EQ(ReadError({{"quant_method", 3}}),
            "quantization_config.quant_method must be a string, not 3");
}

TEST(QuantizationConfigTest, ReadsQuantizeConfigJsonOfOlderGptqCheckpoints) {
  TempTestDir dir("quantize_config_json");
  std::ofstream(dir.File("quantize_config.json"))
      << R"({"bits": 8, "group_size": 32, "desc_act": true, "sym": true})";
  const std::string path = dir.File("");
  auto config = ReadQuantizationConfig(path, {{"hidden_size", 64}}, "");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kGptq);
  EXPECT_EQ(config->gptq.bits, 8);
  EXPECT_EQ(config->gptq.group_size, 32);
  EXPECT_TRUE(config->gptq.desc_act);
  EXPECT_TRUE(ReadQuantizationConfig(path, {{"hidden_size", 64}}, "gptq_marlin").ok());

  std::ofstream(dir.File("quantize_config.json")) << R"({"bits": 5, "group_size": 32})";
  config = ReadQuantizationConfig(path, {{"hidden_size", 64}}, "");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error(),
            "quantize_config.json: bits = 5 is not supported for gptq (supported: 2, 3, 4, 8)");
}

TEST(QuantizationConfigTest, ReadsAwqFields) {
  auto config = Read({{"quant_method", "awq"},
                      {"bits", 4},
                      {"group_size", 128},
                      {"zero_point", true},
                      {"version", "gemm"},
                      {"modules_to_not_convert", nullptr}});
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kAwq);
  EXPECT_EQ(config->awq.group_size, 128);
  EXPECT_TRUE(config->awq.zero_point);
  EXPECT_EQ(config->awq.version, "gemm");
  EXPECT_TRUE(config->ignore.empty());

  // AutoAWQ's own spellings.
  config = Read({{"quant_method", "AWQ"},
                 {"w_bit", 4},
                 {"q_group_size", 64},
                 {"zero_point", false},
                 {"version", "GEMV"},
                 {"modules_to_not_convert", {"visual"}}});
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->awq.group_size, 64);
  EXPECT_FALSE(config->awq.zero_point);
  EXPECT_EQ(config->awq.version, "gemv");
  EXPECT_EQ(config->ignore, std::vector<std::string>{"visual"});

  EXPECT_EQ(ReadError({{"quant_method", "awq"}, {"bits", 8}, {"group_size", 128}}),
            "quantization_config.bits = 8 is not supported for awq (supported: 4)");
  EXPECT_EQ(
      ReadError(
          {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"version", "gemv_fast"}}),
      "quantization_config.version = \"gemv_fast\" is not supported for awq (supported: "
      "gemm, gemv)");
}

TEST(QuantizationConfigTest, ReadsFp8Fields) {
  auto config = Read({{"quant_method", "fp8"},
                      {"fmt", "e4m3"},
                      {"activation_scheme", "dynamic"},
                      {"weight_block_size", {128, 128}}});
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kFp8);
  EXPECT_EQ(config->fp8.weight_block_size, (std::vector<int64_t>{128, 128}));
  EXPECT_TRUE(config->fp8.dynamic_activations);
  EXPECT_FALSE(config->fp8.quantize_at_load);

  config = Read({{"quant_method", "fp8"},
                 {"activation_scheme", "static"},
                 {"ignored_layers", {"lm_head", "model.layers.0.mlp.gate"}}});
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_TRUE(config->fp8.weight_block_size.empty());
  EXPECT_FALSE(config->fp8.dynamic_activations);
  EXPECT_TRUE(config->Ignores("lm_head"));
  EXPECT_TRUE(config->Ignores("model.layers.0.mlp.gate"));
  EXPECT_FALSE(config->Ignores("model.layers.0.mlp.gate_proj"));

  EXPECT_EQ(ReadError({{"quant_method", "fp8"},
                       {"activation_scheme", "static"},
                       {"weight_block_size", {128, 128}}}),
            "quantization_config.activation_scheme = \"static\" is not supported for fp8 "
            "(supported: dynamic, with weight_block_size)");
  EXPECT_EQ(ReadError({{"quant_method", "fp8"},
                       {"activation_scheme", "dynamic"},
                       {"weight_block_size", {128}}}),
            "quantization_config.weight_block_size = [128] is not supported for fp8 (supported: "
            "[rows, cols], both positive)");
  EXPECT_EQ(ReadError({{"quant_method", "fp8"}, {"activation_scheme", "per_token"}}),
            "quantization_config.activation_scheme = \"per_token\" is not supported for fp8 "
            "(supported: dynamic, static)");
}

TEST(QuantizationConfigTest, ReadsCompressedTensorsSchemes) {
  // The oracle's W8A8, FP8 and W4A16 layouts.
  auto config = Read(CompressedTensorsConfigJson("int-quantized",
                                                 {{"num_bits", 8},
                                                  {"type", "int"},
                                                  {"symmetric", true},
                                                  {"strategy", "channel"},
                                                  {"dynamic", false}},
                                                 {{"num_bits", 8},
                                                  {"type", "int"},
                                                  {"symmetric", true},
                                                  {"strategy", "token"},
                                                  {"dynamic", true}}));
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kCompressedTensors);
  EXPECT_EQ(config->compressed_tensors.format, "int-quantized");
  ASSERT_EQ(config->compressed_tensors.schemes.size(), 1u);
  const CtScheme& w8a8 = config->compressed_tensors.schemes[0];
  EXPECT_EQ(w8a8.targets, std::vector<std::string>{"Linear"});
  EXPECT_EQ(w8a8.weights.num_bits, 8);
  EXPECT_EQ(w8a8.weights.strategy, "channel");
  ASSERT_TRUE(w8a8.input_activations.has_value());
  EXPECT_EQ(w8a8.input_activations->strategy, "token");
  EXPECT_TRUE(w8a8.input_activations->dynamic);
  EXPECT_TRUE(config->Ignores("lm_head"));
  EXPECT_FALSE(config->Ignores("model.layers.0.self_attn.q_proj"));

  config = Read(CompressedTensorsConfigJson(
      "float-quantized",
      {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}, {"dynamic", false}},
      {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"dynamic", true}}));
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->compressed_tensors.schemes[0].weights.type, "float");

  config = Read(CompressedTensorsConfigJson("pack-quantized",
                                            {{"num_bits", 4},
                                             {"type", "int"},
                                             {"symmetric", false},
                                             {"group_size", 128},
                                             {"actorder", "weight"},
                                             {"dynamic", false}},
                                            nullptr));
  ASSERT_TRUE(config.ok()) << config.error();
  const CtScheme& w4a16 = config->compressed_tensors.schemes[0];
  EXPECT_EQ(w4a16.weights.strategy, "group");  // inferred from the group size
  EXPECT_EQ(w4a16.weights.group_size, 128);
  EXPECT_FALSE(w4a16.weights.symmetric);
  EXPECT_EQ(w4a16.weights.actorder, "weight");
  EXPECT_FALSE(w4a16.input_activations.has_value());

  // FP8 blocks, with the block structure as older releases wrote it.
  config = Read(CompressedTensorsConfigJson(
      "float-quantized",
      {{"num_bits", 8}, {"type", "float"}, {"strategy", "block"}, {"block_structure", "128x128"}},
      {{"num_bits", 8},
       {"type", "float"},
       {"strategy", "group"},
       {"group_size", 128},
       {"dynamic", true}}));
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->compressed_tensors.schemes[0].weights.block_structure,
            (std::vector<int64_t>{128, 128}));
}

TEST(QuantizationConfigTest, RefusesCompressedTensorsSchemesThatDoNotLoad) {
  const Json int8_channel = {{"num_bits", 8}, {"type", "int"}, {"strategy", "channel"}};
  Json json = CompressedTensorsConfigJson(
      "pack-quantized", {{"num_bits", 2}, {"type", "int"}, {"group_size", 128}}, nullptr);
  EXPECT_EQ(ReadError(json),
            "quantization_config.config_groups.group_0.weights.num_bits = 2 is not supported for "
            "compressed-tensors (supported: 4, 8)");
  json = CompressedTensorsConfigJson(
      "int-quantized",
      {{"num_bits", 8}, {"type", "int"}, {"strategy", "block"}, {"block_structure", {128, 128}}},
      nullptr);
  EXPECT_EQ(ReadError(json),
            "quantization_config.config_groups.group_0.weights.strategy = \"block\" is not "
            "supported for compressed-tensors (supported: channel, group, tensor for int "
            "weights)");
  json = CompressedTensorsConfigJson(
      "float-quantized",
      {{"num_bits", 8}, {"type", "float"}, {"strategy", "group"}, {"group_size", 128}}, nullptr);
  EXPECT_EQ(ReadError(json),
            "quantization_config.config_groups.group_0.weights.strategy = \"group\" is not "
            "supported for compressed-tensors (supported: tensor, channel, block for float "
            "weights)");
  // W4A4: the activations' bits; a channel strategy inferred from group_size -1.
  json = CompressedTensorsConfigJson("int-quantized", int8_channel, {{"num_bits", 4}});
  EXPECT_EQ(ReadError(json),
            "quantization_config.config_groups.group_0.input_activations.num_bits = 4 is not "
            "supported for compressed-tensors (supported: 8)");
  json = CompressedTensorsConfigJson("int-quantized", int8_channel, {{"group_size", -1}});
  EXPECT_EQ(ReadError(json),
            "quantization_config.config_groups.group_0.input_activations.strategy = \"channel\" "
            "is not supported for compressed-tensors (supported: token, tensor, group)");
  json = CompressedTensorsConfigJson("int-quantized", int8_channel, nullptr);
  json["config_groups"]["group_0"]["output_activations"] = int8_channel;
  EXPECT_NE(ReadError(json).find("quantization_config.config_groups.group_0.output_activations "
                                 "is not supported for compressed-tensors"),
            std::string::npos)
      << ReadError(json);
  json = CompressedTensorsConfigJson("int-quantized", int8_channel, nullptr);
  json["kv_cache_scheme"] = {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}};
  EXPECT_EQ(ReadError(json), "");  // its scales go unused, as with vLLM's --kv-cache-dtype auto
  json = CompressedTensorsConfigJson("nvfp4-pack-quantized", int8_channel, nullptr);
  EXPECT_EQ(ReadError(json),
            "quantization_config.format = \"nvfp4-pack-quantized\" is not supported for "
            "compressed-tensors (supported: int-quantized, float-quantized, pack-quantized, "
            "naive-quantized)");
  json = CompressedTensorsConfigJson("int-quantized", int8_channel, nullptr);
  json["config_groups"]["group_0"]["targets"] = {"re:(unclosed"};
  EXPECT_EQ(ReadError(json),
            "quantization_config.config_groups.group_0.targets: \"re:(unclosed\" is not a valid "
            "regular expression");
  json = CompressedTensorsConfigJson("int-quantized", int8_channel, nullptr);
  json["config_groups"]["group_0"]["weights"]["num_bits"] = 8.5;
  EXPECT_EQ(ReadError(json),
            "quantization_config.config_groups.group_0.weights.num_bits must be an integer, not "
            "8.5");
}

TEST(QuantizationConfigTest, ReadsBitsAndBytesFields) {
  auto config = Read({{"quant_method", "bitsandbytes"},
                      {"_load_in_4bit", true},
                      {"load_in_4bit", true},
                      {"load_in_8bit", false},
                      {"bnb_4bit_quant_type", "nf4"},
                      {"bnb_4bit_use_double_quant", true},
                      {"bnb_4bit_compute_dtype", "bfloat16"},
                      {"bnb_4bit_quant_storage", "uint8"},
                      {"llm_int8_skip_modules", {"lm_head", "multi_modal_projector"}}});
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kBitsAndBytes);
  EXPECT_TRUE(config->bitsandbytes.load_in_4bit);
  EXPECT_FALSE(config->bitsandbytes.load_in_8bit);
  EXPECT_EQ(config->bitsandbytes.quant_type, "nf4");
  EXPECT_TRUE(config->bitsandbytes.double_quant);
  EXPECT_TRUE(config->Ignores("lm_head"));

  config = Read({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}});
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_TRUE(config->bitsandbytes.load_in_8bit);

  EXPECT_EQ(ReadError({{"quant_method", "bitsandbytes"},
                       {"load_in_4bit", true},
                       {"bnb_4bit_quant_type", "int4"}}),
            "quantization_config.bnb_4bit_quant_type = \"int4\" is not supported for "
            "bitsandbytes (supported: nf4, fp4)");
  EXPECT_EQ(ReadError({{"quant_method", "bitsandbytes"}}),
            "quantization_config.load_in_4bit and quantization_config.load_in_8bit: bitsandbytes "
            "needs exactly one of them true");
}

TEST(QuantizationConfigTest, RefusesUnknownMethodListingTheSupportedOnes) {
  EXPECT_EQ(ReadError({{"quant_method", "hqq"}}),
            "quantization_config.quant_method = \"hqq\" is not supported (supported: awq, "
            "awq_marlin, gptq, gptq_marlin, fp8, compressed-tensors, bitsandbytes)");
  EXPECT_EQ(ReadError({{"bits", 4}}),
            "quantization_config.quant_method is missing (supported: awq, awq_marlin, gptq, "
            "gptq_marlin, fp8, compressed-tensors, bitsandbytes)");
}

TEST(QuantizationConfigTest, RequestedMethodConfirmsOrMismatches) {
  const Json awq = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}};
  EXPECT_EQ(ReadError(awq, "awq"), "");
  EXPECT_EQ(ReadError(awq, "awq_marlin"), "");
  EXPECT_EQ(ReadError(Gptq(4, 128), "gptq_marlin"), "");
  EXPECT_EQ(ReadError(Gptq(4, 128), "awq"),
            "Quantization method specified in the model config (gptq) does not match the "
            "quantization method specified in the `quantization` argument (awq).");
  EXPECT_EQ(ReadError(awq, "bogus"),
            "unsupported --quantization 'bogus' for a model directory (supported: awq, "
            "awq_marlin, gptq, gptq_marlin, fp8, compressed-tensors, bitsandbytes)");
  // compressed_tensors is an older spelling of the method.
  Json json = CompressedTensorsConfigJson("int-quantized",
                                          {{"num_bits", 8}, {"strategy", "channel"}}, nullptr);
  json["quant_method"] = "compressed_tensors";
  EXPECT_EQ(ReadError(json, "compressed-tensors"), "");
}

TEST(QuantizationConfigTest, Fp8OnUnquantizedModelQuantizesAtLoad) {
  const Json unquantized = {{"hidden_size", 64}};
  auto config = ReadQuantizationConfig("/nonexistent", unquantized, "fp8");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, QuantMethod::kFp8);
  EXPECT_TRUE(config->fp8.quantize_at_load);
  EXPECT_TRUE(config->fp8.dynamic_activations);

  config = ReadQuantizationConfig("/nonexistent", unquantized, "gptq");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error(),
            "--quantization gptq: the model has no quantization_config in config.json (only fp8 "
            "quantizes an unquantized model at load)");
}

// Every value of every method's config, replaced by each JSON kind in turn: the reader returns a
// config or an error naming a field, and never throws.
TEST(QuantizationConfigTest, AnyFieldOfAnyKindIsReadOrRefusedByName) {
  const std::vector<Json> configs = {
      Gptq(4, 128),
      {{"quant_method", "awq"},
       {"bits", 4},
       {"group_size", 128},
       {"zero_point", true},
       {"version", "gemm"},
       {"modules_to_not_convert", {"visual"}}},
      {{"quant_method", "fp8"},
       {"activation_scheme", "dynamic"},
       {"weight_block_size", {128, 128}},
       {"ignored_layers", {"lm_head"}}},
      CompressedTensorsConfigJson(
          "pack-quantized",
          {{"num_bits", 4},
           {"type", "int"},
           {"symmetric", true},
           {"group_size", 128},
           {"strategy", "group"},
           {"actorder", "group"},
           {"block_structure", nullptr}},
          {{"num_bits", 8}, {"type", "int"}, {"strategy", "token"}, {"dynamic", true}}),
      {{"quant_method", "bitsandbytes"},
       {"load_in_4bit", true},
       {"bnb_4bit_quant_type", "nf4"},
       {"bnb_4bit_use_double_quant", true},
       {"llm_int8_skip_modules", {"lm_head"}}}};
  const std::vector<Json> replacements = {
      nullptr,       true,           0,        -1,        4, 2.5, "x", "re:(",
      Json::array(), Json::object(), {1, "a"}, {{"k", 1}}};
  int64_t num_read = 0, num_refused = 0;
  for (const Json& config : configs) {
    ASSERT_EQ(ReadError(config), "") << config.dump();
    // The pointers of every value, leaves ("/bits") and the objects and lists above them.
    std::set<std::string> pointers;
    const Json leaves = config.flatten();
    for (const auto& leaf : leaves.items()) {
      for (Json::json_pointer pointer(leaf.key()); !pointer.empty();
           pointer = pointer.parent_pointer()) {
        pointers.insert(pointer.to_string());
      }
    }
    for (const std::string& pointer : pointers) {
      for (const Json& replacement : replacements) {
        Json mutated = config;
        mutated[Json::json_pointer(pointer)] = replacement;
        Expected<QuantizationConfig> read = Read(mutated);
        if (read.ok()) {
          ++num_read;
        } else {
          ++num_refused;
          EXPECT_TRUE(read.error().starts_with("quantization_config")) << read.error();
        }
      }
    }
  }
  EXPECT_GT(num_read, 0);
  EXPECT_GT(num_refused, 0);
}

TEST(QuantizationConfigTest, IgnoresNamesComponentsAndRegexes) {
  QuantizationConfig config;
  config.ignore = {"lm_head", "mlp.down_proj", "layers.1", "re:.*self_attn\\.o_proj$"};
  EXPECT_TRUE(config.Ignores("lm_head"));
  EXPECT_TRUE(config.Ignores("model.layers.0.mlp.down_proj"));
  EXPECT_TRUE(config.Ignores("model.layers.1.mlp.up_proj"));
  EXPECT_FALSE(config.Ignores("model.layers.10.mlp.up_proj"));  // components, not substrings
  EXPECT_FALSE(config.Ignores("model.layers.0.mlp.down_proj_extra"));
  EXPECT_TRUE(config.Ignores("model.layers.3.self_attn.o_proj"));
  EXPECT_FALSE(config.Ignores("model.layers.3.self_attn.q_proj"));
  // "re:" patterns match from the name's start, as Python's re.match.
  config.ignore = {"re:mlp"};
  EXPECT_FALSE(config.Ignores("model.layers.0.mlp.down_proj"));
  EXPECT_TRUE(config.Ignores("mlp.down_proj"));
}

TEST(QuantizationConfigTest, SchemeForPrefersNamesThenRegexesThenLinear) {
  QuantizationConfig config;
  CtScheme linear{.targets = {"Linear"}};
  linear.weights.num_bits = 4;
  CtScheme regex{.targets = {"re:.*down_proj"}};
  regex.weights.num_bits = 8;
  CtScheme named{.targets = {"layers.0.mlp.down_proj"}};
  named.weights.num_bits = 2;
  config.compressed_tensors.schemes = {linear, regex, named};
  ASSERT_NE(config.SchemeFor("model.layers.0.mlp.down_proj"), nullptr);
  EXPECT_EQ(config.SchemeFor("model.layers.0.mlp.down_proj")->weights.num_bits, 2);
  EXPECT_EQ(config.SchemeFor("model.layers.1.mlp.down_proj")->weights.num_bits, 8);
  EXPECT_EQ(config.SchemeFor("model.layers.1.mlp.up_proj")->weights.num_bits, 4);
  // A suffix match must start at a component.
  config.compressed_tensors.schemes = {named};
  EXPECT_EQ(config.SchemeFor("model.xlayers.0.mlp.down_proj"), nullptr);
  EXPECT_EQ(config.SchemeFor("model.layers.0.mlp.up_proj"), nullptr);
}

TEST(QuantizationConfigTest, MethodNamesRoundTrip) {
  for (QuantMethod method : {QuantMethod::kGptq, QuantMethod::kAwq, QuantMethod::kFp8,
                             QuantMethod::kCompressedTensors, QuantMethod::kBitsAndBytes}) {
    EXPECT_EQ(ParseQuantMethod(QuantMethodName(method)), method);
  }
  EXPECT_EQ(ParseQuantMethod("gptq_marlin"), QuantMethod::kGptq);
  EXPECT_EQ(ParseQuantMethod("awq_marlin"), QuantMethod::kAwq);
  EXPECT_EQ(ParseQuantMethod("q4_k"), std::nullopt);
  EXPECT_STREQ(QuantMethodName(QuantMethod::kNone), "none");
}

}  // namespace
}  // namespace vllm
