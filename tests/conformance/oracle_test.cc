// The oracles of ../shared/oracles (README there): tiny random-weight GGUFs that llama.cpp
// quantized (K-quant mixes and Q8_0 of a Llama) or that hold other architectures (qwen3moe, phi3,
// gemma3).
//   - Dequantized tensors must equal llama.cpp's reference dequantization bit for bit.
//   - Greedy output must start with llama.cpp's greedy prefix (cut at the first near-tie).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/gguf_file.h"
#include "kernels/ops.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kOracles = fs::path(VLLM_SHARED_DIR) / "oracles";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(QuantizedOracleTest, DequantizedTensorsAreBitIdenticalToLlamaCpp) {
  const json index = json::parse(ReadFile(kOracles / "dequant" / "index.json"));
  ASSERT_FALSE(index.empty());
  for (const json& entry : index) {
    const std::string file = entry["file"];
    const std::string tensor_name = entry["tensor"];
    SCOPED_TRACE(file + " " + tensor_name);
    auto gguf = GgufFile::Open((kOracles / file).string());
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    const GgufTensor* tensor = (*gguf)->FindTensor(tensor_name);
    ASSERT_NE(tensor, nullptr);
    const int64_t cols = entry["shape"][0], rows = entry["shape"][1];
    ASSERT_EQ(tensor->shape, (std::vector<int64_t>{cols, rows}));
    const std::string expected_bytes = ReadFile(kOracles / "dequant" / entry["f32_file"]);
    ASSERT_EQ(static_cast<int64_t>(expected_bytes.size()), rows * cols * 4);
    std::vector<float> actual(rows * cols);
    const int64_t row_bytes = tensor->num_bytes / rows;
    for (int64_t r = 0; r < rows; ++r) {
      kernels::DequantizeRow(tensor->type, tensor->data + r * row_bytes, cols,
                             actual.data() + r * cols);
    }
    for (int64_t i = 0; i < rows * cols; ++i) {
      uint32_t expected_bits, actual_bits;
      std::memcpy(&expected_bits, expected_bytes.data() + 4 * i, 4);
      std::memcpy(&actual_bits, &actual[i], 4);
      ASSERT_EQ(actual_bits, expected_bits) << "element " << i << " (row " << i / cols << ")";
    }
  }
}

class GreedyOracleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GreedyOracleTest, GreedyOutputStartsWithLlamaCppsPrefix) {
  const json oracle = json::parse(ReadFile(kOracles / "greedy" / (GetParam() + ".json")));
  // llama.cpp ran the oracles with a 4096-token context (phi3 picks its short RoPE factors below
  // it).
  LLM llm(EngineArgs{.model = (kOracles / "models" / (GetParam() + ".gguf")).string(),
                     .kv_cache_memory_bytes = int64_t{64} << 20,
                     .max_model_len = 4096});
  SamplingParams params;
  params.temperature = 0.0f;
  params.max_tokens = 40;
  params.ignore_eos = true;
  std::vector<std::vector<int32_t>> prompts;
  for (const json& c : oracle["cases"]) prompts.push_back(c["prompt_token_ids"]);
  const std::vector<RequestOutput> outputs = llm.GenerateFromTokenIds(prompts, params, false);
  ASSERT_EQ(outputs.size(), prompts.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const json& c = oracle["cases"][i];
    const std::string expected = c["expected_prefix"];
    const std::string& text = outputs[i].outputs[0].text;
    EXPECT_EQ(text.substr(0, expected.size()), expected)
        << "prompt '" << c["prompt"].get<std::string>() << "' (cut by " << c["cut_by"] << "): got '"
        << text << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Oracles, GreedyOracleTest,
                         ::testing::Values("tiny-llama-d256-q4_k_m", "tiny-llama-d256-q5_k_m",
                                           "tiny-llama-d256-q6_k", "tiny-llama-d256-q8_0",
                                           "tiny-qwen3moe", "tiny-phi3", "tiny-gemma3"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace vllm
