// GGUF: header, metadata key/values, tensor infos, the data section, the model config read from
// the keys, and the tokenizer built from tokenizer.ggml.* (load_model runs all of them).
#include "engine/error.hpp"
#include "engine/formats/gguf.hpp"
#include "engine/model.hpp"
#include "fuzz/fuzz_target.hpp"
#include "fuzz/tokenizer_probe.hpp"

ATLAS_FUZZ_TARGET(gguf) {
  using namespace atlas;
  const auto path = fuzz::scratch_file("model.gguf", data, size);
  try {
    const engine::GgufFile f = engine::read_gguf(path);
    for (const auto& t : f.tensors) fuzz::check(f.data_offset + t.offset + t.nbytes <= size, "tensor data inside the file");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
    return 0;
  }
  try {
    engine::LoadOptions o;
    o.max_seq_len = 64;
    const engine::Model m = engine::load_model(path, o);
    if (m.tokenizer) fuzz::probe_tokenizer(*m.tokenizer);
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
