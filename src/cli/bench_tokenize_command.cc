#include "cli/bench_tokenize_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/loaded_tokenizer.h"

namespace vllm {
namespace {

struct BenchTokenizeOptions {
  std::string tokenizer_dir;
  std::string model_path;
  std::string input_path;
  int repeats = 3;
};

int RunBenchTokenize(const BenchTokenizeOptions& options) {
  std::ifstream input(options.input_path, std::ios::binary);
  if (!input) {
    std::cerr << "error: cannot read " << options.input_path << "\n";
    return 1;
  }
  std::stringstream contents;
  contents << input.rdbuf();
  const std::string text = contents.str();
  auto loaded = LoadTokenizer(options.model_path, options.tokenizer_dir);
  if (!loaded) {
    std::cerr << "error: " << loaded.error() << "\n";
    return 1;
  }
  const Tokenizer& tokenizer = *loaded->tokenizer;
  double best_encode = 1e30, best_decode = 1e30;
  std::vector<int32_t> ids;
  for (int pass = 0; pass < std::max(1, options.repeats); ++pass) {
    auto start = std::chrono::steady_clock::now();
    ids = tokenizer.Encode(text, false);
    best_encode =
        std::min(best_encode,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    start = std::chrono::steady_clock::now();
    const std::string decoded = tokenizer.Decode(ids, false);
    best_decode =
        std::min(best_decode,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double megabytes = static_cast<double>(text.size()) / 1e6;
  std::printf("input: %zu bytes, %zu tokens (one thread, best of %d)\n", text.size(), ids.size(),
              std::max(1, options.repeats));
  std::printf("encode: %.3f s, %.2f MB/s, %.0f tokens/s\n", best_encode, megabytes / best_encode,
              ids.size() / best_encode);
  std::printf("decode: %.3f s, %.2f MB/s\n", best_decode, megabytes / best_decode);
  return 0;
}

}  // namespace

void RegisterBenchTokenizeCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchTokenizeOptions>();
  CLI::App* command = bench.add_subcommand("tokenize", "Tokenizer encode / decode throughput");
  auto* dir = command->add_option("--tokenizer", options->tokenizer_dir,
                                  "Hugging Face tokenizer directory");
  auto* model = command->add_option("-m,--model", options->model_path, "GGUF model or vocab");
  dir->excludes(model);
  command->add_option("--input", options->input_path, "Text file to tokenize")->required();
  command->add_option("--repeats", options->repeats)->capture_default_str();
  command->callback([options] { std::exit(RunBenchTokenize(*options)); });
}

}  // namespace vllm
