// Decoders as pooling models through the engine, on random-weight files the test writes (GGUF,
// and the Hugging Face directories exported from them): Qwen3-Embedding (last-token pooling,
// L2-normalized, Matryoshka), Qwen3-Reranker, both llama.cpp's GGUF with its rank head and
// vLLM's form (--hf-overrides turning the causal LM into Qwen3ForSequenceClassification from its
// "no" / "yes" head rows), and EmbeddingGemma (bidirectional, symmetric sliding windows, mean
// pooling, Dense modules). Outputs are checked against references computed here from the
// model's own hidden states and head (ForwardHidden / Forward), the GGUF and Hugging Face forms
// against each other, and bad configurations against their errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"
#include "engine/test_error_message.h"
#include "kernels/ops.h"
#include "model/hf_export.h"
#include "model/hf_overrides.h"
#include "model/layers/encoder_attention.h"
#include "model/layers/pooler.h"
#include "model/model_loader.h"
#include "model/random_model.h"
#include "tokenizer/tokenizer.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kQwen3RerankerOverrides =
    R"({"architectures": ["Qwen3ForSequenceClassification"], "classifier_from_token": ["no", "yes"],
        "is_original_qwen3_reranker": true})";

// A random model of `shape` (gpt-2's BPE vocabulary) as a GGUF file and as a Hugging Face
// directory with the Qwen3 tokenizer files; removed with the object.
struct RandomModelFiles {
  fs::path dir, gguf, hf;
  explicit RandomModelFiles(const std::string& shape) {
    dir = fs::path(::testing::TempDir()) /
          ("decoder_pooling_" + shape + "_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    gguf = dir / "model.gguf";
    hf = dir / "hf";
    Status status = WriteRandomModel(
        {.shape = shape,
         .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-gpt-2.gguf",
         .output_path = gguf.string(),
         .seed = 9});
    EXPECT_TRUE(status.ok()) << status.message();
    auto file = GgufFile::Open(gguf.string());
    EXPECT_TRUE(file.ok()) << file.error();
    if (!file.ok()) return;
    status = WriteHfCheckpointFromGguf(**file, hf.string(),
                                       std::string(VLLM_SHARED_DIR) + "/tokenizers/qwen3");
    EXPECT_TRUE(status.ok()) << status.message();
  }
  ~RandomModelFiles() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

EngineArgs Args(const fs::path& model, const std::string& hf_overrides = "") {
  EngineArgs args = TestArgs(model.string());
  args.hf_overrides = hf_overrides;
  return args;
}

// The model at `path` run straight over one sequence: the final-normed hidden state of its last
// token ([hidden]) and that token's logits ([vocab_size]; empty unless `with_logits`).
struct LastToken {
  std::vector<float> hidden, logits;
};
LastToken RunLastToken(const fs::path& path, const std::vector<int32_t>& tokens,
                       bool with_logits = false, const std::string& hf_overrides = "") {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto overrides = ParseHfOverrides(hf_overrides);
  EXPECT_TRUE(overrides.ok()) << overrides.error();
  auto loaded = LoadModelFromPath(path.string(), {.pool = &pool}, *overrides);
  EXPECT_TRUE(loaded.ok()) << loaded.error();
  if (!loaded.ok()) return {};
  Model& model = *loaded->model;
  const ModelConfig& config = model.config();
  const auto num_tokens = static_cast<int64_t>(tokens.size());
  const int64_t block_size = 16;
  const int64_t num_blocks = (num_tokens + block_size - 1) / block_size;
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = 1 + num_blocks,
                               .block_size = block_size,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  EXPECT_TRUE(kv.ok()) << kv.error();
  std::vector<std::vector<int32_t>> tables(1);
  for (int64_t b = 0; b < num_blocks; ++b) tables[0].push_back(static_cast<int32_t>(1 + b));
  ForwardBatch batch;
  EXPECT_TRUE(AppendSequence(tokens, 0, tables, block_size, batch).ok());
  batch.logits_indices = {static_cast<int32_t>(num_tokens - 1)};
  LastToken last;
  std::vector<float> hidden(num_tokens * config.hidden_size);  // [num_tokens, hidden]
  EXPECT_TRUE(model.ForwardHidden(batch, **kv, hidden.data()).ok());
  last.hidden.assign(hidden.end() - config.hidden_size, hidden.end());
  if (with_logits) {
    last.logits.resize(config.vocab_size);
    EXPECT_TRUE(model.Forward(batch, **kv, last.logits.data()).ok());
  }
  return last;
}

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += double{a[i]} * b[i];
  return sum;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Row `row` of a GGUF 2-D f32 tensor.
std::vector<float> TensorRow(const fs::path& gguf, const std::string& name, int64_t row) {
  auto file = GgufFile::Open(gguf.string());
  EXPECT_TRUE(file.ok());
  const GgufTensor* tensor = (*file)->FindTensor(name);
  EXPECT_NE(tensor, nullptr) << name;
  if (tensor == nullptr) return {};
  const int64_t cols = tensor->shape[0];
  std::vector<float> values(cols);
  kernels::DequantizeRow(tensor->type, tensor->data + row * (tensor->num_bytes / tensor->shape[1]),
                         cols, values.data());
  return values;
}

// The vocabulary id whose stored text is `piece`.
int32_t PieceId(LLM& llm, const std::string& piece) {
  const Tokenizer& tokenizer = llm.engine().tokenizer();
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.TokenToPiece(id) == piece) return id;
  }
  ADD_FAILURE() << "no token '" << piece << "'";
  return -1;
}

