// Beam search and pooling with LoRA adapters, on the shared LoRA oracle (../shared/oracles/lora:
// an F32 llama base and its sql / poet adapters). Beam search of width 1 with an adapter is that
// adapter's greedy output (which the conformance suite checks against llama.cpp's); pooling with
// an adapter equals pooling of the base with the adapter merged into its weights (W + scale·B·A,
// written here as a GGUF file); prompts of different adapters in one call never share KV blocks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/finished_token_ids.h"
#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"
#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "model/random_model.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

const fs::path kOracle = fs::path(VLLM_SHARED_DIR) / "oracles" / "lora";

LoraRequest Sql() {
  return {.lora_name = "sql", .lora_int_id = 1, .lora_path = (kOracle / "sql.gguf").string()};
}
LoraRequest Poet() {
  return {.lora_name = "poet", .lora_int_id = 2, .lora_path = (kOracle / "poet-peft").string()};
}

EngineArgs LoraArgs(const fs::path& model, const std::string& runner = "auto") {
  EngineArgs args = TestArgs(model.string());
  args.runner = runner;
  args.enable_lora = true;
  args.max_loras = 2;
  return args;
}

// The prompts (token ids) of greedy/<name>.json.
std::vector<std::vector<int32_t>> OraclePrompts(const std::string& name) {
  std::ifstream in(kOracle / "greedy" / (name + ".json"));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json file = nlohmann::json::parse(text.str());
  std::vector<std::vector<int32_t>> prompts;
  for (const nlohmann::json& c : file["cases"]) prompts.push_back(c["prompt_token_ids"]);
  return prompts;
}

BeamSearchParams Beams(int beam_width, int max_tokens) {
  BeamSearchParams params;
  params.beam_width = beam_width;
  params.max_tokens = max_tokens;
  params.ignore_eos = true;
  return params;
}

// The generated tokens of each output's top beam.
std::vector<std::vector<int32_t>> TopBeams(const std::vector<BeamSearchOutput>& outputs,
                                           const std::vector<LLM::PoolingPrompt>& prompts) {
  std::vector<std::vector<int32_t>> tokens;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::vector<int32_t>& beam = outputs[i].sequences.at(0).tokens;
    const size_t num_prompt = std::get<std::vector<int32_t>>(prompts[i]).size();
    tokens.emplace_back(beam.begin() + static_cast<ptrdiff_t>(num_prompt), beam.end());
  }
  return tokens;
}

std::vector<LLM::PoolingPrompt> AsPrompts(const std::vector<std::vector<int32_t>>& token_ids) {
  return {token_ids.begin(), token_ids.end()};
}

// Each prompt's greedy tokens with `lora` (ignore_eos), all submitted at once.
std::vector<std::vector<int32_t>> GreedyTokens(LLMEngine& engine,
                                               const std::vector<std::vector<int32_t>>& prompts,
                                               const std::optional<LoraRequest>& lora,
                                               int max_tokens) {
  SamplingParams params = Greedy(max_tokens);
  params.ignore_eos = true;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Status added =
        engine.AddRequest(std::to_string(i), prompts[i], Checked(params), {.lora_request = lora});
    EXPECT_TRUE(added.ok()) << added.message();
  }
  return StepToFinishedTokenIds(engine, prompts.size());
}

TEST(LoraBeamSearchTest, WidthOneWithAnAdapterIsThatAdaptersGreedyOutput) {
  if (!fs::exists(kOracle / "base.gguf")) GTEST_SKIP() << "no LoRA oracle at " << kOracle;
  LLM llm(LoraArgs(kOracle / "base.gguf"));
  const std::vector<std::vector<int32_t>> token_ids = OraclePrompts("sql");
  const std::vector<LLM::PoolingPrompt> prompts = AsPrompts(token_ids);
  constexpr int kMaxTokens = 24;
  const auto greedy = GreedyTokens(llm.engine(), token_ids, Sql(), kMaxTokens);
  const std::vector<std::optional<LoraRequest>> sql(prompts.size(), Sql());
  const auto with_sql = TopBeams(llm.BeamSearch(prompts, Beams(1, kMaxTokens), sql), prompts);
  const auto base = TopBeams(llm.BeamSearch(prompts, Beams(1, kMaxTokens)), prompts);
  int num_changed = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_EQ(greedy[i].size(), static_cast<size_t>(kMaxTokens));
    EXPECT_EQ(with_sql[i], greedy[i]) << "prompt " << i;
    num_changed += with_sql[i] != base[i] ? 1 : 0;
  }
  EXPECT_GT(num_changed, 0) << "the adapter changed no beam";
}

