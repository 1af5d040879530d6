// The byte-level BPE a part at a time: the parts pre-tokenise as the whole text does, and an
// encode bounded by a count stops once the count is passed, so a prompt that cannot fit a
// server's context costs the tokenising of its first part, not of all of it.
#include <doctest/doctest.h>

#include <time.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/bpe.hpp"
#include "engine/tokenizer/synthetic_vocab.hpp"

using namespace atlas::engine;

namespace {

std::vector<std::string> strings(const std::vector<std::string_view>& views) { return {views.begin(), views.end()}; }

/// Text made of fragments every pattern treats specially: letters (Latin-1, CJK), digit runs,
/// contractions in both cases, space runs, CR/LF, tabs, punctuation, an emoji, invalid bytes.
std::string fragment_text(std::mt19937& rng, int fragments) {
  static const std::vector<std::string> parts = {"a",  "Zq", "\xC3\xA9", "\xE4\xB8\xAD", "1",  "234", "'s", "'RE", "'ll", " ",
                                                 "  ", "   ", "\n",      "\r\n",         "\t", ".",   "!?", "\xE2\x82\xAC", "_", "\xF0\x9F\x98\x80",
                                                 "\xFF", "\xE2", "'",   " '",           "x "};
  std::uniform_int_distribution<std::size_t> pick(0, parts.size() - 1);
  std::string s;
  for (int i = 0; i < fragments; ++i) s += parts[pick(rng)];
  return s;
}

/// Lower-case words, spaces, now and then a newline or a full stop: text a synthetic vocabulary
/// merges into many tokens.
std::string word_text(std::mt19937& rng, std::size_t bytes) {
  std::uniform_int_distribution<int> letter('a', 'z'), len(1, 8), punct(0, 15);
  std::string s;
  while (s.size() < bytes) {
    for (int n = len(rng); n > 0; --n) s += static_cast<char>(letter(rng));
    const int p = punct(rng);
    s += p == 0 ? ".\n" : p == 1 ? ", " : " ";
  }
  return s;
}

double thread_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace

TEST_CASE("pre_token_segments: the parts pre-tokenise to the whole text's pre-tokens, for every pattern") {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const std::string text = fragment_text(rng, 60);
    for (PreTokenizer p : {PreTokenizer::gpt2, PreTokenizer::llama3, PreTokenizer::qwen2}) {
      const std::vector<std::string> whole = strings(pre_tokenize(p, text));
      for (std::size_t target : {1, 2, 3, 5, 8, 13, 1000}) {
        const auto segments = pre_token_segments(text, target);
        std::string joined;
        std::vector<std::string> parts;
        for (std::size_t i = 0; i < segments.size(); ++i) {
          joined += segments[i];
          if (i + 1 < segments.size()) CHECK(segments[i].size() >= target);
          for (auto piece : pre_tokenize(p, segments[i])) parts.emplace_back(piece);
        }
        INFO("pattern " << to_string(p) << ", target " << target << ", text " << text);
        REQUIRE(joined == text);
        REQUIRE(parts == whole);
      }
    }
  }
  CHECK(pre_token_segments("", 4).empty());
  CHECK(strings(pre_token_segments("ab cd  ef\n gh", 1)) == std::vector<std::string>{"ab", " cd", "  ef\n gh"});
}

TEST_CASE("encode_at_most: encode's ids while they fit, nothing one id short; BOS and added tokens count") {
  const auto tok = make_bpe_tokenizer(synthetic_bpe_vocab(2048));
  std::mt19937 rng(11);
  const std::string text = word_text(rng, 300 * 1024);  // several 64 KiB segments
  const std::vector<int> ids = tok->encode(text, true);
  REQUIRE(ids.size() > 1000);
  const auto fits = tok->encode_at_most(text, true, ids.size());
  REQUIRE(fits.has_value());
  CHECK(*fits == ids);
  CHECK_FALSE(tok->encode_at_most(text, true, ids.size() - 1).has_value());
  CHECK_FALSE(tok->encode_at_most(text, true, 10).has_value());

  REQUIRE(tok->bos_id().has_value());
  CHECK(tok->encode_at_most("", true, 1) == std::optional<std::vector<int>>(std::vector<int>{*tok->bos_id()}));
  CHECK_FALSE(tok->encode_at_most("", true, 0).has_value());
  // "<|endoftext|>" is one id wherever it stands.
  const std::string with_added = "ab<|endoftext|>cd";
  const std::vector<int> added_ids = tok->encode(with_added, false);
  CHECK(tok->encode_at_most(with_added, false, added_ids.size()) == std::optional<std::vector<int>>(added_ids));
  CHECK_FALSE(tok->encode_at_most(with_added, false, added_ids.size() - 1).has_value());
}

TEST_CASE("encode_at_most: a text far past the limit costs a small part of encoding it all") {
  const auto tok = make_bpe_tokenizer(synthetic_bpe_vocab(2048));
  std::mt19937 rng(13);
  const std::string text = word_text(rng, 3 * 1024 * 1024);
  // Thread CPU time, so that other processes on the machine do not enter the comparison.
  const double t0 = thread_cpu_s();
  const std::vector<int> all = tok->encode(text, true);
  const double full_s = thread_cpu_s() - t0;
  const double t1 = thread_cpu_s();
  const auto bounded = tok->encode_at_most(text, true, 1000);
  const double bounded_s = thread_cpu_s() - t1;
  INFO("full encode " << full_s << " s CPU (" << all.size() << " ids), stopped at 1,000 ids " << bounded_s << " s");
  CHECK_FALSE(bounded.has_value());
  // One 64 KiB segment of 3 MiB is about 2% of the work; encoding everything and counting is 100%.
  CHECK(bounded_s * 10 < full_s);
}