const std::vector<int32_t> kPrompt = {1212, 318, 257, 1332, 286, 262, 11525, 2746};

TEST(Qwen3EmbeddingTest, LastTokenNormalizedAndTheSameFromGgufAndHuggingFace) {
  RandomModelFiles files("qwen3-embedding-tiny");
  const std::vector<float> raw = RunLastToken(files.gguf, kPrompt).hidden;  // [hidden]
  std::vector<float> normalized = raw;
  NormalizeL2(normalized);
  LLM from_gguf(Args(files.gguf));  // pooling_type 3: --runner auto pools
  EXPECT_EQ(from_gguf.engine().pooling_tasks(),
            (std::vector<std::string>{"embed", "score", "encode"}));
  const std::vector<float> embedding = from_gguf.Embed({kPrompt})[0].outputs.embedding;
  EXPECT_EQ(embedding, normalized);
  // Qwen3ForCausalLM with sentence-transformers files (lasttoken, Normalize): vLLM's
  // --runner pooling.
  EXPECT_TRUE(fs::exists(files.hf / "1_Pooling" / "config.json"));
  EngineArgs hf_args = Args(files.hf);
  hf_args.runner = "pooling";
  LLM from_hf(hf_args);
  EXPECT_EQ(from_hf.Embed({kPrompt})[0].outputs.embedding, embedding);
  {  // As Qwen3Model (vLLM's pooling architecture), --runner auto pools.
    LLM as_model(Args(files.hf, R"({"architectures": ["Qwen3Model"]})"));
    EXPECT_EQ(as_model.Embed({kPrompt})[0].outputs.embedding, embedding);
  }
  // Matryoshka: the first `dimensions` values, renormalized, on both forms.
  PoolingParams params;
  params.dimensions = 32;
  std::vector<float> head(raw.begin(), raw.begin() + 32);
  NormalizeL2(head);
  EXPECT_EQ(from_gguf.Embed({kPrompt}, params)[0].outputs.embedding, head);
  EXPECT_EQ(from_hf.Embed({kPrompt}, params)[0].outputs.embedding, head);
  // Batch invariance: the same bits among other prompts.
  std::vector<LLM::PoolingPrompt> prompts;
  for (int i = 0; i < 12; ++i) prompts.push_back(std::vector<int32_t>(1 + (i * 7) % 40, 300 + i));
  prompts[5] = kPrompt;
  EXPECT_EQ(from_gguf.Embed(prompts)[5].outputs.embedding, embedding);
  // Bi-encoder score: the cosine similarity of the two embeddings.
  auto scores = from_gguf.Score({"a cat sat on the mat"}, {"a cat sat on the mat", "stock prices"});
  EXPECT_NEAR(scores[0].outputs.score, 1.0f, 1e-5);
  EXPECT_LT(scores[1].outputs.score, 0.9999f);
}

