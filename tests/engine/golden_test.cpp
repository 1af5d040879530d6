// stories260K golden records (llama2.c run.c, greedy): our tokenizer must give the recorded
// prompt_ids and greedy generation from them the recorded output_ids, for every record.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend.hpp"
#include "engine/formats/llama2c.hpp"
#include "engine/session.hpp"
#include "engine/tokenizer/spm.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {
std::vector<nlohmann::json> golden_records() {
  std::ifstream in(atlas::test::golden_jsonl());
  REQUIRE_MESSAGE(in, "missing " << atlas::test::golden_jsonl());
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}
}  // namespace

TEST_CASE("golden: every stories260K record reproduces prompt_ids and greedy output_ids") {
  Model model = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  REQUIRE(model.tokenizer);
  auto backend = make_backend(model, {});
  Session session(*backend);
  const auto records = golden_records();
  REQUIRE(records.size() >= 8);
  for (const auto& rec : records) {
    const std::string id = rec.at("id");
    CAPTURE(id);
    const auto prompt_ids = rec.at("prompt_ids").get<std::vector<int>>();
    CHECK(model.tokenizer->encode(rec.at("prompt").get<std::string>(), true) == prompt_ids);

    int steps = rec.at("steps").get<int>();
    if (steps <= 0 || steps > 512) steps = 512;
    GenerateRequest req;
    req.prompt_ids = prompt_ids;
    req.max_new_tokens = steps - static_cast<int>(prompt_ids.size()) + 1;
    req.stop_ids = {1};  // llama2.c stops on BOS
    req.reuse_prefix = false;
    const GenerateResult r = session.generate(req);
    const auto expected = rec.at("output_ids").get<std::vector<int>>();
    CHECK(r.output_ids == expected);
    CHECK(to_string(r.stop) == std::string(rec.at("stop") == "bos" ? "stop_token" : "max_tokens"));
    // output_text decodes the outputs with the last prompt token as "previous".
    CHECK(model.tokenizer->decode(r.output_ids, prompt_ids.back()) == rec.at("output_text").get<std::string>());
  }
}

TEST_CASE("golden: prompt + output decode to run.c's full_text") {
  Model model = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  for (const auto& rec : golden_records()) {
    CAPTURE(rec.at("id").get<std::string>());
    auto ids = rec.at("prompt_ids").get<std::vector<int>>();
    const auto out = rec.at("output_ids").get<std::vector<int>>();
    ids.insert(ids.end(), out.begin(), out.end());
    CHECK(model.tokenizer->decode(ids) == rec.at("full_text").get<std::string>());
  }
}
