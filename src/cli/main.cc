// vllm-cpp: one binary, several commands (generate, tokenize, make-random-model, bench).
#include <CLI/CLI.hpp>

#include "cli/bench_engine_command.h"
#include "cli/bench_model_command.h"
#include "cli/generate_command.h"
#include "cli/make_random_model_command.h"
#include "cli/tokenize_command.h"

int main(int argc, char** argv) {
  CLI::App app{"vllm-cpp: high-throughput LLM inference and serving"};
  app.require_subcommand(1);
  vllm::RegisterGenerateCommand(app);
  vllm::RegisterTokenizeCommand(app);
  vllm::RegisterMakeRandomModelCommand(app);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  vllm::RegisterBenchModelCommand(*bench);
  vllm::RegisterBenchEngineCommands(*bench);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