TEST(Qwen3EmbeddingTest, APlainCausalLmNeedsTheRunnerAndIsNotMatryoshka) {
  RandomModelFiles files("qwen3-tiny");
  LLM generator(Args(files.gguf));
  EXPECT_NE(ThrownMessage([&] { generator.Embed({kPrompt}); }).find("Embedding API"),
            std::string::npos);
  EngineArgs args = Args(files.gguf);
  args.runner = "pooling";
  LLM embedder(args);  // vLLM's default for a decoder: LAST pooling, normalized
  LastToken reference = RunLastToken(files.gguf, kPrompt);
  NormalizeL2(reference.hidden);
  EXPECT_EQ(embedder.Embed({kPrompt})[0].outputs.embedding, reference.hidden);
  PoolingParams params;
  params.dimensions = 32;
  EXPECT_NE(ThrownMessage([&] {
              embedder.Embed({kPrompt}, params);
            }).find("does not support matryoshka representation"),
            std::string::npos);
}

TEST(Qwen3RerankerTest, LlamaCppRankHeadScoresSigmoidOfYesMinusNo) {
  RandomModelFiles files("qwen3-reranker-tiny");
  LLM from_gguf(Args(files.gguf));  // pooling_type 4 with cls.output: a classifier
  EXPECT_EQ(from_gguf.engine().model_config().num_labels, 1);
  const LastToken last = RunLastToken(files.gguf, kPrompt);
  const std::vector<float> yes = TensorRow(files.gguf, "cls.output.weight", 0);
  const std::vector<float> no = TensorRow(files.gguf, "cls.output.weight", 1);
  const double expected = Sigmoid(Dot(yes, last.hidden) - Dot(no, last.hidden));
  const float probability = from_gguf.Classify({kPrompt})[0].outputs.probs.at(0);
  EXPECT_NEAR(probability, expected, 1e-5);
  // The exported Qwen3ForSequenceClassification (one score row, yes - no) scores the same.
  LLM from_hf(Args(files.hf));
  EXPECT_EQ(from_hf.Classify({kPrompt})[0].outputs.probs, (std::vector<float>{probability}));
  // /score's cross-encoder path: the pair's tokens as the tokenizer joins them.
  const Tokenizer& tokenizer = from_gguf.engine().tokenizer();
  const std::vector<int32_t> pair = tokenizer.EncodePair("what is a cat", "a small animal").ids;
  auto scores = from_gguf.Score({"what is a cat"}, {"a small animal", "stock prices fell"});
  EXPECT_EQ(scores[0].outputs.score, from_gguf.Classify({pair})[0].outputs.probs.at(0));
  EXPECT_NE(scores[0].outputs.score, scores[1].outputs.score);
}

TEST(Qwen3RerankerTest, HfOverridesTurnTheCausalLmIntoTheYesNoClassifier) {
  RandomModelFiles files("qwen3-tiny");
  for (const fs::path& path : {files.gguf, files.hf}) {
    LLM causal(Args(path));
    const int32_t yes = PieceId(causal, "yes");
    const int32_t no = PieceId(causal, "no");
    const LastToken last = RunLastToken(path, kPrompt, /*with_logits=*/true);
    const double expected = Sigmoid(double{last.logits[yes]} - last.logits[no]);
    LLM reranker(Args(path, kQwen3RerankerOverrides));  // --runner auto: pooling
    EXPECT_EQ(reranker.engine().pooling_tasks(),
              (std::vector<std::string>{"classify", "score", "encode"}));
    EXPECT_NEAR(reranker.Classify({kPrompt})[0].outputs.probs.at(0), expected, 1e-5) << path;
    auto scores = reranker.Score({"query"}, {"document one", "document two"});
    ASSERT_EQ(scores.size(), 2u);
    EXPECT_GT(scores[0].outputs.score, 0.0f);
    EXPECT_LT(scores[0].outputs.score, 1.0f);
  }
}

