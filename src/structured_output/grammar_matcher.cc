// Compilation (parse, left recursion check, lowering to bytes, a check that the start state fits
// the limits) and the matcher: bytes advance the parser state through the memoized transitions;
// a token mask walks the vocabulary trie in preorder, one transition per trie node, skipping the
// subtree under any byte no stack can take.
#include "structured_output/grammar_matcher.h"

#include <algorithm>
#include <string>
#include <utility>

#include "structured_output/gbnf_parser.h"
#include "structured_output/grammar_analysis.h"

namespace vllm {
namespace {

void SetBit(std::span<uint32_t> mask, int32_t token_id) {
  mask[token_id / 32] |= 1u << (token_id % 32);
}

}  // namespace

CompiledGrammar::CompiledGrammar(ByteGrammar byte_grammar,
                                 std::shared_ptr<const IndexedVocabulary> vocabulary,
                                 const GrammarLimits& limits)
    : byte_grammar_(std::move(byte_grammar)),
      vocabulary_(std::move(vocabulary)),
      limits_(limits),
      mask_cache_(limits.max_cached_masks) {}

Expected<std::shared_ptr<const CompiledGrammar>> CompiledGrammar::Compile(
    std::string_view gbnf, std::shared_ptr<const IndexedVocabulary> vocabulary,
    const GrammarLimits& limits) {
  if (vocabulary == nullptr) return Error{"no vocabulary to compile the grammar against"};
  Expected<Grammar> grammar = ParseGbnf(gbnf, limits);
  if (!grammar.ok()) return Error{grammar.error()};
  VLLM_RETURN_IF_ERROR(CheckNoLeftRecursion(*grammar));
  Expected<ByteGrammar> byte_grammar = LowerToBytes(*grammar, limits);
  if (!byte_grammar.ok()) return Error{byte_grammar.error()};
  std::shared_ptr<const CompiledGrammar> compiled(
      new CompiledGrammar(std::move(*byte_grammar), std::move(vocabulary), limits));
  ParserStates states(compiled->byte_grammar_, ParserStates::OptionsFor(limits));
  if (states.InitialSet() == ParserStates::kDeadSet) {
    switch (states.last_failure()) {
      case ParserStates::Failure::kTooManyStacks:
        return Error{"grammar too ambiguous: its start needs more than " +
                     std::to_string(limits.max_parse_stacks) + " parse stacks"};
      case ParserStates::Failure::kTooMuchExpansion:
        return Error{"grammar too large to expand: its start needs too many rule expansions"};
      default:
        return Error{"the grammar matches nothing (rule `root` derives no string)"};
    }
  }
  return compiled;
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)),
      states_(grammar_->byte_grammar(), ParserStates::OptionsFor(grammar_->limits())),
      current_set_(states_.InitialSet()),
      mask_words_(TokenBitmaskWords(grammar_->vocab_size())),
      path_sets_(grammar_->vocabulary().max_token_length() + 1) {}

bool GrammarMatcher::IsCompleted() const {
  return stop_token_accepted_ ||
         (current_set_ != ParserStates::kDeadSet && states_.IsAccepting(current_set_));
}

bool GrammarMatcher::IsTerminated() const {
  return stop_token_accepted_ ||
         (current_set_ != ParserStates::kDeadSet && states_.IsAccepting(current_set_) &&
          !states_.CanContinue(current_set_));
}

bool GrammarMatcher::StatesOver(size_t max_bytes) const {
  // What the live sets need is kept (it grows with the input's nesting): compacting again before
  // the states double would cost a copy per step.
  return states_.memory_bytes() > std::max(max_bytes, 2 * states_.bytes_after_compaction());
}

int32_t GrammarMatcher::StepWithinBudget(std::span<int32_t> roots, size_t from, uint8_t byte) {
  if (StatesOver(grammar_->limits().max_parser_state_bytes)) {
    states_.Compact(roots);
    current_set_ = roots[0];
  }
  return states_.ComputeStep(roots[from], byte);
}

