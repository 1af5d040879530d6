// The prompt BFCL's prompt mode builds (spec §8) and the suite run against a scripted Target.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

#include "suites/bfcl/bfcl_error.hpp"
#include "suites/bfcl/bfcl_suite.hpp"
#include "suites/bfcl/prompt.hpp"
#include "suites/error.hpp"
#include "suites/runner.hpp"
#include "tests/test_data.hpp"

using namespace atlas::suites::bfcl;
namespace suites = atlas::suites;

namespace {

// Bytes are tokens 0..255; BOS 256, EOS 257.
class ByteTokenizer : public atlas::engine::Tokenizer {
 public:
  std::vector<int> encode(std::string_view text, bool add_bos) const override {
    std::vector<int> ids;
    if (add_bos) ids.push_back(256);
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  }
  std::string token_bytes(int, int id) const override { return id < 256 ? std::string(1, static_cast<char>(id)) : ""; }
  int vocab_size() const override { return 258; }
  std::optional<int> bos_id() const override { return 256; }
  std::optional<int> eos_id() const override { return 257; }
  std::vector<int> stop_ids() const override { return {257}; }
  std::optional<int> piece_to_id(std::string_view) const override { return std::nullopt; }
};

class ScriptedTarget : public suites::Target {
 public:
  std::function<suites::TargetResponse(const suites::TargetRequest&)> answer;
  std::vector<suites::TargetRequest> requests;
  int ctx = 512;

  std::string name() const override { return "scripted"; }
  suites::TargetResponse generate(const suites::TargetRequest& req) override {
    requests.push_back(req);
    suites::TargetResponse r = answer(req);
    r.t_request_ns = 1'000'000;
    r.token_t_ns = {2'000'000, 3'000'000, 4'000'000, 5'000'000, 6'000'000};  // 4 tokens in 4 ms after the first
    r.t_end_ns = 6'000'000;
    return r;
  }
  void reset_session() override {}
  const atlas::engine::Tokenizer& tokenizer() const override { return tok_; }
  int context_length() const override { return ctx; }
  nlohmann::json provenance() const override { return nlohmann::json::object(); }

 private:
  ByteTokenizer tok_;
};

/// The answer of a server that is gone: every request fails with "connection refused".
suites::TargetResponse refused(const suites::TargetRequest&) {
  suites::TargetResponse r;
  r.ok = false;
  r.error = "connection refused";
  return r;
}

const BfclDataset& data() {
  static const BfclDataset ds = load_bfcl_dataset(atlas::test::data_dir());
  return ds;
}

// Text the scripted model answers: the first acceptable value of every GT parameter.
std::string gt_answer(const BfclEntry& e) {
  std::string out = "[";
  for (std::size_t i = 0; i < e.ground_truth.size(); ++i) {
    const auto& g = e.ground_truth[i];
    if (i) out += ", ";
    out += g.name + "(";
    bool first = true;
    for (const auto& [p, acc] : g.params) {
      if (acc.empty() || (acc[0].is_str() && acc[0].str().empty())) continue;
      if (!first) out += ", ";
      first = false;
      out += p + "=" + py_repr(acc[0]);
    }
    out += ")";
  }
  return out + "]";
}

}  // namespace

TEST_CASE("bfcl prompt: default system prompt (spec §8)") {
  const BfclEntry* e = data().find("simple_python_1");
  REQUIRE(e != nullptr);
  const auto fns = functions_for_generation(*e);
  CHECK(fns[0]["description"] ==
        "Calculate the factorial of a given number. Note that the provided function is in Python 3 syntax.");
  const std::string sys = system_prompt(fns);
  CHECK(sys.rfind("You are an expert in composing functions.You are given a question and a set of possible functions.", 0) == 0);
  CHECK(sys.find("[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)].  You SHOULD NOT") != std::string::npos);
  CHECK(sys.find("Here is a list of functions in json format that you can invoke.\n[\n    {\n        \"name\": \"math.factorial\",\n") != std::string::npos);
  CHECK(sys.back() == '\n');
  const auto msgs = prompt_messages(*e);
  REQUIRE(msgs.size() == 2);
  CHECK(msgs[0]["role"] == "system");
  CHECK(msgs[0]["content"] == sys);
  CHECK(msgs[1]["content"] == "Calculate the factorial of 5 using math functions.");
  const std::string text = render_plain_text(msgs);
  CHECK(text.rfind("System: You are an expert", 0) == 0);
  CHECK(text.find("\n\nUser: Calculate the factorial of 5 using math functions.\n\nAssistant:") != std::string::npos);
}

