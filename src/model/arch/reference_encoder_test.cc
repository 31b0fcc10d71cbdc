// An independent check of the BERT-style encoders of arch/bert.cc: a naive forward pass in double
// precision written from the Hugging Face BertModel / XLMRobertaForSequenceClassification
// semantics (embeddings + LayerNorm, post-norm blocks, exact GELU, bidirectional attention per
// sequence, classifier dense + tanh + out_proj on the first token), over the tensors of a random
// GGUF. The model's hidden states must match it; the same weights as a GGUF file and as a
// Hugging Face directory must give bit-identical hidden states and scores; and a sequence's rows
// must be bit-identical alone and in a batch of others.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "formats/gguf_file.h"
#include "formats/safetensors_file.h"
#include "formats/safetensors_writer.h"
#include "kernels/ops.h"
#include "model/hf_export.h"
#include "model/layers/pooler.h"
#include "model/model.h"
#include "model/model_loader.h"
#include "model/pooling_config.h"
#include "model/random_model.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;
using Vec = std::vector<double>;

std::string BertVocab() { return std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-bert-bge.gguf"; }

// A random encoder of `shape` written as a GGUF file and exported as a Hugging Face directory.
// The directory goes with the test.
struct RandomEncoderFiles {
  fs::path dir, gguf, hf;
  RandomEncoderFiles() = default;
  RandomEncoderFiles(const RandomEncoderFiles&) = delete;
  RandomEncoderFiles& operator=(const RandomEncoderFiles&) = delete;
  ~RandomEncoderFiles() {
    std::error_code ignored;
    if (!dir.empty()) fs::remove_all(dir, ignored);
  }
};
// Fails the calling test (ASSERT_NO_FATAL_FAILURE) when writing or exporting fails.
void WriteEncoder(const std::string& shape, RandomEncoderFiles* files) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  files->dir = fs::path(::testing::TempDir()) /
               ("encoder_" + shape + "_" + test + "_" + std::to_string(::getpid()));
  fs::create_directories(files->dir);
  files->gguf = files->dir / "model.gguf";
  files->hf = files->dir / "hf";
  Status status = WriteRandomModel(
      {.shape = shape, .vocab_path = BertVocab(), .output_path = files->gguf.string(), .seed = 5});
  ASSERT_TRUE(status.ok()) << status.message();
  auto file = GgufFile::Open(files->gguf.string());
  ASSERT_TRUE(file.ok()) << file.error();
  status = WriteHfCheckpointFromGguf(**file, files->hf.string(), files->dir.string());
  ASSERT_TRUE(status.ok()) << status.message();
}

// A GGUF tensor in double, [rows][cols] (cols the contiguous dimension).
struct Matrix {
  int64_t rows = 0, cols = 0;
  Vec data;
  const double* row(int64_t r) const { return data.data() + r * cols; }
};
Matrix LoadTensor(const GgufFile& file, const std::string& name) {
  Matrix m;
  const GgufTensor* tensor = file.FindTensor(name);
  EXPECT_NE(tensor, nullptr) << name;
  if (tensor == nullptr) return m;
  m.cols = tensor->shape[0];
  m.rows = tensor->num_elements() / m.cols;
  std::vector<float> row(m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    kernels::DequantizeRow(tensor->type, tensor->data + r * (tensor->num_bytes / m.rows), m.cols,
                           row.data());
    m.data.insert(m.data.end(), row.begin(), row.end());
  }
  return m;
}

// nn.Linear: W x + b over each row of x: [n][in].
std::vector<Vec> Linear(const GgufFile& file, const std::string& name, const std::vector<Vec>& x) {
  const Matrix w = LoadTensor(file, name + ".weight");
  const Matrix b = LoadTensor(file, name + ".bias");
  std::vector<Vec> y;
  for (const Vec& row : x) {
    Vec out(w.rows);
    for (int64_t o = 0; o < w.rows; ++o) {
      double sum = b.data[o];
      for (int64_t i = 0; i < w.cols; ++i) sum += w.row(o)[i] * row[i];
      out[o] = sum;
    }
    y.push_back(out);
  }
  return y;
}