// One prompt three times in one call, with sql, poet and no adapter: the beams share every
// prompt token but not an adapter, so each must equal its adapter's search run alone on a fresh
// engine (shared KV between adapters would change them).
TEST(LoraBeamSearchTest, OneCallMixesAdaptersWithoutSharingTheirKv) {
  if (!fs::exists(kOracle / "base.gguf")) GTEST_SKIP() << "no LoRA oracle at " << kOracle;
  const std::vector<int32_t> prompt = OraclePrompts("poet").at(0);
  const std::vector<LLM::PoolingPrompt> prompts(3, prompt);
  const std::vector<std::optional<LoraRequest>> loras = {Sql(), Poet(), std::nullopt};
  const BeamSearchParams params = Beams(3, 12);
  LLM mixed(LoraArgs(kOracle / "base.gguf"));
  const std::vector<BeamSearchOutput> outputs = mixed.BeamSearch(prompts, params, loras);
  ASSERT_EQ(outputs.size(), 3u);
  for (size_t i = 0; i < loras.size(); ++i) {
    LLM alone(LoraArgs(kOracle / "base.gguf"));
    const BeamSearchOutput expected = alone.BeamSearch({prompts[i]}, params, {loras[i]}).at(0);
    ASSERT_EQ(outputs[i].sequences.size(), expected.sequences.size());
    for (size_t b = 0; b < expected.sequences.size(); ++b) {
      EXPECT_EQ(outputs[i].sequences[b].tokens, expected.sequences[b].tokens)
          << "prompt " << i << " beam " << b;
    }
  }
  EXPECT_NE(outputs[0].sequences[0].tokens, outputs[2].sequences[0].tokens);
  EXPECT_NE(outputs[1].sequences[0].tokens, outputs[2].sequences[0].tokens);
}

TEST(LoraBeamSearchTest, AdaptersListOfAnotherLengthOrLoraOffIsRefused) {
  if (!fs::exists(kOracle / "base.gguf")) GTEST_SKIP() << "no LoRA oracle at " << kOracle;
  const std::vector<LLM::PoolingPrompt> prompts = AsPrompts(OraclePrompts("sql"));
  LLM llm(LoraArgs(kOracle / "base.gguf"));
  try {
    llm.BeamSearch(prompts, Beams(1, 2), {Sql()});
    ADD_FAILURE() << "a list of one adapter for " << prompts.size() << " prompts was taken";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "The lengths of prompts and lora_request must be the same.");
  }
  EngineArgs no_lora = LoraArgs(kOracle / "base.gguf");
  no_lora.enable_lora = false;
  LLM base(no_lora);
  try {
    base.BeamSearch({prompts[0]}, Beams(1, 2), {Sql()});
    ADD_FAILURE() << "an adapter was taken with LoRA off";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("LoRA is not enabled"), std::string::npos)
        << error.what();
  }
}

