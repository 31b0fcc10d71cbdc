// The LoRA oracles of ../shared/oracles/lora (README there): a tiny llama base with two adapters,
// each as a llama.cpp GGUF LoRA and as a PEFT directory. Greedy output with an adapter must start
// with llama.cpp's (llama-server --lora), alone and with every adapter and the base mixed in one
// batch; max_loras = 1 holds adapters back without changing any output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "engine/finished_token_ids.h"
#include "engine/llm_engine.h"
#include "engine/lora_adapters.h"
#include "model/model_loader.h"
#include "vllm/async_llm.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kLoraOracles = fs::path(VLLM_SHARED_DIR) / "oracles" / "lora";

json ReadOracle(const std::string& name) {
  std::ifstream in(kLoraOracles / "greedy" / (name + ".json"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return json::parse(buffer.str());
}

EngineArgs LoraArgs(int max_loras) {
  return EngineArgs{.model = (kLoraOracles / "base.gguf").string(),
                    .num_threads = 2,
                    .kv_cache_memory_bytes = int64_t{64} << 20,
                    .max_model_len = 4096,
                    .enable_lora = true,
                    .max_loras = max_loras,
                    .max_cpu_loras = 4};
}

// An adapter of the oracles: "sql.gguf", "sql-peft", "poet.gguf" or "poet-peft", with its own id.
LoraRequest Adapter(const std::string& file, int64_t id) {
  return {.lora_name = file, .lora_int_id = id, .lora_path = (kLoraOracles / file).string()};
}

struct Case {
  std::vector<int32_t> prompt_token_ids;
  std::optional<LoraRequest> lora;
  std::string expected_prefix;
  std::string label;
};

// The cases of greedy/<oracle>.json, each run with `lora`.
std::vector<Case> CasesOf(const std::string& oracle, const std::optional<LoraRequest>& lora) {
  const json file = ReadOracle(oracle);  // kept: a range over a temporary's member dangles
  std::vector<Case> cases;
  for (const json& c : file["cases"]) {
    cases.push_back({c["prompt_token_ids"], lora, c["expected_prefix"],
                     oracle + " '" + c["prompt"].get<std::string>() + "' with " +
                         (lora ? lora->lora_name : "no adapter")});
  }
  return cases;
}

// Submits every case at once (one batch from the first step), then steps until all finish and
// checks each output against its oracle prefix.
void ExpectOraclePrefixes(LLMEngine& engine, const std::vector<Case>& cases) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.max_tokens = 40;
  params.ignore_eos = true;
  auto validated = ValidatedSamplingParams::Validate(params);
  ASSERT_TRUE(validated.ok()) << validated.error();
  for (size_t i = 0; i < cases.size(); ++i) {
    const Status added = engine.AddRequest(std::to_string(i), cases[i].prompt_token_ids, *validated,
                                           {.lora_request = cases[i].lora});
    ASSERT_TRUE(added.ok()) << cases[i].label << ": " << added.message();
  }
  std::vector<std::optional<std::string>> texts(cases.size());
  while (engine.HasUnfinishedRequests()) {
    auto outputs = engine.Step();
    ASSERT_TRUE(outputs.ok()) << outputs.error();
    for (const RequestOutput& output : *outputs) {
      if (output.finished) texts[std::stoul(output.request_id)] = output.outputs[0].text;
    }
  }
  ASSERT_FALSE(cases.empty());
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(texts[i].has_value()) << cases[i].label << " did not finish";
    EXPECT_EQ(texts[i]->substr(0, cases[i].expected_prefix.size()), cases[i].expected_prefix)
        << cases[i].label << ": got '" << *texts[i] << "'";
  }
}

TEST(LoraOracleTest, BaseRunsAsWithoutLora) {
  LLM llm(LoraArgs(1));
  ExpectOraclePrefixes(llm.engine(), CasesOf("base", std::nullopt));
}

// Each adapter alone, in each form: the GGUF LoRA as llama.cpp converted it, and the PEFT
// directory (its q / k lora_B permuted for the GGUF base).
class LoraOracleFormTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LoraOracleFormTest, AdapterOutputStartsWithLlamaCppsPrefix) {
  const std::string file = GetParam();
  LLM llm(LoraArgs(1));
  ExpectOraclePrefixes(llm.engine(),
                       CasesOf(file.substr(0, file.find_first_of(".-")), Adapter(file, 7)));
}

INSTANTIATE_TEST_SUITE_P(Forms, LoraOracleFormTest,
                         ::testing::Values("sql.gguf", "sql-peft", "poet.gguf", "poet-peft"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& ch : name) {
                             if (ch == '.' || ch == '-') ch = '_';
                           }
                           return name;
                         });