// nn.LayerNorm over each row.
void LayerNormRows(const GgufFile& file, const std::string& name, double eps, std::vector<Vec>* x) {
  const Matrix w = LoadTensor(file, name + ".weight");
  const Matrix b = LoadTensor(file, name + ".bias");
  for (Vec& row : *x) {
    double mean = 0.0, var = 0.0;
    for (double v : row) mean += v;
    mean /= row.size();
    for (double v : row) var += (v - mean) * (v - mean);
    var /= row.size();
    for (size_t i = 0; i < row.size(); ++i) {
      row[i] = (row[i] - mean) / std::sqrt(var + eps) * w.data[i] + b.data[i];
    }
  }
}

// BertModel's last hidden state for one sequence (token types all 0).
std::vector<Vec> ReferenceEncoder(const GgufFile& file, const std::vector<int32_t>& tokens) {
  const int64_t hidden = *file.GetInt("bert.embedding_length").value();
  const int64_t num_layers = *file.GetInt("bert.block_count").value();
  const int64_t num_heads = *file.GetInt("bert.attention.head_count").value();
  const double eps = *file.GetFloat("bert.attention.layer_norm_epsilon").value();
  const int64_t head_dim = hidden / num_heads;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const Matrix word = LoadTensor(file, "token_embd.weight");
  const Matrix position = LoadTensor(file, "position_embd.weight");
  const Matrix type = LoadTensor(file, "token_types.weight");
  std::vector<Vec> x(n, Vec(hidden));
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < hidden; ++i) {
      x[t][i] = word.row(tokens[t])[i] + position.row(t)[i] + type.row(0)[i];
    }
  }
  LayerNormRows(file, "token_embd_norm", eps, &x);
  for (int64_t l = 0; l < num_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const std::vector<Vec> q = Linear(file, p + "attn_q", x), k = Linear(file, p + "attn_k", x),
                           v = Linear(file, p + "attn_v", x);
    std::vector<Vec> context(n, Vec(hidden, 0.0));
    for (int64_t h = 0; h < num_heads; ++h) {
      for (int64_t t = 0; t < n; ++t) {
        Vec scores(n);
        double max = -1e300, sum = 0.0;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < head_dim; ++d)
            dot += q[t][h * head_dim + d] * k[j][h * head_dim + d];
          scores[j] = dot / std::sqrt(static_cast<double>(head_dim));
          max = std::max(max, scores[j]);
        }
        for (double& s : scores) sum += (s = std::exp(s - max));
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t d = 0; d < head_dim; ++d) {
            context[t][h * head_dim + d] += scores[j] / sum * v[j][h * head_dim + d];
          }
        }
      }
    }
    std::vector<Vec> attention = Linear(file, p + "attn_output", context);
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t i = 0; i < hidden; ++i) x[t][i] += attention[t][i];
    }
    LayerNormRows(file, p + "attn_output_norm", eps, &x);
    std::vector<Vec> up = Linear(file, p + "ffn_up", x);
    for (Vec& row : up) {
      for (double& value : row) value = 0.5 * value * (1.0 + std::erf(value / std::sqrt(2.0)));
    }
    std::vector<Vec> down = Linear(file, p + "ffn_down", up);
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t i = 0; i < hidden; ++i) x[t][i] += down[t][i];
    }
    LayerNormRows(file, p + "layer_output_norm", eps, &x);
  }
  return x;
}

// Packs sequences into one encoder batch (positions from 0, token types 0).
ForwardBatch PackSequences(const std::vector<std::vector<int32_t>>& sequences) {
  ForwardBatch batch;
  batch.query_start_loc = {0};
  for (const auto& tokens : sequences) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      batch.token_ids.push_back(tokens[i]);
      batch.positions.push_back(static_cast<int32_t>(i));
    }
    batch.query_start_loc.push_back(static_cast<int32_t>(batch.token_ids.size()));
    batch.seq_lens.push_back(static_cast<int32_t>(tokens.size()));
  }
  return batch;
}

