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
#include "tests/golden.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

TEST_CASE("golden: every stories260K record reproduces prompt_ids and greedy output_ids") {
  Model model = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  auto backend = make_backend(model, {});
  atlas::test::check_golden_records(model, *backend);
}

TEST_CASE("golden: prompt + output decode to run.c's full_text") {
  Model model = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  for (const auto& rec : atlas::test::golden_records()) {
    CAPTURE(rec.at("id").get<std::string>());
    auto ids = rec.at("prompt_ids").get<std::vector<int>>();
    const auto out = rec.at("output_ids").get<std::vector<int>>();
    ids.insert(ids.end(), out.begin(), out.end());
    CHECK(model.tokenizer->decode(ids) == rec.at("full_text").get<std::string>());
  }
}
