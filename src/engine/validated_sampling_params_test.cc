#include "vllm/validated_sampling_params.h"

#include <gtest/gtest.h>

#include "common/expected.h"
#include "engine/test_engine_args.h"
#include "vllm/async_llm.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

TEST(ValidatedSamplingParamsTest, AcceptsValidParamsAndRefusesWithVllmsMessage) {
  SamplingParams params;
  params.temperature = 0.5f;
  params.structured_outputs = StructuredOutputsParams{.regex = "a+"};
  auto validated = ValidatedSamplingParams::Validate(params);
  ASSERT_TRUE(validated.ok()) << validated.error();
  EXPECT_FLOAT_EQ((*validated)->temperature, 0.5f);
  EXPECT_EQ((*validated).get().structured_outputs->regex, "a+");

  params.top_p = 0.0f;
  auto refused = ValidatedSamplingParams::Validate(params);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "top_p must be in (0, 1], got 0.0.");
  params.top_p = 1.0f;
  params.structured_outputs->json = "{}";
  refused = ValidatedSamplingParams::Validate(params);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(),
            "You can only use one kind of structured outputs constraint but multiple are "
            "specified.");
}

TEST(ValidatedSamplingParamsTest, DefaultsAreValid) {
  EXPECT_EQ((*ValidatedSamplingParams()).Validate(), "");
  EXPECT_EQ(ValidatedSamplingParams()->max_tokens, SamplingParams().max_tokens);
}

// WithMaxTokens and WithOutputKind keep every rule true, so their results need no check.
TEST(ValidatedSamplingParamsTest, EditsKeepTheParamsValid) {
  SamplingParams params;
  params.max_tokens.reset();
  params.min_tokens = 40;
  auto validated = ValidatedSamplingParams::Validate(params);
  ASSERT_TRUE(validated.ok()) << validated.error();
  for (int max_tokens : {-3, 0, 1, 39, 40, 1000}) {
    const ValidatedSamplingParams fitted = validated->WithMaxTokens(max_tokens);
    EXPECT_EQ(fitted->max_tokens, std::max(max_tokens, 1));
    EXPECT_EQ(fitted->min_tokens, std::min(40, std::max(max_tokens, 1)));
    EXPECT_EQ(fitted->Validate(), "") << max_tokens;
  }
  const ValidatedSamplingParams delta = validated->WithOutputKind(RequestOutputKind::kDelta);
  EXPECT_EQ(delta->output_kind, RequestOutputKind::kDelta);
  EXPECT_EQ(delta->min_tokens, 40);
}

TEST(ValidatedSamplingParamsTest, BeamSearchStepIsCheckedWithTheSearch) {
  BeamSearchParams params;
  params.beam_width = 3;
  auto step = ValidatedSamplingParams::BeamSearchStep(params);
  ASSERT_TRUE(step.ok()) << step.error();
  EXPECT_EQ((*step)->logprobs, 6);
  EXPECT_EQ((*step)->max_tokens, 1);
  EXPECT_EQ((*step)->temperature, 0.0f);
  params.beam_width = 11;
  auto refused = ValidatedSamplingParams::BeamSearchStep(params);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(),
            "Requested sample logprobs of 22, which is greater than max allowed: 20");
  params.beam_width = 2;
  params.temperature = -1.0f;
  refused = ValidatedSamplingParams::BeamSearchStep(params);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "temperature must be non-negative, got -1.0.");
}

TEST(ValidatedSamplingParamsTest, CountsEachCheck) {
  const int64_t before = ValidatedSamplingParams::num_validations_for_testing();
  ASSERT_TRUE(ValidatedSamplingParams::Validate(SamplingParams()).ok());
  SamplingParams invalid;
  invalid.n = 0;
  ASSERT_FALSE(ValidatedSamplingParams::Validate(invalid).ok());
  EXPECT_EQ(ValidatedSamplingParams::num_validations_for_testing() - before, 2);
}

// Below the entry point nothing checks the params again: one check per request, or per call of
// LLM's (one params for every prompt), whatever n, the constraint or the number of beam steps.
TEST(ValidatedSamplingParamsTest, EachEntryPointChecksOnceAndTheEngineNever) {
  const auto checks_since = [](int64_t before) {
    return ValidatedSamplingParams::num_validations_for_testing() - before;
  };
  {
    AsyncLLM engine(StoriesArgs());
    SamplingParams params = Greedy(4);
    params.n = 3;
    params.structured_outputs = StructuredOutputsParams{.regex = "[a-z]+"};
    int64_t before = ValidatedSamplingParams::num_validations_for_testing();
    auto stream = engine.Submit("a", "Once", params, {}, {});
    while (stream->Next()) {
    }
    EXPECT_EQ(stream->error(), "");
    EXPECT_EQ(checks_since(before), 1);
    auto validated = ValidatedSamplingParams::Validate(Greedy(3));
    ASSERT_TRUE(validated.ok());
    before = ValidatedSamplingParams::num_validations_for_testing();
    stream = engine.Submit("b", "The dog", *validated, {}, {});
    while (stream->Next()) {
    }
    EXPECT_EQ(stream->error(), "");
    EXPECT_EQ(checks_since(before), 0);
    SamplingParams invalid = Greedy(3);
    invalid.temperature = -1.0f;
    stream = engine.Submit("c", "The dog", invalid, {}, {});
    EXPECT_FALSE(stream->Next().has_value());
    EXPECT_TRUE(stream->rejected());
    EXPECT_EQ(stream->error(), "temperature must be non-negative, got -1.0.");
  }
  LLM llm(StoriesArgs());
  int64_t before = ValidatedSamplingParams::num_validations_for_testing();
  EXPECT_EQ(llm.Generate({"Once", "The dog", "Lily"}, Greedy(2), false).size(), 3u);
  EXPECT_EQ(checks_since(before), 1);
  BeamSearchParams beams;
  beams.beam_width = 2;
  beams.max_tokens = 3;
  before = ValidatedSamplingParams::num_validations_for_testing();
  EXPECT_EQ(llm.BeamSearch({std::string("Once")}, beams).size(), 1u);
  EXPECT_EQ(checks_since(before), 1);
}

}  // namespace
}  // namespace vllm
