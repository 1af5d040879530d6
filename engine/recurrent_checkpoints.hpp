#pragma once
// The recurrent-state checkpoint policy of hybrid models, shared by the backends. A Gated
// DeltaNet state, unlike a KV cache, cannot be truncated: a sequence continues from position 0
// (state reset), from the state's current length, or from a saved copy of the state at an
// earlier length (prefix reuse: the agentic suite's next turn resumes where the shared prefix
// ends). The backend owns the state's memory and the copies (host bytes on the CPU, device
// buffers on CUDA: the payload type); this class decides what forward(pos) must do, which copies
// are kept (at most `max_kept`, oldest evicted first), and which are dropped when a continuation
// overwrites them. Evicted and dropped copies are handed back, so a backend can reuse them.
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace atlas::engine {

/// Throws EngineError: no checkpoint at `pos` (the message names `backend`, the state's length
/// and the checkpoints there are).
[[noreturn]] void throw_no_checkpoint(std::string_view backend, int pos, int state_tokens, const std::vector<int>& have);

template <typename State>
class RecurrentCheckpointsOf {
 public:
  explicit RecurrentCheckpointsOf(std::size_t max_kept = 8) : max_kept_(max_kept) {}

  /// Tokens the live state covers.
  int state_tokens() const { return state_tokens_; }
  void set_state_tokens(int n) { state_tokens_ = n; }

  enum class Resume { keep, reset, restore };
  /// What a forward() at `pos` must do to the live state first: nothing (pos is its length),
  /// reset it (pos 0), or restore the checkpoint at pos (checkpoint(pos)). Throws EngineError,
  /// naming `backend`, the position and the checkpoints there are, when none applies.
  Resume resume_at(int pos, std::string_view backend) const {
    if (pos == state_tokens_) return Resume::keep;
    if (pos == 0) return Resume::reset;
    if (saved_.contains(pos)) return Resume::restore;
    throw_no_checkpoint(backend, pos, state_tokens_, positions());
  }
  /// The saved state at `pos` (resume_at returned restore).
  const State& checkpoint(int pos) const { return saved_.at(pos); }
  /// Keeps `state` as the checkpoint at state_tokens() (replacing one there); returns the
  /// copies that replaced or evicted.
  std::vector<State> save(State state) {
    std::vector<State> out;
    if (auto it = saved_.find(state_tokens_); it != saved_.end()) out.push_back(std::move(it->second));
    else order_.push_back(state_tokens_);
    saved_[state_tokens_] = std::move(state);
    while (order_.size() > max_kept_) {
      out.push_back(std::move(saved_.at(order_.front())));
      saved_.erase(order_.front());
      order_.erase(order_.begin());
    }
    return out;
  }
  /// Drops the checkpoints past `pos` (they belong to the continuation being overwritten) and
  /// returns them.
  std::vector<State> drop_after(int pos) {
    std::vector<State> out;
    while (!saved_.empty() && saved_.rbegin()->first > pos) {
      const int drop = saved_.rbegin()->first;
      out.push_back(std::move(saved_.rbegin()->second));
      saved_.erase(drop);
      order_.erase(std::find(order_.begin(), order_.end(), drop));
    }
    return out;
  }
  /// Saved lengths, ascending.
  std::vector<int> positions() const {
    std::vector<int> out;
    for (const auto& [n, _] : saved_) out.push_back(n);
    return out;
  }

 private:
  std::size_t max_kept_;
  int state_tokens_ = 0;
  std::map<int, State> saved_;
  std::vector<int> order_;  ///< oldest first, for eviction
};

/// Host bytes: the CPU backend's checkpoints.
using RecurrentCheckpoints = RecurrentCheckpointsOf<std::vector<std::byte>>;

}  // namespace atlas::engine
