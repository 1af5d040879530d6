#include "suites/bfcl/score.hpp"

#include <fstream>
#include <map>

#include "suites/bfcl/bfcl_error.hpp"

namespace atlas::suites::bfcl {

namespace {

PyValue decode(const nlohmann::ordered_json& result, OutputFormat format) {
  if (format == OutputFormat::fc) return decode_fc(result);
  // A prompting handler calls result.strip(): anything but a string raises.
  if (!result.is_string()) throw PyDecodeError("AttributeError: the result is not a string");
  const std::string text = result.get<std::string>();
  return format == OutputFormat::json ? decode_json_format(text) : decode_python(text);
}

}  // namespace

EntryVerdict score_entry(const BfclEntry& entry, const nlohmann::ordered_json& result, const ScoreOptions& opt) {
  EntryVerdict v;
  v.id = entry.id;
  v.category = entry.category;
  if (is_relevance_category(entry.category)) {
    // relevance_file_runner (ER:263-316, spec §6): "has a call" = decoded without error, passes
    // the format gate, and is neither [] nor [{}].
    bool has_call = false;
    std::string why;
    try {
      const PyValue decoded = decode(result, opt.format);
      has_call = as_calls(decoded).has_value() && !is_empty_output(decoded);
      if (!has_call) why = "decoded output holds no function call";
    } catch (const PyDecodeError& e) {
      why = e.what();
    }
    const bool want_call = entry.category.find("irrelevance") == std::string::npos;
    v.valid = has_call == want_call;
    if (!v.valid) {
      v.error_type = want_call ? "relevance_error:decoder_failed" : "irrelevance_error:decoder_success";
      v.error = want_call ? "Invalid syntax. Failed to decode AST when it should have. " + why
                          : "Valid syntax. Successfully decode AST when it should not.";
    }
    return v;
  }
  // ast_file_runner (ER:334-367).
  PyValue decoded;
  try {
    decoded = decode(result, opt.format);
  } catch (const PyDecodeError& e) {
    v.error_type = "ast_decoder:decoder_failed";
    v.error = std::string("Invalid syntax. Failed to decode AST. ") + e.what();
    return v;
  }
  const auto calls = as_calls(decoded);
  if (!calls) {
    v.error_type = "ast_decoder:decoder_wrong_output_format";
    v.error = "Did not output in the specified format.";
    return v;
  }
  const CheckResult r = check_ast(entry.category, entry.functions, *calls, entry.ground_truth, opt.underscore_to_dot);
  v.valid = r.valid;
  if (!r.valid) {
    v.error_type = r.error_type;
    v.error = r.error;
  }
  return v;
}

ScoreSummary summarize(const std::vector<EntryVerdict>& verdicts) {
  std::map<std::string, CategoryScore> by_cat;
  ScoreSummary s;
  for (const auto& v : verdicts) {
    auto& c = by_cat[v.category];
    c.category = v.category;
    ++c.total;
    c.correct += v.valid ? 1 : 0;
    ++s.total;
    s.correct += v.valid ? 1 : 0;
  }
  for (const auto& name : all_categories()) {
    if (auto it = by_cat.find(name); it != by_cat.end()) s.categories.push_back(it->second);
  }
  for (const auto& [name, c] : by_cat) {
    bool known = false;
    for (const auto& k : all_categories()) known |= k == name;
    if (!known) s.categories.push_back(c);
  }
  auto acc = [&](const char* name) -> std::optional<double> {
    if (auto it = by_cat.find(name); it != by_cat.end()) return it->second.accuracy();
    return std::nullopt;
  };
  // EH:331-347 (unweighted; "simple" is simple_python alone in our Python-only subset).
  {
    const auto a = acc("simple_python"), b = acc("multiple"), c = acc("parallel"), d = acc("parallel_multiple");
    if (a && b && c && d) s.non_live_ast = (*a + *b + *c + *d) / 4.0;
  }
  // EH:375-392 calculate_weighted_accuracy: weights are entry counts, i.e. pooled accuracy.
  {
    std::size_t correct = 0, total = 0;
    bool all = true;
    for (const char* name : {"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"}) {
      auto it = by_cat.find(name);
      if (it == by_cat.end()) {
        all = false;
        break;
      }
      correct += it->second.correct;
      total += it->second.total;
    }
    if (all && total) s.live_ast = static_cast<double>(correct) / static_cast<double>(total);
  }
  // EH:479-481.
  if (auto a = acc("irrelevance"), b = acc("live_irrelevance"); a && b) s.irrelevance = (*a + *b) / 2.0;
  s.relevance = acc("live_relevance");
  return s;
}

std::vector<ResultLine> read_results_file(const std::filesystem::path& path, OutputFormat format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BfclError(path.string() + ": cannot open for reading");
  std::vector<ResultLine> out;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = path.string() + ":" + std::to_string(n);
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw BfclError(where + ": malformed JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw BfclError(where + ": a line must be a JSON object with 'id' and 'result'");
    if (!j.contains("id") || !j["id"].is_string()) throw BfclError(where + ": field 'id' is missing or not a string");
    if (!j.contains("result")) throw BfclError(where + ": field 'result' is missing");
    if (format != OutputFormat::fc && !j["result"].is_string()) {
      throw BfclError(where + ": field 'result' must be a string in " + to_string(format) + " format, got " +
                      j["result"].type_name());
    }
    out.push_back(ResultLine{j["id"].get<std::string>(), j["result"], where});
  }
  return out;
}

std::vector<EntryVerdict> score_results(const BfclDataset& ds, const std::vector<ResultLine>& lines,
                                        const ScoreOptions& opt) {
  std::vector<EntryVerdict> out;
  out.reserve(lines.size());
  for (const auto& l : lines) {
    const BfclEntry* e = ds.find(l.id);
    if (!e) throw BfclError(l.where + ": field 'id': '" + l.id + "' is not in the loaded BFCL data");
    out.push_back(score_entry(*e, l.result, opt));
  }
  return out;
}

nlohmann::ordered_json to_json(const EntryVerdict& v) {
  nlohmann::ordered_json j;
  j["id"] = v.id;
  j["category"] = v.category;
  j["valid"] = v.valid;
  j["error_type"] = v.valid ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v.error_type);
  return j;
}

nlohmann::ordered_json to_json(const ScoreSummary& s) {
  auto opt = [](const std::optional<double>& d) { return d ? nlohmann::ordered_json(*d) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json cats = nlohmann::ordered_json::object();
  for (const auto& c : s.categories) {
    cats[c.category] = {{"accuracy", c.accuracy()}, {"correct", c.correct}, {"total", c.total}};
  }
  nlohmann::ordered_json sum;
  sum["categories"] = cats;
  sum["non_live_ast"] = opt(s.non_live_ast);
  sum["live_ast"] = opt(s.live_ast);
  sum["irrelevance"] = opt(s.irrelevance);
  sum["relevance"] = opt(s.relevance);
  sum["overall"] = {{"accuracy", s.total ? static_cast<double>(s.correct) / static_cast<double>(s.total) : 0.0},
                    {"correct", s.correct},
                    {"total", s.total}};
  return nlohmann::ordered_json{{"summary", sum}};
}

}  // namespace atlas::suites::bfcl
