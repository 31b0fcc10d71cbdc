// Parser states: node and set interning (open-addressing hash tables over flat arrays), rule
// expansion with an explicit work list, and the lazily built transition table.
#include "structured_output/parser_states.h"

#include <algorithm>
#include <bit>

namespace vllm {
namespace {

using Element = ByteGrammarElement;

constexpr size_t kMinNodeIndexSize = 1024;
constexpr size_t kMinSetIndexSize = 256;

uint64_t Mix(uint64_t value) {
  value += 0x9E3779B97F4A7C15ull;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

uint64_t NodeHash(int32_t position, int32_t parent) {
  return Mix((static_cast<uint64_t>(static_cast<uint32_t>(position)) << 32) |
             static_cast<uint32_t>(parent));
}

uint64_t SetHash(std::span<const int32_t> members) {
  uint64_t hash = members.size();
  for (int32_t member : members) hash = Mix(hash ^ static_cast<uint32_t>(member));
  return hash;
}

// A power-of-two table size that keeps `count` entries at most half full.
size_t IndexSizeFor(size_t count, size_t min_size) {
  return std::max(min_size, std::bit_ceil(2 * count + 1));
}

}  // namespace

ParserStates::Options ParserStates::OptionsFor(const GrammarLimits& limits) {
  return Options{
      .max_parse_stacks = limits.max_parse_stacks,
      .max_expansion_steps = std::max<size_t>(size_t{1} << 16, 16 * limits.max_parse_stacks)};
}

ParserStates::ParserStates(const ByteGrammar& grammar, const Options& options)
    : grammar_(&grammar), options_(options) {
  nodes_.push_back(StackNode{.position = -1, .parent = kNoParent});  // kAcceptedStack
  node_marks_.push_back(0);
  node_key_index_.push_back(0);
  node_index_.assign(kMinNodeIndexSize, -1);
  set_index_.assign(kMinSetIndexSize, -1);
}

int32_t ParserStates::InternNode(int32_t position, int32_t parent) {
  const size_t mask = node_index_.size() - 1;
  size_t slot = NodeHash(position, parent) & mask;
  for (int32_t id; (id = node_index_[slot]) >= 0; slot = (slot + 1) & mask) {
    if (nodes_[id].position == position && nodes_[id].parent == parent) return id;
  }
  const int32_t id = static_cast<int32_t>(nodes_.size());
  nodes_.push_back(StackNode{.position = position, .parent = parent});
  node_marks_.push_back(0);
  node_key_index_.push_back(0);
  node_index_[slot] = id;
  if (2 * nodes_.size() > node_index_.size()) RebuildNodeIndex();
  return id;
}

void ParserStates::RebuildNodeIndex() {
  node_index_.assign(IndexSizeFor(nodes_.size(), kMinNodeIndexSize), -1);
  const size_t mask = node_index_.size() - 1;
  for (size_t id = 1; id < nodes_.size(); ++id) {
    size_t slot = NodeHash(nodes_[id].position, nodes_[id].parent) & mask;
    while (node_index_[slot] >= 0) slot = (slot + 1) & mask;
    node_index_[slot] = static_cast<int32_t>(id);
  }
}

void ParserStates::RebuildSetIndex() {
  set_index_.assign(IndexSizeFor(sets_.size(), kMinSetIndexSize), -1);
  const size_t mask = set_index_.size() - 1;
  for (size_t id = 0; id < sets_.size(); ++id) {
    size_t slot = set_hashes_[id] & mask;
    while (set_index_[slot] >= 0) slot = (slot + 1) & mask;
    set_index_[slot] = static_cast<int32_t>(id);
  }
}

bool ParserStates::ExpandPending() {
  if (++mark_epoch_ == 0) {
    std::fill(node_marks_.begin(), node_marks_.end(), 0);
    mark_epoch_ = 1;
  }
  expanded_tops_.clear();
  size_t num_steps = 0;
  while (!pending_.empty()) {
    const PendingPosition pending = pending_.back();
    pending_.pop_back();
    if (++num_steps > options_.max_expansion_steps) {
      last_failure_ = Failure::kTooMuchExpansion;
      return false;
    }
    const Element& element = grammar_->elements[pending.position];
    switch (element.kind) {
      case Element::Kind::kByteRange:
        expanded_tops_.push_back(InternNode(pending.position, pending.parent));
        break;
      case Element::Kind::kEnd: {
        if (pending.parent == kNoParent) {
          expanded_tops_.push_back(kAcceptedStack);
          break;
        }
        const StackNode parent = nodes_[pending.parent];
        if (grammar_->elements[parent.position].kind == Element::Kind::kByteRange) {
          expanded_tops_.push_back(pending.parent);
        } else {
          pending_.push_back({parent.position, parent.parent});
        }
        break;
      }
      case Element::Kind::kRuleRef: {
        // The same reference with the same return stack expands to the same stacks: once.
        const int32_t id = InternNode(pending.position, pending.parent);
        if (node_marks_[id] == mark_epoch_) break;
        node_marks_[id] = mark_epoch_;
        const int32_t next_position = pending.position + 1;
        const int32_t return_node =
            grammar_->elements[next_position].kind == Element::Kind::kEnd
                ? pending.parent  // a tail call: nothing to return to in this alternative
                : InternNode(next_position, pending.parent);
        for (int32_t start : grammar_->alternatives(element.rule_id)) {
          pending_.push_back({start, return_node});
        }
        break;
      }
    }
  }
  return true;
}

int32_t ParserStates::InternExpandedSet() {
  std::sort(expanded_tops_.begin(), expanded_tops_.end());
  expanded_tops_.erase(std::unique(expanded_tops_.begin(), expanded_tops_.end()),
                       expanded_tops_.end());
  if (expanded_tops_.empty()) {
    last_failure_ = Failure::kNoStack;
    return kDeadSet;
  }
  if (expanded_tops_.size() > options_.max_parse_stacks) {
    last_failure_ = Failure::kTooManyStacks;
    return kDeadSet;
  }
  const uint64_t hash = SetHash(expanded_tops_);
  const size_t mask = set_index_.size() - 1;
  size_t slot = hash & mask;
  for (int32_t id; (id = set_index_[slot]) >= 0; slot = (slot + 1) & mask) {
    if (set_hashes_[id] != hash) continue;
    const std::span<const int32_t> members = Members(id);
    if (std::equal(members.begin(), members.end(), expanded_tops_.begin(), expanded_tops_.end())) {
      return id;
    }
  }
  const int32_t id = static_cast<int32_t>(sets_.size());
  sets_.push_back(SetInfo{.members_begin = static_cast<int32_t>(set_members_.size()),
                          .num_members = static_cast<int32_t>(expanded_tops_.size()),
                          .transitions_begin = static_cast<int32_t>(transitions_.size())});
  set_members_.insert(set_members_.end(), expanded_tops_.begin(), expanded_tops_.end());
  set_hashes_.push_back(hash);
  transitions_.resize(transitions_.size() + grammar_->num_byte_classes, kUnknownStep);
  set_index_[slot] = id;
  if (2 * sets_.size() > set_index_.size()) RebuildSetIndex();
  return id;
}

int32_t ParserStates::InitialSet() {
  pending_.clear();
  for (int32_t start : grammar_->alternatives(grammar_->root_rule_id)) {
    pending_.push_back({start, kNoParent});
  }
  return ExpandPending() ? InternExpandedSet() : kDeadSet;
}

int32_t ParserStates::ComputeStep(int32_t set_id, uint8_t byte) {
  pending_.clear();
  for (int32_t member : Members(set_id)) {
    if (member == kAcceptedStack) continue;
    const StackNode& node = nodes_[member];
    const Element& element = grammar_->elements[node.position];
    if (element.first_byte <= byte && byte <= element.last_byte) {
      pending_.push_back({node.position + 1, node.parent});
    }
  }
  int32_t next = kDeadSet;
  if (pending_.empty()) {
    last_failure_ = Failure::kNoStack;
  } else if (ExpandPending()) {
    next = InternExpandedSet();
  }
  transitions_[sets_[set_id].transitions_begin + grammar_->byte_class[byte]] = next;
  return next;
}

bool ParserStates::ContentLess(int32_t a, int32_t b) const {
  while (a != b) {
    if (a == kNoParent) return true;
    if (b == kNoParent) return false;
    if (nodes_[a].position != nodes_[b].position) return nodes_[a].position < nodes_[b].position;
    a = nodes_[a].parent;
    b = nodes_[b].parent;
  }
  return false;
}

// The key: [accepting, number of stacks, then each stack from its top: grammar positions, ending
// with -1 at its bottom or with -2 - i where it joins the i-th node already written].
void ParserStates::AppendCanonicalKey(int32_t set_id, std::vector<int32_t>* key) {
  const std::span<const int32_t> members = Members(set_id);
  const bool accepting = IsAccepting(set_id);
  sorted_tops_.assign(members.begin() + (accepting ? 1 : 0), members.end());
  std::sort(sorted_tops_.begin(), sorted_tops_.end(),
            [this](int32_t a, int32_t b) { return ContentLess(a, b); });
  key->push_back(accepting ? 1 : 0);
  key->push_back(static_cast<int32_t>(sorted_tops_.size()));
  if (++mark_epoch_ == 0) {
    std::fill(node_marks_.begin(), node_marks_.end(), 0);
    mark_epoch_ = 1;
  }
  int32_t num_written = 0;
  for (int32_t node : sorted_tops_) {
    while (true) {
      if (node == kNoParent) {
        key->push_back(-1);
        break;
      }
      if (node_marks_[node] == mark_epoch_) {
        key->push_back(-2 - node_key_index_[node]);
        break;
      }
      node_marks_[node] = mark_epoch_;
      node_key_index_[node] = num_written++;
      key->push_back(nodes_[node].position);
      node = nodes_[node].parent;
    }
  }
}

size_t ParserStates::memory_bytes() const {
  return nodes_.capacity() * sizeof(StackNode) +
         (node_index_.capacity() + node_key_index_.capacity() + set_members_.capacity() +
          set_index_.capacity() + transitions_.capacity()) *
             sizeof(int32_t) +
         node_marks_.capacity() * sizeof(uint32_t) + sets_.capacity() * sizeof(SetInfo) +
         set_hashes_.capacity() * sizeof(uint64_t);
}

void ParserStates::Compact(std::span<int32_t> set_ids) {
  // Mark the nodes the kept sets' stacks consist of.
  if (++mark_epoch_ == 0) {
    std::fill(node_marks_.begin(), node_marks_.end(), 0);
    mark_epoch_ = 1;
  }
  node_marks_[kAcceptedStack] = mark_epoch_;
  for (int32_t set_id : set_ids) {
    if (set_id < 0) continue;
    for (int32_t node : Members(set_id)) {
      while (node != kNoParent && node_marks_[node] != mark_epoch_) {
        node_marks_[node] = mark_epoch_;
        node = nodes_[node].parent;
      }
    }
  }
  // Renumber the kept nodes in their old order, so sets stay sorted.
  std::vector<int32_t> new_node_id(nodes_.size(), -1);
  std::vector<StackNode> kept_nodes;
  for (size_t id = 0; id < nodes_.size(); ++id) {
    if (node_marks_[id] != mark_epoch_) continue;
    new_node_id[id] = static_cast<int32_t>(kept_nodes.size());
    kept_nodes.push_back(nodes_[id]);
  }
  for (StackNode& node : kept_nodes) {
    if (node.parent != kNoParent) node.parent = new_node_id[node.parent];
  }
  // Rebuild the kept sets.
  std::vector<SetInfo> old_sets = std::move(sets_);
  std::vector<int32_t> old_members = std::move(set_members_);
  std::vector<int32_t> new_set_id(old_sets.size(), kDeadSet);
  sets_ = {};
  set_members_ = {};
  set_hashes_ = {};
  transitions_ = {};
  for (int32_t& set_id : set_ids) {
    if (set_id < 0) continue;
    if (new_set_id[set_id] == kDeadSet) {
      const SetInfo& old_set = old_sets[set_id];
      const int32_t id = static_cast<int32_t>(sets_.size());
      sets_.push_back(SetInfo{.members_begin = static_cast<int32_t>(set_members_.size()),
                              .num_members = old_set.num_members,
                              .transitions_begin = static_cast<int32_t>(transitions_.size())});
      for (int32_t i = 0; i < old_set.num_members; ++i) {
        set_members_.push_back(new_node_id[old_members[old_set.members_begin + i]]);
      }
      set_hashes_.push_back(SetHash(Members(id)));
      transitions_.resize(transitions_.size() + grammar_->num_byte_classes, kUnknownStep);
      new_set_id[set_id] = id;
    }
    set_id = new_set_id[set_id];
  }
  nodes_ = std::move(kept_nodes);
  node_marks_.assign(nodes_.size(), 0);
  node_marks_.shrink_to_fit();
  node_key_index_.assign(nodes_.size(), 0);
  node_key_index_.shrink_to_fit();
  mark_epoch_ = 0;
  node_index_ = {};
  RebuildNodeIndex();
  set_index_ = {};
  RebuildSetIndex();
  bytes_after_compaction_ = memory_bytes();
}

}  // namespace vllm
