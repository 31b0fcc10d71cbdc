#include "model/layers/pooling_decoder.h"

#include "model/weight_loader.h"

namespace vllm {
namespace {

// Row `row` of a 2-D tensor of ggml shape {hidden, num_rows} in f32.
Expected<std::vector<float>> TensorRow(const GgufTensor& tensor, int64_t row, int64_t hidden) {
  if (tensor.shape.size() != 2 || tensor.shape[0] != hidden) {
    return Error{"tensor '" + tensor.name + "' must have rows of " + std::to_string(hidden) +
                 " values"};
  }
  if (row < 0 || row >= tensor.shape[1]) {
    return Error{"row " + std::to_string(row) + " is outside tensor '" + tensor.name + "'"};
  }
  const int64_t row_bytes = tensor.num_bytes / tensor.shape[1];
  std::vector<float> values(hidden);
  kernels::DequantizeRow(tensor.type, tensor.data + row * row_bytes, hidden, values.data());
  return values;
}

// [a - b] over equal-length rows.
std::vector<float> Difference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] - b[i];
  return out;
}

// The head rows the files give (see the header); empty when none.
Expected<std::vector<std::vector<float>>> HeadRows(const TensorSource& source,
                                                   const ModelConfig& config) {
  const int64_t hidden = config.hidden_size;
  std::vector<std::vector<float>> rows;
  const PoolerConfig& pooler = config.pooler;
  if (!pooler.classifier_token_ids.empty()) {
    const GgufTensor* head = source.Find("output.weight");
    if (head == nullptr) head = source.Find("token_embd.weight");
    if (head == nullptr) return Error{"classifier_from_token needs the model's output head"};
    for (int32_t id : pooler.classifier_token_ids) {
      auto row = TensorRow(*head, id, hidden);
      if (!row) return Error{"classifier_from_token: " + row.error()};
      rows.push_back(std::move(*row));
    }
    if (pooler.is_original_qwen3_reranker) rows = {Difference(rows[1], rows[0])};
    return rows;
  }
  const GgufTensor* classifier = source.Find("cls.output.weight");
  if (classifier == nullptr) return rows;
  if (source.Find("cls.output.bias") != nullptr) {
    return Error{"cls.output.bias: a biased decoder classifier is not supported"};
  }
  if (classifier->shape.size() != 2) return Error{"cls.output.weight must be 2-D"};
  for (int64_t r = 0; r < classifier->shape[1]; ++r) {
    auto row = TensorRow(*classifier, r, hidden);
    if (!row) return Error{row.error()};
    rows.push_back(std::move(*row));
  }
  if (config.id2label == std::vector<std::string>{"yes", "no"}) {
    rows = {Difference(rows[0], rows[1])};
  } else if (config.id2label == std::vector<std::string>{"no", "yes"}) {
    rows = {Difference(rows[1], rows[0])};
  }
  return rows;
}

// The Dense modules dense_<k>.weight, k = 1 .. 9 in order: widths chain from hidden_size back
// to it.
Expected<std::vector<std::unique_ptr<kernels::LinearWeight>>> DenseModules(
    const TensorSource& source, int64_t hidden) {
  WeightLoader loader(source);
  std::vector<std::unique_ptr<kernels::LinearWeight>> modules;
  int64_t width = hidden;  // the previous module's output
  for (int k = 1; k <= 9; ++k) {
    const std::string name = "dense_" + std::to_string(k) + ".weight";
    const GgufTensor* tensor = source.Find(name);
    if (tensor == nullptr) continue;
    if (source.Find("dense_" + std::to_string(k) + ".bias") != nullptr) {
      return Error{"Dense module " + name + ": a bias is not supported"};
    }
    if (tensor->shape.size() != 2 || tensor->shape[0] != width) {
      return Error{"Dense module " + name + " must take " + std::to_string(width) + " inputs"};
    }
    auto linear = loader.Linear(name, tensor->shape[1], width);
    if (!linear) return Error{linear.error()};
    modules.push_back(std::move(*linear));
    width = tensor->shape[1];
  }
  if (width != hidden) {
    return Error{"the last Dense module must give " + std::to_string(hidden) + " values"};
  }
  return modules;
}

}  // namespace

Expected<std::unique_ptr<Model>> PoolingDecoder::Wrap(const TensorSource& source,
                                                      std::unique_ptr<Model> body,
                                                      ThreadPool& pool) {
  auto rows = HeadRows(source, body->config());
  if (!rows) return Error{rows.error()};
  auto dense = DenseModules(source, body->config().hidden_size);
  if (!dense) return Error{dense.error()};
  if (rows->empty() && dense->empty()) return body;
  std::unique_ptr<PoolingDecoder> model(new PoolingDecoder(std::move(body), pool));
  for (const std::vector<float>& row : *rows) {
    model->rows_.insert(model->rows_.end(), row.begin(), row.end());
  }
  model->dense_ = std::move(*dense);
  ModelConfig& config = model->config_;
  config.num_labels = static_cast<int64_t>(rows->size());
  if (config.num_labels != static_cast<int64_t>(config.id2label.size())) config.id2label.clear();
  return std::unique_ptr<Model>(std::move(model));
}

Status PoolingDecoder::ProjectPooled(float* pooled, int64_t num_rows) const {
  std::vector<float> x(pooled, pooled + num_rows * config_.hidden_size), y;
  for (const auto& module : dense_) {
    y.assign(num_rows * module->rows(), 0.0f);  // [num_rows, module width]
    kernels::Linear(*module, x.data(), num_rows, y.data(), pool_);
    x.swap(y);
  }
  std::copy(x.begin(), x.end(), pooled);
  return Status::Ok();
}

Status PoolingDecoder::Classify(const float* pooled, int64_t num_rows, float* scores) const {
  const int64_t hidden = config_.hidden_size;
  for (int64_t r = 0; r < num_rows; ++r) {
    for (int64_t label = 0; label < config_.num_labels; ++label) {
      const float* weights = rows_.data() + label * hidden;
      float sum = 0.0f;  // in index order: the same whatever else the batch holds
      for (int64_t i = 0; i < hidden; ++i) sum += weights[i] * pooled[r * hidden + i];
      scores[r * config_.num_labels + label] = sum;
    }
  }
  return Status::Ok();
}

}  // namespace vllm
