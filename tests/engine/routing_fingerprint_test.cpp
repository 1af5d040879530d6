// The routing fingerprint (engine/routing_fingerprint.hpp): the rule on hand-computed values,
// and the CPU moe block keeping it the way the CUDA router kernels do (rows in token order,
// however a prompt is chunked; thread count irrelevant; nothing for a dense model).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/backend.hpp"
#include "engine/formats/presets.hpp"
#include "engine/routing_fingerprint.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {

const Model& tiny_hybrid() {
  static const Model m = make_preset_model("qwen3-next-tiny", 17, 1024);
  return m;
}

std::vector<int> prompt_of(int n, int mul, int add) {
  std::vector<int> p(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = (i * mul + add) % 512;
  return p;
}

std::string hex(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TEST_CASE("routing fingerprint rule: FNV-1a's step over id + 1, layers combined by the same step") {
  const std::vector<int> none;
  CHECK(fold_expert_ids(0, none) == 0);
  const std::vector<int> zero = {0};
  CHECK(fold_expert_ids(0, zero) == 0x100000001b3ULL);  // (0 ^ 1) * prime: expert 0 still counts
  // ((0 ^ 4) * p ^ 2) * p mod 2^64, by hand: 4p = 0x400000006cc; ^2 = 0x400000006ce; * p:
  const std::vector<int> two = {3, 1};
  CHECK(fold_expert_ids(0, two) == 0x400000006ceULL * 0x100000001b3ULL);
  // Order matters (choice order is part of the routing), and folding row by row equals folding
  // the rows at once (how a prefill chunk is hashed).
  const std::vector<int> swapped = {1, 3};
  CHECK(fold_expert_ids(0, two) != fold_expert_ids(0, swapped));
  const std::vector<int> rows = {3, 1, 7, 0};
  const std::vector<int> r0 = {3, 1}, r1 = {7, 0};
  CHECK(fold_expert_ids(fold_expert_ids(0, r0), r1) == fold_expert_ids(0, rows));
  const std::vector<std::uint64_t> layers = {5, 9};
  CHECK(combine_layer_routing(layers) == (((5 * 0x100000001b3ULL) ^ 9) * 0x100000001b3ULL));
  CHECK(fold_routing_hashes(fold_routing_hashes(0, 5), 9) == combine_layer_routing(layers));
}

TEST_CASE("routing fingerprint: the CPU backend keeps one for a moe model, none for a dense one") {
  BackendOptions o;
  o.threads = 1;
  const Model dense_model = make_preset_model("tiny-qwen3", 1);  // outlives its backend
  auto dense = make_backend(dense_model, o);
  (void)dense->forward(prompt_of(5, 7, 1), 0);
  CHECK_FALSE(dense->routing_fingerprint().has_value());

  auto b = make_backend(tiny_hybrid(), o);
  REQUIRE(b->routing_fingerprint().has_value());
  CHECK(*b->routing_fingerprint() == 0);  // every layer's hash 0: nothing routed yet
  const auto p = prompt_of(20, 37, 11);
  (void)b->forward(p, 0);
  const std::uint64_t first = *b->routing_fingerprint();
  CHECK(first != 0);
  // More tokens keep folding in; a reset and the same request give the same value again.
  const int tok = 42;
  (void)b->forward(std::span<const int>(&tok, 1), 20);
  CHECK(*b->routing_fingerprint() != first);
  b->reset_routing_fingerprint();
  CHECK(*b->routing_fingerprint() == 0);
  auto again = make_backend(tiny_hybrid(), o);
  (void)again->forward(p, 0);
  CHECK(*again->routing_fingerprint() == first);
  // Another prompt routes otherwise.
  auto other = make_backend(tiny_hybrid(), o);
  (void)other->forward(prompt_of(20, 41, 5), 0);
  CHECK(*other->routing_fingerprint() != first);
}

TEST_CASE("routing fingerprint: a 300-token prefill (chunked) equals 300 decode steps; 1 and 2 threads agree") {
  const auto p = prompt_of(300, 37, 11);
  std::vector<std::uint64_t> seen;
  for (int threads : {1, 2}) {
    BackendOptions o;
    o.threads = threads;
    auto chunked = make_backend(tiny_hybrid(), o);
    (void)chunked->forward(p, 0);
    seen.push_back(*chunked->routing_fingerprint());
    auto steps = make_backend(tiny_hybrid(), o);
    for (int i = 0; i < 300; ++i) (void)steps->forward(std::span<const int>(&p[static_cast<std::size_t>(i)], 1), i);
    seen.push_back(*steps->routing_fingerprint());
  }
  CHECK(seen[0] == seen[1]);
  CHECK(seen[0] == seen[2]);
  CHECK(seen[0] == seen[3]);
}

TEST_CASE("routing fingerprint: the CPU backend's equals Hugging Face transformers' top-k routing (preset weights)") {
  const auto path = atlas::test::source_dir() / "tests/engine/qwen3_next_reference/reference.json";
  const auto ref = nlohmann::json::parse(atlas::read_file(path));
  int compared = 0;
  BackendOptions o;
  o.threads = 1;
  // A committed input without the field is a broken input, not a machine that lacks something:
  // every case must carry it.
  REQUIRE_MESSAGE((ref.contains("cases") && ref["cases"].is_array() && !ref["cases"].empty()),
                  path.string() << ": the field cases is missing or empty");
  const auto& cases = ref["cases"];
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (!c.contains("routing_fingerprint_prompt")) {
      FAIL_CHECK(path.string() << ": cases[" << i << "] has no field routing_fingerprint_prompt: the committed Hugging "
                               "Face reference predates routing fingerprints; regenerate it with "
                               "tests/engine/qwen3_next_reference/make_reference.py where transformers is installed");
      continue;
    }
    auto b = make_backend(tiny_hybrid(), o);
    (void)b->forward(c["prompt"].get<std::vector<int>>(), 0);
    CHECK(hex(*b->routing_fingerprint()) == c["routing_fingerprint_prompt"].get<std::string>());
    ++compared;
  }
  MESSAGE(compared << " prompts' routing compared with transformers");
}
