#include "server/openai_request.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "common/json_depth.hpp"
#include "engine/logprobs.hpp"
#include "server/ordered_json_parse.hpp"

namespace atlas::server {

namespace {
using J = nlohmann::ordered_json;

std::string type_name(const J& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

[[noreturn]] void wrong_type(const std::string& field, const char* want, const J& got) {
  throw bad_request("'" + field + "' must be " + want + ", got " + type_name(got) + " " + got.dump().substr(0, 80), field,
                    "invalid_type");
}

const J* field(const J& o, const char* name) {
  auto it = o.find(name);
  if (it == o.end() || it->is_null()) return nullptr;
  return &*it;
}

double number(const J& o, const char* name, double lo, double hi) {
  const J* v = field(o, name);
  if (!v->is_number()) wrong_type(name, "a number", *v);
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) {
    throw bad_request("'" + std::string(name) + "' must be in [" + J(lo).dump() + ", " + J(hi).dump() + "], got " + v->dump(),
                      name, "out_of_range");
  }
  return x;
}

long long integer(const J& o, const char* name, long long lo, long long hi) {
  const J* v = field(o, name);
  if (!v->is_number_integer()) wrong_type(name, "an integer", *v);
  const long long x = v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(std::numeric_limits<long long>::max())
                          ? std::numeric_limits<long long>::max()
                          : v->get<long long>();
  if (x < lo || x > hi) {
    throw bad_request("'" + std::string(name) + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                          v->dump(),
                      name, "out_of_range");
  }
  return x;
}

bool boolean(const J& o, const char* name) {
  const J* v = field(o, name);
  if (!v->is_boolean()) wrong_type(name, "a boolean", *v);
  return v->get<bool>();
}

/// Chat content: a string, null, or a list of parts of which the text parts are joined.
J normalise_content(const J& c, const std::string& where) {
  if (c.is_null() || c.is_string()) return c;
  if (!c.is_array()) wrong_type(where, "a string, null or an array of content parts", c);
  std::string text;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const J& part = c[i];
    const std::string pw = where + "[" + std::to_string(i) + "]";
    if (!part.is_object()) wrong_type(pw, "an object", part);
    const J* t = field(part, "type");
    if (!t || !t->is_string()) throw bad_request("'" + pw + ".type' must be a string", pw + ".type", "invalid_type");
    if (t->get<std::string>() != "text") {
      throw bad_request("content part type '" + t->get<std::string>() + "' is not supported (text only)", pw + ".type",
                        "unsupported_content");
    }
    const J* tx = field(part, "text");
    if (!tx || !tx->is_string()) throw bad_request("'" + pw + ".text' must be a string", pw + ".text", "invalid_type");
    text += tx->get<std::string>();
  }
  return text;
}
/// Known OpenAI / vLLM parameters the server does not implement, with the value that means
/// "off": any other value is refused rather than answered as if it were absent (the answer
/// would not be what was asked). All of them are named in one 400.
void refuse_unsupported(const J& j, bool chat) {
  struct Neutral {
    const char* name;
    J off;  // the one value (besides null) that asks for nothing
  };
  static const std::vector<Neutral> fields = {
      {"echo", false},           {"best_of", 1},          {"presence_penalty", 0},     {"frequency_penalty", 0},
      {"repetition_penalty", 1}, {"length_penalty", 1},   {"min_p", 0},                {"suffix", ""},
      {"use_beam_search", false}, {"prompt_logprobs", J()},
      {"stop_token_ids", J::array()}, {"bad_words", J::array()}, {"allowed_token_ids", J()}, {"guided_json", J()},
      {"guided_regex", J()},     {"guided_choice", J()},  {"guided_grammar", J()},     {"structured_outputs", J()},
      {"logits_processors", J()}, {"prediction", J()},    {"audio", J()},              {"modalities", J()},
      {"web_search_options", J()}, {"reasoning_effort", J()},
  };
  std::vector<std::string> given;
  // Completions ask for alternatives with `logprobs: N`; OpenAI's completions have no
  // top_logprobs, and one given there would be silently ignored.
  if (const J* t = field(j, "top_logprobs"); t && !chat && !(t->is_number() && t->get<double>() == 0)) {
    given.push_back("top_logprobs=" + t->dump().substr(0, 40) + " (on /v1/completions use logprobs: N)");
  }
  for (const Neutral& f : fields) {
    const J* v = field(j, f.name);
    if (v == nullptr) continue;
    // Numbers compare by value: 0 and 0.0 both ask for no penalty.
    const bool neutral = (v->is_number() && f.off.is_number()) ? v->get<double>() == f.off.get<double>() : *v == f.off;
    if (!neutral) given.push_back(std::string(f.name) + "=" + v->dump().substr(0, 40));
  }
  if (const J* rf = field(j, "response_format")) {  // {"type": "text"} asks for nothing
    if (!(rf->is_object() && rf->size() == 1 && rf->contains("type") && (*rf)["type"] == "text")) {
      given.push_back("response_format=" + rf->dump().substr(0, 40));
    }
  }
  if (given.empty()) return;
  std::string list;
  for (const auto& g : given) list += (list.empty() ? "" : ", ") + g;
  const std::string first = given.front().substr(0, given.front().find('='));
  throw bad_request("not supported by atlas-serve (the answer would ignore " + std::string(given.size() == 1 ? "it" : "them") + "): " + list,
                    first, "unsupported_value");
}
}  // namespace