TEST(Qwen3RerankerTest, BadOverridesAreRefusedClearly) {
  RandomModelFiles files("qwen3-tiny");
  auto message = [&](const std::string& overrides) {
    return ThrownMessage([&] { LLM llm(Args(files.gguf, overrides)); });
  };
  EXPECT_NE(message(R"({"num_labels": 3})").find("key 'num_labels' has no GGUF metadata twin"),
            std::string::npos);
  EXPECT_NE(message("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(message(R"({"classifier_from_token": ["yes"], "is_original_qwen3_reranker": true})")
                .find("two tokens"),
            std::string::npos);
  EXPECT_NE(message(R"({"classifier_from_token": ["no-such-token-here"]})")
                .find("'no-such-token-here' is not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(message(R"({"architectures": ["LlamaForCausalLM"]})")
                .find("is not one of the GGUF file's qwen3 models"),
            std::string::npos);
  EXPECT_NE(message(R"({"matryoshka_dimensions": [0]})").find("positive integers"),
            std::string::npos);
  // An architecture that builds no classifier from the tokens says so.
  RandomModelFiles phi3("phi3-tiny");
  EXPECT_NE(ThrownMessage([&] {
              LLM llm(Args(phi3.gguf, R"({"classifier_from_token": ["yes"]})"));
            }).find("classifier_from_token is not supported for architecture phi3"),
            std::string::npos);
}

// W: [rows, cols] of a GGUF 2-D tensor (ggml shape {cols, rows}) times x: [cols], in double.
std::vector<double> MatVec(const fs::path& gguf, const std::string& name,
                           const std::vector<double>& x) {
  auto file = GgufFile::Open(gguf.string());
  EXPECT_TRUE(file.ok());
  const GgufTensor* tensor = (*file)->FindTensor(name);
  EXPECT_NE(tensor, nullptr) << name;
  if (tensor == nullptr) return {};
  const int64_t cols = tensor->shape[0], rows = tensor->shape[1];
  EXPECT_EQ(cols, static_cast<int64_t>(x.size()));
  std::vector<double> y(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row = TensorRow(gguf, name, r);
    for (int64_t c = 0; c < cols; ++c) y[r] += double{row[c]} * x[c];
  }
  return y;
}

// The final-normed hidden states of every token of one prompt, [num_tokens][hidden].
std::vector<std::vector<float>> AllHidden(const fs::path& path,
                                          const std::vector<int32_t>& tokens) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto loaded = LoadModelFromPath(path.string(), {.pool = &pool});
  EXPECT_TRUE(loaded.ok()) << loaded.error();
  if (!loaded.ok()) return {};
  const ModelConfig& config = loaded->model->config();
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = 1 + 8,
                               .block_size = 16,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  EXPECT_TRUE(kv.ok());
  std::vector<std::vector<int32_t>> tables = {{1, 2, 3, 4, 5, 6, 7, 8}};
  ForwardBatch batch;
  EXPECT_TRUE(AppendSequence(tokens, 0, tables, 16, batch).ok());
  std::vector<float> hidden(tokens.size() * config.hidden_size);
  EXPECT_TRUE(loaded->model->ForwardHidden(batch, **kv, hidden.data()).ok());
  std::vector<std::vector<float>> rows;
  for (size_t t = 0; t < tokens.size(); ++t) {
    rows.emplace_back(hidden.begin() + t * config.hidden_size,
                      hidden.begin() + (t + 1) * config.hidden_size);
  }
  return rows;
}

TEST(EmbeddingGemmaTest, BidirectionalMeanPooledDenseNormalizedFromGgufAndHuggingFace) {
  RandomModelFiles files("embeddinggemma-tiny");
  // 20 tokens: longer than the local layers' window of 4 positions either side.
  std::vector<int32_t> prompt;
  for (int i = 0; i < 20; ++i) prompt.push_back(100 + 37 * i);
  // Bidirectional: the first token's state depends on the last token.
  const std::vector<std::vector<float>> hidden = AllHidden(files.gguf, prompt);
  std::vector<int32_t> changed = prompt;
  changed.back() = 999;
  EXPECT_NE(AllHidden(files.gguf, changed)[0], hidden[0]);
  // Reference: mean of the hidden states → dense_2 → dense_3 → L2 normalization.
  std::vector<double> mean(hidden[0].size(), 0.0);
  for (const auto& row : hidden) {
    for (size_t i = 0; i < row.size(); ++i) mean[i] += row[i] / hidden.size();
  }
  std::vector<double> projected =
      MatVec(files.gguf, "dense_3.weight", MatVec(files.gguf, "dense_2.weight", mean));
  double norm = 0.0;
  for (double x : projected) norm += x * x;
  norm = std::sqrt(norm);

  LLM from_gguf(Args(files.gguf));  // bidirectional: --runner auto pools
  const std::vector<float> embedding = from_gguf.Embed({prompt})[0].outputs.embedding;
  ASSERT_EQ(embedding.size(), projected.size());
  for (size_t i = 0; i < embedding.size(); ++i) {
    EXPECT_NEAR(embedding[i], projected[i] / norm, 1e-5) << i;
  }
  // The Hugging Face form (Gemma3TextModel, use_bidirectional_attention, sentence-transformers
  // Pooling (mean), 2_Dense, 3_Dense, Normalize).
  EXPECT_TRUE(fs::exists(files.hf / "2_Dense" / "model.safetensors"));
  LLM from_hf(Args(files.hf));
  const std::vector<float> from_dir = from_hf.Embed({prompt})[0].outputs.embedding;
  ASSERT_EQ(from_dir.size(), embedding.size());
  for (size_t i = 0; i < embedding.size(); ++i) EXPECT_NEAR(from_dir[i], embedding[i], 1e-5);
  // Batch invariance among other prompts.
  std::vector<LLM::PoolingPrompt> prompts;
  for (int i = 0; i < 9; ++i) prompts.push_back(std::vector<int32_t>(1 + (i * 5) % 30, 200 + i));
  prompts[4] = prompt;
  EXPECT_EQ(from_gguf.Embed(prompts)[4].outputs.embedding, embedding);
  // Not Matryoshka unless the config says so; never a generator.
  PoolingParams params;
  params.dimensions = 64;
  EXPECT_NE(ThrownMessage([&] { from_gguf.Embed({prompt}, params); }).find("matryoshka"),
            std::string::npos);
  EngineArgs generate = Args(files.gguf);
  generate.runner = "generate";
  EXPECT_NE(ThrownMessage([&] { LLM llm(generate); }).find("attends bidirectionally"),
            std::string::npos);
}

// The symmetric window of bidirectional sliding-window layers: token t sees |t - j| <= W of its
// own sequence, against a direct softmax over those keys.
class EncoderAttentionWindowTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(EncoderAttentionWindowTest, WindowIsSymmetric) {
  const int64_t head_dim = GetParam(), num_heads = 2, window = 3;
  const std::vector<int32_t> query_start_loc = {0, 21, 26};  // two sequences, 21 and 5 tokens
  const int64_t num_tokens = 26;
  std::vector<float> q(num_tokens * num_heads * head_dim), k(num_tokens * head_dim),
      v(num_tokens * head_dim);
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.37f * i);
  for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.23f * i);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.11f * i + 1.0f);
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  std::vector<float> out(q.size());
  EncoderAttention(query_start_loc, q.data(), k.data(), v.data(),
                   {.num_heads = num_heads,
                    .num_kv_heads = 1,
                    .head_dim = head_dim,
                    .scale = 0.5f,
                    .window = window},
                   pool, out.data());
  for (int64_t s = 0; s < 2; ++s) {
    for (int64_t t = query_start_loc[s]; t < query_start_loc[s + 1]; ++t) {
      for (int64_t h = 0; h < num_heads; ++h) {
        const float* query = q.data() + (t * num_heads + h) * head_dim;
        std::vector<double> weights;
        const int64_t first = std::max<int64_t>(query_start_loc[s], t - window);
        const int64_t last = std::min<int64_t>(query_start_loc[s + 1] - 1, t + window);
        double max_score = -1e30, sum = 0.0;
        for (int64_t j = first; j <= last; ++j) {
          double score = 0.0;
          for (int64_t d = 0; d < head_dim; ++d) score += double{query[d]} * k[j * head_dim + d];
          weights.push_back(score * 0.5);
          max_score = std::max(max_score, weights.back());
        }
        for (double& w : weights) sum += (w = std::exp(w - max_score));
        for (int64_t d = 0; d < head_dim; ++d) {
          double expected = 0.0;
          for (int64_t j = first; j <= last; ++j) {
            expected += weights[j - first] / sum * v[j * head_dim + d];
          }
          EXPECT_NEAR(out[(t * num_heads + h) * head_dim + d], expected, 1e-5) << t << " " << h;
        }
      }
    }
  }
}

// Head sizes of the tiled and of the vectorized whole-sequence attention paths.
INSTANTIATE_TEST_SUITE_P(HeadDims, EncoderAttentionWindowTest, ::testing::Values(8, 32, 64, 256));

}  // namespace
}  // namespace vllm
