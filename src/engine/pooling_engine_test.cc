// Pooling through the engine: LLM::Embed / Classify / Score / Encode on random-weight encoders
// the test writes (bert-tiny, bert-reranker-tiny) and on the real stories260K decoder as a
// LAST-pooling embedder: output shapes, normalization, Matryoshka truncation, prompt
// truncation, batch invariance (a prompt's embedding is bit-identical alone and among 64 mixed
// prompts), vLLM's Matryoshka rule (dimensions only on models that say they support them), and
// vLLM's refusals when the model does not serve a task.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/temp_test_dir.h"
#include "engine/test_engine_args.h"
#include "engine/test_error_message.h"
#include "model/layers/pooler.h"
#include "model/random_model.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

// The files of this test program, removed when it exits.
const TempTestDir& Files() {
  static const TempTestDir dir("pooling_engine_test");
  return dir;
}

std::string WriteEncoder(const std::string& shape) {
  const std::string path = Files().File(shape + ".gguf");
  Status status = WriteRandomModel(
      {.shape = shape,
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-bert-bge.gguf",
       .output_path = path,
       .seed = 3});
  EXPECT_TRUE(status.ok()) << status.message();
  return path;
}

double Norm(const std::vector<float>& v) {
  double sum = 0.0;
  for (float x : v) sum += double{x} * x;
  return std::sqrt(sum);
}

// The message of the std::invalid_argument `fn` throws; empty when it throws none.
template <typename Fn>
std::string InvalidArgumentMessage(Fn fn) {
  return ThrownMessage<std::invalid_argument>(fn);
}

class EncoderEmbeddingTest : public ::testing::Test {
 protected:
  // Marked Matryoshka (--hf-overrides) so that `dimensions` truncates it.
  static void SetUpTestSuite() {
    EngineArgs args = TestArgs(WriteEncoder("bert-tiny"));
    args.hf_overrides = R"({"is_matryoshka": true})";
    llm_ = new LLM(args);
  }
  static void TearDownTestSuite() { delete llm_; }
  static LLM* llm_;
};
LLM* EncoderEmbeddingTest::llm_ = nullptr;

TEST_F(EncoderEmbeddingTest, EmbeddingsAreUnitVectorsOfTheHiddenSize) {
  auto outputs = llm_->Embed({"hello world", "a somewhat longer sentence to embed"});
  ASSERT_EQ(outputs.size(), 2u);
  for (const auto& output : outputs) {
    EXPECT_TRUE(output.finished);
    EXPECT_FALSE(output.prompt_token_ids.empty());
    ASSERT_EQ(output.outputs.embedding.size(), 64u);
    EXPECT_NEAR(Norm(output.outputs.embedding), 1.0, 1e-5);
  }
  EXPECT_NE(outputs[0].outputs.embedding, outputs[1].outputs.embedding);
  // Token ids in, the same embedding out.
  auto from_ids = llm_->Embed({outputs[0].prompt_token_ids});
  EXPECT_EQ(from_ids[0].outputs.embedding, outputs[0].outputs.embedding);
}

TEST_F(EncoderEmbeddingTest, EncodeIsTheRawPoolerOutputAndMatryoshkaRenormalizes) {
  auto raw = llm_->Encode({"hello world"});
  ASSERT_EQ(raw[0].outputs.data.size(), 64u);
  EXPECT_GT(std::abs(Norm(raw[0].outputs.data) - 1.0), 1e-3);  // not normalized
  std::vector<float> expected(raw[0].outputs.data);
  NormalizeL2(expected);
  EXPECT_EQ(llm_->Embed({"hello world"})[0].outputs.embedding, expected);
  PoolingParams matryoshka;
  matryoshka.dimensions = 16;
  auto truncated = llm_->Embed({"hello world"}, matryoshka);
  std::vector<float> first16(raw[0].outputs.data.begin(), raw[0].outputs.data.begin() + 16);
  NormalizeL2(first16);
  EXPECT_EQ(truncated[0].outputs.embedding, first16);
  PoolingParams unnormalized;
  unnormalized.normalize = false;
  EXPECT_EQ(llm_->Embed({"hello world"}, unnormalized)[0].outputs.embedding, raw[0].outputs.data);
  matryoshka.dimensions = 65;
  EXPECT_NE(InvalidArgumentMessage([&] { llm_->Embed({"hello world"}, matryoshka); }), "");
  matryoshka.dimensions = 0;
  EXPECT_EQ(InvalidArgumentMessage([&] { llm_->Embed({"hello world"}, matryoshka); }),
            "Dimensions must be greater than 0");
}