CompletionRequest parse_completion_request(std::string_view body, bool chat) {
  // Before parsing: printing a value nested 100,000 deep (e.g. in a wrong-type message)
  // recurses once per level and would overflow the handler thread's stack.
  if (json_nesting_depth(body, kMaxJsonNesting) > kMaxJsonNesting)
    throw bad_request("request body nests arrays/objects deeper than " + std::to_string(kMaxJsonNesting) + " levels", "", "invalid_json");
  std::optional<J> parsed = parse_ordered_json(body);  // linear in the members of an object
  if (!parsed) throw bad_request("request body is not valid JSON", "", "invalid_json");
  const J& j = *parsed;
  if (!j.is_object()) throw bad_request("request body must be a JSON object, got " + type_name(j), "", "invalid_json");
  CompletionRequest r;
  r.chat = chat;

  const J* model = field(j, "model");
  if (!model) throw bad_request("'model' is required", "model", "missing_field");
  if (!model->is_string()) wrong_type("model", "a string", *model);
  r.model = model->get<std::string>();

  if (chat) {
    const J* msgs = field(j, "messages");
    if (!msgs) throw bad_request("'messages' is required", "messages", "missing_field");
    if (!msgs->is_array()) wrong_type("messages", "an array", *msgs);
    if (msgs->empty()) throw bad_request("'messages' must not be empty", "messages", "invalid_value");
    r.messages = J::array();
    for (std::size_t i = 0; i < msgs->size(); ++i) {
      const J& m = (*msgs)[i];
      const std::string w = "messages[" + std::to_string(i) + "]";
      if (!m.is_object()) wrong_type(w, "an object", m);
      const J* role = field(m, "role");
      if (!role) throw bad_request("'" + w + ".role' is required", w + ".role", "missing_field");
      if (!role->is_string()) wrong_type(w + ".role", "a string", *role);
      const std::string rs = role->get<std::string>();
      if (rs != "system" && rs != "user" && rs != "assistant" && rs != "tool" && rs != "developer") {
        throw bad_request("'" + w + ".role' must be system, developer, user, assistant or tool, got '" + rs + "'", w + ".role",
                          "invalid_value");
      }
      J nm = m;
      nm["content"] = m.contains("content") ? normalise_content(m["content"], w + ".content") : J(nullptr);
      if (rs != "assistant" && nm["content"].is_null()) {
        throw bad_request("'" + w + ".content' is required for role '" + rs + "'", w + ".content", "missing_field");
      }
      if (const J* tc = field(m, "tool_calls"); tc && !tc->is_array()) wrong_type(w + ".tool_calls", "an array", *tc);
      r.messages.push_back(std::move(nm));
    }
    if (const J* tools = field(j, "tools")) {
      if (!tools->is_array()) wrong_type("tools", "an array", *tools);
      for (std::size_t i = 0; i < tools->size(); ++i) {
        const J& t = (*tools)[i];
        const std::string w = "tools[" + std::to_string(i) + "]";
        if (!t.is_object()) wrong_type(w, "an object", t);
        const J* fn = field(t, "function");
        if (!fn || !fn->is_object()) throw bad_request("'" + w + ".function' must be an object", w + ".function", "invalid_type");
        const J* name = field(*fn, "name");
        if (!name || !name->is_string()) throw bad_request("'" + w + ".function.name' must be a string", w + ".function.name", "invalid_type");
      }
      if (!tools->empty()) r.tools = *tools;
    }
    if (const J* tc = field(j, "tool_choice")) {
      if (tc->is_string()) {
        const std::string s = tc->get<std::string>();
        if (s != "none" && s != "auto" && s != "required") {
          throw bad_request("'tool_choice' must be none, auto, required or an object, got '" + s + "'", "tool_choice", "invalid_value");
        }
        r.tool_choice_none = s == "none";
      } else if (!tc->is_object()) {
        wrong_type("tool_choice", "a string or an object", *tc);
      }
    }
    if (field(j, "add_generation_prompt")) r.add_generation_prompt = boolean(j, "add_generation_prompt");
  } else {
    const J* p = field(j, "prompt");
    if (!p) throw bad_request("'prompt' is required", "prompt", "missing_field");
    if (p->is_string()) {
      r.prompt_text = p->get<std::string>();
    } else if (p->is_array()) {
      if (p->size() == 1 && (*p)[0].is_string()) {
        r.prompt_text = (*p)[0].get<std::string>();
      } else {
        if (p->empty()) throw bad_request("'prompt' must not be empty", "prompt", "invalid_value");
        r.prompt_is_ids = true;
        for (std::size_t i = 0; i < p->size(); ++i) {
          const J& t = (*p)[i];
          if (!t.is_number_integer() || t.get<long long>() < 0 || t.get<long long>() > std::numeric_limits<int>::max()) {
            throw bad_request("'prompt' must be a string or an array of token ids; element " + std::to_string(i) + " is " +
                                  t.dump().substr(0, 40),
                              "prompt", "invalid_type");
          }
          r.prompt_ids.push_back(t.get<int>());
        }
      }
    } else {
      wrong_type("prompt", "a string or an array of token ids", *p);
    }
  }

  if (field(j, "max_completion_tokens")) r.max_tokens = static_cast<int>(integer(j, "max_completion_tokens", 1, 1 << 30));
  if (field(j, "max_tokens")) r.max_tokens = static_cast<int>(integer(j, "max_tokens", 1, 1 << 30));
  if (field(j, "temperature")) r.sampling.temperature = static_cast<float>(number(j, "temperature", 0.0, 2.0));
  if (field(j, "top_p")) {
    r.sampling.top_p = static_cast<float>(number(j, "top_p", 0.0, 1.0));
    if (r.sampling.top_p <= 0.0f) throw bad_request("'top_p' must be in (0, 1], got 0", "top_p", "out_of_range");
  }
  if (field(j, "top_k")) {
    const long long k = integer(j, "top_k", -1, 1 << 30);
    r.sampling.top_k = k < 0 ? 0 : static_cast<int>(k);
  }
  if (field(j, "seed")) {
    r.sampling.seed = static_cast<std::uint64_t>(integer(j, "seed", std::numeric_limits<long long>::min(), std::numeric_limits<long long>::max()));
    r.seed_given = true;
  }
  if (field(j, "n") && integer(j, "n", 1, 1) != 1) throw bad_request("'n' must be 1", "n", "unsupported_value");
  if (field(j, "stream")) r.stream = boolean(j, "stream");
  if (const J* so = field(j, "stream_options")) {
    if (!so->is_object()) wrong_type("stream_options", "an object", *so);
    if (field(*so, "include_usage")) {
      const J& v = (*so)["include_usage"];
      if (!v.is_boolean()) wrong_type("stream_options.include_usage", "a boolean", v);
      r.include_usage = v.get<bool>();
    }
  }
  if (const J* st = field(j, "stop")) {
    if (st->is_string()) {
      r.stop.push_back(st->get<std::string>());
    } else if (st->is_array()) {
      if (st->size() > 16) throw bad_request("'stop' may hold at most 16 strings", "stop", "out_of_range");
      for (const J& s : *st) {
        if (!s.is_string()) wrong_type("stop", "a string or an array of strings", *st);
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      wrong_type("stop", "a string or an array of strings", *st);
    }
    std::erase_if(r.stop, [](const std::string& s) { return s.empty(); });
  }
  // Not applied by the sampler: a non-empty one is refused rather than silently ignored (the
  // answer would not be what was asked). Checked on its size before anything else of it is
  // read, so a body of a million entries costs no more than its JSON parse.
  if (const J* lb = field(j, "logit_bias")) {
    if (!lb->is_object()) wrong_type("logit_bias", "an object", *lb);
    if (!lb->empty()) {
      throw bad_request("'logit_bias' is not supported (got " + std::to_string(lb->size()) + " entries, first " +
                            lb->begin().key().substr(0, 40) + ": " + lb->begin().value().dump().substr(0, 40) + ")",
                        "logit_bias", "unsupported_value");
    }
  }
  if (field(j, "ignore_eos")) r.ignore_eos = boolean(j, "ignore_eos");
  if (field(j, "min_tokens")) {
    r.min_tokens = static_cast<int>(integer(j, "min_tokens", 0, 1 << 30));
    if (r.max_tokens && r.min_tokens > *r.max_tokens) {
      throw bad_request("'min_tokens' (" + std::to_string(r.min_tokens) + ") must not exceed max_tokens (" + std::to_string(*r.max_tokens) + ")",
                        "min_tokens", "out_of_range");
    }
  }
  // logprobs: an integer (the alternatives per token) on /v1/completions, a boolean with
  // top_logprobs on /v1/chat/completions, as OpenAI's two APIs define them; false / null is off
  // on both.
  if (const J* lp = field(j, "logprobs")) {
    if (chat) {
      r.logprobs = boolean(j, "logprobs");
    } else if (!(lp->is_boolean() && !lp->get<bool>())) {
      if (!lp->is_number_integer()) wrong_type("logprobs", "an integer (alternatives per token, 0-20) or null", *lp);
      r.top_logprobs = static_cast<int>(integer(j, "logprobs", 0, engine::kMaxTopLogprobs));
      r.logprobs = true;
    }
  }
  if (chat && field(j, "top_logprobs")) {
    r.top_logprobs = static_cast<int>(integer(j, "top_logprobs", 0, engine::kMaxTopLogprobs));
    if (r.top_logprobs > 0 && !r.logprobs) {
      throw bad_request("'top_logprobs' (" + std::to_string(r.top_logprobs) + ") needs 'logprobs': true", "top_logprobs", "invalid_value");
    }
  }
  if (field(j, "return_tokens_as_token_ids")) r.return_tokens_as_token_ids = boolean(j, "return_tokens_as_token_ids");
  refuse_unsupported(j, chat);
  if (field(j, "return_token_ids")) r.return_token_ids = boolean(j, "return_token_ids");
  return r;
}

}  // namespace atlas::server
