// Loading the real BFCL v4 subset (<data dir>/bfcl, its SOURCE.md) and malformed input.
#include <doctest/doctest.h>

#include <fstream>

#include "suites/bfcl/bfcl_error.hpp"
#include "suites/bfcl/dataset.hpp"
#include "tests/test_data.hpp"

using namespace atlas::suites::bfcl;

TEST_CASE("bfcl data: entry counts per category match SOURCE.md") {
  const BfclDataset ds = load_bfcl_dataset(atlas::test::data_dir());
  CHECK(ds.categories == all_categories());
  const std::pair<const char*, std::size_t> expected[] = {
      {"simple_python", 320}, {"multiple", 160},         {"parallel", 160},           {"parallel_multiple", 160},
      {"irrelevance", 192},   {"live_simple", 206},      {"live_multiple", 280},      {"live_parallel", 12},
      {"live_parallel_multiple", 19}, {"live_irrelevance", 176}, {"live_relevance", 12}};
  std::size_t total = 0;
  for (const auto& [cat, n] : expected) {
    CHECK_MESSAGE(ds.count(cat) == n, cat);
    total += n;
  }
  CHECK(ds.entries.size() == total);
  const BfclEntry* e = ds.find("simple_python_1");
  REQUIRE(e != nullptr);
  CHECK(e->functions.at(0).name == "math.factorial");
  CHECK(e->functions.at(0).required == std::vector<std::string>{"number"});
  REQUIRE(e->ground_truth.size() == 1);
  CHECK(e->ground_truth[0].name == "math.factorial");
  const BfclEntry* p = ds.find("parallel_2");
  REQUIRE(p != nullptr);
  CHECK(p->ground_truth.size() == 2);
  const auto* res = p->ground_truth[0].find("resistivity");
  REQUIRE(res != nullptr);
  CHECK(res->size() == 2);  // ["copper", ""]
  CHECK(ds.find("irrelevance_1") != nullptr);
  CHECK(ds.find("irrelevance_1")->ground_truth.empty());
  CHECK(ds.find("live_relevance_1-1-0")->category == "live_relevance");
}

TEST_CASE("bfcl data: loading a subset of categories") {
  const BfclDataset ds = load_bfcl_dataset(atlas::test::data_dir(), {"parallel", "live_relevance"});
  CHECK(ds.categories == std::vector<std::string>{"parallel", "live_relevance"});
  CHECK(ds.entries.size() == 160 + 12);
  CHECK_THROWS_AS(load_bfcl_dataset(atlas::test::data_dir(), {"simple_java"}), BfclError);
}

TEST_CASE("bfcl data: category_of_id") {
  CHECK(category_of_id("live_parallel_multiple_3-2-1") == "live_parallel_multiple");
  CHECK(category_of_id("simple_python_12") == "simple_python");
  CHECK(is_relevance_category("irrelevance"));
  CHECK(is_relevance_category("live_relevance"));
  CHECK(!is_relevance_category("live_multiple"));
}

TEST_CASE("bfcl data: malformed files name the file, line and field") {
  const auto dir = atlas::test::scratch_dir("bfcl_bad_data");
  std::filesystem::create_directories(dir / "bfcl" / "possible_answer");
  const std::string good =
      R"({"id": "simple_python_1", "question": [[{"role": "user", "content": "q"}]], "function": [{"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}]})";
  auto write = [](const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; };
  auto message = [&]() -> std::string {
    try {
      load_bfcl_dataset(dir, {"simple_python"});
    } catch (const BfclError& e) {
      return e.what();
    }
    return "";
  };
  const auto q = dir / "bfcl" / "BFCL_v4_simple_python.json";
  const auto a = dir / "bfcl" / "possible_answer" / "BFCL_v4_simple_python.json";
  // No final newline is fine (upstream files have none).
  write(q, good);
  write(a, R"({"id": "simple_python_1", "ground_truth": [{"f": {"x": [1]}}]})");
  CHECK(message().empty());

  write(q, good + "\n{not json}\n");
  write(a, R"({"id": "simple_python_1", "ground_truth": [{"f": {"x": [1]}}]})" "\n" R"({"id": "simple_python_2", "ground_truth": [{"f": {"x": [1]}}]})");
  CHECK(message().find("BFCL_v4_simple_python.json:2: malformed JSON") != std::string::npos);

  write(q, good + "\n" + R"({"id": "simple_python_2", "question": [[{"role": "user", "content": "q"}]], "function": [{"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {"x": {"type": "number"}}, "required": []}}]})");
  write(a, R"({"id": "simple_python_1", "ground_truth": [{"f": {"x": [1]}}]})" "\n" R"({"id": "simple_python_2", "ground_truth": [{"f": {"x": [1]}}]})");
  {
    const std::string m = message();
    CHECK(m.find(":2") != std::string::npos);
    CHECK(m.find("'number' is not a BFCL Python type") != std::string::npos);
  }
  write(q, good);
  write(a, R"({"id": "simple_python_9", "ground_truth": [{"f": {"x": [1]}}]})");
  CHECK(message().find("does not match question id 'simple_python_1'") != std::string::npos);

  write(a, R"({"id": "simple_python_1", "ground_truth": [{"g": {"x": [1]}}]})");
  CHECK(message().find("ground_truth function 'g' is not in the function list") != std::string::npos);

  write(a, R"({"id": "simple_python_1", "ground_truth": [{"f": {"x": 1}}]})");
  CHECK(message().find("acceptable values must be a list") != std::string::npos);
}
