#pragma once
// The public stories260K golden records (llama2.c run.c, greedy; one JSON object per line of
// golden-public.jsonl) and the generation each one describes, shared by every test that checks
// a model file or backend against them.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend.hpp"
#include "engine/session.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/test_data.hpp"

namespace atlas::test {

inline std::vector<nlohmann::json> golden_records() {
  std::ifstream in(golden_jsonl());
  REQUIRE_MESSAGE(in, "missing " << golden_jsonl());
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

/// Greedy generation as run.c did it for `rec`: from its prompt_ids, up to `steps` positions
/// (512 when absent), stopping on BOS (id 1), no prefix reuse.
inline engine::GenerateResult generate_golden(engine::Session& session, const nlohmann::json& rec) {
  const auto prompt_ids = rec.at("prompt_ids").get<std::vector<int>>();
  int steps = rec.at("steps").get<int>();
  if (steps <= 0 || steps > 512) steps = 512;
  engine::GenerateRequest req;
  req.prompt_ids = prompt_ids;
  req.max_new_tokens = steps - static_cast<int>(prompt_ids.size()) + 1;
  req.stop_ids = {1};  // llama2.c stops on BOS
  req.reuse_prefix = false;
  return session.generate(req);
}

/// Every record: the model's tokenizer gives prompt_ids from the prompt text, and greedy
/// generation on `backend` gives output_ids, the stop reason and output_text.
inline void check_golden_records(const engine::Model& model, engine::Backend& backend) {
  REQUIRE(model.tokenizer);
  engine::Session session(backend);
  const auto records = golden_records();
  REQUIRE(records.size() >= 8);
  for (const auto& rec : records) {
    const std::string id = rec.at("id");
    CAPTURE(id);
    const auto prompt_ids = rec.at("prompt_ids").get<std::vector<int>>();
    CHECK(model.tokenizer->encode(rec.at("prompt").get<std::string>(), true) == prompt_ids);
    const engine::GenerateResult r = generate_golden(session, rec);
    CHECK(r.output_ids == rec.at("output_ids").get<std::vector<int>>());
    CHECK(to_string(r.stop) == std::string(rec.at("stop") == "bos" ? "stop_token" : "max_tokens"));
    // output_text decodes the outputs with the last prompt token as "previous".
    CHECK(model.tokenizer->decode(r.output_ids, prompt_ids.back()) == rec.at("output_text").get<std::string>());
  }
}

}  // namespace atlas::test
