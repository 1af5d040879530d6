// llama2.c tokenizer files (tok512.bin): max_token_length, then per token a float32 score, an
// int32 length and the bytes; read for the seeds' vocabulary (512) and for a small one, so that
// short mutated files get past the token loop too. Each tokenizer is then run over a few texts.
#include "engine/error.hpp"
#include "engine/tokenizer/spm.hpp"
#include "fuzz/fuzz_target.hpp"
#include "fuzz/tokenizer_probe.hpp"

ATLAS_FUZZ_TARGET(llama2c_tokenizer) {
  using namespace atlas;
  const auto path = fuzz::scratch_file("tok.bin", data, size);
  for (const int vocab : {512, 8}) {
    try {
      const auto t = engine::load_llama2c_tokenizer(path, vocab);
      fuzz::check(t->vocab_size() == vocab, "vocab_size() is the requested size");
      fuzz::probe_tokenizer(*t, fuzz::text(data, std::min<std::size_t>(size, 64)));
    } catch (const InputError& e) {
      atlas::fuzz::rejected(e);
    }
  }
  return 0;
}