struct LoadedEncoder {
  std::unique_ptr<ThreadPool> pool = std::make_unique<ThreadPool>(ThreadPool::Options{3});
  LoadedModel loaded;
};
std::unique_ptr<LoadedEncoder> Load(const fs::path& path) {
  auto encoder = std::make_unique<LoadedEncoder>();
  auto loaded = LoadModelFromPath(path.string(), {.pool = encoder->pool.get()});
  EXPECT_TRUE(loaded.ok()) << loaded.error();
  if (!loaded.ok()) return nullptr;
  encoder->loaded = std::move(*loaded);
  return encoder;
}

// Encoders read no KV cache; the interface takes one.
KvStorage& UnusedKv() {
  static std::unique_ptr<KvStorage> kv = [] {
    auto created =
        KvStorage::Create({.num_layers = 1, .num_blocks = 1, .num_kv_heads = 1, .head_dim = 1});
    return std::move(*created);
  }();
  return *kv;
}

std::vector<float> Hidden(Model& model, const ForwardBatch& batch) {
  std::vector<float> hidden(batch.num_tokens() * model.config().hidden_size);
  Status status = model.ForwardHidden(batch, UnusedKv(), hidden.data());
  EXPECT_TRUE(status.ok()) << status.message();
  return hidden;
}

const std::vector<std::vector<int32_t>> kSequences = {
    {101, 7592, 2088, 102},
    {101, 2023, 2003, 1037, 3231, 1997, 1996, 4372, 16044, 2099, 102},
    {101, 102},
    std::vector<int32_t>(40, 2000)};

TEST(ReferenceEncoderTest, BertMatchesDoubleReference) {
  RandomEncoderFiles files;
  ASSERT_NO_FATAL_FAILURE(WriteEncoder("bert-tiny", &files));
  auto file = GgufFile::Open(files.gguf.string());
  ASSERT_TRUE(file.ok());
  auto encoder = Load(files.gguf);
  ASSERT_NE(encoder, nullptr);
  Model& model = *encoder->loaded.model;
  EXPECT_TRUE(model.config().is_encoder);
  EXPECT_EQ(model.config().pooler.pooling_type, PoolingType::kCls);
  const ForwardBatch batch = PackSequences(kSequences);
  const std::vector<float> hidden = Hidden(model, batch);
  const int64_t width = model.config().hidden_size;
  for (size_t s = 0; s < kSequences.size(); ++s) {
    const std::vector<Vec> expected = ReferenceEncoder(**file, kSequences[s]);
    for (size_t t = 0; t < expected.size(); ++t) {
      for (int64_t i = 0; i < width; ++i) {
        ASSERT_NEAR(hidden[(batch.query_start_loc[s] + t) * width + i], expected[t][i], 2e-4)
            << "sequence " << s << " token " << t << " dim " << i;
      }
    }
  }
  // Refusals: an encoder has no logits, and tokens past its vocabulary are errors.
  std::vector<float> logits(1);
  EXPECT_FALSE(model.Forward(batch, UnusedKv(), logits.data()).ok());
  ForwardBatch bad = PackSequences({{101, 1 << 20}});
  std::vector<float> out(2 * width);
  EXPECT_FALSE(model.ForwardHidden(bad, UnusedKv(), out.data()).ok());
  bad = PackSequences({std::vector<int32_t>(129, 101)});  // past the 128 position rows
  out.resize(129 * width);
  EXPECT_FALSE(model.ForwardHidden(bad, UnusedKv(), out.data()).ok());
}

TEST(ReferenceEncoderTest, GgufAndHuggingFaceFormsAreBitIdentical) {
  RandomEncoderFiles files;
  ASSERT_NO_FATAL_FAILURE(WriteEncoder("bert-tiny-mean", &files));
  auto from_gguf = Load(files.gguf);
  auto from_hf = Load(files.hf);
  ASSERT_NE(from_gguf, nullptr);
  ASSERT_NE(from_hf, nullptr);
  EXPECT_EQ(from_hf->loaded.model->config().architecture, "bert");
  EXPECT_EQ(from_gguf->loaded.model->config().pooler.pooling_type, PoolingType::kMean);
  const ForwardBatch batch = PackSequences(kSequences);
  EXPECT_EQ(Hidden(*from_gguf->loaded.model, batch), Hidden(*from_hf->loaded.model, batch));
}

