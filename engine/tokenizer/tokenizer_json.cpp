// Hugging Face tokenizer.json (+ tokenizer_config.json) -> BpeVocab.
#include <fstream>
#include <type_traits>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/json_input.hpp"
#include "engine/tokenizer/bpe.hpp"

namespace atlas::engine {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& field, const std::string& what) {
  throw EngineError(file.string() + ": " + field + ": " + what);
}

std::string brief(const json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

/// Depth-checked before parsing: brief() and every message below print values (dump() recurses
/// once per level; a 100,000-deep normalizer overflowed the stack).
json parse_file(const std::filesystem::path& file) { return read_json_input(file); }

/// obj[key] as a string or bool: `def` when the key is absent or null; a value of another type,
/// or an `obj` that is not an object, is an error naming the field and the value. (json::value()
/// threw nlohmann's type_error instead: fuzz_tokenizer_json, "normalizer": 15.)
template <class T>
T field_or(const std::filesystem::path& file, const json& obj, const std::string& where, const char* key, T def) {
  if (!obj.is_object()) bad(file, where, "expected an object, got " + brief(obj));
  if (!obj.contains(key) || obj[key].is_null()) return def;
  const json& v = obj[key];
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) bad(file, where + "." + key, "expected true or false, got " + brief(v));
  } else {
    if (!v.is_string()) bad(file, where + "." + key, "expected a string, got " + brief(v));
  }
  return v.get<T>();
}

std::string str_or(const std::filesystem::path& file, const json& obj, const std::string& where, const char* key, const char* def) {
  return field_or<std::string>(file, obj, where, key, def);
}

struct PreTok {
  PreTokenizer kind = PreTokenizer::gpt2;
  bool add_prefix_space = false;
};

/// Accepts ByteLevel(use_regex=true) alone, or Sequence[Split(regex, Isolated), ByteLevel(use_regex=false)].
PreTok read_pre_tokenizer(const std::filesystem::path& file, const json& pt) {
  const std::string field = "pre_tokenizer";
  if (!pt.is_object()) bad(file, field, "expected an object, got " + brief(pt));
  const std::string type = str_or(file, pt, field, "type", "");
  if (type == "ByteLevel") {
    if (!field_or(file, pt, field, "use_regex", true)) bad(file, field, "ByteLevel without use_regex has no split rule");
    return {PreTokenizer::gpt2, field_or(file, pt, field, "add_prefix_space", false)};
  }
  if (type != "Sequence") bad(file, field + ".type", "unsupported \"" + type + "\" (supported: ByteLevel, Sequence[Split, ByteLevel])");
  const json& seq = pt.contains("pretokenizers") ? pt["pretokenizers"] : json();
  if (!seq.is_array() || seq.size() != 2) bad(file, field + ".pretokenizers", "expected [Split, ByteLevel], got " + brief(seq));
  const json& split = seq[0];
  const json& bl = seq[1];
  const std::string f0 = field + ".pretokenizers[0]", f1 = field + ".pretokenizers[1]";
  const std::string split_type = str_or(file, split, f0, "type", "");
  if (split_type != "Split") bad(file, f0 + ".type", "expected \"Split\", got " + brief(json(split_type)));
  const std::string bl_type = str_or(file, bl, f1, "type", "");
  if (bl_type != "ByteLevel") bad(file, f1 + ".type", "expected \"ByteLevel\", got " + brief(json(bl_type)));
  if (field_or(file, bl, f1, "use_regex", false)) bad(file, f1 + ".use_regex", "true after a Split is not supported");
  const std::string behavior = str_or(file, split, f0, "behavior", "");
  if (behavior != "Isolated" || field_or(file, split, f0, "invert", false))
    bad(file, f0 + ".behavior", "only Isolated, not inverted, is supported; got " + brief(json(behavior)));
  const json& pattern = split.contains("pattern") ? split["pattern"] : json();
  if (!pattern.is_object() || !pattern.contains("Regex") || !pattern["Regex"].is_string())
    bad(file, field + ".pretokenizers[0].pattern", "expected {\"Regex\": ...}, got " + brief(pattern));
  const std::string regex = pattern["Regex"].get<std::string>();
  const auto kind = pre_tokenizer_from_regex(regex);
  if (!kind) bad(file, field + ".pretokenizers[0].pattern.Regex", "no implementation of the split regex " + brief(json(regex)) + " (known: GPT-2, Llama-3, Qwen2)");
  return {*kind, field_or(file, bl, f1, "add_prefix_space", false)};
}

