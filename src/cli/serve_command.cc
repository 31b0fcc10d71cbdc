// `vllm-cpp serve`: the engine behind the OpenAI-compatible HTTP API, on one io thread.
#include "cli/serve_command.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/generate_command.h"
#include "common/logging.h"
#include "server/api_router.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/serving_context.h"
#include "tokenizer/chat_template/chat_template.h"

namespace vllm {
namespace {

struct ServeOptions {
  EngineArgs engine;
  std::string host = "0.0.0.0";
  uint16_t port = 8000;
  std::string api_key;
  std::vector<std::string> served_model_names;
  std::string chat_template;
  std::vector<std::string> allowed_origins = {"*"};
  size_t max_body_bytes = 32 << 20;
  double log_interval_seconds = 10.0;
};

int RunServer(ServeOptions options) {
  if (options.api_key.empty()) {
    if (const char* key = std::getenv("VLLM_API_KEY")) options.api_key = key;
  }
  if (options.served_model_names.empty()) options.served_model_names = {options.engine.model};
  server::asio::io_context io_context(1);
  std::unique_ptr<AsyncLLM> engine = StartAsyncEngine(options.engine);
  if (!engine) return 1;
  const std::string chat_template =
      ReadChatTemplate(options.chat_template, engine->chat_template());
  if (chat_template.empty()) {
    VLLM_LOG(kWarning) << "the model has no chat template and --chat-template is not set: "
                          "/v1/chat/completions will answer 400";
  } else if (auto parsed = ChatTemplate::Parse(chat_template); !parsed.ok()) {
    VLLM_LOG(kWarning) << "the chat template does not parse: " << parsed.error();
  }
  server::Metrics metrics(options.served_model_names.front());
  server::ServingContext context{*engine, options.served_model_names, options.engine.model,
                                 chat_template, metrics};
  server::HttpServer http_server(
      io_context,
      {.max_body_bytes = options.max_body_bytes, .allowed_origins = options.allowed_origins},
      server::MakeApiRouter(context, {.api_key = options.api_key}));
  if (Status listening = http_server.Listen(options.host, options.port); !listening.ok()) {
    std::cerr << "error: " << listening.message() << "\n";
    return 1;
  }
  VLLM_LOG(kInfo) << "Serving " << options.served_model_names.front() << " on http://"
                  << options.host << ":" << http_server.port() << " (Ctrl+C to stop)";

  // SIGINT / SIGTERM: stop accepting, let the requests under way finish (up to
  // kShutdownGraceSeconds), then stop. A second signal stops at once.
  constexpr int kShutdownGraceSeconds = 10;
  server::asio::signal_set signals(io_context, SIGINT, SIGTERM);
  server::asio::steady_timer shutdown_timer(io_context);
  const auto shutdown_deadline = std::make_shared<std::chrono::steady_clock::time_point>();
  std::function<void()> wait_for_requests = [&] {
    if (context.num_active_requests == 0 || std::chrono::steady_clock::now() > *shutdown_deadline) {
      io_context.stop();
      return;
    }
    shutdown_timer.expires_after(std::chrono::milliseconds(100));
    shutdown_timer.async_wait([&](const boost::system::error_code& error) {
      if (!error) wait_for_requests();
    });
  };
  signals.async_wait([&](const boost::system::error_code& error, int) {
    if (error) return;
    VLLM_LOG(kInfo) << "Shutting down: " << context.num_active_requests << " request(s) under way";
    http_server.StopAccepting();
    *shutdown_deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(kShutdownGraceSeconds);
    signals.async_wait([&](const boost::system::error_code& again, int) {
      if (!again) io_context.stop();
    });
    wait_for_requests();
  });
  // vLLM's periodic stats line, while there is something to report.
  server::asio::steady_timer log_timer(io_context);
  std::function<void()> schedule_log = [&] {
    log_timer.expires_after(
        std::chrono::milliseconds(static_cast<int64_t>(options.log_interval_seconds * 1000)));
    log_timer.async_wait([&](const boost::system::error_code& error) {
      if (error) return;
      const EngineStatsSnapshot stats = engine->stats();
      const std::string line = metrics.LogLine(stats);
      if (stats.num_running > 0 || stats.num_waiting > 0 ||
          line.find("throughput: 0.0 tokens/s, Avg generation throughput: 0.0") ==
              std::string::npos) {
        VLLM_LOG(kInfo) << line;
      }
      schedule_log();
    });
  };
  if (options.log_interval_seconds > 0) schedule_log();
  io_context.run();
  engine.reset();  // ends unfinished streams; their connections go with the io_context
  return 0;
}

}  // namespace

void RegisterServeCommand(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand("serve", "Serve a model with an OpenAI-compatible API");
  AddEngineOptions(*command, options->engine);
  command->add_option("--host", options->host, "Address to listen on")->capture_default_str();
  command->add_option("--port", options->port, "Port to listen on")->capture_default_str();
  command->add_option("--api-key", options->api_key,
                      "Key clients must send as 'Authorization: Bearer KEY' (or VLLM_API_KEY)");
  command->add_option("--served-model-name", options->served_model_names,
                      "Model name(s) the API answers to (default: the model path)");
  command->add_option("--chat-template", options->chat_template,
                      "Chat template: a file, or the template itself");
  command
      ->add_option("--allowed-origins", options->allowed_origins,
                   "CORS origins allowed (\"*\": any)")
      ->capture_default_str();
  command
      ->add_option("--max-request-body-bytes", options->max_body_bytes,
                   "Larger request bodies get 413")
      ->capture_default_str();
  command
      ->add_option("--log-stats-interval", options->log_interval_seconds,
                   "Seconds between stats log lines (0: none)")
      ->capture_default_str();
  command->callback([options] { std::exit(RunServer(*options)); });
}

}  // namespace vllm