TEST(ReferenceEncoderTest, SentenceTransformersDirectoryFixesThePooler) {
  RandomEncoderFiles files;
  ASSERT_NO_FATAL_FAILURE(WriteEncoder("bert-tiny", &files));
  fs::create_directories(files.hf / "1_Pooling");
  std::ofstream(files.hf / "modules.json")
      << R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
             {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
             {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])";
  std::ofstream(files.hf / "1_Pooling" / "config.json") << R"({"pooling_mode_mean_tokens": true})";
  auto from_hf = Load(files.hf);
  ASSERT_NE(from_hf, nullptr);
  EXPECT_EQ(from_hf->loaded.model->config().pooler.pooling_type, PoolingType::kMean);
  EXPECT_TRUE(from_hf->loaded.model->config().pooler.normalize);
  // The GGUF file says CLS (bert.pooling_type 2).
  auto from_gguf = Load(files.gguf);
  ASSERT_NE(from_gguf, nullptr);
  EXPECT_EQ(from_gguf->loaded.model->config().pooler.pooling_type, PoolingType::kCls);
}

TEST(ReferenceEncoderTest, RerankerGgufAndXlmRobertaDirectoryScoreTheSame) {
  RandomEncoderFiles files;
  ASSERT_NO_FATAL_FAILURE(WriteEncoder("bert-reranker-tiny", &files));
  auto file = GgufFile::Open(files.gguf.string());
  ASSERT_TRUE(file.ok());
  auto from_gguf = Load(files.gguf);
  auto from_hf = Load(files.hf);
  ASSERT_NE(from_gguf, nullptr);
  ASSERT_NE(from_hf, nullptr);
  const ModelConfig& hf_config = from_hf->loaded.model->config();
  EXPECT_EQ(hf_config.architecture, "xlm-roberta");
  EXPECT_EQ(hf_config.position_offset, 2);
  EXPECT_EQ(hf_config.num_labels, 1);
  EXPECT_EQ(from_gguf->loaded.model->config().num_labels, 1);
  const ForwardBatch batch = PackSequences(kSequences);
  const std::vector<float> hidden = Hidden(*from_gguf->loaded.model, batch);
  EXPECT_EQ(hidden, Hidden(*from_hf->loaded.model, batch));
  // The classifier on each sequence's first token against the reference.
  const int64_t width = hf_config.hidden_size;
  for (size_t s = 0; s < kSequences.size(); ++s) {
    const std::vector<float> cls =
        PoolSequence(PoolingType::kCls, hidden.data() + batch.query_start_loc[s] * width,
                     kSequences[s].size(), width);
    float gguf_score = 0.0f, hf_score = 0.0f;
    ASSERT_TRUE(from_gguf->loaded.model->Classify(cls.data(), 1, &gguf_score).ok());
    ASSERT_TRUE(from_hf->loaded.model->Classify(cls.data(), 1, &hf_score).ok());
    EXPECT_EQ(gguf_score, hf_score);
    std::vector<Vec> first = {ReferenceEncoder(**file, kSequences[s])[0]};
    std::vector<Vec> dense = Linear(**file, "cls", first);
    for (double& value : dense[0]) value = std::tanh(value);
    EXPECT_NEAR(gguf_score, Linear(**file, "cls.output", dense)[0][0], 2e-4) << s;
  }
}

// A deterministic [rows, cols] f32 matrix (weights of magnitude up to 0.3).
std::vector<float> FixedValues(int64_t count, double phase) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = static_cast<float>(0.3 * std::sin(i * 0.7 + phase));
  return values;
}

