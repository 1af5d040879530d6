#if ATLAS_HAVE_HTTPLIB  // atlas_server exists only where cpp-httplib is found
// Which chat template the server takes from a model directory (tokenizer_config.json).
#include <doctest/doctest.h>

#include "common/atomic_file.hpp"
#include "server/generator.hpp"
#include "tests/test_data.hpp"

TEST_CASE("model_chat_template: a template list entry whose name is not a string is skipped") {
  // tokenizer_config.json's chat_template may be a list of {name, template}; a numeric name made
  // json::value() throw nlohmann's type_error at atlas-serve's start (found reviewing value()
  // calls after fuzz_tokenizer_json's type_error finding).
  const auto dir = atlas::test::scratch_dir("chat-template-list");
  atlas::write_file_atomic(dir / "tokenizer_config.json",
                           R"({"chat_template": [{"name": 5, "template": "no"}, {"name": "default", "template": "T"}]})");
  atlas::engine::Model m;
  m.source.path = dir;
  CHECK(atlas::server::model_chat_template(m) == "T");
}
#endif
