#include "engine/recurrent_checkpoints.hpp"

#include "engine/error.hpp"

namespace atlas::engine {

void throw_no_checkpoint(std::string_view backend, int pos, int state_tokens, const std::vector<int>& have) {
  std::string list;
  for (int n : have) list += (list.empty() ? "" : ", ") + std::to_string(n);
  throw EngineError(std::string(backend) + " backend: cannot resume at position " + std::to_string(pos) +
                    ": the recurrent (gated_deltanet) state covers " + std::to_string(state_tokens) +
                    " tokens and there is no checkpoint there (checkpoints: " + (list.empty() ? "none" : list) +
                    "); a recurrent state cannot be truncated");
}

}  // namespace atlas::engine
