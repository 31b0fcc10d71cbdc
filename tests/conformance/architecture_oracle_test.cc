// The architecture oracles of ../shared/oracles (README there): tiny random-weight GGUFs of
// architectures other than Llama. Greedy output must start with llama.cpp's greedy prefix (cut at
// the first near-tie).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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

class ArchitectureGreedyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ArchitectureGreedyTest, GreedyOutputStartsWithLlamaCppsPrefix) {
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

INSTANTIATE_TEST_SUITE_P(Oracles, ArchitectureGreedyTest,
                         ::testing::Values("tiny-qwen3moe", "tiny-phi3", "tiny-gemma3"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace vllm