// Every case of base, sql and poet, the adapters in both forms (four adapters), submitted together:
// one batch mixes them all.
std::vector<Case> AllCasesMixed() {
  std::vector<Case> cases = CasesOf("base", std::nullopt);
  int64_t id = 1;
  for (const char* file : {"sql.gguf", "poet-peft", "sql-peft", "poet.gguf"}) {
    const std::string name = file;
    std::vector<Case> more = CasesOf(name.substr(0, name.find_first_of(".-")), Adapter(file, id++));
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

TEST(LoraOracleTest, AllAdaptersAndTheBaseMixedInOneBatch) {
  LLM llm(LoraArgs(4));
  ExpectOraclePrefixes(llm.engine(), AllCasesMixed());
}

TEST(LoraOracleTest, MaxLorasOneHoldsAdaptersBackAndEveryRequestStillMatches) {
  LLM llm(LoraArgs(1));
  ExpectOraclePrefixes(llm.engine(), AllCasesMixed());
}

// Greedy token ids of every case, all submitted at once.
std::vector<std::vector<int32_t>> GreedyTokenIds(LLMEngine& engine,
                                                 const std::vector<Case>& cases) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.max_tokens = 40;
  params.ignore_eos = true;
  auto validated = ValidatedSamplingParams::Validate(params);
  EXPECT_TRUE(validated.ok());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_TRUE(engine
                    .AddRequest(std::to_string(i), cases[i].prompt_token_ids, *validated,
                                {.lora_request = cases[i].lora})
                    .ok());
  }
  return StepToFinishedTokenIds(engine, cases.size());
}

// A KV cache of a few blocks (requests preempted and recomputed) and a budget of 8 tokens a step
// (prompts prefilled in chunks) give every adapter's requests the same tokens.
TEST(LoraOracleTest, PreemptionAndChunkedPrefillKeepEveryAdaptersTokens) {
  const std::vector<Case> cases = AllCasesMixed();
  ASSERT_EQ(cases.size(), 30u);
  LLM reference(LoraArgs(4));
  const std::vector<std::vector<int32_t>> expected = GreedyTokenIds(reference.engine(), cases);
  EngineArgs args = LoraArgs(4);
  args.max_model_len = 64;
  args.max_num_batched_tokens = 8;
  args.kv_cache_memory_bytes = 12 * 16 * 3 * 2 * 128 * 4;  // 12 blocks of 16 tokens, 3 layers
  LLM constrained(args);
  const std::vector<std::vector<int32_t>> token_ids = GreedyTokenIds(constrained.engine(), cases);
  EXPECT_GT(constrained.engine().stats().num_preemptions, 0);
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(expected[i].size(), 40u) << cases[i].label;
    EXPECT_EQ(token_ids[i], expected[i]) << cases[i].label;
  }
}

TEST(LoraOracleTest, GenerateTakesOneAdapterForAllPromptsOrOnePerPrompt) {
  LLM llm(LoraArgs(2));
  SamplingParams params;
  params.temperature = 0.0f;
  params.max_tokens = 8;
  const std::vector<std::string> prompts = {"Once upon a time", "The little dog"};
  const std::vector<RequestOutput> one =
      llm.Generate(prompts, params, Adapter("sql.gguf", 1), false);
  const std::vector<RequestOutput> each =
      llm.Generate(prompts, {params, params}, {Adapter("sql.gguf", 1), std::nullopt}, false);
  const std::vector<RequestOutput> base = llm.Generate(prompts, params, false);
  ASSERT_EQ(one.size(), 2u);
  ASSERT_EQ(each.size(), 2u);
  EXPECT_EQ(each[0].outputs[0].token_ids, one[0].outputs[0].token_ids);
  EXPECT_EQ(each[1].outputs[0].token_ids, base[1].outputs[0].token_ids);
  EXPECT_NE(one[1].outputs[0].token_ids, base[1].outputs[0].token_ids);
  EXPECT_THAT(llm.engine().ListLoras(), ::testing::ElementsAre(1));
}

TEST(LoraOracleTest, AddRemoveAndListLoras) {
  LLM llm(LoraArgs(1));
  LLMEngine& engine = llm.engine();
  ASSERT_TRUE(engine.AddLora(Adapter("sql.gguf", 1)).ok());
  ASSERT_TRUE(engine.AddLora(Adapter("poet-peft", 2)).ok());
  EXPECT_THAT(engine.ListLoras(), ::testing::ElementsAre(2, 1));
  EXPECT_TRUE(engine.RemoveLora(1));
  EXPECT_FALSE(engine.RemoveLora(1));
  EXPECT_THAT(engine.ListLoras(), ::testing::ElementsAre(2));
  const Status missing = engine.AddLora(Adapter("no-such-adapter", 3));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.message(), ::testing::HasSubstr("no-such-adapter"));
}

