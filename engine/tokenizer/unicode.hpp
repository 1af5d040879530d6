#pragma once
// UTF-8 decoding and the code-point classes the byte-level BPE pre-tokenizer regexes use:
// \p{L} (general category L*), \p{N} (N*) and \s (the Unicode White_Space property).
// The L/N tables are generated from Node's ICU data (tools/gen-unicode-tables.mjs), the same
// data the JavaScript tokenizer oracle uses.
#include <cstddef>
#include <string>
#include <string_view>

namespace atlas::engine::unicode {

struct CodePointRange {
  char32_t first, last;
};

/// One decoded code point. An invalid or truncated sequence decodes as one byte with
/// valid == false (the pre-tokenizer treats it as a symbol: neither letter, number nor space).
struct Decoded {
  char32_t cp;
  int len;
  bool valid;
};

/// Decodes the UTF-8 sequence starting at s[i] (i < s.size()). Rejects overlong forms,
/// surrogates and values above U+10FFFF.
Decoded decode_utf8(std::string_view s, std::size_t i);
/// Appends the UTF-8 encoding of cp (cp <= U+10FFFF) to out.
void append_utf8(std::string& out, char32_t cp);

bool is_letter(char32_t cp);
bool is_number(char32_t cp);
/// Unicode White_Space: U+0009-000D, 0020, 0085, 00A0, 1680, 2000-200A, 2028, 2029, 202F,
/// 205F, 3000.
bool is_whitespace(char32_t cp);

namespace detail {
extern const CodePointRange letter_ranges[];
extern const std::size_t letter_ranges_size;
extern const CodePointRange number_ranges[];
extern const std::size_t number_ranges_size;
}  // namespace detail

}  // namespace atlas::engine::unicode
