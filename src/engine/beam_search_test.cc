// BeamSearch on a scripted "model" (a fixed next-token logprob table): with beams wide enough to
// prune nothing it must return exactly the best sequences of an exhaustive enumeration; narrow
// beams follow hand-checked cases (greedy, a greedy trap, length_penalty, ties, a full context).
#include "engine/beam_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace vllm {
namespace {

constexpr int32_t kVocabSize = 4;
constexpr int32_t kEos = 3;

// Next-token logprobs after `tokens`: a log-softmax of logits hashed from the sequence.
std::vector<float> HashedLogprobs(const std::vector<int32_t>& tokens) {
  uint64_t hash = 1469598103934665603ull;
  for (int32_t token : tokens) hash = (hash ^ static_cast<uint64_t>(token + 1)) * 1099511628211ull;
  std::vector<double> logits(kVocabSize);
  for (int32_t v = 0; v < kVocabSize; ++v) {
    hash = hash * 6364136223846793005ull + 1442695040888963407ull;
    logits[v] = static_cast<double>(hash >> 40) / static_cast<double>(1 << 24) * 4.0;
  }
  double sum = 0.0;
  for (double logit : logits) sum += std::exp(logit);
  std::vector<float> logprobs(kVocabSize);
  for (int32_t v = 0; v < kVocabSize; ++v)
    logprobs[v] = static_cast<float>(logits[v] - std::log(sum));
  return logprobs;
}

// The top `k` of `logprobs` with their ranks (ties: the lower id ranks first).
PositionLogprobs Top(const std::vector<float>& logprobs, int k) {
  std::vector<int32_t> ids(logprobs.size());
  for (size_t v = 0; v < ids.size(); ++v) ids[v] = static_cast<int32_t>(v);
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return logprobs[a] > logprobs[b]; });
  PositionLogprobs top;
  for (int r = 0; r < k && r < static_cast<int>(ids.size()); ++r) {
    top[ids[r]] = Logprob{logprobs[ids[r]], r + 1, ""};
  }
  return top;
}

using Table = std::function<std::vector<float>(const std::vector<int32_t>&)>;

BeamSearchOutput Search(const std::vector<int32_t>& prompt, const BeamSearchParams& params,
                        const Table& table, int64_t max_model_len = INT64_MAX) {
  std::vector<BeamSearch> searches;
  searches.emplace_back(prompt, BeamSearch::Options{params, kEos, max_model_len});
  Status status =
      RunBeamSearches(&searches, [&](const std::vector<const std::vector<int32_t>*>& sequences,
                                     const std::vector<size_t>&, int k) {
        std::vector<std::optional<PositionLogprobs>> next;
        for (const auto* tokens : sequences) next.push_back(Top(table(*tokens), k));
        return Expected<std::vector<std::optional<PositionLogprobs>>>(std::move(next));
      });
  EXPECT_TRUE(status.ok());
  return searches[0].Finish();
}

struct Scored {
  std::vector<int32_t> tokens;
  double cum_logprob;
};

// Every sequence beam search could return: ended by EOS within max_tokens, or max_tokens long.
void Enumerate(const Scored& prefix, int num_left, const BeamSearchParams& params,
               std::vector<Scored>* out) {
  const std::vector<float> logprobs = HashedLogprobs(prefix.tokens);
  for (int32_t v = 0; v < kVocabSize; ++v) {
    Scored extended = prefix;
    extended.tokens.push_back(v);
    extended.cum_logprob += logprobs[v];
    if ((v == kEos && !params.ignore_eos) || num_left == 1) {
      out->push_back(extended);
    } else {
      Enumerate(extended, num_left - 1, params, out);
    }
  }
}