TEST_CASE("bfcl prompt: an existing system message gets the prompt in front (MU:374-400)") {
  const BfclEntry* e = data().find("live_simple_58-27-0");
  REQUIRE(e != nullptr);
  const auto msgs = prompt_messages(*e);
  CHECK(msgs.size() == e->question[0].size());
  const std::string content = msgs[0]["content"];
  CHECK(content.rfind("You are an expert in composing functions.", 0) == 0);
  CHECK(content.find("\n\n\nYou are an AI chatbot who helps users") != std::string::npos);
}

TEST_CASE("bfcl prompt: json.dumps(indent=4) escapes non-ASCII; OpenAI tools (spec §8)") {
  CHECK(python_json_dumps_indent4(nlohmann::ordered_json::parse(R"({"a": ["é", 1.5, 2, true, null, {}, []]})")) ==
        "{\n    \"a\": [\n        \"\\u00e9\",\n        1.5,\n        2,\n        true,\n        null,\n        {},\n        []\n    ]\n}");
  const BfclEntry e = [] {
    return parse_question_line(
        R"({"id": "simple_python_1", "question": [[{"role": "user", "content": "q"}]], "function": [{"name": "geo.dist", "description": "d", "parameters": {"type": "dict", "properties": {"x": {"type": "float", "description": "x"}, "t": {"type": "tuple", "items": {"type": "float"}}, "o": {"type": "dict", "properties": {"k": {"type": "any"}}}}, "required": ["x"]}}]})",
        "test");
  }();
  const auto tools = openai_tools(e, true);
  REQUIRE(tools.size() == 1);
  const auto& f = tools[0]["function"];
  CHECK(tools[0]["type"] == "function");
  CHECK(f["name"] == "geo_dist");
  CHECK(f["parameters"]["type"] == "object");
  CHECK(f["parameters"]["properties"]["x"]["type"] == "number");
  CHECK(f["parameters"]["properties"]["x"]["format"] == "float");
  CHECK(f["parameters"]["properties"]["x"]["description"] == "x This is a float type value.");
  CHECK(f["parameters"]["properties"]["t"]["type"] == "array");
  CHECK(f["parameters"]["properties"]["t"]["items"]["type"] == "number");
  CHECK(f["parameters"]["properties"]["o"]["type"] == "object");
  CHECK(f["parameters"]["properties"]["o"]["properties"]["k"]["type"] == "string");
  CHECK(openai_tools(e, false)[0]["function"]["name"] == "geo.dist");
}

TEST_CASE("bfcl suite: deterministic sample by id") {
  BfclSuiteConfig cfg;
  cfg.categories = {"simple_python", "live_simple"};
  cfg.per_category = 4;
  const auto a = select_entries(data(), cfg);
  const auto b = select_entries(data(), cfg);
  REQUIRE(a.size() == 8);
  CHECK(a == b);
  CHECK(a[0]->id == "simple_python_1");
  for (std::size_t i = 0; i < 4; ++i) CHECK(a[i]->category == "simple_python");
  for (std::size_t i = 4; i < 8; ++i) CHECK(a[i]->category == "live_simple");
}

