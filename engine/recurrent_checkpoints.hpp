#pragma once
// The recurrent-state checkpoint policy of hybrid models, shared by the backends. A Gated
// DeltaNet state, unlike a KV cache, cannot be truncated: a sequence continues from position 0
// (state reset), from the state's current length, or from a saved copy of the state at an
// earlier length (prefix reuse: the agentic suite's next turn resumes where the shared prefix
// ends). The backend owns the state's memory and copies bytes in and out; this class decides
// what forward(pos) must do, which copies are kept (at most `max_kept`, oldest evicted first),
// and which are dropped when a continuation overwrites them.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace atlas::engine {

class RecurrentCheckpoints {
 public:
  explicit RecurrentCheckpoints(std::size_t max_kept = 8) : max_kept_(max_kept) {}

  /// Tokens the live state covers.
  int state_tokens() const { return state_tokens_; }
  void set_state_tokens(int n) { state_tokens_ = n; }

  enum class Resume { keep, reset, restore };
  /// What a forward() at `pos` must do to the live state first: nothing (pos is its length),
  /// reset it (pos 0), or restore the checkpoint at pos (checkpoint(pos)). Throws EngineError,
  /// naming `backend`, the position and the checkpoints there are, when none applies.
  Resume resume_at(int pos, std::string_view backend) const;
  /// The saved state at `pos` (resume_at returned restore).
  const std::vector<std::byte>& checkpoint(int pos) const { return saved_.at(pos); }
  /// Keeps `state` as the checkpoint at state_tokens() (replacing one there).
  void save(std::vector<std::byte> state);
  /// Drops the checkpoints past `pos`: they belong to the continuation being overwritten.
  void drop_after(int pos);
  /// Saved lengths, ascending.
  std::vector<int> positions() const;

 private:
  std::size_t max_kept_;
  int state_tokens_ = 0;
  std::map<int, std::vector<std::byte>> saved_;
  std::vector<int> order_;  ///< oldest first, for eviction
};

}  // namespace atlas::engine
