#include "cli/bench_gemm_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli/kernel_bench_options.h"
#include "cli/median_pass.h"
#include "cli/read_bandwidth.h"
#include "common/ggml_type.h"
#include "common/thread_pool.h"
#include "kernels/dot_peak.h"
#include "kernels/ops.h"
#include "model/random_model.h"

namespace vllm {
namespace {

struct BenchGemmOptions : KernelBenchOptions {
  std::vector<std::string> dtypes = {"q8_0", "q4_0", "q4_K", "q6_K", "bf16"};
  std::vector<int64_t> batch_rows = {1, 16, 64, 128, 512};
};

// One linear layer of a decoder layer: W [rows, cols].
struct Matrix {
  std::string name;
  int64_t rows;
  int64_t cols;
};

// The fused projections a decoder layer of `shape` runs (Q/K/V and gate/up fused, as loaded).
std::vector<Matrix> MatricesOf(const ModelShape& shape) {
  const int64_t head_dim = shape.resolved_head_dim();
  const int64_t q_rows = shape.num_heads * head_dim;
  return {{"qkv", q_rows + 2 * shape.num_kv_heads * head_dim, shape.hidden_size},
          {"o", shape.hidden_size, q_rows},
          {"gate_up", 2 * shape.intermediate_size, shape.hidden_size},
          {"down", shape.hidden_size, shape.intermediate_size}};
}

// Copies of one random weight, enough that cycling through them reads from memory as a model's
// layers do (their bytes exceed the last-level cache several times).
Expected<std::vector<std::unique_ptr<kernels::LinearWeight>>> RandomWeights(GgmlType type,
                                                                            const Matrix& matrix,
                                                                            std::mt19937& rng) {
  constexpr int64_t kStreamedBytes = int64_t{256} << 20;
  const int64_t row_bytes = RowBytes(GetSupportedTypeTraits(type).value(), matrix.cols);
  const int64_t weight_bytes = row_bytes * matrix.rows;
  const int64_t num_copies = std::clamp<int64_t>(kStreamedBytes / weight_bytes, 1, 16);
  std::normal_distribution<float> value(0.0f, 0.02f);
  std::vector<float> row(matrix.cols);
  std::vector<uint8_t> bytes(weight_bytes);
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for (float& v : row) v = value(rng);
    kernels::QuantizeRow(type, row.data(), matrix.cols, bytes.data() + r * row_bytes);
  }
  std::vector<std::unique_ptr<kernels::LinearWeight>> copies;
  for (int64_t c = 0; c < num_copies; ++c) {
    auto weight = kernels::LinearWeight::CreateOwned(type, bytes, matrix.rows, matrix.cols);
    if (!weight) return Error{weight.error()};
    copies.push_back(std::move(*weight));
  }
  return copies;
}

// The peak a type's dot products run at: integer types quantize x to int8, BF16 weights take bf16
// x (on AMX tiles, vdpbf16ps or f32 FMAs: the path the kernels chose), F32 / F16 weights multiply
// in f32.
double PeakFor(GgmlType type, const kernels::DotPeak& peak) {
  if (type == GgmlType::kBF16) return peak.bf16_weight_ops_per_second;
  if (type == GgmlType::kF32 || type == GgmlType::kF16) return peak.f32_ops_per_second;
  return peak.int8_ops_per_second;
}

int Run(const BenchGemmOptions& options) {
  const ModelShape* shape = FindShapeOrReport(options);
  if (shape == nullptr) return 1;
  std::vector<GgmlType> types;
  for (const std::string& name : options.dtypes) {
    std::optional<GgmlType> type = ParseGgmlType(name);
    if (!type) {
      std::cerr << "error: unknown weight type '" << name << "'\n";
      return 1;
    }
    types.push_back(*type);
  }
  ThreadPool pool({.num_threads = options.num_threads});
  const kernels::DotPeak peak = kernels::MeasureDotPeak(pool);
  const double bandwidth = MeasureReadBandwidth(pool);
  std::printf(
      "path %s, %d threads: measured peak int8 dot %.0f GOP/s, bf16 dot %.0f GOP/s, f32 fma "
      "%.0f GOP/s, AMX bf16 %.0f GOP/s (BF16 weights on %s); read bandwidth %.1f GB/s\n\n",
      peak.isa, pool.num_threads(), peak.int8_ops_per_second / 1e9, peak.bf16_ops_per_second / 1e9,
      peak.f32_ops_per_second / 1e9, peak.amx_bf16_ops_per_second / 1e9, peak.bf16_weight_path,
      bandwidth / 1e9);
  std::printf(
      "| type | matrix | rows x cols | m | ms / call (median pass) | GOP/s | of dot peak | "
      "weight GB/s | of bandwidth |\n|---|---|---|---|---|---|---|---|---|\n");
  std::mt19937 rng(42);
  for (GgmlType type : types) {
    for (const Matrix& matrix : MatricesOf(*shape)) {
      auto weights = RandomWeights(type, matrix, rng);
      if (!weights) {
        std::cerr << "error: " << weights.error() << "\n";
        return 1;
      }
      const int64_t weight_bytes =
          RowBytes(GetSupportedTypeTraits(type).value(), matrix.cols) * matrix.rows;
      for (int64_t m : options.batch_rows) {
        std::normal_distribution<float> value(0.0f, 1.0f);
        std::vector<float> x(m * matrix.cols);
        for (float& v : x) v = value(rng);
        std::vector<float> y(m * matrix.rows);
        // One pass calls every copy once; a call's time is that of the median pass.
        const double seconds =
            MedianPassSeconds(options.repetitions,
                              [&] {
                                for (const auto& weight : *weights) {
                                  kernels::Linear(*weight, x.data(), m, y.data(), pool);
                                }
                              }) /
            weights->size();
        const double ops = 2.0 * m * matrix.rows * matrix.cols / seconds;
        const double type_peak = PeakFor(type, peak);
        std::printf("| %s | %s | %lld x %lld | %lld | %.3f | %.1f | %s | %.1f | %.0f %% |\n",
                    GetSupportedTypeTraits(type).value().name, matrix.name.c_str(),
                    static_cast<long long>(matrix.rows), static_cast<long long>(matrix.cols),
                    static_cast<long long>(m), seconds * 1e3, ops / 1e9,
                    type_peak > 0
                        ? (std::to_string(std::lround(100.0 * ops / type_peak)) + " %").c_str()
                        : "n/a",
                    weight_bytes / seconds / 1e9, 100.0 * weight_bytes / seconds / bandwidth);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace

void RegisterBenchGemmCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchGemmOptions>();
  CLI::App* command = bench.add_subcommand(
      "gemm", "GEMM speed of a model shape's linear layers beside the measured peaks");
  AddShapeOption(*command, *options);
  command->add_option("--dtype", options->dtypes, "weight types")->delimiter(',');
  command->add_option("-m,--batch-rows", options->batch_rows, "activation rows per call")
      ->delimiter(',');
  AddPassOptions(*command, *options, "timed passes over the copies");
  command->callback([options] { std::exit(Run(*options)); });
}

}  // namespace vllm