TEST_CASE("bfcl suite: a model answering the ground truth scores 1.0; metrics and truncation") {
  ScriptedTarget target;
  target.ctx = 100000;  // everything fits
  target.answer = [&](const suites::TargetRequest& req) {
    suites::TargetResponse r;
    // Find which entry this prompt is for: the user question is at the end of the prompt text.
    for (const auto& e : data().entries) {
      if (e.category != "simple_python" && e.category != "parallel" && e.category != "irrelevance") continue;
      const std::string q = e.question[0].back()["content"];
      if (req.prompt_text.size() > q.size() + 12 &&
          req.prompt_text.compare(req.prompt_text.size() - q.size() - 12, q.size(), q) == 0) {
        r.text = e.ground_truth.empty() ? "I cannot help." : gt_answer(e);
        return r;
      }
    }
    r.text = "?";
    return r;
  };
  BfclSuiteConfig cfg;
  cfg.categories = {"simple_python", "parallel", "irrelevance"};
  cfg.per_category = 3;
  cfg.max_new_tokens = 32;
  const auto res = run_bfcl_suite(target, cfg, data());
  CHECK(res.name == "bfcl");
  REQUIRE(target.requests.size() == 9);
  CHECK(target.requests[0].max_new_tokens == 32);
  CHECK(target.requests[0].sampling.greedy());
  CHECK(target.requests[0].prompt_ids.front() == 256);
  CHECK(target.requests[0].messages.is_array());
  CHECK(target.requests[0].tools.is_null());
  const auto& acc = res.metrics.at("accuracy.simple_python");
  CHECK(acc.kind == atlas::records::MetricKind::accuracy);
  CHECK(acc.better == atlas::records::Better::higher);
  CHECK(acc.samples == std::vector<double>{1, 1, 1});
  CHECK(res.metrics.at("accuracy.parallel").samples == std::vector<double>{1, 1, 1});
  CHECK(res.metrics.at("accuracy.irrelevance").samples == std::vector<double>{1, 1, 1});
  CHECK(res.metrics.at("accuracy.overall").samples.size() == 9);
  CHECK(res.metrics.at("decode_tokens_per_s").samples.at(0) == doctest::Approx(1000.0));  // 4 tokens / 4 ms
  CHECK(res.metrics.at("decode_tokens_per_s").kind == atlas::records::MetricKind::timed);
  CHECK(res.metrics.at("time_per_entry_ms").samples.at(0) == doctest::Approx(5.0));
  CHECK(res.metrics.at("entries_skipped").samples == std::vector<double>{0});
  CHECK(res.metrics.at("entries_truncated").samples == std::vector<double>{0});
  CHECK(res.metrics.at("entries_skipped").kind == atlas::records::MetricKind::counted);
  CHECK(res.details["summary"]["categories"]["parallel"]["accuracy"] == 1.0);
  CHECK(res.config["per_category"] == 3);
}

namespace {
/// A server whose prefix cache the client cannot empty (llama-server: no reset route): every
/// entry must then carry its own salt (so that bfcl timings are cold, as ttft's).
class NoResetTarget : public ScriptedTarget {
 public:
  int resets = 0;
  void reset_session() override { ++resets; }
  std::uint64_t cold_salt() const override { return 0xB0BAu; }
};

/// Answers the ground truth of the entry whose question ends the request's last message (what a
/// server sees in chat mode), "?" for any other prompt.
suites::TargetResponse answer_from_messages(const suites::TargetRequest& req) {
  suites::TargetResponse r;
  r.text = "?";
  if (!req.messages.is_array() || req.messages.empty()) return r;
  const std::string asked = req.messages.back().value("content", "");
  for (const auto& e : data().entries) {
    if (e.category != "simple_python" && e.category != "parallel" && e.category != "irrelevance") continue;
    if (e.question[0].back()["content"] == asked) {
      r.text = e.ground_truth.empty() ? "I cannot help." : gt_answer(e);
      return r;
    }
  }
  return r;
}

BfclSuiteConfig gt_config() {
  BfclSuiteConfig cfg;
  cfg.categories = {"simple_python", "parallel", "irrelevance"};
  cfg.per_category = 3;
  cfg.max_new_tokens = 32;
  return cfg;
}
}  // namespace