bool GrammarMatcher::AcceptString(std::string_view bytes) {
  if (stop_token_accepted_) return bytes.empty();
  if (current_set_ == ParserStates::kDeadSet) return false;
  // roots[0]: the state before the string; roots[1]: the state so far.
  int32_t roots[2] = {current_set_, current_set_};
  for (char c : bytes) {
    const uint8_t byte = static_cast<uint8_t>(c);
    int32_t next = states_.LookupStep(roots[1], byte);
    if (next == ParserStates::kUnknownStep) next = StepWithinBudget(roots, 1, byte);
    if (next == ParserStates::kDeadSet) return false;
    roots[1] = next;
  }
  current_set_ = roots[1];
  CompactIfLarge();
  return true;
}

bool GrammarMatcher::AcceptToken(int32_t token_id) {
  const IndexedVocabulary& vocabulary = grammar_->vocabulary();
  if (token_id < 0 || token_id >= vocabulary.vocab_size()) return false;
  if (vocabulary.is_stop_token(token_id)) {
    if (!IsCompleted()) return false;
    stop_token_accepted_ = true;
    return true;
  }
  const std::string& bytes = vocabulary.token_bytes(token_id);
  if (bytes.empty()) return false;
  return AcceptString(bytes);
}

void GrammarMatcher::CompactIfLarge() {
  if (StatesOver(grammar_->limits().max_parser_state_bytes / 8)) {
    states_.Compact(std::span<int32_t>(&current_set_, 1));
  }
}

void GrammarMatcher::FillNextTokenBitmask(std::span<uint32_t> bitmask) {
  FillMask(bitmask, /*use_cache=*/true);
}

void GrammarMatcher::FillNextTokenBitmaskUncached(std::span<uint32_t> bitmask) {
  FillMask(bitmask, /*use_cache=*/false);
}

void GrammarMatcher::FillMask(std::span<uint32_t> bitmask, bool use_cache) {
  // Into the caller's span when it is big enough, else into mask_words_ and then copied.
  const size_t num_words = mask_words_.size();
  const std::span<uint32_t> mask =
      bitmask.size() >= num_words ? bitmask.first(num_words) : std::span<uint32_t>(mask_words_);
  if (IsTerminated() || current_set_ == ParserStates::kDeadSet) {
    std::fill(mask.begin(), mask.end(), 0u);
    if (IsCompleted()) {
      for (int32_t token_id : grammar_->vocabulary().stop_token_ids()) SetBit(mask, token_id);
    }
  } else if (!use_cache) {
    ComputeMask(mask);
  } else {
    state_key_.clear();
    states_.AppendCanonicalKey(current_set_, &state_key_);
    if (!grammar_->mask_cache().Lookup(state_key_, mask)) {
      ComputeMask(mask);
      grammar_->mask_cache().Insert(state_key_, mask);
    }
  }
  if (mask.data() != bitmask.data()) {
    std::copy_n(mask.begin(), bitmask.size(), bitmask.begin());
  }
}

void GrammarMatcher::ComputeMask(std::span<uint32_t> mask) {
  std::fill(mask.begin(), mask.end(), 0u);
  const IndexedVocabulary& vocabulary = grammar_->vocabulary();
  const std::span<const VocabularyTrieNode> nodes = vocabulary.trie_nodes();
  const std::span<const int32_t> token_ids = vocabulary.trie_token_ids();
  const int32_t num_nodes = static_cast<int32_t>(nodes.size());
  // path_sets_[d]: the parser state after the first d bytes of the current trie path.
  path_sets_[0] = current_set_;
  for (int32_t i = 0; i < num_nodes;) {
    const VocabularyTrieNode& node = nodes[i];
    int32_t next = states_.LookupStep(path_sets_[node.depth - 1], node.byte);
    if (next == ParserStates::kUnknownStep) {
      next = StepWithinBudget(std::span<int32_t>(path_sets_).first(node.depth), node.depth - 1,
                              node.byte);
    }
    if (next == ParserStates::kDeadSet) {
      i = node.subtree_end;
      continue;
    }
    path_sets_[node.depth] = next;
    const int32_t tokens_end = vocabulary.TokensEnd(i);
    for (int32_t t = node.tokens_begin; t < tokens_end; ++t) SetBit(mask, token_ids[t]);
    ++i;
  }
  if (states_.IsAccepting(current_set_)) {
    for (int32_t token_id : vocabulary.stop_token_ids()) SetBit(mask, token_id);
  }
}

}  // namespace vllm
