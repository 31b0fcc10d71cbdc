#include "model/pipeline_parallel.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <vector>

namespace vllm {
namespace {

// "4,4" → {4, 4}; an error names what is wrong.
Expected<std::vector<int64_t>> ParsePartition(const std::string& partition) {
  std::vector<int64_t> counts;
  for (size_t start = 0;;) {
    const size_t comma = std::min(partition.find(',', start), partition.size());
    int64_t count = 0;
    const char* first = partition.data() + start;
    const char* last = partition.data() + comma;
    auto [end, error] = std::from_chars(first, last, count);
    if (error != std::errc() || end != last || count < 1) {
      return Error{"VLLM_PP_LAYER_PARTITION='" + partition +
                   "': expected positive layer counts separated by commas, such as 4,4"};
    }
    counts.push_back(count);
    if (comma == partition.size()) break;
    start = comma + 1;
  }
  return counts;
}

}  // namespace

Expected<PipelineStage> PipelineStageOf(int64_t num_layers, int stage, int num_stages,
                                        const std::string& partition) {
  std::vector<int64_t> counts;
  if (!partition.empty()) {
    auto parsed = ParsePartition(partition);
    if (!parsed) return Error{parsed.error()};
    counts = std::move(*parsed);
    const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
    if (static_cast<int64_t>(counts.size()) != num_stages || total != num_layers) {
      return Error{"VLLM_PP_LAYER_PARTITION='" + partition + "' gives " +
                   std::to_string(counts.size()) + " stages " + std::to_string(total) +
                   " layers; pipeline_parallel_size is " + std::to_string(num_stages) +
                   " and the model has " + std::to_string(num_layers) + " layers"};
    }
  } else {
    if (num_layers < num_stages) {
      return Error{"pipeline_parallel_size (-pp/--pipeline-parallel-size) " +
                   std::to_string(num_stages) + " is more than the model's " +
                   std::to_string(num_layers) + " layers: every stage needs one"};
    }
    counts.assign(num_stages, num_layers / num_stages);
    const int64_t remaining = num_layers % num_stages;
    for (int64_t i = 2; i < remaining + 2; ++i) ++counts[num_stages - i];
  }
  PipelineStage result{.stage = stage, .num_stages = num_stages};
  result.first_layer = std::accumulate(counts.begin(), counts.begin() + stage, int64_t{0});
  result.end_layer = result.first_layer + counts[stage];
  return result;
}

int64_t NumMicroBatches(int64_t num_tokens, int num_stages) {
  return std::clamp<int64_t>(num_tokens / kMinMicroBatchTokens, 1, int64_t{4} * num_stages);
}

}  // namespace vllm