/// BOS from TemplateProcessing: the special token that starts the "single" template.
std::optional<std::string> template_bos(const json& pp) {
  if (!pp.is_object()) return std::nullopt;
  const std::string type = pp.contains("type") && pp["type"].is_string() ? pp["type"].get<std::string>() : "";
  if (type == "Sequence" && pp.contains("processors") && pp["processors"].is_array()) {
    for (const auto& p : pp["processors"]) {
      if (auto b = template_bos(p)) return b;
    }
  }
  if (type == "TemplateProcessing" && pp.contains("single") && pp["single"].is_array() && !pp["single"].empty()) {
    const json& first = pp["single"][0];
    if (first.contains("SpecialToken") && first["SpecialToken"].contains("id") && first["SpecialToken"]["id"].is_string())
      return first["SpecialToken"]["id"].get<std::string>();
  }
  return std::nullopt;
}

std::optional<std::string> config_token(const json& cfg, const char* key) {
  if (!cfg.is_object() || !cfg.contains(key)) return std::nullopt;
  const json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

BpeVocab read_tokenizer_json(const std::filesystem::path& file, int max_ids) {
  // Every id indexes per-token tables (the decoder's bytes, the model's embedding rows): one
  // beyond the bound would size them from a number in the file (an added token id 2^31 - 1 made
  // vector::resize throw; 10^8 allocated 3 GiB).
  const long long id_limit = max_ids > 0 ? max_ids : kMaxTokenizerIds;
  auto id_error = [&](long long id) {
    return "id " + std::to_string(id) + (max_ids > 0 ? " is beyond the model's vocabulary (vocab_size " + std::to_string(max_ids) + ")"
                                                     : " is beyond " + std::to_string(kMaxTokenizerIds) + " (2^24)");
  };
  const json j = parse_file(file);
  if (!j.is_object()) bad(file, "(top level)", "expected an object");
  const json& model = j.contains("model") ? j["model"] : json();
  if (!model.is_object()) bad(file, "model", "missing or not an object");
  const std::string model_type = str_or(file, model, "model", "type", "BPE");
  if (model_type != "BPE") bad(file, "model.type", "unsupported \"" + model_type + "\" (supported: BPE)");
  if (!model.contains("vocab") || !model["vocab"].is_object()) bad(file, "model.vocab", "missing or not an object");
  if (!model.contains("merges") || !model["merges"].is_array()) bad(file, "model.merges", "missing or not an array");

  const json& norm = j.contains("normalizer") ? j["normalizer"] : json();
  if (!norm.is_null()) {
    const std::string norm_type = str_or(file, norm, "normalizer", "type", "");
    if (norm_type != "NFC") bad(file, "normalizer.type", "unsupported " + brief(json(norm_type)) + " (supported: null, NFC)");
  }

  BpeVocab v;
  for (const auto& [piece, idj] : model["vocab"].items()) {
    if (!idj.is_number_integer() || idj.get<long long>() < 0) bad(file, "model.vocab[\"" + piece + "\"]", "bad id " + brief(idj));
    if (idj.get<long long>() >= id_limit) bad(file, "model.vocab[\"" + piece + "\"]", id_error(idj.get<long long>()));
    const auto id = static_cast<std::size_t>(idj.get<long long>());
    if (id >= v.tokens.size()) v.tokens.resize(id + 1);
    // One id, one piece: a second piece on an id would replace the first, whose text then
    // encodes as nothing (its bytes have no token left).
    if (!v.tokens[id].empty())
      bad(file, "model.vocab[\"" + piece + "\"]", "id " + std::to_string(id) + " is also the id of " + brief(json(v.tokens[id])));
    v.tokens[id] = piece;
  }
  const json& merges = model["merges"];
  v.merges.reserve(merges.size());
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const json& m = merges[r];
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const auto sp = s.find(' ', 1);  // the first part is never empty; a part may not contain ' '
      if (sp == std::string::npos) bad(file, "model.merges[" + std::to_string(r) + "]", "expected \"left right\", got " + brief(m));
      v.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      v.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      bad(file, "model.merges[" + std::to_string(r) + "]", "expected \"left right\" or [left, right], got " + brief(m));
    }
  }
  // Hugging Face tokenizers refuses a merge whose parts or result are not in the vocabulary
  // (Error::MergeTokenOutOfVocabulary): such a file was written by a broken converter, and the
  // merge could never apply.
  {
    std::unordered_set<std::string_view> pieces(v.tokens.begin(), v.tokens.end());
    for (std::size_t r = 0; r < v.merges.size(); ++r) {
      const auto& [l, rt] = v.merges[r];
      for (const std::string& part : {l, rt, l + rt}) {
        if (!pieces.contains(part))
          bad(file, "model.merges[" + std::to_string(r) + "]", "\"" + l + " " + rt + "\": token " + brief(json(part)) + " is not in model.vocab");
      }
    }
  }
  if (j.contains("added_tokens") && !j["added_tokens"].is_null() && !j["added_tokens"].is_array())
    bad(file, "added_tokens", "expected a list, got " + brief(j["added_tokens"]));  // was skipped: the special tokens silently lost
  if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
    const json& added = j["added_tokens"];
    for (std::size_t i = 0; i < added.size(); ++i) {
      const json& a = added[i];
      const std::string field = "added_tokens[" + std::to_string(i) + "]";
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") || !a["content"].is_string())
        bad(file, field, "expected {id, content, ...}, got " + brief(a));
      AddedToken t;
      const long long id = a["id"].get<long long>();
      if (id >= id_limit) bad(file, field + ".id", id_error(id));
      t.id = static_cast<int>(std::max(id, -1LL));
      t.content = a["content"].get<std::string>();
      if (t.id < 0 || t.content.empty()) bad(file, field, "bad id/content " + brief(a));
      t.special = field_or(file, a, field, "special", true);
      t.lstrip = field_or(file, a, field, "lstrip", false);
      t.rstrip = field_or(file, a, field, "rstrip", false);
      t.single_word = field_or(file, a, field, "single_word", false);
      v.added.push_back(std::move(t));
    }
  }
  const json& pt = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : json();
  const PreTok pre = read_pre_tokenizer(file, pt);
  v.pre = pre.kind;
  v.add_prefix_space = pre.add_prefix_space;

  auto id_of = [&](const std::string& s) -> std::optional<int> {
    for (const auto& a : v.added) {
      if (a.content == s) return a.id;
    }
    for (std::size_t i = 0; i < v.tokens.size(); ++i) {
      if (v.tokens[i] == s) return static_cast<int>(i);
    }
    return std::nullopt;
  };

  if (auto b = template_bos(j.contains("post_processor") ? j["post_processor"] : json())) v.bos = id_of(*b);
  const auto cfg_path = file.parent_path() / "tokenizer_config.json";
  json cfg;
  if (std::filesystem::exists(cfg_path)) {
    cfg = parse_file(cfg_path);
    if (!cfg.is_object()) bad(cfg_path, "(top level)", "expected an object, got " + brief(cfg));
  }
  if (auto e = config_token(cfg, "eos_token")) v.eos = id_of(*e);
  if (cfg.is_object() && cfg.contains("add_bos_token") && cfg["add_bos_token"].is_boolean()) {
    if (!cfg["add_bos_token"].get<bool>()) v.bos.reset();
    else if (auto b = config_token(cfg, "bos_token")) v.bos = id_of(*b);
  }
  for (const char* s : {"<|endoftext|>", "<|end_of_text|>", "</s>"}) {
    if (v.eos) break;
    v.eos = id_of(s);
  }
  for (const char* s : {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"}) {
    if (auto id = id_of(s)) v.extra_stop_ids.push_back(*id);
  }
  return v;
}

std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::filesystem::path& file, int max_ids) {
  BpeVocab v = read_tokenizer_json(file, max_ids);
  try {
    return make_bpe_tokenizer(std::move(v));
  } catch (const EngineError& e) {
    throw EngineError(file.string() + ": " + e.what());
  }
}

}  // namespace atlas::engine
