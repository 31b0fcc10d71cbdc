// vllm-cpp: one binary, several commands (generate, tokenize, make-random-model, bench).
#include <CLI/CLI.hpp>
#include <iostream>

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
#include "cli/serve_config_file.h"
#include "cli/tokenize_command.h"
#include "cli/vllm_alias.h"
#include "cli/vllm_serve_flags.h"
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
  vllm::RegisterInstallVllmAliasCommand(app);
  // Run as `vllm` (vllm-cpp install-vllm-alias), vLLM's command lines work unchanged.
  app.name(vllm::InvokedAsVllm(argv[0]) ? "vllm" : "vllm-cpp");
  // vLLM's spellings (-tp 2, --max_model_len) and `serve --config FILE.yaml`, before CLI11 reads
  // the command line.
  auto args = vllm::ApplyServeConfigFile(
      vllm::NormalizeVllmFlagSpellings(std::vector<std::string>(argv + 1, argv + argc)),
      *app.get_subcommand("serve"));
  if (!args) {
    std::cerr << "error: " << args.error() << "\n";
    return 2;
  }
  std::vector<std::string> reversed(args->rbegin(), args->rend());  // CLI11 reads it from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return 0;
}