namespace {
/// True when the request's system message is not BFCL's own text for the entry whose question
/// ends it: a salt (or anything else) was added to what the model is asked.
bool salted_chat(const suites::TargetRequest& req) {
  if (!req.messages.is_array() || req.messages.empty()) return false;
  const std::string asked = req.messages.back().value("content", "");
  // Several entries can ask the same question (with other functions): BFCL's own request for
  // any of them is unsalted.
  for (const auto& e : data().entries) {
    if (e.question[0].back()["content"] != asked) continue;
    if (req.messages == nlohmann::json::parse(prompt_messages(e).dump())) return false;
  }
  return true;
}

/// A model that answers BFCL's own prompt correctly and a salted one wrongly: a capable model's
/// greedy output can change with the salt, which the scored verdicts must never see.
suites::TargetResponse answer_unless_salted(const suites::TargetRequest& req) {
  if (salted_chat(req)) {
    suites::TargetResponse r;
    r.text = "[wrong_function(x=1)]";
    return r;
  }
  return answer_from_messages(req);
}
}  // namespace

TEST_CASE("bfcl suite: entries are scored from BFCL's own request and timed cold by a separate salted request where the cache cannot be emptied") {
  ScriptedTarget plain;  // reset works (cold_salt 0): the scored request is the cold one
  plain.ctx = 100000;
  plain.answer = answer_unless_salted;
  NoResetTarget salted;
  salted.ctx = 100000;
  salted.answer = answer_unless_salted;
  // Timing: the salted request takes 9 ms, the scored one 5 ms (ScriptedTarget's stamps).
  struct SlowSalted : NoResetTarget {
    suites::TargetResponse generate(const suites::TargetRequest& req) override {
      suites::TargetResponse r = NoResetTarget::generate(req);
      if (salted_chat(req)) r.token_t_ns.back() = 10'000'000;
      return r;
    }
  } slow;
  slow.ctx = 100000;
  slow.answer = answer_unless_salted;
  const auto a = run_bfcl_suite(plain, gt_config(), data());
  const auto b = run_bfcl_suite(salted, gt_config(), data());
  const auto c = run_bfcl_suite(slow, gt_config(), data());
  CHECK(a.details["cold_salted_requests"] == 0);
  CHECK(a.details["cold_timed_separately"] == 0);
  CHECK(b.details["cold_salted_requests"] == 9);
  CHECK(b.details["cold_timed_separately"] == 9);
  CHECK(b.details["cold_reissued"] == 0);
  CHECK(salted.resets == 9);  // one reset per entry
  // The verdicts: every entry answered correctly on both, entry by entry, although the salted
  // requests were answered wrongly.
  for (const char* m : {"accuracy.simple_python", "accuracy.parallel", "accuracy.irrelevance", "accuracy.overall"}) {
    INFO(m);
    CHECK(b.metrics.at(m).samples == a.metrics.at(m).samples);
  }
  CHECK(a.metrics.at("accuracy.overall").samples == std::vector<double>(9, 1.0));
  CHECK(b.metrics.at("accuracy.overall").samples == std::vector<double>(9, 1.0));
  CHECK(b.details["error_types"] == a.details["error_types"]);
  // Time per entry is the salted (cold) request's, never the scored answer's.
  CHECK(a.metrics.at("time_per_entry_ms").samples == std::vector<double>(9, 5.0));
  CHECK(c.metrics.at("time_per_entry_ms").samples == std::vector<double>(9, 9.0));
  REQUIRE(plain.requests.size() == 9);
  REQUIRE(salted.requests.size() == 18);  // per entry: the scored request, then the timing request
  std::set<std::string> heads;
  for (std::size_t i = 0; i < 9; ++i) {
    INFO("entry " << i);
    const auto& p = plain.requests[i];
    const auto& answer = salted.requests[2 * i];
    const auto& q = salted.requests[2 * i + 1];
    // The scored request is exactly BFCL's, as the plain target got it.
    CHECK(answer.messages == p.messages);
    CHECK(answer.prompt_ids == p.prompt_ids);
    CHECK(answer.cold);
    CHECK(q.cold);
    CHECK(!salted_chat(answer));
    CHECK(salted_chat(q));
    // The timing request: one salt line at the head of the system message; the function docs
    // after it and every other message (the question) are BFCL's own.
    REQUIRE(q.messages.size() == p.messages.size());
    const std::string ps = p.messages[0]["content"], qs = q.messages[0]["content"];
    REQUIRE(qs.size() > ps.size());
    CHECK(qs.compare(qs.size() - ps.size(), ps.size(), ps) == 0);
    const std::string head = qs.substr(0, qs.size() - ps.size());
    CHECK(head.back() == '\n');
    heads.insert(head);
    for (std::size_t k = 1; k < p.messages.size(); ++k) CHECK(q.messages[k] == p.messages[k]);
    // Ids: BOS, 4 salt ids, then the prompt unchanged.
    REQUIRE(q.prompt_ids.size() == p.prompt_ids.size() + 4);
    CHECK(q.prompt_ids[0] == 256);
    CHECK(std::equal(p.prompt_ids.begin() + 1, p.prompt_ids.end(), q.prompt_ids.begin() + 5));
  }
  CHECK(heads.size() == 9);  // unique per request: no entry can be served from another's cache
  for (const auto& row : a.details["entries"]) CHECK(row["timed"] == "scored request");
  for (const auto& row : b.details["entries"]) {
    CHECK(row["timed"] == "salted timing request");
    CHECK(row["valid"] == true);
    CHECK(row["timing_request"].is_object());
  }
}

