// The steps the tensor- and pipeline-parallel tests run on a model whole and split over thread
// ranks (ThreadCommunicator): random model files, prompts with block tables of their own, and a
// run of a batched prefill then batched greedy decode steps.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "dist/thread_communicator.h"
#include "model/model_loader.h"
#include "model/random_model.h"

namespace vllm::parallel_test {

constexpr int64_t kBlockSize = 16;
constexpr int64_t kVocabSize = 32000;  // VocabPath()'s, every random model's here

inline std::string VocabPath() {
  return std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf";
}

// A random model file, removed with the object.
class RandomModelFile {
 public:
  RandomModelFile(const std::string& shape, const std::string& dtype, int64_t num_layers = 0)
      : path_(::testing::TempDir() + "/parallel_" + shape + "_" + dtype + "_" +
              std::to_string(::getpid()) + ".gguf") {
    status_ = WriteRandomModel({.shape = shape,
                                .dtype = dtype,
                                .vocab_path = VocabPath(),
                                .output_path = path_,
                                .seed = 46,
                                .num_layers_override = num_layers});
  }
  ~RandomModelFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }
  const Status& status() const { return status_; }

 private:
  std::string path_;
  Status status_;
};

struct Prompt {
  std::vector<int32_t> tokens;
  std::vector<int32_t> blocks;  // its block table
};

// Prompts of these lengths, each with blocks of its own for `max_new` more tokens.
inline std::vector<Prompt> MakePrompts(const std::vector<int>& lengths, int64_t vocab,
                                       int max_new) {
  std::vector<Prompt> prompts;
  int32_t next_block = 1;
  uint32_t state = 12345;
  for (int length : lengths) {
    Prompt prompt;
    for (int i = 0; i < length; ++i) {
      state = state * 1664525u + 1013904223u;
      prompt.tokens.push_back(static_cast<int32_t>((state >> 8) % vocab));
    }
    for (int b = 0; b < (length + max_new + kBlockSize - 1) / kBlockSize; ++b) {
      prompt.blocks.push_back(next_block++);
    }
    prompts.push_back(std::move(prompt));
  }
  return prompts;
}

// One run's logits per step ([num_prompts, vocab]) and greedy tokens per step.
struct StepsResult {
  std::vector<std::vector<float>> logits;
  std::vector<std::vector<int32_t>> tokens;
  std::string error;
};

// Prefills every prompt in one batch, then decodes `num_decode_steps` batched steps, each row
// taking its greedy token.
inline StepsResult RunSteps(Model& model, std::vector<Prompt> prompts, int num_decode_steps) {
  StepsResult run;
  const ModelConfig& config = model.config();
  auto kv = KvStorage::Create(model.KvStorageOptionsOf({.num_layers = config.num_layers,
                                                        .num_blocks = 64,
                                                        .block_size = kBlockSize,
                                                        .num_kv_heads = config.num_kv_heads,
                                                        .head_dim = config.head_dim}));
  if (!kv) return {.error = kv.error()};
  std::vector<int32_t> num_computed(prompts.size(), 0);
  for (int step = 0; step <= num_decode_steps; ++step) {
    ForwardBatch batch;
    for (size_t s = 0; s < prompts.size(); ++s) {
      const auto new_tokens = std::span<const int32_t>(prompts[s].tokens).subspan(num_computed[s]);
      Status appended =
          AppendSequence(new_tokens, num_computed[s], {&prompts[s].blocks, 1}, kBlockSize, batch);
      if (!appended.ok()) return {.error = appended.message()};
      batch.logits_indices.push_back(static_cast<int32_t>(batch.token_ids.size()) - 1);
      num_computed[s] = static_cast<int32_t>(prompts[s].tokens.size());
    }
    std::vector<float> logits(prompts.size() * config.vocab_size);
    Status status = model.Forward(batch, **kv, logits.data());
    if (!status.ok()) return {.error = status.message()};
    std::vector<int32_t> greedy;
    for (size_t s = 0; s < prompts.size(); ++s) {
      const float* row = logits.data() + s * config.vocab_size;
      greedy.push_back(static_cast<int32_t>(std::max_element(row, row + config.vocab_size) - row));
      prompts[s].tokens.push_back(greedy.back());
    }
    run.logits.push_back(std::move(logits));
    run.tokens.push_back(std::move(greedy));
  }
  return run;
}

inline ThreadPool::Options OneThread() { return {.num_threads = 1}; }

inline StepsResult RunWhole(const std::string& path, const std::vector<Prompt>& prompts,
                            int num_decode_steps) {
  ThreadPool pool(OneThread());
  auto loaded = LoadModelFromPath(path, {.pool = &pool});
  if (!loaded) return {.error = loaded.error()};
  return RunSteps(*loaded->model, prompts, num_decode_steps);
}

// `fn(rank's communicator)` on one thread per rank.
template <typename Fn>
void OnRanks(int num_ranks, Fn fn) {
  auto communicators = dist::CreateThreadCommunicators(num_ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < num_ranks; ++r) {
    threads.emplace_back([&, r] { fn(*communicators[r]); });
  }
  for (std::thread& thread : threads) thread.join();
}

// Whether `split`'s logits are `whole`'s within kLogitTolerance of the largest |whole logit|
// (a split model's row-parallel sums round in another order); prints the largest difference.
constexpr float kLogitTolerance = 1e-5f;
inline ::testing::AssertionResult LogitsMatchWhole(const StepsResult& split,
                                                   const StepsResult& whole,
                                                   const std::string& label) {
  float max_diff = 0.0f, max_logit = 0.0f;
  for (size_t step = 0; step < whole.logits.size(); ++step) {
    for (size_t i = 0; i < whole.logits[step].size(); ++i) {
      max_diff = std::max(max_diff, std::abs(split.logits[step][i] - whole.logits[step][i]));
      max_logit = std::max(max_logit, std::abs(whole.logits[step][i]));
    }
  }
  std::printf("%s: max |split - whole| = %.3g (max |logit| %.3g)\n", label.c_str(), max_diff,
              max_logit);
  if (max_diff <= kLogitTolerance * std::max(1.0f, max_logit)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << label << ": max |split - whole| " << max_diff << " with max |logit| " << max_logit;
}

}  // namespace vllm::parallel_test