// base.gguf with the GGUF LoRA at `adapter` merged into its weights: every target W (row-major
// [out, in]) becomes W + (alpha / r) * B @ A, A = .lora_a [r, in], B = .lora_b [out, r]; F32 only.
void WriteMergedModel(const fs::path& adapter, const fs::path& out) {
  auto base = GgufFile::Open((kOracle / "base.gguf").string());
  ASSERT_TRUE(base.ok()) << base.error();
  auto lora = GgufFile::Open(adapter.string());
  ASSERT_TRUE(lora.ok()) << lora.error();
  auto alpha = (*lora)->GetFloat("adapter.lora.alpha");
  ASSERT_TRUE(alpha.ok() && alpha->has_value());
  GgufWriter writer;
  for (const std::string& key : (*base)->metadata_order()) {
    writer.AddMetadata(key, (*base)->metadata().at(key));
  }
  std::vector<std::vector<float>> values;
  for (const GgufTensor& tensor : (*base)->tensors()) {
    ASSERT_EQ(tensor.type, GgmlType::kF32) << tensor.name;
    writer.AddTensor(tensor.name, tensor.shape, tensor.type);
    std::vector<float>& w = values.emplace_back(tensor.num_elements());
    std::memcpy(w.data(), tensor.data, w.size() * sizeof(float));
    const GgufTensor* a = (*lora)->FindTensor(tensor.name + ".lora_a");
    const GgufTensor* b = (*lora)->FindTensor(tensor.name + ".lora_b");
    if (a == nullptr || b == nullptr) continue;
    ASSERT_TRUE(a->type == GgmlType::kF32 && b->type == GgmlType::kF32) << tensor.name;
    const int64_t in = tensor.shape[0], out_rows = tensor.shape[1], rank = a->shape[1];
    ASSERT_EQ(a->shape[0], in);
    ASSERT_EQ(b->shape[0], rank);
    ASSERT_EQ(b->shape[1], out_rows);
    const auto* a_values = reinterpret_cast<const float*>(a->data);
    const auto* b_values = reinterpret_cast<const float*>(b->data);
    const double scale = **alpha / static_cast<double>(rank);
    for (int64_t o = 0; o < out_rows; ++o) {
      for (int64_t i = 0; i < in; ++i) {
        double delta = 0;
        for (int64_t r = 0; r < rank; ++r) delta += b_values[o * rank + r] * a_values[r * in + i];
        w[o * in + i] += static_cast<float>(scale * delta);
      }
    }
  }
  ASSERT_TRUE(writer.Begin(out.string()).ok());
  for (size_t t = 0; t < values.size(); ++t) {
    ASSERT_TRUE(writer.WriteTensorData(t, values[t].data(), values[t].size() * sizeof(float)).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float diff = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
  }
  return diff;
}

float MaxAbs(const std::vector<float>& a) {
  float max = 0;
  for (float v : a) max = std::max(max, std::fabs(v));
  return max;
}

class LoraPoolingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kOracle / "base.gguf")) GTEST_SKIP() << "no LoRA oracle at " << kOracle;
    dir_ = fs::path(::testing::TempDir()) / ("lora_pooling_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  fs::path dir_;
};

// encode (the last token's hidden state, raw) and embed with sql on the base equal them on the
// merged model, within F32 rounding; the adapter moves them far beyond that from the base's. A
// batch mixing sql and the base gives each prompt its own adapter's rows.
TEST_F(LoraPoolingTest, AdapterEqualsTheMergedModelAndMixesWithTheBase) {
  const fs::path merged_path = dir_ / "base_plus_sql.gguf";
  ASSERT_NO_FATAL_FAILURE(WriteMergedModel(kOracle / "sql.gguf", merged_path));
  const std::vector<LLM::PoolingPrompt> prompts = AsPrompts(OraclePrompts("sql"));
  const std::vector<std::optional<LoraRequest>> sql(prompts.size(), Sql());
  LLM llm(LoraArgs(kOracle / "base.gguf", "pooling"));
  EngineArgs pooling_merged = TestArgs(merged_path.string());
  pooling_merged.runner = "pooling";
  LLM merged_pooling(pooling_merged);
  const auto with_sql = llm.Encode(prompts, {}, sql);
  const auto base = llm.Encode(prompts);
  const auto reference = merged_pooling.Encode(prompts);
  ASSERT_EQ(with_sql.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    const float scale = MaxAbs(reference[i].outputs.data);
    EXPECT_LT(MaxAbsDiff(with_sql[i].outputs.data, reference[i].outputs.data), 1e-4f * scale)
        << "prompt " << i;
    EXPECT_GT(MaxAbsDiff(with_sql[i].outputs.data, base[i].outputs.data), 1e-2f * scale)
        << "prompt " << i << ": the adapter changed nothing";
  }
  // Alternating sql and the base in one batch.
  std::vector<std::optional<LoraRequest>> alternating;
  for (size_t i = 0; i < prompts.size(); ++i) {
    alternating.push_back(i % 2 == 0 ? std::optional<LoraRequest>(Sql()) : std::nullopt);
  }
  const auto mixed = llm.Embed(prompts, {}, alternating);
  const auto embedded_sql = llm.Embed(prompts, {}, sql);
  const auto embedded_base = llm.Embed(prompts);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto& expected = (i % 2 == 0 ? embedded_sql : embedded_base)[i].outputs.embedding;
    EXPECT_LT(MaxAbsDiff(mixed[i].outputs.embedding, expected), 1e-5f) << "prompt " << i;
  }
}