TEST_CASE("bfcl suite: a scored answer the target served from its cache is not a cold sample, though the reset answered") {
  ScriptedTarget target;  // cold_salt 0: the reset claimed success
  target.ctx = 100000;
  target.answer = [](const suites::TargetRequest& req) {
    suites::TargetResponse r = answer_unless_salted(req);
    r.prompt_tokens = 400;
    r.cached_tokens = salted_chat(req) ? 0 : 120;
    return r;
  };
  BfclSuiteConfig cfg = gt_config();
  cfg.categories = {"simple_python"};
  const auto res = run_bfcl_suite(target, cfg, data());
  REQUIRE(target.requests.size() == 6);
  CHECK(res.details["cold_timed_separately"] == 3);
  CHECK(res.details["cold_salted_requests"] == 3);
  CHECK(res.metrics.at("accuracy.simple_python").samples == std::vector<double>{1, 1, 1});
  for (const auto& row : res.details["entries"]) {
    CHECK(row["cached_tokens"] == 120);
    CHECK(row["timing_request"]["cached_tokens"] == 0);
  }
}

TEST_CASE("bfcl suite: a timing request the target says it served from its cache is re-issued with a new salt and counted") {
  NoResetTarget target;
  target.ctx = 100000;
  int n = 0;
  target.answer = [&n](const suites::TargetRequest& req) {
    suites::TargetResponse r = answer_unless_salted(req);
    r.prompt_tokens = 400;
    // The scored answer may reuse the last entry's prefix (not a cold sample on this target
    // anyway); every other salted request comes back "from cache".
    if (!salted_chat(req)) {
      r.cached_tokens = 250;
      return r;
    }
    r.cached_tokens = ++n % 2 == 1 ? 300 : 20;  // 20: at most a chat template's head, still cold
    return r;
  };
  BfclSuiteConfig cfg = gt_config();
  cfg.categories = {"simple_python"};
  const auto res = run_bfcl_suite(target, cfg, data());
  CHECK(target.requests.size() == 9);  // per entry: answer, timing, re-issued timing
  CHECK(res.details["cold_reissued"] == 3);
  CHECK(res.details["cold_salted_requests"] == 6);
  CHECK(res.details["cold_timed_separately"] == 3);
  CHECK(res.metrics.at("accuracy.simple_python").samples == std::vector<double>{1, 1, 1});
  CHECK(res.metrics.at("time_per_entry_ms").samples.size() == 3);  // one cold sample per entry
  for (const auto& row : res.details["entries"]) {
    CHECK(row["cached_tokens"] == 250);
    CHECK(row["timing_request"]["cached_tokens"] == 20);
  }
  // The salts of a timing request and its re-issue differ.
  CHECK(target.requests[1].messages[0]["content"] != target.requests[2].messages[0]["content"]);

  // A target that always answers from its cache: no cold timing exists; the suite says so.
  NoResetTarget always;
  always.ctx = 100000;
  always.answer = [](const suites::TargetRequest& req) {
    suites::TargetResponse r = answer_from_messages(req);
    r.prompt_tokens = 400;
    r.cached_tokens = 399;
    return r;
  };
  CHECK_THROWS_WITH_AS(run_bfcl_suite(always, cfg, data()),
                       doctest::Contains("bfcl simple_python_1 (salted timing request): the target reported cached_tokens = 399 on 3 cold requests"),
                       atlas::suites::SuiteError);
  CHECK(always.requests.size() == 4);  // the answer, then 3 timing requests
}

