#include "engine/recurrent_checkpoints.hpp"

#include <algorithm>

#include "engine/error.hpp"

namespace atlas::engine {

RecurrentCheckpoints::Resume RecurrentCheckpoints::resume_at(int pos, std::string_view backend) const {
  if (pos == state_tokens_) return Resume::keep;
  if (pos == 0) return Resume::reset;
  if (saved_.contains(pos)) return Resume::restore;
  std::string have;
  for (const auto& [n, _] : saved_) have += (have.empty() ? "" : ", ") + std::to_string(n);
  throw EngineError(std::string(backend) + " backend: cannot resume at position " + std::to_string(pos) +
                    ": the recurrent (gated_deltanet) state covers " + std::to_string(state_tokens_) +
                    " tokens and there is no checkpoint there (checkpoints: " + (have.empty() ? "none" : have) +
                    "); a recurrent state cannot be truncated");
}

void RecurrentCheckpoints::save(std::vector<std::byte> state) {
  if (!saved_.contains(state_tokens_)) order_.push_back(state_tokens_);
  saved_[state_tokens_] = std::move(state);
  while (order_.size() > max_kept_) {
    saved_.erase(order_.front());
    order_.erase(order_.begin());
  }
}

void RecurrentCheckpoints::drop_after(int pos) {
  while (!saved_.empty() && saved_.rbegin()->first > pos) {
    const int drop = saved_.rbegin()->first;
    saved_.erase(drop);
    order_.erase(std::find(order_.begin(), order_.end(), drop));
  }
}

std::vector<int> RecurrentCheckpoints::positions() const {
  std::vector<int> out;
  for (const auto& [n, _] : saved_) out.push_back(n);
  return out;
}

}  // namespace atlas::engine
