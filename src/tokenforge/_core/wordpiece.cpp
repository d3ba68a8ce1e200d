#include "wordpiece.h"

#include <string_view>
#include <unordered_set>

#include "common.h"
#include "unicode_tables.h"

namespace tf {

bool bert_whitespace(uint32_t cp) {
  switch (cp) {
    case '\t': case '\n': case 0x0B: case 0x0C: case '\r': case ' ': case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool bert_punctuation(uint32_t cp) {
  if (cp < 0x80) return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
  if (cp == kBadCodePoint) return false;
  return (tf_ucd::lookup(cp) & tf_ucd::P) != 0;
}

void WordPieceEncoder::fill(Vocab& table, const std::vector<std::string>& tokens, const std::vector<uint32_t>& ids,
                            size_t max_chars) {
  std::unordered_set<std::string_view> seen;
  seen.reserve(tokens.size() * 2);
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k].empty() || !seen.insert(tokens[k]).second) continue;  // "" never matches (as HF)
    table.add((const uint8_t*)tokens[k].data(), tokens[k].size(), ids[k]);
  }
  // every proper prefix at a character boundary that is not a token itself, up to max_chars_
  // characters: no word longer than that is looked at, so longer prefixes are never asked
  // for (and a vocabulary line of 80,000 characters costs 80,000 bytes, not 3 GB).
  for (const std::string& t : tokens) {
    const uint8_t* p = (const uint8_t*)t.data();
    size_t i = 0, chars = 0;
    while (i < t.size() && chars < max_chars) {
      size_t len;
      decode_utf8_at(p, t.size(), i, &len);
      i += len;
      ++chars;
      if (i < t.size() && seen.insert(std::string_view(t.data(), i)).second) table.add(p, i, PREFIX);
    }
  }
  table.finish();
}

WordPieceEncoder::WordPieceEncoder(const std::vector<std::string>& first, const std::vector<uint32_t>& first_ids,
                                   const std::vector<std::string>& cont, const std::vector<uint32_t>& cont_ids,
                                   uint32_t unk_id, size_t max_chars)
    : unk_(unk_id), max_chars_(max_chars) {
  fill(first_, first, first_ids, max_chars);
  fill(next_, cont, cont_ids, max_chars);
}

void WordPieceEncoder::encode_word(const uint8_t* w, size_t n, size_t chars, std::vector<uint32_t>& out) const {
  if (chars > max_chars_) {  // too long to look at, even when it is a token (as HF)
    out.push_back(unk_);
    return;
  }
  uint32_t whole = first_.rank(w, n);
  if (whole < PREFIX) {
    out.push_back(whole);
    return;
  }
  const size_t before = out.size();
  const Vocab* table = &first_;
  size_t start = 0;
  while (start < n) {
    uint32_t best = Vocab::NONE;
    size_t end = start, e = start;
    while (e < n) {
      size_t len;
      decode_utf8_at(w, n, e, &len);
      e += len;
      uint32_t v = table->rank(w + start, e - start);
      if (v == Vocab::NONE) break;  // no token begins with w[start:e]: nothing longer matches
      if (v != PREFIX) {
        best = v;
        end = e;
      }
    }
    if (best == Vocab::NONE) {  // no match at some position: the whole word is unknown
      out.resize(before);
      out.push_back(unk_);
      return;
    }
    out.push_back(best);
    start = end;
    table = &next_;
  }
}

void WordPieceEncoder::encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out) const {
  size_t word = 0, chars = 0;  // the word being read: s[word:i], `chars` code points
  size_t i = 0;
  while (i < n) {
    size_t len;
    uint32_t cp;
    if (s[i] < 0x80) {
      cp = s[i];
      len = 1;
    } else {
      cp = decode_utf8_at(s, n, i, &len);
    }
    if (bert_whitespace(cp)) {
      if (chars) encode_word(s + word, i - word, chars, out);
      chars = 0;
    } else if (bert_punctuation(cp)) {
      if (chars) encode_word(s + word, i - word, chars, out);
      chars = 0;
      encode_word(s + i, len, 1, out);
    } else {
      if (!chars) word = i;
      ++chars;
    }
    i += len;
  }
  if (chars) encode_word(s + word, n - word, chars, out);
}

}  // namespace tf
