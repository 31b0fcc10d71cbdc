#include "cli/bench_serve_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "server/asio.h"

namespace vllm {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;

struct BenchServeOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  std::string model;
  std::string api_key;
  int num_prompts = 64;
  int max_concurrency = 16;
  int random_input_len = 192;
  int random_output_len = 96;
  double random_range_ratio = 0.33;  // lengths uniform in len × [1 - r, 1 + r]
  int64_t vocab_size = 32000;
  uint64_t seed = 0;
  // "random", or vLLM's "prefix_repetition": num_prefixes random prefixes of prefix_len tokens,
  // each request one of them followed by suffix_len random tokens, output_len tokens each.
  std::string dataset_name = "random";
  int prefix_len = 256;
  int suffix_len = 256;
  int num_prefixes = 10;
  int prefix_output_len = 128;
  // BENCHMARKS.md workload 6 (chunked prefill): one prompt of this many tokens sent
  // long_prompt_delay seconds into the closed loop, on a connection of its own; 0: none.
  int long_prompt_len = 0;
  double long_prompt_delay = 5.0;
  // vLLM's --extra-body: a JSON object whose fields are added to (and override) every request's
  // body, e.g. a logit_bias given to both servers of a side-by-side run.
  nlohmann::json extra_body = nlohmann::json::object();
  // vLLM's --lora-modules: adapter names the server was started with; each request names one of
  // them, drawn uniformly (seeded), as its model. Empty: every request sends `model`.
  std::vector<std::string> lora_modules;
};

struct RequestResult {
  bool ok = false;
  std::string error;
  double ttft = 0.0;     // seconds to the first chunk with text
  double latency = 0.0;  // seconds to the end of the stream
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  std::vector<double> itls;                 // gaps between chunks with text
  std::vector<Clock::time_point> itl_ends;  // [itls.size()] when each gap ended
  Clock::time_point sent_at;
  bool keep_alive = false;  // the server keeps the connection open for the next request
  // The connection failed before a response header arrived: on a kept-alive connection, the
  // server closed it while idle (llama-server does after a stream, despite Keep-Alive).
  bool no_response = false;
};

struct BenchRequest {
  std::vector<int32_t> prompt;
  int max_tokens = 0;
  std::string model;  // "": BenchServeOptions::model
};

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

