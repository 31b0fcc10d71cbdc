// Tests of StructuredOutputCompiler (large enums and choices compile, in time linear in their
// size; every limit is an error that names it; cancellation and the cache) and of
// GrammarCompilePool (compiles off the caller's thread, one per constraint, bounded).
#include "structured_output/structured_output_compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "structured_output/grammar_compile_pool.h"
#include "structured_output/test_compile_gate.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

// `count` distinct strings of 6 to 13 characters of [a-z0-9], the same on every run.
std::vector<std::string> Items(int count) {
  std::mt19937 rng(static_cast<uint32_t>(count));
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::set<std::string> seen;
  std::vector<std::string> items;
  while (static_cast<int>(items.size()) < count) {
    std::string item(6 + rng() % 8, ' ');
    for (char& c : item) c = alphabet[rng() % alphabet.size()];
    if (seen.insert(item).second) items.push_back(item);
  }
  return items;
}

std::string EnumSchema(const std::vector<std::string>& items) {
  return nlohmann::json{{"enum", items}}.dump();
}

std::shared_ptr<const IndexedVocabulary> Vocabulary() {
  return IndexVocabulary(MakeVocabulary({"a", "b", "\"", "ab"}));
}

// An 80,000-item enum compiles in about 0.2 s (release build, 2 cores); the quadratic compile
// it replaced took 51 s. The limit is generous and only fails a compile far from linear.
constexpr double kGenerousSeconds = 20.0;

TEST(StructuredOutputCompilerTest, EightyThousandItemEnumMatchesItsMembersOnly) {
  const std::vector<std::string> items = Items(80000);
  StructuredOutputCompiler compiler(Vocabulary(), {.compile_timeout_seconds = kGenerousSeconds});
  auto grammar = compiler.Compile({.json = EnumSchema(items)});
  ASSERT_TRUE(grammar.ok()) << grammar.error();
  for (size_t i : {size_t{0}, size_t{1}, size_t{12345}, size_t{40000}, items.size() - 1}) {
    EXPECT_TRUE(Accepts(*grammar, "\"" + items[i] + "\"")) << items[i];
  }
  for (const std::string& other : std::vector<std::string>{
           "\"" + items[0].substr(0, 5) + "\"", "\"" + items[1] + "x!\"", "\"" + items[2] + "A\"",
           items[3], "\"\"", "\"" + items[4] + "\" "}) {
    EXPECT_FALSE(Accepts(*grammar, other)) << other;
  }
}

TEST(StructuredOutputCompilerTest, EightyThousandChoicesMatchOnlyThemselves) {
  std::vector<std::string> items = Items(80000);
  items.push_back("é ☕");
  items.push_back(items[7] + "-more");  // one item a prefix of another
  StructuredOutputCompiler compiler(Vocabulary(), {.compile_timeout_seconds = kGenerousSeconds});
  auto grammar = compiler.Compile({.choice = items});
  ASSERT_TRUE(grammar.ok()) << grammar.error();
  for (size_t i : {size_t{0}, size_t{7}, size_t{50000}, items.size() - 2, items.size() - 1}) {
    EXPECT_TRUE(Accepts(*grammar, items[i])) << items[i];
  }
  for (const std::string& other : std::vector<std::string>{
           items[0].substr(0, 5), items[1] + "!", items[7] + "-", "é", "\"" + items[2] + "\""}) {
    EXPECT_FALSE(Accepts(*grammar, other)) << other;
  }
}

TEST(StructuredOutputCompilerTest, ConstraintOverTheSizeLimitIsRefusedByName) {
  StructuredOutputCompiler compiler(Vocabulary(), {.max_constraint_bytes = 1000});
  for (const StructuredOutputsParams& big :
       {StructuredOutputsParams{.json = EnumSchema(Items(100))},
        StructuredOutputsParams{.regex = std::string(1001, 'a')},
        StructuredOutputsParams{.choice = Items(200)},
        StructuredOutputsParams{.grammar = "root ::= \"" + std::string(1000, 'a') + "\""}}) {
    auto grammar = compiler.Compile(big);
    ASSERT_FALSE(grammar.ok());
    EXPECT_THAT(grammar.error(), HasSubstr("more than the 1000 allowed"));
    EXPECT_THAT(grammar.error(), HasSubstr("--structured-outputs-max-bytes"));
  }
  EXPECT_TRUE(compiler.Compile({.regex = std::string(1000, 'a')}).ok());
}