// BertForSequenceClassification: the exported BertModel's tensors under "bert.", a pooler
// (dense + tanh over the first token) and a classifier over two labels, written by hand; its
// hidden states are the BertModel's and its scores the double-precision head over them.
TEST(ReferenceEncoderTest, BertForSequenceClassificationDirectory) {
  RandomEncoderFiles files;
  ASSERT_NO_FATAL_FAILURE(WriteEncoder("bert-tiny", &files));
  const fs::path classifier_dir = files.dir / "classifier";
  fs::create_directories(classifier_dir);
  for (const auto& entry : fs::directory_iterator(files.hf)) {
    // The tokenizer files; not the embedder's weights, config or sentence-transformers modules.
    if (entry.is_regular_file() && entry.path().filename() != "model.safetensors" &&
        entry.path().filename() != "config.json" && entry.path().filename() != "modules.json") {
      fs::copy_file(entry.path(), classifier_dir / entry.path().filename());
    }
  }
  auto body = SafetensorsFile::Open((files.hf / "model.safetensors").string());
  ASSERT_TRUE(body.ok()) << body.error();
  std::vector<SafetensorsTensor> tensors;
  for (SafetensorsTensor tensor : (*body)->tensors()) {
    if (tensor.name.starts_with("pooler.")) continue;
    tensor.name = "bert." + tensor.name;
    tensors.push_back(tensor);
  }
  const int64_t width = 64, num_labels = 2;
  const std::vector<float> pooler_weight = FixedValues(width * width, 0.1),
                           pooler_bias = FixedValues(width, 0.2),
                           classifier_weight = FixedValues(num_labels * width, 0.3),
                           classifier_bias = FixedValues(num_labels, 0.4);
  for (const auto& [name, values, rows] :
       {std::tuple{"bert.pooler.dense.weight", &pooler_weight, width},
        {"bert.pooler.dense.bias", &pooler_bias, int64_t{0}},
        {"classifier.weight", &classifier_weight, num_labels},
        {"classifier.bias", &classifier_bias, int64_t{0}}}) {
    const auto count = static_cast<int64_t>(values->size());
    tensors.push_back(
        {.name = name,
         .type = GgmlType::kF32,
         .shape = rows > 0 ? std::vector<int64_t>{rows, count / rows} : std::vector<int64_t>{count},
         .data = values->data(),
         .num_bytes = count * 4});
  }
  ASSERT_TRUE(WriteSafetensors((classifier_dir / "model.safetensors").string(), tensors).ok());
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.hf / "config.json"));
  config["architectures"] = {"BertForSequenceClassification"};
  config["id2label"] = {{"0", "negative"}, {"1", "positive"}};
  std::ofstream(classifier_dir / "config.json") << config.dump();

  auto bare = Load(files.hf);
  auto classifier = Load(classifier_dir);
  ASSERT_NE(bare, nullptr);
  ASSERT_NE(classifier, nullptr);
  Model& model = *classifier->loaded.model;
  EXPECT_EQ(model.config().num_labels, num_labels);
  EXPECT_EQ(model.config().id2label, (std::vector<std::string>{"negative", "positive"}));
  const ForwardBatch batch = PackSequences(kSequences);
  const std::vector<float> hidden = Hidden(model, batch);
  ASSERT_EQ(hidden, Hidden(*bare->loaded.model, batch));
  for (size_t s = 0; s < kSequences.size(); ++s) {
    const float* first = hidden.data() + batch.query_start_loc[s] * width;
    std::vector<float> scores(num_labels);
    ASSERT_TRUE(model.Classify(first, 1, scores.data()).ok());
    std::vector<double> pooled(width);
    for (int64_t o = 0; o < width; ++o) {
      double sum = pooler_bias[o];
      for (int64_t i = 0; i < width; ++i) sum += pooler_weight[o * width + i] * double{first[i]};
      pooled[o] = std::tanh(sum);
    }
    for (int64_t label = 0; label < num_labels; ++label) {
      double expected = classifier_bias[label];
      for (int64_t i = 0; i < width; ++i) {
        expected += classifier_weight[label * width + i] * pooled[i];
      }
      EXPECT_NEAR(scores[label], expected, 1e-4) << "sequence " << s << " label " << label;
    }
  }
}