// One streamed completion over `stream` (kept alive between requests).
RequestResult RunRequest(const BenchServeOptions& options, beast::tcp_stream& stream,
                         const BenchRequest& request) {
  RequestResult result;
  nlohmann::json body = {{"prompt", request.prompt}, {"max_tokens", request.max_tokens},
                         {"temperature", 0.0},       {"ignore_eos", true},
                         {"stream", true},           {"stream_options", {{"include_usage", true}}}};
  const std::string& model = request.model.empty() ? options.model : request.model;
  if (!model.empty()) body["model"] = model;
  body.update(options.extra_body);
  http::request<http::string_body> http_request{http::verb::post, "/v1/completions", 11};
  http_request.set(http::field::host, options.host);
  http_request.set(http::field::content_type, "application/json");
  if (!options.api_key.empty()) {
    http_request.set(http::field::authorization, "Bearer " + options.api_key);
  }
  http_request.body() = body.dump();
  http_request.prepare_payload();
  const auto start = Clock::now();
  result.sent_at = start;
  beast::error_code error;
  http::write(stream, http_request, error);
  if (error) {
    result.error = error.message();
    result.no_response = true;
    return result;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<uint64_t>::max());
  std::string pending;  // SSE bytes not yet split into events
  Clock::time_point last_text_at;
  bool seen_text = false;
  auto on_event = [&](std::string_view data) {
    if (data == "[DONE]") return;
    auto event = nlohmann::json::parse(data, nullptr, false);
    if (event.is_discarded()) return;
    if (event.contains("error")) {
      result.error = event["error"].dump();
      return;
    }
    if (event.contains("usage") && event["usage"].is_object()) {
      result.prompt_tokens = event["usage"].value("prompt_tokens", 0);
      result.output_tokens = event["usage"].value("completion_tokens", 0);
    }
    if (!event.contains("choices") || event["choices"].empty()) return;
    const auto& text = event["choices"][0]["text"];
    if (!text.is_string() || text.get<std::string>().empty()) return;
    const auto now = Clock::now();
    if (!seen_text) {
      result.ttft = Seconds(now - start);
      seen_text = true;
    } else {
      result.itls.push_back(Seconds(now - last_text_at));
      result.itl_ends.push_back(now);
    }
    last_text_at = now;
  };
  auto on_chunk = [&](uint64_t, beast::string_view bytes, beast::error_code&) -> size_t {
    pending.append(bytes.data(), bytes.size());
    size_t end;
    while ((end = pending.find("\n\n")) != std::string::npos) {
      std::string_view event(pending.data(), end);
      if (event.substr(0, 6) == "data: ") on_event(event.substr(6));
      pending.erase(0, end + 2);
    }
    return bytes.size();
  };
  parser.on_chunk_body(on_chunk);
  http::read(stream, buffer, parser, error);
  if (error) {
    result.error = error.message();
    result.no_response = !parser.is_header_done();
    return result;
  }
  result.latency = Seconds(Clock::now() - start);
  result.keep_alive = parser.get().keep_alive();
  if (parser.get().result() != http::status::ok) {
    result.error = "HTTP " + std::to_string(parser.get().result_int()) + ": " + parser.get().body();
    return result;
  }
  result.ok = result.error.empty() && seen_text;
  return result;
}

double Percentile(std::vector<double> values, double percent) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double rank = percent / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lower = static_cast<size_t>(rank);
  const size_t upper = std::min(lower + 1, values.size() - 1);
  return values[lower] + (values[upper] - values[lower]) * (rank - static_cast<double>(lower));
}

double Mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double value : values) sum += value;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

