// Suite-set configurations (suites/config/pr.json, nightly.json, or a user's file): the JSON
// text, then name, seed, and each suite's warmup / repetitions.
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "suites/suite_config.hpp"
#include "suites/suite_options.hpp"

ATLAS_FUZZ_TARGET(suite_config) {
  using namespace atlas;
  const nlohmann::json j = nlohmann::json::parse(fuzz::text(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    const suites::SuiteSetConfig c = suites::parse_suite_set_config(j, "fuzz");
    for (const auto& [name, section] : c.suites.items()) {
      fuzz::check(c.section(name).is_object(), "a suite's section is an object");
      // The typed accessors every suite reads its section with.
      const suites::ConfigSection cs(section, "fuzz: suites." + name);
      for (const char* f : {"warmup", "repetitions", "max_tokens", "sessions"}) {
        try {
          (void)cs.get_int(f, 1, 0);
        } catch (const InputError& e) {
          atlas::fuzz::rejected(e);
        }
      }
      try {
        (void)cs.get_int_list("prompt_lengths", {1}, 1);
        (void)cs.get_double("temperature", 0.0, 0.0);
        (void)cs.get_bool("stream", true);
        (void)cs.get_string("model", "m");
        (void)cs.get_string_list("categories", {});
        cs.allow_only({"warmup", "repetitions", "max_tokens", "prompt_lengths"});
      } catch (const InputError& e) {
        atlas::fuzz::rejected(e);
      }
    }
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
