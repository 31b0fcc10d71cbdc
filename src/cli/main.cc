// vllm-cpp: one binary, several commands (generate, tokenize, make-random-model, bench).
#include <CLI/CLI.hpp>

#include "cli/bench_attention_command.h"
#include "cli/bench_engine_command.h"
#include "cli/bench_gemm_command.h"
#include "cli/bench_model_command.h"
#include "cli/bench_serve_command.h"
#include "cli/bench_tokenize_command.h"
#include "cli/chat_command.h"
#include "cli/generate_command.h"
#include "cli/make_random_model_command.h"
#include "cli/serve_command.h"
#include "cli/tokenize_command.h"
#include "common/logging.h"

int main(int argc, char** argv) {
  CLI::App app{"vllm-cpp: high-throughput LLM inference and serving"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug|info|warning|error (logs go to stderr)")
      ->capture_default_str()
      ->each([](const std::string& name) {
        vllm::LogLevel level;
        if (!vllm::ParseLogLevel(name, &level)) throw CLI::ValidationError("--log-level", name);
        vllm::SetLogLevel(level);
      });
  vllm::RegisterGenerateCommand(app);
  vllm::RegisterServeCommand(app);
  vllm::RegisterChatCommand(app);
  vllm::RegisterTokenizeCommand(app);
  vllm::RegisterMakeRandomModelCommand(app);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  vllm::RegisterBenchModelCommand(*bench);
  vllm::RegisterBenchGemmCommand(*bench);
  vllm::RegisterBenchAttentionCommand(*bench);
  vllm::RegisterBenchEngineCommands(*bench);
  vllm::RegisterBenchServeCommand(*bench);
  vllm::RegisterBenchTokenizeCommand(*bench);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