// Random prompt ids, drawn above the first 1,000 ids (clear of special and byte tokens).
class RandomTokens {
 public:
  RandomTokens(const BenchServeOptions& options, uint64_t seed)
      : rng_(seed),
        token_(std::min<int64_t>(options.vocab_size - 1, 1000), options.vocab_size - 1) {}
  std::vector<int32_t> Draw(int count) {
    std::vector<int32_t> ids(count);
    for (int32_t& id : ids) id = static_cast<int32_t>(token_(rng_));
    return ids;
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int64_t> token_;
};

std::vector<BenchRequest> RandomRequests(const BenchServeOptions& options) {
  RandomTokens tokens(options, options.seed);
  auto length = [&](int base) {
    const int low = std::max(1, static_cast<int>(base * (1.0 - options.random_range_ratio)));
    const int high = std::max(low, static_cast<int>(base * (1.0 + options.random_range_ratio)));
    return std::uniform_int_distribution<int>(low, high)(tokens.rng());
  };
  std::vector<BenchRequest> requests(options.num_prompts);
  for (BenchRequest& request : requests) {
    request.prompt = tokens.Draw(length(options.random_input_len));
    request.max_tokens = length(options.random_output_len);
  }
  return requests;
}

// The prefix_repetition dataset: num_prompts / num_prefixes requests per prefix (the remainder to
// the first prefixes), shuffled, so that the prefixes' requests interleave as in vLLM's.
std::vector<BenchRequest> PrefixRepetitionRequests(const BenchServeOptions& options) {
  RandomTokens tokens(options, options.seed);
  std::vector<std::vector<int32_t>> prefixes;
  for (int p = 0; p < options.num_prefixes; ++p)
    prefixes.push_back(tokens.Draw(options.prefix_len));
  std::vector<BenchRequest> requests(options.num_prompts);
  for (int i = 0; i < options.num_prompts; ++i) {
    requests[i].prompt = prefixes[i % options.num_prefixes];
    const std::vector<int32_t> suffix = tokens.Draw(options.suffix_len);
    requests[i].prompt.insert(requests[i].prompt.end(), suffix.begin(), suffix.end());
    requests[i].max_tokens = options.prefix_output_len;
  }
  std::shuffle(requests.begin(), requests.end(), tokens.rng());
  return requests;
}

// The long prompt of workload 6: long_prompt_len random ids (a seed of their own), 16 outputs.
BenchRequest LongRequest(const BenchServeOptions& options) {
  RandomTokens tokens(options, options.seed + 1);
  return {tokens.Draw(options.long_prompt_len), 16};
}

// Workload 6's figures: the long prompt's TTFT, and the other requests' inter-token gaps that
// overlap its prefill (from its sending to its first token).
void PrintLongPromptReport(const RequestResult& long_result,
                           const std::vector<RequestResult>& results) {
  std::printf("-----------Long prompt (chunked prefill)----------\n");
  if (!long_result.ok) {
    std::printf("%-40s %s\n", "Long prompt failed:", long_result.error.c_str());
    return;
  }
  const auto prefill_begin = long_result.sent_at;
  const auto prefill_end =
      long_result.sent_at +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(long_result.ttft));
  std::vector<double> overlapping;
  for (const RequestResult& result : results) {
    for (size_t i = 0; i < result.itls.size(); ++i) {
      const auto gap_end = result.itl_ends[i];
      const auto gap_begin = gap_end - std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(result.itls[i]));
      if (gap_end > prefill_begin && gap_begin < prefill_end) overlapping.push_back(result.itls[i]);
    }
  }
  std::printf("%-40s %lld\n",
              "Long prompt tokens:", static_cast<long long>(long_result.prompt_tokens));
  std::printf("%-40s %.2f\n", "Long prompt TTFT (ms):", long_result.ttft * 1000.0);
  std::printf("%-40s %zu\n", "ITLs overlapping its prefill:", overlapping.size());
  std::printf(
      "%-40s %.2f\n%-40s %.2f\n%-40s %.2f\n",
      "Median ITL during it (ms):", Percentile(overlapping, 50) * 1000.0,
      "P99 ITL during it (ms):", Percentile(overlapping, 99) * 1000.0, "Max ITL during it (ms):",
      overlapping.empty() ? 0.0
                          : *std::max_element(overlapping.begin(), overlapping.end()) * 1000.0);
}

