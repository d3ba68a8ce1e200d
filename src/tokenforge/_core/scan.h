// Hand-written pre-tokenizers for the published split patterns.
//
// Each scanner reproduces, piece for piece, what the `regex` module returns
// for the pattern of the same name (tokenforge/pretokenizers.py), including
// its backtracking: `\s+(?!\S)` gives a whitespace run back one character when
// a non-space follows, `\s*[\r\n]` ends at the last line break of a run, and
// o200k's `[Lu...]*[Ll...]+` gives back upper-case-ish characters until a
// lower-case-ish one can end the match. Input is UTF-8; a byte that does not
// start a valid sequence is treated as one "other" character, so the scanner
// never reads out of bounds and never fails.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common.h"
#include "unicode_tables.h"

namespace tf {

enum class Pattern : int { GPT2 = 0, CL100K = 1, O200K = 2, LLAMA3 = 3, QWEN = 4 };

struct Text {
  const uint8_t* s;
  size_t n;
};

// Decode the code point at byte offset i; sets len (1..4). Invalid -> kBadCodePoint, an "other".
inline uint32_t decode_at(const Text& t, size_t i, size_t* len) { return decode_utf8_at(t.s, t.n, i, len); }

// ASCII classes, precomputed once from the same tables.
struct AsciiTable {
  uint16_t f[128];
  AsciiTable() { for (uint32_t c = 0; c < 128; ++c) f[c] = tf_ucd::lookup(c); }
};
inline const AsciiTable& ascii_table() { static const AsciiTable t; return t; }

inline uint16_t flags_of(uint32_t cp) {
  if (cp < 128) return ascii_table().f[cp];
  if (cp == kBadCodePoint) return 0;  // invalid byte: "other"
  return tf_ucd::lookup(cp);
}

struct Ch {
  uint32_t cp;
  uint16_t f;
  uint8_t len;
};

inline Ch char_at(const Text& t, size_t i) {
  size_t len;
  uint32_t cp = decode_at(t, i, &len);
  return Ch{cp, flags_of(cp), (uint8_t)len};
}

constexpr uint16_t F_L = tf_ucd::L, F_N = tf_ucd::N, F_WS = tf_ucd::WS, F_M = tf_ucd::M;
constexpr uint16_t F_UPPERISH = tf_ucd::Lu | tf_ucd::Lt | tf_ucd::Lm | tf_ucd::Lo | tf_ucd::M;
constexpr uint16_t F_LOWERISH = tf_ucd::Ll | tf_ucd::Lm | tf_ucd::Lo | tf_ucd::M;

inline bool is_other(uint16_t f) { return (f & (F_L | F_N | F_WS)) == 0; }
inline bool is_crlf(uint32_t cp) { return cp == '\r' || cp == '\n'; }

// End of the maximal run starting at i of characters whose flags satisfy pred.
template <class P>
inline size_t run_while(const Text& t, size_t i, P pred) {
  while (i < t.n) {
    if (t.s[i] < 0x80) {
      if (!pred(ascii_table().f[t.s[i]], (uint32_t)t.s[i])) return i;
      ++i;
    } else {
      Ch c = char_at(t, i);
      if (!pred(c.f, c.cp)) return i;
      i += c.len;
    }
  }
  return i;
}

// End of the run at s[i:n] of ASCII bytes in [lo, hi] (with `fold`, also their upper
// case: x | 0x20 in [lo, hi]). SSE2 (the x86-64 baseline) classifies 16 bytes per step;
// other targets take the scalar loop, which gives the same answer on every byte sequence.
template <char lo, char hi, bool fold>
inline size_t ascii_run_end(const uint8_t* s, size_t i, size_t n) {
  static_assert(lo > 0 && hi > lo, "an ASCII range");
#if defined(__SSE2__)
  const __m128i below = _mm_set1_epi8((char)(lo - 1)), above = _mm_set1_epi8((char)(hi + 1));
  while (i + 16 <= n) {
    // a byte >= 0x80 is negative as a signed byte, so never in [lo, hi]
    __m128i x = _mm_loadu_si128((const __m128i*)(s + i));
    if (fold) x = _mm_or_si128(x, _mm_set1_epi8(0x20));
    __m128i in = _mm_and_si128(_mm_cmpgt_epi8(x, below), _mm_cmplt_epi8(x, above));
    unsigned m = (unsigned)_mm_movemask_epi8(in);
    if (m != 0xFFFFu) return i + (size_t)__builtin_ctz(~m);
    i += 16;
  }
#endif
  while (i < n && (uint8_t)((fold ? (s[i] | 0x20) : s[i]) - lo) <= (uint8_t)(hi - lo)) ++i;
  return i;
}

// A run of characters whose flags have a bit of `mask`: the ASCII members are exactly
// [lo, hi] (folded), taken by ascii_run_end; other characters one code point at a time.
template <char lo, char hi, bool fold>
inline size_t run_class(const Text& t, size_t i, uint16_t mask) {
  for (;;) {
    i = ascii_run_end<lo, hi, fold>(t.s, i, t.n);
    if (i >= t.n || t.s[i] < 0x80) return i;
    do {
      Ch c = char_at(t, i);
      if (!(c.f & mask)) return i;
      i += c.len;
    } while (i < t.n && t.s[i] >= 0x80);
  }
}

// \p{L}+ : the ASCII letters are [A-Za-z].
inline size_t run_letters(const Text& t, size_t i) { return run_class<'a', 'z', true>(t, i, F_L); }

inline size_t run_numbers(const Text& t, size_t i) {
  return run_while(t, i, [](uint16_t f, uint32_t) { return (f & F_N) != 0; });
}
inline size_t run_other(const Text& t, size_t i) {
  return run_while(t, i, [](uint16_t f, uint32_t) { return is_other(f); });
}
inline size_t run_ws(const Text& t, size_t i) {
  return run_while(t, i, [](uint16_t f, uint32_t) { return (f & F_WS) != 0; });
}
inline size_t run_crlf(const Text& t, size_t i) {
  while (i < t.n && (t.s[i] == '\r' || t.s[i] == '\n')) ++i;
  return i;
}
inline size_t run_crlf_slash(const Text& t, size_t i) {
  while (i < t.n && (t.s[i] == '\r' || t.s[i] == '\n' || t.s[i] == '/')) ++i;
  return i;
}
// Up to `most` number characters.
inline size_t run_numbers_max(const Text& t, size_t i, int most) {
  for (int k = 0; k < most && i < t.n; ++k) {
    Ch c = char_at(t, i);
    if (!(c.f & F_N)) break;
    i += c.len;
  }
  return i;
}

inline bool ci_is(uint32_t cp, char lower) {
  if (cp == (uint32_t)lower || cp == (uint32_t)(lower - 32)) return true;
  return lower == 's' && cp == 0x17F;  // LATIN SMALL LETTER LONG S folds to s
}

// Contractions after an apostrophe at i. Returns the end, or 0 when none matches.
// Case-sensitive: 's 'd 'm 't 'll 've 're (gpt2). Case-insensitive: the same set,
// with simple case folding as the regex module applies it.
inline size_t contraction(const Text& t, size_t i, bool ci) {
  if (i >= t.n || t.s[i] != '\'') return 0;
  size_t j = i + 1;
  if (j >= t.n) return 0;
  Ch a = char_at(t, j);
  auto is = [&](uint32_t cp, char c) { return ci ? ci_is(cp, c) : cp == (uint32_t)c; };
  if (is(a.cp, 's') || is(a.cp, 'd') || is(a.cp, 'm') || is(a.cp, 't')) return j + a.len;
  size_t k = j + a.len;
  if (k >= t.n) return 0;
  Ch b = char_at(t, k);
  if ((is(a.cp, 'l') && is(b.cp, 'l')) || (is(a.cp, 'v') && is(b.cp, 'e')) || (is(a.cp, 'r') && is(b.cp, 'e')))
    return k + b.len;
  return 0;
}

// o200k's trailing (?i:'s|'t|'re|'ve|'m|'ll|'d)? : same set as above.
inline size_t opt_contraction(const Text& t, size_t i) {
  size_t e = contraction(t, i, true);
  return e ? e : i;
}

// Whitespace run [i, j): where does the whitespace piece end?
//   crlf_rule: `\s*[\r\n]` (cl100k) or `\s*[\r\n]+` (o200k, llama3, qwen): end after the last
//   line break in the run.  end_rule: `\s++$` (gpt2, cl100k) takes the whole run at the end.
inline size_t ws_piece(const Text& t, size_t i, bool end_rule_first, bool crlf_rule) {
  size_t j = run_ws(t, i);
  if (end_rule_first && j == t.n) return j;
  if (crlf_rule) {
    size_t last = (size_t)-1;
    for (size_t k = i; k < j; ++k)
      if (t.s[k] == '\r' || t.s[k] == '\n') last = k;
    if (last != (size_t)-1) return last + 1;
  }
  if (j == t.n) return j;  // \s+(?!\S) at the end of the text
  // \s+(?!\S): give back the last character when a non-space follows
  size_t last_start = i;
  for (size_t k = i; k < j;) {
    last_start = k;
    k += char_at(t, k).len;
  }
  if (last_start > i) return last_start;
  Ch c = char_at(t, i);
  return i + c.len;  // \s (or \s+ of one character)
}

constexpr size_t NONE_POS = (size_t)-1;

// ` ?[^\s\p{L}\p{N}]+`: where the run of "other" characters starts (after an optional
// space), or NONE_POS when the text at i does not begin such a piece.
inline size_t other_start(const Text& t, size_t i, const Ch& c) {
  if (c.cp == ' ' && i + 1 < t.n && is_other(char_at(t, i + 1).f)) return i + 1;
  return is_other(c.f) ? i : NONE_POS;
}

inline size_t next_gpt2(const Text& t, size_t i) {
  Ch c = char_at(t, i);
  if (c.cp == '\'') {
    size_t e = contraction(t, i, false);
    if (e) return e;
  }
  size_t s = i;
  uint16_t f = c.f;
  if (c.cp == ' ' && i + 1 < t.n) {
    Ch d = char_at(t, i + 1);
    if (!(d.f & F_WS)) { s = i + 1; f = d.f; }
  }
  if (f & F_L) return run_letters(t, s);
  if (f & F_N) return run_numbers(t, s);
  if (is_other(f)) return run_other(t, s);
  return ws_piece(t, i, true, false);
}

// cl100k, llama3 and qwen share one shape:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,max_digits}
//   | ?[^\s\p{L}\p{N}]+[\r\n]* | whitespace rules
// and differ only in the digit run (3, or 1 for qwen) and in cl100k's `\s++$`, which takes a
// whitespace run that ends the text before the line-break rule can cut it.
inline size_t next_cl100k_family(const Text& t, size_t i, int max_digits, bool end_rule_first) {
  Ch c = char_at(t, i);
  if (c.cp == '\'') {
    size_t e = contraction(t, i, true);
    if (e) return e;
  }
  if (c.f & F_L) return run_letters(t, i);
  if (!(c.f & F_N) && !is_crlf(c.cp) && i + c.len < t.n) {
    Ch d = char_at(t, i + c.len);
    if (d.f & F_L) return run_letters(t, i + c.len);
  }
  if (c.f & F_N) return run_numbers_max(t, i, max_digits);
  size_t s = other_start(t, i, c);
  if (s != NONE_POS) return run_crlf(t, run_other(t, s));
  return ws_piece(t, i, end_rule_first, true);
}

// o200k letter alternatives from s; returns 0 on failure.
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]* and [\p{Ll}\p{Lm}\p{Lo}\p{M}]*: ASCII members [A-Z] and [a-z].
inline size_t run_upperish(const Text& t, size_t i) { return run_class<'A', 'Z', false>(t, i, F_UPPERISH); }
inline size_t run_lowerish(const Text& t, size_t i) { return run_class<'a', 'z', false>(t, i, F_LOWERISH); }

