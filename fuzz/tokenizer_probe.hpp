#pragma once
// Runs a tokenizer a parser just built over a few texts: ids must lie inside the vocabulary and
// decode without error, and the bounded encode must agree with encode() (a vocabulary from a
// fuzzed file must not make encode/decode misbehave).
#include <optional>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"
#include "fuzz/fuzz_target.hpp"

namespace atlas::fuzz {

inline void probe_tokenizer(const engine::Tokenizer& t, std::string_view extra = {}) {
  static const std::string_view texts[] = {"", "Once upon a time", " hello  world\n\t", "na\xC3\xAFve \xE2\x96\x81 \xF0\x9F\x98\x80",
                                           "\xFF\xFE\x80 broken \xC3", "<s></s><|im_end|><|endoftext|>"};
  std::vector<std::string_view> all(std::begin(texts), std::end(texts));
  all.push_back(extra);
  const int n = t.vocab_size();
  check(n > 0, "vocab_size() > 0");
  for (const auto text : all) {
    for (const bool bos : {false, true}) {
      const std::vector<int> ids = t.encode(text, bos);
      for (const int id : ids) check(id >= 0 && id < n, "encode() gives ids inside the vocabulary");
      // The bounded encode a server uses: encode()'s ids up to their count, nothing below it.
      check(t.encode_at_most(text, bos, ids.size()) == ids, "encode_at_most(count) gives encode()'s ids");
      if (!ids.empty()) check(!t.encode_at_most(text, bos, ids.size() - 1), "encode_at_most(count - 1) gives up");
      (void)t.decode(ids);
      engine::StreamDecoder d(t);
      for (const int id : ids) (void)d.push(id);
      (void)d.flush();
    }
  }
  for (const auto id : t.stop_ids()) check(id >= 0 && id < n, "stop ids inside the vocabulary");
  if (const auto b = t.bos_id()) check(*b >= 0 && *b < n, "bos inside the vocabulary");
  if (const auto e = t.eos_id()) check(*e >= 0 && *e < n, "eos inside the vocabulary");
}

}  // namespace atlas::fuzz