TEST_CASE("bfcl suite: prompts over the context are truncated or skipped and counted") {
  ScriptedTarget target;  // 512-token context; every BFCL prompt is longer in bytes
  target.answer = [](const suites::TargetRequest&) {
    suites::TargetResponse r;
    r.text = "[math.factorial(number=5)]";
    return r;
  };
  BfclSuiteConfig cfg;
  cfg.categories = {"simple_python"};
  cfg.per_category = 2;
  cfg.max_new_tokens = 12;
  const auto res = run_bfcl_suite(target, cfg, data());
  REQUIRE(target.requests.size() == 2);
  CHECK(target.requests[0].prompt_ids.size() == 500);  // 512 - 12, BOS kept
  CHECK(target.requests[0].prompt_ids.front() == 256);
  CHECK(target.requests[0].prompt_text.size() == 499);
  CHECK(target.requests[0].prompt_text.substr(target.requests[0].prompt_text.size() - 10) == "Assistant:");
  // An endpoint target sends the cut prompt (ids), not the whole conversation as messages.
  CHECK(target.requests[0].messages.is_null());
  CHECK(target.requests[0].tools.is_null());
  CHECK(res.metrics.at("entries_truncated").samples == std::vector<double>{2});
  CHECK(res.metrics.at("accuracy.simple_python").samples == std::vector<double>{1, 0});  // simple_python_1 is factorial(5)

  cfg.truncate_overflow = false;
  ScriptedTarget skipping;
  skipping.answer = target.answer;
  const auto res2 = run_bfcl_suite(skipping, cfg, data());
  CHECK(skipping.requests.empty());
  CHECK(res2.metrics.at("entries_skipped").samples == std::vector<double>{2});
  CHECK(res2.metrics.at("accuracy.simple_python").samples.empty());
}

TEST_CASE("bfcl suite: native function calling sends tools and scores tool_calls") {
  ScriptedTarget target;
  target.ctx = 100000;
  target.answer = [](const suites::TargetRequest& req) {
    suites::TargetResponse r;
    REQUIRE(req.tools.is_array());
    r.tool_calls = nlohmann::json::parse(
        R"([{"id": "c1", "type": "function", "function": {"name": "math_factorial", "arguments": "{\"number\": 5}"}}])");
    return r;
  };
  BfclSuiteConfig cfg;
  cfg.categories = {"simple_python", "irrelevance"};
  cfg.per_category = 1;
  cfg.mode = BfclMode::native_fc;
  cfg.underscore_to_dot = true;
  const auto res = run_bfcl_suite(target, cfg, data());
  REQUIRE(target.requests.size() == 2);
  CHECK(target.requests[0].tools[0]["function"]["name"] == "math_factorial");
  CHECK(target.requests[0].messages.size() == 1);  // no system prompt in FC mode
  CHECK(res.metrics.at("accuracy.simple_python").samples == std::vector<double>{1});
  CHECK(res.metrics.at("accuracy.irrelevance").samples == std::vector<double>{0});  // a call where none belongs
}