inline size_t o200k_alt1(const Text& t, size_t s) {
  size_t u = run_upperish(t, s);
  size_t w = run_lowerish(t, u);
  if (w > u) return opt_contraction(t, w);
  // the end of the last lowerish character of [s, u), found from the back: a run of Han
  // or kana (Lo, both upperish and lowerish) then costs one decode, not a second pass.
  // Every character of [s, u) decoded as valid UTF-8 (an invalid byte is no letter), so
  // stepping back over continuation bytes finds character starts.
  for (size_t k = u; k > s;) {
    const size_t e = k;
    do --k; while (k > s && (t.s[k] & 0xC0) == 0x80);
    if (char_at(t, k).f & F_LOWERISH) return opt_contraction(t, e);
  }
  return 0;
}
inline size_t o200k_alt2(const Text& t, size_t s) {
  size_t u = run_upperish(t, s);
  if (u == s) return 0;
  size_t w = run_lowerish(t, u);
  return opt_contraction(t, w);
}

inline size_t next_o200k(const Text& t, size_t i) {
  Ch c = char_at(t, i);
  bool prefix_ok = !(c.f & (F_L | F_N)) && !is_crlf(c.cp) && i + c.len < t.n;
  size_t e;
  if (prefix_ok && (e = o200k_alt1(t, i + c.len))) return e;
  if ((c.f & (F_UPPERISH | F_LOWERISH)) && (e = o200k_alt1(t, i))) return e;
  if (prefix_ok && (e = o200k_alt2(t, i + c.len))) return e;
  if ((c.f & F_UPPERISH) && (e = o200k_alt2(t, i))) return e;
  if (c.f & F_N) return run_numbers_max(t, i, 3);
  size_t s = other_start(t, i, c);
  if (s != NONE_POS) return run_crlf_slash(t, run_other(t, s));
  return ws_piece(t, i, false, true);
}

inline size_t next_piece(Pattern p, const Text& t, size_t i) {
  switch (p) {
    case Pattern::GPT2: return next_gpt2(t, i);
    case Pattern::CL100K: return next_cl100k_family(t, i, 3, true);
    case Pattern::O200K: return next_o200k(t, i);
    case Pattern::LLAMA3: return next_cl100k_family(t, i, 3, false);
    case Pattern::QWEN: return next_cl100k_family(t, i, 1, false);
  }
  return i + 1;
}

// The class bits of every code point (0x110000 of them) into out: flags_of(cp).
void class_table(uint16_t* out);

}  // namespace tf