// score (a bi-encoder: cosine of the two embeddings) with an adapter is the cosine of the
// adapter's embeddings; a list of adapters of another length is refused.
TEST_F(LoraPoolingTest, ScoreRunsBothTextsWithThePairsAdapter) {
  LLM llm(LoraArgs(kOracle / "base.gguf", "pooling"));
  const std::vector<std::string> first = {"Once upon a time"};
  const std::vector<std::string> second = {"there was a cat", "the sky was blue"};
  const std::vector<std::optional<LoraRequest>> loras = {Poet(), std::nullopt};
  const auto scores = llm.Score(first, second, {}, loras);
  ASSERT_EQ(scores.size(), 2u);
  for (size_t i = 0; i < second.size(); ++i) {
    const std::vector<std::optional<LoraRequest>> pair_lora = {loras[i], loras[i]};
    const auto embedded = llm.Embed({first[0], second[i]}, {}, pair_lora);
    double dot = 0;
    for (size_t k = 0; k < embedded[0].outputs.embedding.size(); ++k) {
      dot += embedded[0].outputs.embedding[k] * embedded[1].outputs.embedding[k];
    }
    EXPECT_NEAR(scores[i].outputs.score, dot, 1e-5) << "pair " << i;  // unit vectors
  }
  EXPECT_NE(scores[0].outputs.score, llm.Score(first, {second[0]}).at(0).outputs.score);
  EXPECT_THROW(llm.Score(first, second, {}, {Poet()}), std::invalid_argument);
}

// A BERT encoder's layers apply no adapter: a fitting one is refused, not run as the base model.
TEST_F(LoraPoolingTest, AnEncoderOnlyModelRefusesAdapters) {
  const fs::path model = dir_ / "bert.gguf";
  const Status written = WriteRandomModel(
      {.shape = "bert-tiny",
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-bert-bge.gguf",
       .output_path = model.string(),
       .seed = 3});
  ASSERT_TRUE(written.ok()) << written.message();
  auto base = GgufFile::Open(model.string());
  ASSERT_TRUE(base.ok()) << base.error();
  auto architecture = (*base)->GetString("general.architecture");
  ASSERT_TRUE(architecture.ok() && architecture->has_value());
  // A rank-8 adapter on layer 0's query projection (hidden 64).
  const fs::path adapter = dir_ / "bert_lora.gguf";
  GgufWriter writer;
  writer.AddMetadata("general.architecture", GgufValue::String(**architecture));
  writer.AddMetadata("general.type", GgufValue::String("adapter"));
  writer.AddMetadata("adapter.type", GgufValue::String("lora"));
  writer.AddMetadata("adapter.lora.alpha", GgufValue::Float32(8.0f));
  writer.AddTensor("blk.0.attn_q.weight.lora_a", {64, 8}, GgmlType::kF32);
  writer.AddTensor("blk.0.attn_q.weight.lora_b", {8, 64}, GgmlType::kF32);
  const std::vector<float> values(64 * 8, 0.01f);
  ASSERT_TRUE(writer.Begin(adapter.string()).ok());
  for (size_t t = 0; t < 2; ++t) {
    ASSERT_TRUE(writer.WriteTensorData(t, values.data(), values.size() * sizeof(float)).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  LLM llm(LoraArgs(model, "pooling"));
  const LoraRequest lora{.lora_name = "q", .lora_int_id = 1, .lora_path = adapter.string()};
  try {
    llm.Embed({std::string("hello world")}, {}, {lora});
    ADD_FAILURE() << "an encoder-only model took an adapter";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("LoRA adapters to decoder models only"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace vllm
