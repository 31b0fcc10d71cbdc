// The pushdown parser's states over a byte grammar, for one matcher: interned parse stacks (a
// stack is a chain of nodes, one per pending grammar position; equal stacks share one id), sets
// of stacks (a parser state), and the lazily built byte transitions between sets, which make the
// states a matcher keeps returning to (a JSON string's interior) cost one table read per byte.
//
//   stack:  [top: a byte-range position] -> [return position] -> ... -> bottom (kNoParent)
//   set:    sorted ids of its stacks' top nodes; kAcceptedStack stands for the empty stack
//           (the root rule is finished).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "structured_output/byte_grammar.h"

namespace vllm {

class ParserStates {
 public:
  static constexpr int32_t kDeadSet = -1;       // no stack survives (or a limit was exceeded)
  static constexpr int32_t kUnknownStep = -2;   // a transition not computed yet
  static constexpr int32_t kAcceptedStack = 0;  // the node id of the empty stack
  static constexpr int32_t kNoParent = -1;      // below a stack's bottom node

  struct Options {
    size_t max_parse_stacks = 1 << 12;     // stacks per set; more makes the step fail
    size_t max_expansion_steps = 1 << 16;  // work to expand rules after one byte
  };

  ParserStates(const ByteGrammar& grammar, const Options& options);
  // The options a compiled grammar's matchers use.
  static Options OptionsFor(const GrammarLimits& limits);

  enum class Failure {
    kNone,
    kNoStack,           // no stack can take the byte (or the grammar matches nothing)
    kTooManyStacks,     // more than max_parse_stacks stacks would follow
    kTooMuchExpansion,  // expanding the rules took more than max_expansion_steps
  };
  // Why the last InitialSet or ComputeStep that returned kDeadSet did (memoized steps aside).
  Failure last_failure() const { return last_failure_; }

  // The state before any byte: the root rule expanded. kDeadSet when that exceeds the limits.
  int32_t InitialSet();
  // The memoized transition of `set_id` over `byte`, or kUnknownStep.
  int32_t LookupStep(int32_t set_id, uint8_t byte) const {
    return transitions_[sets_[set_id].transitions_begin + grammar_->byte_class[byte]];
  }
  // Computes (and memoizes) the transition: kDeadSet when no stack can take `byte`, or when
  // more than max_parse_stacks stacks would follow.
  int32_t ComputeStep(int32_t set_id, uint8_t byte);
  int32_t Step(int32_t set_id, uint8_t byte) {
    int32_t next = LookupStep(set_id, byte);
    return next != kUnknownStep ? next : ComputeStep(set_id, byte);
  }

  // The set holds the empty stack: the input so far is a complete sentence.
  bool IsAccepting(int32_t set_id) const { return Members(set_id).front() == kAcceptedStack; }
  // The set holds a stack that can take another byte.
  bool CanContinue(int32_t set_id) const {
    return Members(set_id).size() > (IsAccepting(set_id) ? 1u : 0u);
  }
  size_t num_stacks(int32_t set_id) const { return Members(set_id).size(); }

  // Appends the canonical form of the set to `key`: equal for equal sets of stacks whatever the
  // ids (and whichever ParserStates made them), so it can key a cache shared by matchers.
  void AppendCanonicalKey(int32_t set_id, std::vector<int32_t>* key);

  // Bytes held by nodes, sets, transitions and their indexes.
  size_t memory_bytes() const;
  // memory_bytes() right after the last Compact: what the kept sets needed.
  size_t bytes_after_compaction() const { return bytes_after_compaction_; }
  // Drops every node, set and transition that the sets in `set_ids` do not need; rewrites
  // `set_ids` (kDeadSet entries stay) to the ids the kept sets have after.
  void Compact(std::span<int32_t> set_ids);

 private:
  struct StackNode {
    int32_t position;  // into grammar_.elements; -1 for kAcceptedStack
    int32_t parent;    // a node id, or kNoParent
  };
  struct SetInfo {
    int32_t members_begin;  // into set_members_
    int32_t num_members;
    int32_t transitions_begin;  // into transitions_: [num_byte_classes]
  };

  std::span<const int32_t> Members(int32_t set_id) const {
    const SetInfo& set = sets_[set_id];
    return std::span<const int32_t>(set_members_).subspan(set.members_begin, set.num_members);
  }
  int32_t InternNode(int32_t position, int32_t parent);
  // Sorts and dedupes expanded_tops_ and interns it as a set; kDeadSet when empty or too large.
  int32_t InternExpandedSet();
  // Expands pending_ (positions with their return stacks) until every stack's top is a byte
  // range, into expanded_tops_; false when max_expansion_steps is exceeded.
  bool ExpandPending();
  bool ContentLess(int32_t a, int32_t b) const;
  void RebuildNodeIndex();
  void RebuildSetIndex();

  const ByteGrammar* grammar_;  // owned by the compiled grammar, which outlives the matcher
  Options options_;

  std::vector<StackNode> nodes_;
  std::vector<int32_t> node_index_;  // open addressing: node ids, -1 empty; power-of-two size
  std::vector<SetInfo> sets_;
  std::vector<int32_t> set_members_;
  std::vector<uint64_t> set_hashes_;  // [num_sets]
  std::vector<int32_t> set_index_;    // open addressing: set ids, -1 empty; power-of-two size
  std::vector<int32_t> transitions_;

  // Scratch, reused between steps.
  struct PendingPosition {
    int32_t position;
    int32_t parent;
  };
  std::vector<PendingPosition> pending_;
  std::vector<int32_t> expanded_tops_;
  std::vector<uint32_t> node_marks_;     // [num_nodes]: == mark_epoch_ when visited this pass
  std::vector<int32_t> node_key_index_;  // [num_nodes]: canonical index while building a key
  uint32_t mark_epoch_ = 0;
  std::vector<int32_t> sorted_tops_;
  Failure last_failure_ = Failure::kNone;
  size_t bytes_after_compaction_ = 0;
};

}  // namespace vllm
