// llama2.c checkpoints: the legacy 7-int header and the "ak42" versioned header (v1 float32, v2
// int8 groups), sizes checked against the file (load_model: format detection, then the loader).
#include "engine/error.hpp"
#include "engine/formats/llama2c.hpp"
#include "engine/model.hpp"
#include "fuzz/fuzz_target.hpp"

ATLAS_FUZZ_TARGET(llama2c) {
  using namespace atlas;
  const auto path = fuzz::scratch_file("model.bin", data, size);
  try {
    (void)engine::llama2c_legacy_expected_size(path);
    if (!engine::looks_like_llama2c(path)) return 0;
    engine::LoadOptions o;
    o.max_seq_len = 64;
    const engine::Model m = engine::load_llama2c(path, {}, o);
    fuzz::check(m.config.vocab_size > 0 && m.config.dim > 0, "a loaded model has a positive vocab and dim");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