TEST_CASE("bfcl suite: failed requests are counted, not scored") {
  ScriptedTarget target;
  target.ctx = 100000;
  target.answer = refused;
  BfclSuiteConfig cfg;
  cfg.categories = {"multiple"};
  cfg.per_category = 2;
  const auto res = run_bfcl_suite(target, cfg, data());
  CHECK(res.metrics.at("entries_failed").samples == std::vector<double>{2});
  CHECK(res.metrics.at("accuracy.overall").samples.empty());
  // A failed entry has no verdict: the suite says the run cannot be trusted (before, 7 of 20
  // entries got HTTP 400 and the run was reported valid with exit 0).
  const std::string first_id = select_entries(data(), cfg).front()->id;
  CHECK(res.details.at("invalid_reason") == "2 of 2 entries failed (first: " + first_id + ": connection refused)");
}

TEST_CASE("bfcl suite: a run with a failed entry makes the record invalid and keeps its figures") {
  ScriptedTarget target;
  target.ctx = 100000;
  int n = 0;
  target.answer = [&n](const suites::TargetRequest&) {
    suites::TargetResponse r;
    if (++n == 2) {
      r.ok = false;
      r.error = "HTTP 500: engine error";
      return r;
    }
    r.text = "[nothing()]";
    r.completion_tokens = 5;
    r.prompt_tokens = 74;  // the server's count (its template), not the local rendering's
    return r;
  };
  suites::SuiteSetRequest req;
  req.suites = {"bfcl"};
  req.config = suites::parse_suite_set_config(
      {{"name", "t"}, {"suites", {{"bfcl", {{"categories", {"multiple"}}, {"per_category", 3}}}}}}, "<test>");
  req.data_dir = atlas::test::data_dir();
  const auto rec = suites::run_suite_set(target, req);
  CHECK_FALSE(rec.valid);
  CHECK(rec.invalid_reason.find("suite bfcl: 1 of 3 entries failed") == 0);
  REQUIRE(rec.suites.count("bfcl") == 1);
  const auto& bfcl = rec.suites.at("bfcl");
  CHECK(bfcl.metrics.at("accuracy.overall").samples.size() == 2);
  CHECK(bfcl.details["entries"][0]["prompt_tokens"] == 74);
  CHECK(bfcl.details["entries"][0]["completion_tokens"] == 5);
}

TEST_CASE("bfcl suite: a chat prompt the server refuses as over its context is re-sent as the local ids, not failed") {
  // llama-server renders `messages` with its own template: longer than the local rendering the
  // context check measured (before, 7 of 20 entries got HTTP 400 and were silently dropped).
  ScriptedTarget target;
  target.ctx = 100000;
  target.answer = [](const suites::TargetRequest& req) {
    suites::TargetResponse r;
    if (!req.messages.is_null()) {
      r.ok = false;
      r.error = R"(HTTP 400: {"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}})";
      return r;
    }
    r.text = "[nothing()]";
    return r;
  };
  BfclSuiteConfig cfg;
  cfg.categories = {"multiple"};
  cfg.per_category = 2;
  const auto res = run_bfcl_suite(target, cfg, data());
  CHECK(res.metrics.at("entries_sent_as_ids").samples == std::vector<double>{2});
  CHECK(res.metrics.at("entries_failed").samples == std::vector<double>{0});
  CHECK(res.metrics.at("accuracy.overall").samples.size() == 2);
  CHECK_FALSE(res.details.contains("invalid_reason"));
  REQUIRE(target.requests.size() == 4);
  CHECK(target.requests[1].messages.is_null());
  CHECK(target.requests[1].prompt_ids == target.requests[0].prompt_ids);
}