// AsyncLLM (the server's engine): adapters added and listed from the calling thread, and a
// request streamed with one next to a base request.
TEST(LoraOracleTest, AsyncLlmRunsAdaptersThroughRequestOptions) {
  AsyncLLM engine(LoraArgs(2));
  ASSERT_TRUE(engine.AddLora(Adapter("poet-peft", 2)).ok());
  EXPECT_THAT(engine.ListLoras(), ::testing::ElementsAre(2));
  const json sql = ReadOracle("sql"), base = ReadOracle("base");
  SamplingParams params;
  params.temperature = 0.0f;
  params.max_tokens = 40;
  params.ignore_eos = true;
  auto with_sql =
      engine.Submit("sql", sql["cases"][0]["prompt_token_ids"].get<std::vector<int32_t>>(), params,
                    {.lora_request = Adapter("sql.gguf", 1)}, {});
  auto plain = engine.Submit(
      "base", base["cases"][0]["prompt_token_ids"].get<std::vector<int32_t>>(), params, {}, {});
  for (const auto& [stream, oracle] :
       {std::pair{with_sql.get(), &sql}, std::pair{plain.get(), &base}}) {
    std::optional<RequestOutput> last;
    while (auto output = stream->Next()) last = std::move(output);
    ASSERT_TRUE(last.has_value()) << stream->error();
    const std::string expected = (*oracle)["cases"][0]["expected_prefix"];
    EXPECT_EQ(last->outputs[0].text.substr(0, expected.size()), expected);
  }
  EXPECT_THAT(engine.ListLoras(), ::testing::ElementsAre(1, 2));
  EXPECT_TRUE(engine.RemoveLora(2));
}

// --lora-dtype auto is the model's dtype: f32 for the f32 oracle base (so its adapters run
// exactly), bf16 once --dtype makes the weights bf16; named dtypes obey, float16 stores bf16.
TEST(LoraOracleTest, LoraDtypeAutoIsTheModelsDtype) {
  ThreadPool pool({.num_threads = 1});
  auto loaded = LoadModelFromPath((kLoraOracles / "base.gguf").string(), {.pool = &pool});
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EngineArgs args = LoraArgs(1);
  EXPECT_EQ(LoraDtypeFor(args, *loaded), lora::LoraDtype::kFloat32);
  args.dtype = "bfloat16";
  EXPECT_EQ(LoraDtypeFor(args, *loaded), lora::LoraDtype::kBfloat16);
  args.lora_dtype = "float32";
  EXPECT_EQ(LoraDtypeFor(args, *loaded), lora::LoraDtype::kFloat32);
  args.dtype = "auto";
  for (const std::string name : {"bfloat16", "float16"}) {
    args.lora_dtype = name;
    EXPECT_EQ(LoraDtypeFor(args, *loaded), lora::LoraDtype::kBfloat16) << name;
  }
}

TEST(LoraOracleTest, AnAdapterWithoutEnableLoraIsVllmsError) {
  EngineArgs args = LoraArgs(1);
  args.enable_lora = false;
  LLM llm(args);
  auto validated = ValidatedSamplingParams::Validate(SamplingParams{});
  ASSERT_TRUE(validated.ok());
  const Status refused = llm.engine().AddRequest("0", std::vector<int32_t>{1, 403}, *validated,
                                                 {.lora_request = Adapter("sql.gguf", 1)});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("but LoRA is not enabled!"));
  EXPECT_FALSE(llm.engine().AddLora(Adapter("sql.gguf", 1)).ok());
  EXPECT_TRUE(llm.engine().ListLoras().empty());
}

TEST(LoraOracleTest, LoraArgumentsAreCheckedAsVllmChecksThem) {
  EngineArgs args = LoraArgs(2);
  args.max_lora_rank = 12;
  EXPECT_THROW(
      {
        try {
          LLM llm(args);
        } catch (const std::runtime_error& error) {
          EXPECT_THAT(error.what(), ::testing::HasSubstr("max_lora_rank (12) must be one of"));
          throw;
        }
      },
      std::runtime_error);
  args = LoraArgs(2);
  args.max_cpu_loras = 1;
  EXPECT_THROW(LLM{args}, std::runtime_error);
}

}  // namespace
}  // namespace vllm