int RunBenchServe(const BenchServeOptions& options) {
  asio::io_context io_context;
  asio::ip::tcp::resolver resolver(io_context);
  beast::error_code error;
  const auto endpoints = resolver.resolve(options.host, std::to_string(options.port), error);
  if (error) {
    std::cerr << "error: cannot resolve " << options.host << ": " << error.message() << "\n";
    return 1;
  }
  auto connect = [&](beast::tcp_stream& stream) {
    stream.connect(endpoints, error);
    return !error;
  };
  std::vector<BenchRequest> requests = options.dataset_name == "prefix_repetition"
                                           ? PrefixRepetitionRequests(options)
                                           : RandomRequests(options);
  if (!options.lora_modules.empty()) {
    std::mt19937_64 rng(options.seed + 3);
    std::uniform_int_distribution<size_t> pick(0, options.lora_modules.size() - 1);
    for (BenchRequest& request : requests) request.model = options.lora_modules[pick(rng)];
  }
  // Warm-up, not counted: 16 tokens of their own, so that no measured prompt starts cached. A
  // server that refuses a random-token completion (llama-server does for some) gets fresh tokens,
  // up to kWarmupAttempts draws in all.
  constexpr int kWarmupAttempts = 3;
  for (int attempt = 0;; ++attempt) {
    beast::tcp_stream stream(io_context);
    if (!connect(stream)) {
      std::cerr << "error: cannot connect to " << options.host << ":" << options.port << "\n";
      return 1;
    }
    RequestResult warmup = RunRequest(
        options, stream, {RandomTokens(options, options.seed + 2 + attempt).Draw(16), 4});
    if (warmup.ok) break;
    if (attempt + 1 == kWarmupAttempts) {
      std::cerr << "error: the warm-up request failed: " << warmup.error << "\n";
      return 1;
    }
  }
  std::vector<RequestResult> results(requests.size());
  std::atomic<size_t> next{0};
  const auto start = Clock::now();
  std::vector<std::thread> clients;
  RequestResult long_result;
  if (options.long_prompt_len > 0) {
    clients.emplace_back([&] {
      BenchRequest long_request = LongRequest(options);
      std::this_thread::sleep_for(std::chrono::duration<double>(options.long_prompt_delay));
      asio::io_context client_context;
      beast::tcp_stream stream(client_context);
      beast::error_code connect_error;
      stream.connect(endpoints, connect_error);
      if (connect_error) {
        long_result.error = connect_error.message();
        return;
      }
      long_result = RunRequest(options, stream, long_request);
    });
  }
  for (int c = 0; c < options.max_concurrency; ++c) {
    clients.emplace_back([&] {
      asio::io_context client_context;
      std::unique_ptr<beast::tcp_stream> stream;
      for (size_t i = next++; i < requests.size(); i = next++) {
        // A request on a kept-alive connection that got no response is sent once more, on a new
        // connection.
        for (bool reused = stream != nullptr;; reused = false) {
          if (!stream) {
            stream = std::make_unique<beast::tcp_stream>(client_context);
            beast::error_code connect_error;
            stream->connect(endpoints, connect_error);
            if (connect_error) {
              results[i].error = connect_error.message();
              stream.reset();
              break;
            }
          }
          results[i] = RunRequest(options, *stream, requests[i]);
          if (!results[i].ok || !results[i].keep_alive) stream.reset();
          if (!reused || !results[i].no_response) break;
        }
      }
    });
  }
  for (auto& client : clients) client.join();
  const double duration = Seconds(Clock::now() - start);

  std::vector<double> ttfts, tpots, itls, latencies;
  int64_t input_tokens = 0, output_tokens = 0;
  int completed = 0;
  std::string first_error;
  for (const RequestResult& result : results) {
    if (!result.ok) {
      if (first_error.empty()) first_error = result.error;
      continue;
    }
    ++completed;
    input_tokens += result.prompt_tokens;
    output_tokens += result.output_tokens;
    ttfts.push_back(result.ttft);
    latencies.push_back(result.latency);
    if (result.output_tokens > 1) {
      tpots.push_back((result.latency - result.ttft) /
                      static_cast<double>(result.output_tokens - 1));
    }
    itls.insert(itls.end(), result.itls.begin(), result.itls.end());
  }
  auto ms = [](double seconds) { return seconds * 1000.0; };
  std::printf("============ Serving Benchmark Result ============\n");
  std::printf("%-40s %d\n", "Maximum request concurrency:", options.max_concurrency);
  std::printf("%-40s %d\n", "Successful requests:", completed);
  std::printf("%-40s %zu\n", "Failed requests:", results.size() - completed);
  std::printf("%-40s %.2f\n", "Benchmark duration (s):", duration);
  std::printf("%-40s %lld\n", "Total input tokens:", static_cast<long long>(input_tokens));
  std::printf("%-40s %lld\n", "Total generated tokens:", static_cast<long long>(output_tokens));
  std::printf("%-40s %.2f\n", "Request throughput (req/s):", completed / duration);
  std::printf("%-40s %.2f\n", "Output token throughput (tok/s):", output_tokens / duration);
  std::printf("%-40s %.2f\n",
              "Total Token throughput (tok/s):", (input_tokens + output_tokens) / duration);
  std::printf("---------------Time to First Token----------------\n");
  std::printf("%-40s %.2f\n%-40s %.2f\n%-40s %.2f\n", "Mean TTFT (ms):", ms(Mean(ttfts)),
              "Median TTFT (ms):", ms(Percentile(ttfts, 50)),
              "P99 TTFT (ms):", ms(Percentile(ttfts, 99)));
  std::printf("-----Time per Output Token (excl. 1st token)------\n");
  std::printf("%-40s %.2f\n%-40s %.2f\n%-40s %.2f\n", "Mean TPOT (ms):", ms(Mean(tpots)),
              "Median TPOT (ms):", ms(Percentile(tpots, 50)),
              "P99 TPOT (ms):", ms(Percentile(tpots, 99)));
  std::printf("---------------Inter-token Latency----------------\n");
  std::printf("%-40s %.2f\n%-40s %.2f\n%-40s %.2f\n", "Mean ITL (ms):", ms(Mean(itls)),
              "Median ITL (ms):", ms(Percentile(itls, 50)),
              "P99 ITL (ms):", ms(Percentile(itls, 99)));
  if (options.long_prompt_len > 0) PrintLongPromptReport(long_result, results);
  std::printf("==================================================\n");
  if (!first_error.empty()) std::fprintf(stderr, "first error: %s\n", first_error.c_str());
  return completed == static_cast<int>(results.size()) ? 0 : 1;
}

}  // namespace

void RegisterBenchServeCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchServeOptions>();
  CLI::App* command = bench.add_subcommand("serve", "Serving benchmark against a running server");
  command->add_option("--host", options->host)->capture_default_str();
  command->add_option("--port", options->port)->capture_default_str();
  command->add_option("--model", options->model, "Model name to send (default: none)");
  command->add_option("--api-key", options->api_key);
  command->add_option("--lora-modules", options->lora_modules,
                      "Adapter names the server serves; each request names one at random");
  command->add_option("--num-prompts", options->num_prompts)->capture_default_str();
  command->add_option("--max-concurrency", options->max_concurrency, "Clients in the closed loop")
      ->capture_default_str();
  command->add_option("--random-input-len", options->random_input_len)->capture_default_str();
  command->add_option("--random-output-len", options->random_output_len)->capture_default_str();
  command->add_option("--random-range-ratio", options->random_range_ratio)->capture_default_str();
  command->add_option("--vocab-size", options->vocab_size, "Random prompt ids are below this")
      ->capture_default_str();
  command->add_option("--seed", options->seed)->capture_default_str();
  command->add_option("--dataset-name", options->dataset_name)
      ->check(CLI::IsMember({"random", "prefix_repetition"}))
      ->capture_default_str();
  command->add_option("--prefix-repetition-prefix-len", options->prefix_len)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--prefix-repetition-suffix-len", options->suffix_len)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--prefix-repetition-num-prefixes", options->num_prefixes)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--prefix-repetition-output-len", options->prefix_output_len)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      ->add_option("--long-prompt-len", options->long_prompt_len,
                   "Also send one prompt of this many tokens into the loop (chunked-prefill "
                   "workload: the others' ITL while it is prefilled); 0: none")
      ->capture_default_str();
  command
      ->add_option("--long-prompt-delay", options->long_prompt_delay,
                   "Seconds after the loop starts that the long prompt is sent")
      ->capture_default_str();
  command
      ->add_option_function<std::string>(
          "--extra-body",
          [options](const std::string& text) {
            options->extra_body = nlohmann::json::parse(text, nullptr, false);
            if (!options->extra_body.is_object()) {
              throw CLI::ValidationError("--extra-body", "must be a JSON object");
            }
          },
          "JSON object whose fields are added to every request's body")
      ->type_name("JSON");
  command->callback([options] { std::exit(RunBenchServe(*options)); });
}

}  // namespace vllm