TEST(BeamSearchTest, WideBeamsEqualExhaustiveSearch) {
  const std::vector<int32_t> prompt = {1, 2};
  for (float length_penalty : {0.0f, 0.5f, 1.0f, 2.0f}) {
    for (bool ignore_eos : {false, true}) {
      BeamSearchParams params;
      params.max_tokens = 3;
      params.beam_width = 64;  // keeps every one of the 4^3 sequences live
      params.length_penalty = length_penalty;
      params.ignore_eos = ignore_eos;
      std::vector<Scored> all;
      Enumerate({prompt, 0.0}, params.max_tokens, params, &all);
      std::stable_sort(all.begin(), all.end(), [&](const Scored& a, const Scored& b) {
        return BeamSearchScore(a.tokens, a.cum_logprob, kEos, length_penalty) >
               BeamSearchScore(b.tokens, b.cum_logprob, kEos, length_penalty);
      });
      if (all.size() > static_cast<size_t>(params.beam_width)) all.resize(params.beam_width);

      const BeamSearchOutput output = Search(prompt, params, HashedLogprobs);
      ASSERT_EQ(output.sequences.size(), all.size());
      for (size_t i = 0; i < all.size(); ++i) {
        SCOPED_TRACE("length_penalty " + std::to_string(length_penalty) + ", ignore_eos " +
                     std::to_string(ignore_eos) + ", rank " + std::to_string(i));
        const BeamSearchSequence& beam = output.sequences[i];
        EXPECT_EQ(beam.tokens, all[i].tokens);
        EXPECT_DOUBLE_EQ(beam.cum_logprob, all[i].cum_logprob);
        EXPECT_EQ(beam.logprobs.size(), beam.tokens.size() - prompt.size());
        const bool ended_by_eos = beam.tokens.back() == kEos && !ignore_eos;
        EXPECT_EQ(beam.finish_reason, ended_by_eos ? "stop" : "");
        if (ended_by_eos) {
          EXPECT_EQ(std::get<int32_t>(beam.stop_reason), kEos);
        }
      }
    }
  }
}

TEST(BeamSearchTest, WidthOneIsGreedy) {
  BeamSearchParams params;
  params.max_tokens = 12;
  params.ignore_eos = true;
  std::vector<int32_t> greedy = {0};
  double cum_logprob = 0.0;
  for (int i = 0; i < params.max_tokens; ++i) {
    const std::vector<float> logprobs = HashedLogprobs(greedy);
    const auto best = std::max_element(logprobs.begin(), logprobs.end());
    cum_logprob += *best;
    greedy.push_back(static_cast<int32_t>(best - logprobs.begin()));
  }
  const BeamSearchOutput output = Search({0}, params, HashedLogprobs);
  ASSERT_EQ(output.sequences.size(), 1u);
  EXPECT_EQ(output.sequences[0].tokens, greedy);
  EXPECT_DOUBLE_EQ(output.sequences[0].cum_logprob, cum_logprob);
}

// After the prompt, token 0 (p = 0.6) leads to a flat continuation and token 1 (p = 0.4) to a
// sure one: greedy keeps 0, two beams find 1 → 0.
std::vector<float> GreedyTrap(const std::vector<int32_t>& tokens) {
  const float flat = std::log(0.25f);
  if (tokens.size() == 1) return {std::log(0.6f), std::log(0.4f), -30.0f, -30.0f};
  if (tokens[1] == 0) return {flat, flat, flat, flat};
  return {std::log(0.97f), -5.0f, -5.0f, -5.0f};
}

TEST(BeamSearchTest, TwoBeamsEscapeTheGreedyTrap) {
  BeamSearchParams params;
  params.max_tokens = 2;
  params.ignore_eos = true;
  params.beam_width = 1;
  const BeamSearchOutput greedy = Search({2}, params, GreedyTrap);
  EXPECT_EQ(greedy.sequences[0].tokens, (std::vector<int32_t>{2, 0, 0}));
  params.beam_width = 2;
  const BeamSearchOutput beams = Search({2}, params, GreedyTrap);
  ASSERT_EQ(beams.sequences.size(), 2u);
  EXPECT_EQ(beams.sequences[0].tokens, (std::vector<int32_t>{2, 1, 0}));
  EXPECT_GT(beams.sequences[0].cum_logprob, greedy.sequences[0].cum_logprob);
  EXPECT_DOUBLE_EQ(beams.sequences[0].cum_logprob,
                   static_cast<double>(std::log(0.4f)) + std::log(0.97f));
}

// After token 0: EOS for a cum_logprob of -1.0 (scored over a length of 2: the prompt and token
// 0, EOS not counted), or three more tokens for -1.2 over a length of 5.
std::vector<float> ShortOrLong(const std::vector<int32_t>& tokens) {
  if (tokens.size() == 1) return {0.0f, -50.0f, -50.0f, -50.0f};
  if (tokens.size() == 2) return {-1.2f, -50.0f, -50.0f, -1.0f};
  return {0.0f, -50.0f, -50.0f, -50.0f};
}

