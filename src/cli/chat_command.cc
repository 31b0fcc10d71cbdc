#include "cli/chat_command.h"

#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/generate_command.h"
#include "cli/tensor_parallel_launch.h"
#include "server/openai/chat/protocol.h"
#include "server/request_limits.h"
#include "tokenizer/tokenizer.h"
#include "vllm/async_llm.h"

namespace vllm {
namespace {

struct ChatOptions {
  EngineArgs engine;
  std::string chat_template;
  std::string system_prompt;
  SamplingParams sampling;
  int64_t seed = -1;
};

int RunChat(ChatOptions options) {
  std::unique_ptr<AsyncLLM> engine = StartAsyncEngine(options.engine);
  if (!engine) return 1;
  const std::string chat_template =
      ReadChatTemplate(options.chat_template, engine->chat_template());
  const server::RequestLimits limits;
  server::Json messages = server::Json::array();
  if (!options.system_prompt.empty()) {
    messages.push_back({{"role", "system"}, {"content", options.system_prompt}});
  }
  SamplingParams params = options.sampling;
  if (options.seed >= 0) params.seed = options.seed;
  params.output_kind = RequestOutputKind::kDelta;
  const bool interactive = isatty(STDIN_FILENO);
  if (interactive) std::cout << "Chatting with " << options.engine.model << " (Ctrl+D to quit)\n";
  int turn = 0;
  std::string line;
  while (true) {
    if (interactive) std::cout << "> " << std::flush;
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    server::ChatPrompt prompt;
    if (auto error = server::RenderChatPrompt(engine->tokenizer(), chat_template, limits,
                                              {{"messages", messages}}, &prompt)) {
      std::cerr << "error: " << error->message << "\n";
      return 1;
    }
    const auto prompt_ids = engine->tokenizer().Encode(prompt.text, /*add_special_tokens=*/false);
    std::string reply;
    try {
      auto stream = engine->Generate("chat-" + std::to_string(turn++), prompt_ids, params);
      while (auto output = stream->Next()) {
        std::cout << output->outputs[0].text << std::flush;
        reply += output->outputs[0].text;
      }
      if (!stream->error().empty()) {
        std::cerr << "\nerror: " << stream->error() << "\n";
        return 1;
      }
    } catch (const std::exception& e) {  // the engine refused the request (e.g. too long)
      std::cerr << "error: " << e.what() << "\n";
      messages.erase(messages.size() - 1);
      continue;
    }
    std::cout << "\n";
    messages.push_back({{"role", "assistant"}, {"content", reply}});
  }
  return 0;
}

}  // namespace

void RegisterChatCommand(CLI::App& app) {
  auto options = std::make_shared<ChatOptions>();
  options->sampling.max_tokens = 256;
  CLI::App* command = app.add_subcommand("chat", "Chat with a model in the terminal");
  AddEngineOptions(*command, options->engine);
  command->add_option("--chat-template", options->chat_template,
                      "Chat template: a file, or the template itself (default: the model's)");
  command->add_option("--system-prompt", options->system_prompt);
  command->add_option("--max-tokens", options->sampling.max_tokens)->capture_default_str();
  command->add_option("--temperature", options->sampling.temperature)->capture_default_str();
  command->add_option("--top-p", options->sampling.top_p)->capture_default_str();
  command->add_option("--top-k", options->sampling.top_k)->capture_default_str();
  command->add_option("--seed", options->seed, "Random seed");
  command->callback([options] {
    if (auto exit_code = RunTensorParallelRanks(&options->engine)) std::exit(*exit_code);
    std::exit(RunChat(*options));
  });
}

}  // namespace vllm