// vLLM's rule: `dimensions` only on Matryoshka models, and only among their
// matryoshka_dimensions when the config lists them.
TEST(MatryoshkaTest, DimensionsNeedAMatryoshkaModel) {
  const std::string encoder = WriteEncoder("bert-tiny");
  PoolingParams params;
  params.dimensions = 16;
  {
    LLM plain(TestArgs(encoder));
    EXPECT_EQ(InvalidArgumentMessage([&] { plain.Embed({"hello world"}, params); }),
              "Model \"" + encoder +
                  "\" does not support matryoshka representation, changing output dimensions "
                  "will lead to poor results.");
    EXPECT_EQ(plain.Embed({"hello world"})[0].outputs.embedding.size(), 64u);
  }
  EngineArgs args = TestArgs(encoder);
  args.hf_overrides = R"({"matryoshka_dimensions": [16, 32]})";
  LLM listed(args);
  EXPECT_EQ(listed.Embed({"hello world"}, params)[0].outputs.embedding.size(), 16u);
  params.dimensions = 20;
  EXPECT_EQ(InvalidArgumentMessage([&] { listed.Embed({"hello world"}, params); }),
            "Model \"" + encoder +
                "\" only supports [16, 32] matryoshka dimensions, use other output dimensions "
                "will lead to poor results.");
}

TEST_F(EncoderEmbeddingTest, TruncatesOrRefusesLongPrompts) {
  const std::vector<int32_t> long_prompt(200, 2000);  // the model has 128 positions
  EXPECT_NE(InvalidArgumentMessage([&] {
              llm_->Embed({long_prompt});
            }).find("maximum context length is 128"),
            std::string::npos);
  PoolingParams params;
  params.truncate_prompt_tokens = 5;
  std::vector<int32_t> prompt = {101, 1, 2, 3, 4, 5, 6, 102};
  auto outputs = llm_->Embed({prompt}, params);
  EXPECT_EQ(outputs[0].prompt_token_ids, (std::vector<int32_t>{3, 4, 5, 6, 102}));
  EXPECT_EQ(outputs[0].outputs.embedding,
            llm_->Embed({std::vector<int32_t>{3, 4, 5, 6, 102}})[0].outputs.embedding);
  params.truncate_prompt_tokens = -1;
  EXPECT_EQ(llm_->Embed({long_prompt}, params)[0].prompt_token_ids.size(), 128u);
  params.truncate_prompt_tokens = 129;
  EXPECT_NE(InvalidArgumentMessage([&] {
              llm_->Embed({long_prompt}, params);
            }).find("is greater than max_model_len (128)"),
            std::string::npos);
}

TEST_F(EncoderEmbeddingTest, EmbeddingIsBitIdenticalAloneAndAmong64MixedPrompts) {
  const std::vector<int32_t> probe = {101, 7592, 2088, 2003, 1037, 3231, 102};
  const std::vector<float> alone = llm_->Embed({probe})[0].outputs.embedding;
  std::vector<LLM::PoolingPrompt> prompts;
  for (int i = 0; i < 64; ++i)
    prompts.push_back(std::vector<int32_t>(1 + (i * 13) % 120, 1000 + i));
  prompts[41] = probe;
  auto outputs = llm_->Embed(prompts);
  EXPECT_EQ(outputs[41].outputs.embedding, alone);
  EXPECT_EQ(outputs[63].outputs.embedding, llm_->Embed({prompts[63]})[0].outputs.embedding);
}