TEST_CASE("bfcl suite: a salted timing request the server refuses as over its context is re-timed as salted ids; the unsalted answer stays scored") {
  NoResetTarget target;
  target.ctx = 100000;
  target.answer = [](const suites::TargetRequest& req) {
    // The salt line pushes the chat prompt over the server's context; BFCL's own request fits.
    if (salted_chat(req)) {
      suites::TargetResponse r;
      r.ok = false;
      r.error = R"(HTTP 400: {"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}})";
      return r;
    }
    return answer_unless_salted(req);  // ids (the timing request): "?"; BFCL's chat: the ground truth
  };
  BfclSuiteConfig cfg = gt_config();
  cfg.categories = {"simple_python"};
  const auto res = run_bfcl_suite(target, cfg, data());
  CHECK(res.metrics.at("entries_failed").samples == std::vector<double>{0});
  CHECK(res.metrics.at("entries_sent_as_ids").samples == std::vector<double>{0});  // the answers were not re-sent
  CHECK(res.details["cold_timing_sent_as_ids"] == 3);
  CHECK(res.details["cold_timed_separately"] == 3);
  CHECK(res.details["cold_salted_requests"] == 6);
  CHECK(res.metrics.at("accuracy.simple_python").samples == std::vector<double>{1, 1, 1});
  CHECK(res.metrics.at("time_per_entry_ms").samples.size() == 3);
  CHECK_FALSE(res.details.contains("invalid_reason"));
  REQUIRE(target.requests.size() == 9);  // per entry: the answer, the salted chat (400), the salted ids
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("entry " << i);
    const auto& answer = target.requests[3 * i];
    const auto& ids = target.requests[3 * i + 2];
    CHECK(!salted_chat(answer));
    CHECK(salted_chat(target.requests[3 * i + 1]));
    CHECK(ids.messages.is_null());
    REQUIRE(ids.prompt_ids.size() == answer.prompt_ids.size() + 4);
    CHECK(std::equal(answer.prompt_ids.begin() + 1, answer.prompt_ids.end(), ids.prompt_ids.begin() + 5));
  }
}

TEST_CASE("a run whose requests failed is invalid with the reason; data_assets list the BFCL files read") {
  // A server that died mid-run used to leave `valid: true` with every entry failed.
  ScriptedTarget target;
  target.ctx = 100000;
  target.answer = refused;
  suites::SuiteSetRequest req;
  req.suites = {"bfcl"};
  req.config = suites::load_suite_set_config("pr");
  req.data_dir = atlas::test::data_dir();
  const auto rec = suites::run_suite_set(target, req);
  CHECK_FALSE(rec.valid);
  const double failed = rec.suites.at("bfcl").metrics.at("entries_failed").samples.at(0);
  CHECK(failed > 0);
  CHECK(rec.invalid_reason.find("suite bfcl: " + std::to_string(static_cast<int>(failed)) + " of ") != std::string::npos);
  CHECK(rec.invalid_reason.find("connection refused") != std::string::npos);
  // Every question file and possible_answer file the suite read, relative to the data dir
  // (the record's data_assets were {} for BFCL runs).
  REQUIRE(rec.data_assets.count("bfcl/BFCL_v4_simple_python.json") == 1);
  CHECK(rec.data_assets.at("bfcl/BFCL_v4_simple_python.json").size() == 64);
  CHECK(rec.data_assets.count("bfcl/possible_answer/BFCL_v4_simple_python.json") == 1);
  CHECK(rec.data_assets.count("bfcl/BFCL_v4_irrelevance.json") == 1);
}

TEST_CASE("bfcl suite: config files") {
  for (const char* name : {"bfcl-pr.json", "bfcl-nightly.json"}) {
    const auto cfg = load_bfcl_config(atlas::test::source_dir() / "suites" / "config" / name);
    CHECK(cfg.name == "bfcl");
  }
  const auto pr = load_bfcl_config(atlas::test::source_dir() / "suites" / "config" / "bfcl-pr.json");
  CHECK(pr.categories == std::vector<std::string>{"simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"});
  CHECK(pr.per_category == 4);
  CHECK_THROWS_WITH_AS(bfcl_config_from_json(nlohmann::json::parse(R"({"per_categroy": 4})"), "x.json"),
                       "x.json: unknown field 'per_categroy'", BfclError);
  CHECK_THROWS_WITH_AS(bfcl_config_from_json(nlohmann::json::parse(R"({"mode": "chat"})"), "x.json"),
                       "x.json: field 'mode' must be \"prompt\" or \"native_fc\", got \"chat\"", BfclError);
  CHECK_THROWS_AS(bfcl_config_from_json(nlohmann::json::parse(R"({"categories": ["simple_java"]})"), "x.json"), BfclError);
}
