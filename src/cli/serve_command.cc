// `vllm-cpp serve`: the engine behind the OpenAI-compatible HTTP API, on one io thread.
#include "cli/serve_command.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "chat_template/chat_template.h"
#include "cli/cpu_resources.h"
#include "cli/default_model.h"
#include "cli/generate_command.h"
#include "cli/guided_decoding_flags.h"
#include "cli/lora_flags.h"
#include "cli/tensor_parallel_launch.h"
#include "cli/vllm_serve_flags.h"
#include "common/logging.h"
#include "server/api_router.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/openai/output_parsers/reasoning_parser.h"
#include "server/openai/output_parsers/tool_parser.h"
#include "server/serving_context.h"
#include "server/tls_context.h"
#include "structured_output/structured_output_compiler.h"

namespace vllm {
namespace {

struct ServeOptions {
  EngineArgs engine;
  std::string host = "0.0.0.0";
  uint16_t port = 8000;
  // --uds: a UNIX domain socket instead of host:port.
  std::string uds;
  std::string api_key;
  std::vector<std::string> served_model_names;
  std::string chat_template;
  std::vector<std::string> allowed_origins = {"*"};
  bool allow_credentials = false;
  std::vector<std::string> allowed_methods = {"*"};
  std::vector<std::string> allowed_headers = {"*"};
  size_t max_body_bytes = 32 << 20;
  size_t max_connections = 0;  // 0: server::DefaultMaxConnections
  size_t max_buffered_body_bytes = size_t{256} << 20;
  double log_interval_seconds = 10.0;
  server::RequestLimits limits;
  std::optional<int64_t> max_sequences_per_request;  // unset: --max-num-seqs
  int api_worker_threads = 2;
  double shutdown_timeout_seconds = 10.0;
  bool enable_auto_tool_choice = false;
  std::string tool_call_parser;
  std::string reasoning_parser;
  std::string structured_outputs_config;  // JSON; empty: the defaults
  GuidedDecodingFlags guided_decoding;    // vLLM 0.10's spelling of its keys
  server::TlsOptions tls;                 // --ssl-*: HTTPS when a certificate is given
  std::string root_path;
  std::string response_role = "assistant";
  std::optional<bool> enable_log_requests;   // vLLM 0.11's spelling, off by default
  std::optional<bool> disable_log_requests;  // vLLM 0.10's, deprecated in 0.11
  std::optional<size_t> max_log_len;
  std::vector<std::string> lora_modules;  // --lora-modules items, as given
};

// Checks the tool-call and reasoning parser flags as vLLM does; prints the error.
bool CheckParserFlags(const ServeOptions& options) {
  auto names = [](const std::vector<std::string>& list) {
    std::string text;
    for (const auto& name : list) text += (text.empty() ? "" : ", ") + name;
    return text;
  };
  if (options.enable_auto_tool_choice && options.tool_call_parser.empty()) {
    std::cerr << "error: --enable-auto-tool-choice requires --tool-call-parser\n";
    return false;
  }
  if (!options.tool_call_parser.empty() &&
      !server::ToolParserInfoOf(options.tool_call_parser).has_value()) {
    std::cerr << "error: invalid tool call parser: " << options.tool_call_parser
              << " (chose from { " << names(server::ToolParserNames()) << " })\n";
    return false;
  }
  const auto reasoning = server::ReasoningParserNames();
  if (!options.reasoning_parser.empty() &&
      std::find(reasoning.begin(), reasoning.end(), options.reasoning_parser) == reasoning.end()) {
    std::cerr << "error: invalid reasoning parser: " << options.reasoning_parser
              << " (chose from { " << names(reasoning) << " })\n";
    return false;
  }
  return true;
}

int RunServer(ServeOptions options) {
  if (options.api_key.empty()) {
    if (const char* key = std::getenv("VLLM_API_KEY")) options.api_key = key;
  }
  if (options.engine.model.empty()) {  // no model given: the default one, written on first use
    auto model = EnsureDefaultModel();
    if (!model) {
      std::cerr << "error: " << model.error() << "\n";
      return 1;
    }
    options.engine.model = *model;
  }
  if (options.served_model_names.empty()) options.served_model_names = {options.engine.model};
  if (!CheckParserFlags(options)) return 1;
  auto lora_modules = ParseLoraModules(options.lora_modules);
  if (!lora_modules || (!lora_modules->empty() && !options.engine.enable_lora)) {
    std::cerr << "error: "
              << (lora_modules ? "--lora-modules needs --enable-lora" : lora_modules.error())
              << "\n";
    return 1;
  }
  server::StructuredOutputsConfig structured_outputs_config;
  if (!options.structured_outputs_config.empty()) {
    auto config = server::ParseStructuredOutputsConfig(options.structured_outputs_config);
    // A whitespace_pattern that does not compile would refuse every JSON request: stop here.
    Expected<std::string> compiled = std::string();
    if (config && config->whitespace_pattern) {
      compiled =
          ConstraintToGbnf({.json_object = true, .whitespace_pattern = config->whitespace_pattern});
    }
    if (!config || !compiled) {
      std::cerr << "error: "
                << (!config ? config.error() : "--structured-outputs-config: " + compiled.error())
                << "\n";
      return 1;
    }
    structured_outputs_config = *config;
  }
  if (Status guided = ApplyGuidedDecodingFlags(options.guided_decoding, &structured_outputs_config);
      !guided.ok()) {
    std::cerr << "error: " << guided.message() << "\n";
    return 1;
  }
  std::shared_ptr<server::TlsContext> tls_context;
  if (!options.tls.certfile.empty() || !options.tls.keyfile.empty()) {
    auto created = server::TlsContext::Create(options.tls);  // before the model loads: fails fast
    if (!created) {
      std::cerr << "error: " << created.error() << "\n";
      return 1;
    }
    tls_context = *created;
  }
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
  server::Metrics metrics(options.served_model_names.front(), engine->max_model_len());
  // No request has run yet: every KV block is free.
  metrics.SetCacheConfigInfo(server::CacheConfigInfo(options.engine, engine->num_free_kv_blocks()));
  server::RequestWorkers workers({.num_threads = options.api_worker_threads});
  server::ServingContext context{*engine,
                                 options.served_model_names,
                                 options.engine.model,
                                 chat_template,
                                 metrics,
                                 workers,
                                 options.limits};
  if (options.enable_auto_tool_choice) context.tool_call_parser = options.tool_call_parser;
  context.reasoning_parser = options.reasoning_parser;
  context.structured_outputs_config = structured_outputs_config;
  context.limits.max_sequences =
      options.max_sequences_per_request.value_or(options.engine.max_num_seqs);
  context.limits.max_logprobs = options.engine.max_logprobs;
  context.response_role = options.response_role;
  // LoRA adapters of --lora-modules load now: a bad one stops serve with the loader's message.
  for (const server::LoraModulePath& module : *lora_modules) {
    if (auto error = context.lora_adapters.Load(*engine, module, options.served_model_names)) {
      std::cerr << "error: " << error->message << "\n";
      return 1;
    }
  }
  context.runtime_lora_updating = server::RuntimeLoraUpdatingAllowed();
  if (options.engine.enable_lora) context.max_loras = options.engine.max_loras;
  if (options.disable_log_requests) {
    VLLM_LOG(kWarning) << "--disable-log-requests is deprecated (as in vLLM 0.11): request "
                          "logging is off unless --enable-log-requests is given";
  }
  // The older spelling, when given, decides (as in vLLM 0.11).
  context.request_log = {.enabled = options.disable_log_requests
                                        ? !*options.disable_log_requests
                                        : options.enable_log_requests.value_or(false),
                         .max_log_len = options.max_log_len};
  server::HttpServer http_server(
      io_context,
      {.max_body_bytes = options.max_body_bytes,
       .cors = {.allowed_origins = options.allowed_origins,
                .allow_credentials = options.allow_credentials,
                .allowed_methods = options.allowed_methods,
                .allowed_headers = options.allowed_headers},
       .max_connections = options.max_connections,
       .max_buffered_body_bytes = options.max_buffered_body_bytes,
       .tls = tls_context},
      server::MakeApiRouter(context, {.api_key = options.api_key, .root_path = options.root_path}));
  // As vLLM, --uds replaces --host and --port.
  if (Status listening = options.uds.empty() ? http_server.Listen(options.host, options.port)
                                             : http_server.ListenUnix(options.uds);
      !listening.ok()) {
    std::cerr << "error: " << listening.message() << "\n";
    return 1;
  }
  VLLM_LOG(kInfo) << "Serving " << options.served_model_names.front() << " on "
                  << (!options.uds.empty() ? "unix:" + options.uds
                                           : (tls_context ? "https://" : "http://") + options.host +
                                                 ":" + std::to_string(http_server.port()))
                  << " (Ctrl+C to stop)";

  // SIGINT / SIGTERM: stop accepting, let the requests under way finish (up to
  // --shutdown-timeout seconds), then end those still running — streams with an error event and
  // data: [DONE], others with a 503 — and stop once their answers are written. A second signal
  // ends them at once.
  server::asio::signal_set signals(io_context, SIGINT, SIGTERM);
  server::asio::steady_timer shutdown_timer(io_context);
  const auto shutdown_deadline = std::make_shared<std::chrono::steady_clock::time_point>();
  auto stop_after_answers_flush = [&] {
    context.active_requests.CancelAll();
    // The cancelled requests' last bytes are queued on their strands by now; give the writes a
    // moment to reach the sockets.
    shutdown_timer.expires_after(std::chrono::milliseconds(200));
    shutdown_timer.async_wait([&](const boost::system::error_code&) { io_context.stop(); });
  };
  std::function<void()> wait_for_requests = [&] {
    if (context.active_requests.count() == 0 && workers.num_pending_tasks() == 0) {
      io_context.stop();
      return;
    }
    if (std::chrono::steady_clock::now() >= *shutdown_deadline) {
      stop_after_answers_flush();
      return;
    }
    shutdown_timer.expires_after(std::chrono::milliseconds(50));
    shutdown_timer.async_wait([&](const boost::system::error_code& error) {
      if (!error) wait_for_requests();
    });
  };
  signals.async_wait([&](const boost::system::error_code& error, int) {
    if (error) return;
    VLLM_LOG(kInfo) << "Shutting down: " << context.active_requests.count()
                    << " request(s) under way";
    context.shutting_down = true;
    http_server.StopAccepting();
    *shutdown_deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(options.shutdown_timeout_seconds * 1000));
    signals.async_wait([&](const boost::system::error_code& again, int) {
      if (!again) *shutdown_deadline = std::chrono::steady_clock::now();
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
      if (const std::string spec = metrics.SpecDecodingLogLine(stats); !spec.empty()) {
        VLLM_LOG(kInfo) << spec;
      }
      schedule_log();
    });
  };
  if (options.log_interval_seconds > 0) schedule_log();
  io_context.run();
  workers.Join();  // their tasks use the engine
  engine.reset();  // ends unfinished streams; their connections go with the io_context
  return 0;
}

}  // namespace

void RegisterServeCommand(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand("serve", "Serve a model with an OpenAI-compatible API");
  options->engine.max_num_batched_tokens = kServeMaxNumBatchedTokens;
  AddEngineOptions(*command, options->engine);
  command->get_option("--model")->required(false)->description(
      "GGUF model file, Hugging Face model directory, or model id (org/name, org/name:Q4_K_M, "
      "org/name/file.gguf) from the Hugging Face cache or hub (default: a tiny random-weight "
      "Llama written to ~/.cache/vllm-cpp on first use)");
  command->add_option("--host", options->host, "Address to listen on")->capture_default_str();
  command->add_option("--port", options->port, "Port to listen on")->capture_default_str();
  command->add_option("--uds", options->uds,
                      "UNIX domain socket path to serve on instead of --host / --port (a stale "
                      "socket file is replaced; the file is removed at exit)");
  command->add_option("--override-attention-dtype", options->engine.override_attention_dtype,
                      "vLLM's attention dtype: float32 or bfloat16 picks the KV cache dtype "
                      "attention reads (with --kv-cache-dtype auto); float16 is ignored");
  command->add_option("--api-key", options->api_key,
                      "Key clients must send as 'Authorization: Bearer KEY' (or VLLM_API_KEY)");
  command->add_option("--served-model-name", options->served_model_names,
                      "Model name(s) the API answers to (default: the model path)");
  command->add_option("--lora-modules", options->lora_modules,
                      "LoRA adapters loaded at start (with --enable-lora): name=path or JSON "
                      "'{\"name\": \"sql\", \"path\": \"/p\", \"base_model_name\": \"m\"}'; a "
                      "PEFT directory or a llama.cpp GGUF LoRA file");
  command->add_option("--chat-template", options->chat_template,
                      "Chat template: a file, or the template itself");
  command
      ->add_option("--allowed-origins", options->allowed_origins,
                   "CORS origins allowed (\"*\": any)")
      ->capture_default_str();
  command->add_flag("--allow-credentials,!--no-allow-credentials", options->allow_credentials,
                    "CORS: allow credentials (the origin is then echoed, never \"*\")");
  command
      ->add_option("--allowed-methods", options->allowed_methods,
                   "CORS methods allowed (\"*\": any)")
      ->capture_default_str();
  command
      ->add_option("--allowed-headers", options->allowed_headers,
                   "CORS request headers allowed (\"*\": any)")
      ->capture_default_str();
  command
      ->add_option("--max-request-body-bytes", options->max_body_bytes,
                   "Larger request bodies get 413")
      ->capture_default_str();
  command->add_option("--max-connections", options->max_connections,
                      "Open connections past which a new one gets 503 (default: the open-file "
                      "limit less 64, at most 4096)");
  command
      ->add_option("--max-buffered-request-bytes", options->max_buffered_body_bytes,
                   "Request body bytes all connections may buffer together (at least "
                   "--max-request-body-bytes); a request over it gets 503")
      ->capture_default_str();
  command
      ->add_option("--max-prompt-bytes", options->limits.max_prompt_bytes,
                   "Longest prompt, message content or rendered chat template accepted, in bytes")
      ->capture_default_str();
  command->add_option(
      "--max-sequences-per-request", options->max_sequences_per_request,
      "Most sequences (prompts x n) one request may start (default: --max-num-seqs)");
  command->add_flag("--enable-auto-tool-choice,!--no-enable-auto-tool-choice",
                    options->enable_auto_tool_choice,
                    "Let the model call tools on its own (tool_choice auto); needs "
                    "--tool-call-parser");
  command->add_option("--tool-call-parser", options->tool_call_parser,
                      "How tool calls are read from the model's output: hermes, llama3_json, "
                      "mistral or openai");
  command->add_option("--reasoning-parser", options->reasoning_parser,
                      "How the model's thinking is separated into reasoning_content: "
                      "deepseek_r1, qwen3 or openai");
  command->add_option(
      "--structured-outputs-config", options->structured_outputs_config,
      "JSON object of vLLM's StructuredOutputsConfig keys: backend, disable_fallback, "
      "disable_any_whitespace, disable_additional_properties; and whitespace_pattern, a regex "
      "for the whitespace JSON may have between tokens (default: a space, or a newline and an "
      "indent), e.g. '{\"whitespace_pattern\": \"[ \\\\n\\\\t]*\"}' for any");
  command->add_flag("--trust-request-chat-template,!--no-trust-request-chat-template",
                    options->limits.trust_request_chat_template,
                    "Accept chat templates sent in requests (chat_template, "
                    "chat_template_kwargs.chat_template)");
  command
      ->add_option("--api-worker-threads", options->api_worker_threads,
                   "Threads that parse, tokenize and render requests off the I/O thread")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command
      ->add_option("--shutdown-timeout", options->shutdown_timeout_seconds,
                   "Seconds a shutdown waits for requests under way before ending them")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      ->add_option("--log-stats-interval", options->log_interval_seconds,
                   "Seconds between stats log lines (0: none)")
      ->capture_default_str();
  // HTTPS, --root-path, --response-role and request logging, as vLLM's.
  command->add_option("--ssl-keyfile", options->tls.keyfile,
                      "HTTPS: the PEM private key (unencrypted; default: read from "
                      "--ssl-certfile)");
  command->add_option("--ssl-certfile", options->tls.certfile,
                      "HTTPS: the PEM certificate chain, the server's first");
  command->add_option("--ssl-ca-certs", options->tls.ca_certs,
                      "HTTPS: PEM CA certificates that client certificates are checked against");
  command
      ->add_option_function<int>(
          "--ssl-cert-reqs",
          [options](int value) {
            options->tls.cert_reqs = static_cast<server::ClientCertRequirement>(value);
          },
          "HTTPS client certificates, as Python's ssl.CERT_*: 0 none asked, 1 checked when "
          "given, 2 required (mutual TLS); 1 and 2 need --ssl-ca-certs")
      ->check(CLI::Range(0, 2))
      ->default_str("0");
  command->add_option("--ssl-ciphers", options->tls.ciphers,
                      "HTTPS: OpenSSL cipher list for TLS 1.2 (TLS 1.3 keeps its suites)");
  command->add_option("--root-path", options->root_path,
                      "Path prefix a proxy forwards requests under (FastAPI's root_path): "
                      "/PREFIX/v1/... is served as /v1/..., and /v1/... still is");
  command
      ->add_option("--response-role", options->response_role,
                   "Role of chat replies to requests with add_generation_prompt true")
      ->capture_default_str();
  // Flag functions run only when given (count: +1 per --name, -1 per --no-name).
  command->add_flag_function(
      "--enable-log-requests,!--no-enable-log-requests",
      [options](int64_t count) { options->enable_log_requests = count > 0; },
      "Log each request as it arrives: its prompt, sampling params and prompt token ids");
  command->add_flag_function(
      "--disable-log-requests,!--no-disable-log-requests",
      [options](int64_t count) { options->disable_log_requests = count > 0; },
      "Deprecated spelling (vLLM 0.10): request logging is off by default");
  command->add_option("--max-log-len", options->max_log_len,
                      "Prompt characters and prompt token ids a request log line shows at most "
                      "(default: all)");
  // vLLM's serve flags with a CPU meaning here (docs/serve_flags.md), then all its others.
  command->add_option("--seed", options->engine.seed,
                      "Seeds the seeds of requests that have none, so sampled outputs repeat");
  command->add_flag_callback(
      "--disable-log-stats", [options] { options->log_interval_seconds = 0; },
      "No periodic stats log line (--log-stats-interval 0)");
  command
      ->add_option_function<std::string>(
          "--uvicorn-log-level",
          [](const std::string& name) {
            const std::string ours = name == "critical" ? "error"
                                     : name == "trace"  ? "debug"
                                                        : name;
            LogLevel level;
            if (!ParseLogLevel(ours, &level)) {
              throw CLI::ValidationError("--uvicorn-log-level", name);
            }
            SetLogLevel(level);
          },
          "vLLM's HTTP log level, here the log level: critical|error|warning|info|debug|trace")
      ->check(CLI::IsMember({"critical", "error", "warning", "info", "debug", "trace"}));
  AddGuidedDecodingFlags(*command, options->guided_decoding);
  const std::shared_ptr<GivenServeFlags> vllm_flags = RegisterVllmServeFlags(*command);
  command->callback([options, vllm_flags, command] {
    Status ready = CheckGivenFlags(*vllm_flags);
    if (ready.ok()) {
      ready = ApplyThreadsBind(command->count("--threads") > 0, &options->engine);
    }
    if (!ready.ok()) {
      std::cerr << "error: " << ready.message() << "\n";
      std::exit(1);
    }
    if (auto exit_code = RunTensorParallelRanks(&options->engine)) std::exit(*exit_code);
    std::exit(RunServer(*options));
  });
}

}  // namespace vllm