TEST(StructuredOutputCompilerTest, GeneratedGrammarOverItsLimitIsRefused) {
  StructuredOutputCompiler compiler(Vocabulary(), {.grammar = {.max_grammar_bytes = 10000}});
  auto grammar = compiler.Compile({.json = EnumSchema(Items(2000))});
  ASSERT_FALSE(grammar.ok());
  EXPECT_THAT(grammar.error(), HasSubstr("grammar too large"));
  EXPECT_THAT(grammar.error(), HasSubstr("at most 10000"));
}

TEST(StructuredOutputCompilerTest, CompileOverTheTimeLimitIsRefusedByName) {
  // The hook spends more CPU time than the limit inside the compile: no race with the machine.
  SetStructuredOutputCompileHookForTesting(
      [](const StructuredOutputsParams&) { BurnCpuSeconds(0.05); });
  StructuredOutputCompiler compiler(Vocabulary(), {.compile_timeout_seconds = 0.01});
  for (const StructuredOutputsParams& constraint :
       {StructuredOutputsParams{.json = EnumSchema(Items(20000))},
        StructuredOutputsParams{.regex = "[a-z]+"}}) {
    auto grammar = compiler.Compile(constraint);
    ASSERT_FALSE(grammar.ok());
    EXPECT_THAT(grammar.error(), HasSubstr("took more than 0.01 s of CPU time to compile"));
    EXPECT_THAT(grammar.error(), HasSubstr("--structured-outputs-compile-timeout"));
  }
  SetStructuredOutputCompileHookForTesting({});
  EXPECT_TRUE(compiler.Compile({.regex = "[a-z]+"}).ok());  // nothing cached from the refusal
  // Without the hook, the loops of a large compile see the limit pass.
  StructuredOutputCompiler strict(Vocabulary(), {.compile_timeout_seconds = 0.001});
  auto large = strict.Compile({.json = EnumSchema(Items(80000))});
  ASSERT_FALSE(large.ok());
  EXPECT_THAT(large.error(), HasSubstr("took more than 0.001 s of CPU time"));
}

