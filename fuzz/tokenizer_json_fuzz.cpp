// Hugging Face tokenizer.json (byte-level BPE): model.vocab / merges, added_tokens, the
// pre_tokenizer split rules, post_processor and decoder; the tokenizer built from it is then run
// over a few texts (and over the input's last bytes, so that added tokens get matched).
#include "engine/error.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "fuzz/fuzz_target.hpp"
#include "fuzz/tokenizer_probe.hpp"

ATLAS_FUZZ_TARGET(tokenizer_json) {
  using namespace atlas;
  const auto path = fuzz::scratch_file("tokenizer.json", data, size);
  try {
    const auto t = engine::load_tokenizer_json(path);
    const std::string_view all = fuzz::text(data, size);
    fuzz::probe_tokenizer(*t, all.substr(all.size() > 48 ? all.size() - 48 : 0));
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
