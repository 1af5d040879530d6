// The recurrent-state checkpoint policy both backends use (engine/recurrent_checkpoints.hpp).
#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "engine/error.hpp"
#include "engine/recurrent_checkpoints.hpp"

using atlas::engine::RecurrentCheckpoints;
using Resume = RecurrentCheckpoints::Resume;

namespace {
std::vector<std::byte> bytes(unsigned char v) { return std::vector<std::byte>(4, std::byte{v}); }
}  // namespace

TEST_CASE("recurrent checkpoints: keep at the state's length, reset at 0, restore a saved length, refuse the rest") {
  RecurrentCheckpoints cp;
  CHECK(cp.resume_at(0, "cpu") == Resume::keep);  // a fresh state is the empty prefix
  cp.set_state_tokens(10);
  CHECK(cp.resume_at(10, "cpu") == Resume::keep);
  CHECK(cp.resume_at(0, "cpu") == Resume::reset);
  cp.save(bytes(1));
  cp.set_state_tokens(15);
  CHECK(cp.resume_at(10, "cuda") == Resume::restore);
  CHECK(cp.checkpoint(10) == bytes(1));
  CHECK_THROWS_WITH_AS(cp.resume_at(12, "cuda"),
                       doctest::Contains("cuda backend: cannot resume at position 12: the recurrent (gated_deltanet) state "
                                         "covers 15 tokens and there is no checkpoint there (checkpoints: 10)"),
                       atlas::engine::EngineError);
  // An unknown length (a failed run) keeps nothing: only 0 or a checkpoint.
  cp.set_state_tokens(-1);
  CHECK(cp.resume_at(0, "cpu") == Resume::reset);
  CHECK(cp.resume_at(10, "cpu") == Resume::restore);
  CHECK_THROWS_AS(cp.resume_at(15, "cpu"), atlas::engine::EngineError);
}

TEST_CASE("recurrent checkpoints: the oldest are evicted past the limit; a save at a kept length replaces it") {
  RecurrentCheckpoints cp(3);
  for (int n : {4, 8, 12, 16}) {
    cp.set_state_tokens(n);
    cp.save(bytes(static_cast<unsigned char>(n)));
  }
  CHECK(cp.positions() == std::vector<int>{8, 12, 16});  // 4 was the oldest
  cp.set_state_tokens(8);
  cp.save(bytes(80));  // replaces 8's copy, and 8 stays the oldest
  CHECK(cp.checkpoint(8) == bytes(80));
  cp.set_state_tokens(20);
  cp.save(bytes(20));
  CHECK(cp.positions() == std::vector<int>{12, 16, 20});
}

TEST_CASE("recurrent checkpoints: drop_after removes the continuation being overwritten, keeps the prefix") {
  RecurrentCheckpoints cp;
  for (int n : {5, 10, 15, 20}) {
    cp.set_state_tokens(n);
    cp.save(bytes(static_cast<unsigned char>(n)));
  }
  cp.drop_after(12);
  CHECK(cp.positions() == std::vector<int>{5, 10});
  cp.drop_after(10);  // a checkpoint at the position itself stays
  CHECK(cp.positions() == std::vector<int>{5, 10});
  // Eviction still works after drops (the order list was kept in step).
  RecurrentCheckpoints small(2);
  for (int n : {1, 2, 3}) {
    small.set_state_tokens(n);
    small.save(bytes(1));
  }
  small.drop_after(2);
  small.set_state_tokens(7);
  small.save(bytes(7));
  CHECK(small.positions() == std::vector<int>{2, 7});
}

TEST_CASE("recurrent checkpoints: evicted, replaced and dropped copies are handed back for reuse (CUDA keeps device buffers)") {
  RecurrentCheckpoints cp(2);
  cp.set_state_tokens(4);
  CHECK(cp.save(bytes(4)).empty());
  cp.set_state_tokens(8);
  CHECK(cp.save(bytes(8)).empty());
  cp.set_state_tokens(12);
  const auto evicted = cp.save(bytes(12));  // past the limit: 4's copy comes back
  REQUIRE(evicted.size() == 1);
  CHECK(evicted[0] == bytes(4));
  cp.set_state_tokens(8);
  const auto replaced = cp.save(bytes(88));  // a save at a kept length returns the old copy
  REQUIRE(replaced.size() == 1);
  CHECK(replaced[0] == bytes(8));
  const auto dropped = cp.drop_after(8);  // a continuation from 8 overwrites 12
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0] == bytes(12));
  CHECK(cp.positions() == std::vector<int>{8});
}