TEST(BeamSearchTest, LengthPenaltyChoosesBetweenShortAndLong) {
  BeamSearchParams params;
  params.max_tokens = 4;
  params.beam_width = 1;
  params.length_penalty = 1.0f;  // -1.0 / 2 < -1.2 / 4: the long one wins
  BeamSearchOutput output = Search({2}, params, ShortOrLong);
  EXPECT_EQ(output.sequences[0].tokens, (std::vector<int32_t>{2, 0, 0, 0, 0}));
  EXPECT_EQ(output.sequences[0].finish_reason, "");
  params.length_penalty = 0.0f;  // plain cum_logprob: -1.0 > -1.2
  output = Search({2}, params, ShortOrLong);
  EXPECT_EQ(output.sequences[0].tokens, (std::vector<int32_t>{2, 0, kEos}));
  EXPECT_EQ(output.sequences[0].finish_reason, "stop");
}

TEST(BeamSearchTest, TiesKeepRankOrder) {
  const auto uniform = [](const std::vector<int32_t>&) {
    return std::vector<float>(kVocabSize, std::log(0.25f));
  };
  BeamSearchParams params;
  params.max_tokens = 2;
  params.beam_width = 3;
  params.ignore_eos = true;
  const BeamSearchOutput output = Search({1}, params, uniform);
  ASSERT_EQ(output.sequences.size(), 3u);
  EXPECT_EQ(output.sequences[0].tokens, (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(output.sequences[1].tokens, (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(output.sequences[2].tokens, (std::vector<int32_t>{1, 0, 2}));
}

TEST(BeamSearchTest, FullContextFinishesWithLength) {
  BeamSearchParams params;
  params.max_tokens = 10;
  params.beam_width = 2;
  params.ignore_eos = true;
  const BeamSearchOutput output = Search({1, 2}, params, HashedLogprobs, /*max_model_len=*/5);
  ASSERT_EQ(output.sequences.size(), 2u);
  for (const BeamSearchSequence& beam : output.sequences) {
    EXPECT_EQ(beam.tokens.size(), 5u);
    EXPECT_EQ(beam.finish_reason, "length");
  }
}

TEST(BeamSearchTest, ABeamTheEngineCannotGrowFinishesWithLength) {
  BeamSearchParams params;
  params.max_tokens = 3;
  params.beam_width = 2;
  params.ignore_eos = true;
  // The engine extends the prompt, then refuses the beam of the first step's best token.
  const std::vector<float> first = HashedLogprobs({1});
  const int32_t refused_token =
      static_cast<int32_t>(std::max_element(first.begin(), first.end()) - first.begin());
  std::vector<BeamSearch> searches;
  searches.emplace_back(std::vector<int32_t>{1}, BeamSearch::Options{params, kEos});
  Status status =
      RunBeamSearches(&searches, [&](const std::vector<const std::vector<int32_t>*>& sequences,
                                     const std::vector<size_t>&, int k) {
        std::vector<std::optional<PositionLogprobs>> next;
        for (const auto* tokens : sequences) {
          const bool refused = tokens->size() == 2 && (*tokens)[1] == refused_token;
          next.push_back(refused
                             ? std::nullopt
                             : std::optional<PositionLogprobs>(Top(HashedLogprobs(*tokens), k)));
        }
        return Expected<std::vector<std::optional<PositionLogprobs>>>(std::move(next));
      });
  ASSERT_TRUE(status.ok());
  const BeamSearchOutput output = searches[0].Finish();
  ASSERT_EQ(output.sequences.size(), 2u);
  int num_refused = 0;
  for (const BeamSearchSequence& beam : output.sequences) {
    const bool refused = beam.tokens[1] == refused_token;
    num_refused += refused;
    EXPECT_EQ(beam.tokens.size(), refused ? 2u : 4u);
    EXPECT_EQ(beam.finish_reason, refused ? "length" : "");
  }
  EXPECT_EQ(num_refused, 1);  // its short score (the prompt and one token) ranks it in
}

TEST(BeamSearchTest, ParamsValidation) {
  BeamSearchParams params;
  EXPECT_EQ(params.Validate(), "");
  params.beam_width = 0;
  EXPECT_EQ(params.Validate(), "beam_width must be at least 1, got 0.");
  params.beam_width = 11;
  EXPECT_EQ(params.Validate(),
            "Requested sample logprobs of 22, which is greater than max allowed: 20");
  params.beam_width = 2;
  params.max_tokens = 0;
  EXPECT_EQ(params.Validate(), "max_tokens must be at least 1, got 0.");
  params.max_tokens = 1;
  params.temperature = -1.0f;
  EXPECT_EQ(params.Validate(), "temperature must be non-negative, got -1.0.");
}

}  // namespace
}  // namespace vllm