TEST(StructuredOutputCompilerTest, TimeLimitCountsCpuTimeNotWaiting) {
  // A compile that waits (a busy machine, here a sleep) without working is not refused.
  SetStructuredOutputCompileHookForTesting([](const StructuredOutputsParams&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  StructuredOutputCompiler compiler(Vocabulary(), {.compile_timeout_seconds = 0.01});
  auto grammar = compiler.Compile({.regex = "[a-z]+"});
  SetStructuredOutputCompileHookForTesting({});
  EXPECT_TRUE(grammar.ok()) << grammar.error();
}

TEST(StructuredOutputCompilerTest, CancellationStopsTheCompileInsideItsLoops) {
  StructuredOutputCompiler compiler(Vocabulary());
  for (const StructuredOutputsParams& constraint :
       {StructuredOutputsParams{.json = EnumSchema(Items(20000))},
        StructuredOutputsParams{.choice = Items(20000)}}) {
    int polls = 0;
    // Cancelled at the third poll, which the converter's loops reach long before the end.
    auto grammar = compiler.Compile(constraint, [&] { return ++polls >= 3; });
    ASSERT_FALSE(grammar.ok());
    EXPECT_THAT(grammar.error(), HasSubstr("cancelled"));
    EXPECT_EQ(polls, 3);  // nothing polls once it is cancelled
    EXPECT_EQ(compiler.Lookup(constraint), nullptr);
  }
}

TEST(StructuredOutputCompilerTest, CachedConstraintNeedsNoCompile) {
  std::atomic<int> compiles = 0;
  SetStructuredOutputCompileHookForTesting([&](const StructuredOutputsParams&) { ++compiles; });
  StructuredOutputCompiler compiler(Vocabulary());
  const StructuredOutputsParams constraint = {.json = EnumSchema(Items(1000))};
  EXPECT_EQ(compiler.Lookup(constraint), nullptr);
  auto first = compiler.Compile(constraint);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_EQ(compiler.Lookup(constraint), *first);
  auto second = compiler.Compile(constraint);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(compiles.load(), 1);
  SetStructuredOutputCompileHookForTesting({});
}

TEST(StructuredOutputCompilerTest, VocabularyIsIndexedOnTheFirstCompile) {
  int indexed = 0;
  StructuredOutputCompiler compiler([&] {
    ++indexed;
    return Vocabulary();
  });
  EXPECT_TRUE(compiler.Check({.regex = "a"}).ok());
  EXPECT_EQ(indexed, 0);
  ASSERT_TRUE(compiler.Compile({.regex = "a"}).ok());
  ASSERT_TRUE(compiler.Compile({.regex = "b"}).ok());
  EXPECT_EQ(indexed, 1);
}

// The result of one GrammarCompilePool::Submit.
struct Answer {
  std::promise<GrammarCompilePool::Result> promise;
  std::future<GrammarCompilePool::Result> future = promise.get_future();
  std::thread::id thread;
  GrammarCompilePool::Done Done() {
    return [this](GrammarCompilePool::Result result) {
      thread = std::this_thread::get_id();
      promise.set_value(std::move(result));
    };
  }
};

TEST(GrammarCompilePoolTest, OneCompilePerConstraintOffTheCallersThread) {
  TestCompileGate gate("held");
  StructuredOutputCompiler compiler(Vocabulary());
  GrammarCompilePool pool(compiler, {.num_threads = 2});
  Answer answers[3];
  for (Answer& answer : answers) ASSERT_TRUE(pool.Submit({.regex = "held"}, {}, answer.Done()));
  gate.WaitForEntered();
  EXPECT_EQ(pool.num_pending(), 1u);
  // Another constraint compiles on the other thread meanwhile.
  Answer other;
  ASSERT_TRUE(pool.Submit({.choice = std::vector<std::string>{"x", "y"}}, {}, other.Done()));
  ASSERT_TRUE(other.future.get().ok());
  EXPECT_NE(other.thread, std::this_thread::get_id());
  gate.Release();
  auto first = answers[0].future.get();
  ASSERT_TRUE(first.ok()) << first.error();
  for (Answer* answer : {&answers[1], &answers[2]}) {
    auto result = answer->future.get();
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(*result, *first);
  }
  EXPECT_EQ(gate.num_entered(), 1);
  EXPECT_EQ(pool.num_pending(), 0u);
}

TEST(GrammarCompilePoolTest, AnswersWithoutACompileOnTheCallersThread) {
  StructuredOutputCompiler compiler(Vocabulary(), {.max_constraint_bytes = 100});
  GrammarCompilePool pool(compiler, {.num_threads = 1});
  // (Params with two constraints never reach the pool: they are refused where the request is
  // checked, ValidatedSamplingParamsTest.)
  Answer too_big, compiled, cached;
  ASSERT_TRUE(pool.Submit({.regex = std::string(101, 'a')}, {}, too_big.Done()));
  EXPECT_THAT(too_big.future.get().error(), HasSubstr("--structured-outputs-max-bytes"));
  EXPECT_EQ(too_big.thread, std::this_thread::get_id());
  ASSERT_TRUE(pool.Submit({.regex = "a+"}, {}, compiled.Done()));
  ASSERT_TRUE(compiled.future.get().ok());
  ASSERT_TRUE(pool.Submit({.regex = "a+"}, {}, cached.Done()));
  ASSERT_TRUE(cached.future.get().ok());
  EXPECT_EQ(cached.thread, std::this_thread::get_id());
}

TEST(GrammarCompilePoolTest, BoundedAndCancellable) {
  TestCompileGate gate("held");
  StructuredOutputCompiler compiler(Vocabulary());
  GrammarCompilePool pool(compiler, {.num_threads = 1, .max_pending = 2});
  std::atomic<bool> cancelled = false;
  Answer held, queued, refused;
  ASSERT_TRUE(pool.Submit(
      {.regex = "held"}, [&] { return cancelled.load(); }, held.Done()));
  gate.WaitForEntered();
  ASSERT_TRUE(pool.Submit(
      {.regex = "queued"}, [] { return true; }, queued.Done()));
  // Full, until the queued compile whose only caller cancelled is dropped for another.
  ASSERT_TRUE(pool.Submit({.regex = "refused?"}, {}, refused.Done()));
  EXPECT_THAT(queued.future.get().error(), HasSubstr("cancelled"));
  EXPECT_FALSE(pool.Submit({.regex = "one too many"}, {}, [](GrammarCompilePool::Result) {
    ADD_FAILURE() << "a refused Submit answered";
  }));
  cancelled = true;
  gate.Release();
  EXPECT_THAT(held.future.get().error(), HasSubstr("cancelled"));
  EXPECT_TRUE(refused.future.get().ok());
}

}  // namespace
}  // namespace vllm