TEST(ReferenceEncoderTest, SequenceIsBitIdenticalAloneAndInABatch) {
  RandomEncoderFiles files;
  ASSERT_NO_FATAL_FAILURE(WriteEncoder("bert-tiny", &files));
  auto encoder = Load(files.gguf);
  ASSERT_NE(encoder, nullptr);
  Model& model = *encoder->loaded.model;
  const int64_t width = model.config().hidden_size;
  std::vector<std::vector<int32_t>> mixed;
  for (int i = 0; i < 64; ++i) mixed.push_back(std::vector<int32_t>(1 + (i * 7) % 50, 1000 + i));
  mixed[37] = kSequences[1];
  const ForwardBatch batch = PackSequences(mixed);
  const std::vector<float> together = Hidden(model, batch);
  const std::vector<float> alone = Hidden(model, PackSequences({kSequences[1]}));
  const std::vector<float> row37(together.begin() + batch.query_start_loc[37] * width,
                                 together.begin() + batch.query_start_loc[38] * width);
  EXPECT_EQ(alone, row37);
}

TEST(PoolingConfigTest, ReadsSentenceTransformersModules) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("st_" + std::to_string(::getpid()));
  fs::create_directories(dir / "1_Pooling");
  std::ofstream(dir / "modules.json")
      << R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
             {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
             {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])";
  std::ofstream(dir / "1_Pooling" / "config.json")
      << R"({"word_embedding_dimension": 64, "pooling_mode_cls_token": false,
             "pooling_mode_mean_tokens": true})";
  PoolerConfig config;
  ASSERT_TRUE(ReadSentenceTransformersPooling(dir.string(), &config).ok());
  EXPECT_EQ(config.pooling_type, PoolingType::kMean);
  EXPECT_TRUE(config.normalize);
  std::ofstream(dir / "1_Pooling" / "config.json") << R"({"pooling_mode_max_tokens": true})";
  EXPECT_FALSE(ReadSentenceTransformersPooling(dir.string(), &config).ok());
  std::ofstream(dir / "modules.json") << "{not json";
  EXPECT_FALSE(ReadSentenceTransformersPooling(dir.string(), &config).ok());
  PoolerConfig untouched;
  EXPECT_TRUE(ReadSentenceTransformersPooling((dir / "absent").string(), &untouched).ok());
  EXPECT_EQ(untouched.pooling_type, PoolingType::kUnset);
}

TEST(PoolerTest, PoolsAndNormalizes) {
  const std::vector<float> hidden = {1, 2, 3, 4, 5, 6};  // [3 tokens, 2]
  EXPECT_EQ(PoolSequence(PoolingType::kCls, hidden.data(), 3, 2), (std::vector<float>{1, 2}));
  EXPECT_EQ(PoolSequence(PoolingType::kLast, hidden.data(), 3, 2), (std::vector<float>{5, 6}));
  EXPECT_EQ(PoolSequence(PoolingType::kMean, hidden.data(), 3, 2), (std::vector<float>{3, 4}));
  EXPECT_EQ(PoolSequence(PoolingType::kAll, hidden.data(), 3, 2), hidden);
  std::vector<float> v = {3, 4};
  NormalizeL2(v);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
  std::vector<float> logits = {0.0f, std::log(3.0f)};
  SoftmaxInPlace(logits);
  EXPECT_FLOAT_EQ(logits[1], 0.75f);
  std::vector<float> one = {0.0f};
  SigmoidInPlace(one);
  EXPECT_FLOAT_EQ(one[0], 0.5f);
  EXPECT_EQ(PoolingTypeFromName("mean").value(), PoolingType::kMean);
  EXPECT_FALSE(PoolingTypeFromName("max").ok());
  EXPECT_FALSE(PoolingTypeFromGguf(9).ok());
}

}  // namespace
}  // namespace vllm