TEST_F(EncoderEmbeddingTest, BiEncoderScoreIsCosineSimilarity) {
  auto scores = llm_->Score({"the same text"}, {"the same text", "something else entirely"});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_NEAR(scores[0].outputs.score, 1.0f, 1e-5);
  EXPECT_LT(scores[1].outputs.score, 0.9999f);
  EXPECT_EQ(InvalidArgumentMessage([&] {
              llm_->Score({"a", "b"}, {"c", "d", "e"});
            }),
            "Input lengths must be either 1:1, 1:N or N:N");
}

TEST_F(EncoderEmbeddingTest, RefusesTasksTheModelDoesNotServe) {
  EXPECT_EQ(InvalidArgumentMessage([&] { llm_->Classify({"hello"}); }),
            "Classification API is not supported by this model. Try converting the model using "
            "`--convert classify`.");
  EXPECT_EQ(InvalidArgumentMessage([&] { llm_->Generate({"hello"}, Greedy(4), false); }),
            "LLM.generate() is only supported for generative models. Try passing `--runner "
            "generate` to use the model as a generative model.");
}

TEST(PoolingRunnerTest, RunnerAndConvertFlagsAreChecked) {
  const std::string encoder = WriteEncoder("bert-tiny");
  EngineArgs args = TestArgs(encoder);
  args.runner = "generate";
  EXPECT_THROW(LLM{args}, std::runtime_error);
  args.runner = "pooling";
  args.convert = "classify";  // bert-tiny has no classification head
  EXPECT_THROW(LLM{args}, std::runtime_error);
  args.convert = "reward";
  EXPECT_THROW(LLM{args}, std::runtime_error);
}

TEST(RerankerTest, ClassifiesAndScoresPairs) {
  LLM llm(TestArgs(WriteEncoder("bert-reranker-tiny")));
  auto probs = llm.Classify({"hello world"});
  ASSERT_EQ(probs[0].outputs.probs.size(), 1u);
  const float p = probs[0].outputs.probs[0];
  EXPECT_GT(p, 0.0f);
  EXPECT_LT(p, 1.0f);
  PoolingParams raw;
  raw.use_activation = false;
  const float logit = llm.Classify({"hello world"}, raw)[0].outputs.probs[0];
  EXPECT_FLOAT_EQ(1.0f / (1.0f + std::exp(-logit)), p);
  auto scores = llm.Score({"what is a panda?"}, {"a bear of china", "hello"});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_NE(scores[0].outputs.score, scores[1].outputs.score);
  for (const auto& score : scores) {
    EXPECT_GT(score.outputs.score, 0.0f);
    EXPECT_LT(score.outputs.score, 1.0f);
  }
  EXPECT_EQ(InvalidArgumentMessage([&] { llm.Embed({"hello"}); }),
            "Embedding API is not supported by this model. Try converting the model using "
            "`--convert embed`.");
}

TEST(DecoderEmbeddingTest, GenerateModelsRefusePoolingAndPoolingRunnersEmbedTheLastToken) {
  LLM generator(StoriesArgs());
  EXPECT_EQ(InvalidArgumentMessage([&] { generator.Embed({"Once upon a time"}); }),
            "Embedding API is not supported by this model. Try converting the model using "
            "`--convert embed`.");
  EXPECT_NE(InvalidArgumentMessage([&] {
              generator.Encode({"Once upon a time"});
            }).find("LLM.encode() is only supported for pooling models"),
            std::string::npos);
  EngineArgs args = StoriesArgs();
  args.runner = "pooling";
  LLM embedder(args);
  const std::vector<float> alone = embedder.Embed({"Once upon a time"})[0].outputs.embedding;
  ASSERT_EQ(alone.size(), 64u);
  EXPECT_NEAR(Norm(alone), 1.0, 1e-5);
  std::vector<LLM::PoolingPrompt> prompts = {"There was a dog", "Once upon a time",
                                             "The sun was shining on the big red ball"};
  auto outputs = embedder.Embed(prompts);
  EXPECT_EQ(outputs[1].outputs.embedding, alone);
  // A prompt whose prefix another request already computed is pooled from all its positions.
  auto again = embedder.Embed({"Once upon a time"});
  EXPECT_EQ(again[0].outputs.embedding, alone);
}

}  // namespace
}  // namespace vllm
