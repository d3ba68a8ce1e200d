#include "wordpiece.h"

#include <string_view>
#include <unordered_set>

#include "common.h"
#include "unicode_tables.h"
#include "bert_tables.h"

#include <algorithm>
#include <cstring>

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

namespace {
// The split class of each ASCII byte: 0 part of a word, 1 white space, 2 punctuation.
struct AsciiClasses {
  uint8_t c[128];
  AsciiClasses() {
    for (uint32_t b = 0; b < 128; ++b) c[b] = bert_whitespace(b) ? 1 : bert_punctuation(b) ? 2 : 0;
  }
};
const AsciiClasses kAsciiClasses;
constexpr uint64_t kSpaces8 = 0x2020202020202020ull;
}  // namespace

void WordPieceEncoder::encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out) const {
  size_t word = 0, chars = 0;  // the word being read: s[word:i], `chars` code points
  size_t i = 0;
  while (i < n) {
    size_t len = 1;
    bool space, punct;
    if (s[i] < 0x80) {
      const uint8_t k = kAsciiClasses.c[s[i]];
      if (k == 0) {  // a run of ASCII word bytes, read at once
        if (!chars) word = i;
        size_t j = i + 1;
        while (j < n && s[j] < 0x80 && kAsciiClasses.c[s[j]] == 0) ++j;
        chars += j - i;
        i = j;
        continue;
      }
      if (s[i] == ' ') {  // a space ends the word; the spaces after it go 8 bytes at a time
        if (chars) encode_word(s + word, i - word, chars, out);
        chars = 0;
        ++i;
        uint64_t x;
        while (i + 8 <= n && (std::memcpy(&x, s + i, 8), x == kSpaces8)) i += 8;
        continue;
      }
      space = k == 1;
      punct = k == 2;
    } else {
      const uint32_t cp = decode_utf8_at(s, n, i, &len);
      space = bert_whitespace(cp);
      punct = !space && bert_punctuation(cp);
    }
    if (space) {
      if (chars) encode_word(s + word, i - word, chars, out);
      chars = 0;
    } else if (punct) {
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

// --- BERT's normalizer ---------------------------------------------------------------------

namespace tf {

namespace {


// Hangul syllables: the arithmetic decomposition of Unicode's chapter 3.12.
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kTCount = 28, kNCount = 21 * 28, kSCount = 11172;
// Most bytes one character can add to the output: a space, a decomposition of at most 4
// characters each lowercased to at most 3, a space (4 bytes each, generously).
constexpr size_t kCharRoom = 64;

// The output being written: the normalized characters, the run of non-starters held back.
struct NormOut {
  std::string& buf;
  uint8_t* o;
  size_t w = 0;
  bool lower;
  std::vector<std::pair<uint32_t, uint32_t>>& run;  // (combining class, code point)

  NormOut(std::string& b, bool low, std::vector<std::pair<uint32_t, uint32_t>>& r)
      : buf(b), o((uint8_t*)&b[0]), lower(low), run(r) {}

  // Room for `extra` more bytes.
  void ensure(size_t extra) {
    if (w + extra > buf.size()) {
      buf.resize((w + extra) * 2);
      o = (uint8_t*)&buf[0];
    }
  }
  // A final character (after NFD and mark removal): lowercased if asked, written.
  void put(uint32_t cp) { put(cp, tf_bert::lookup(cp)); }
  void put(uint32_t cp, const tf_bert::Rec& r) {  // r: cp's record
    if (lower) {
      if (r.flags & tf_bert::LOWER) {
        for (unsigned k = 0; k < r.low_len; ++k) w += (size_t)utf8_of(tf_bert::pool[r.low_off + k], o + w);
        return;
      }
    }
    w += (size_t)utf8_of(cp, o + w);
  }
  // The held-back non-starters in canonical order, nonspacing marks dropped.
  void flush(size_t room) {
    if (run.empty()) return;
    ensure(run.size() * 12 + room);
    if (run.size() > 1)
      std::stable_sort(run.begin(), run.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& x : run)
      if (!(tf_bert::lookup(x.second).flags & tf_bert::MN)) put(x.second);
    run.clear();
  }
  // One character of the NFD form (strip on): starters flush the run, marks are dropped.
  void decomposed(uint32_t cp, size_t room) { decomposed(cp, tf_bert::lookup(cp), room); }
  void decomposed(uint32_t cp, const tf_bert::Rec& r, size_t room) {
    if (r.flags & tf_bert::NONSTARTER) {
      run.emplace_back(r.ccc, cp);
      return;
    }
    flush(room);
    if (!(r.flags & tf_bert::MN)) put(cp, r);
  }
};

}  // namespace

BertNormalizer::BertNormalizer(bool clean, bool chinese, bool strip, bool lower)
    : clean_(clean), chinese_(chinese), strip_(strip), lower_(lower) {
  for (int b = 0; b < 128; ++b) {
    uint8_t v = (uint8_t)b;
    if (clean) {
      if (b == '\t' || b == '\n' || b == '\r') v = ' ';
      else if (b < 0x20 || b == 0x7F) v = 0xFF;  // NUL and the other C0 controls, DEL
    }
    if (lower && v >= 'A' && v <= 'Z') v = (uint8_t)(v + 32);
    ascii_[b] = v;
  }
}

size_t BertNormalizer::normalize(const uint8_t* s, size_t n, std::string& buf) const {
  thread_local std::vector<std::pair<uint32_t, uint32_t>> run;
  run.clear();
  if (buf.size() < n + kCharRoom) buf.resize(n + kCharRoom);
  NormOut out(buf, lower_, run);
  // Invariant: before each input character, out has room for the rest of the input plus
  // kCharRoom bytes, so an ASCII byte (one byte out at most) never checks.
  size_t i = 0;
  while (i < n) {
    const uint8_t b = s[i];
    if (b < 0x80) {  // a run of ASCII bytes: one table lookup each
      if (!run.empty()) out.flush(n - i + kCharRoom);
      uint8_t* o = out.o;
      size_t w = out.w;
      do {
        if (s[i] == ' ') {  // runs of spaces, 8 bytes at a time
          uint64_t x;
          while (i + 8 <= n && (std::memcpy(&x, s + i, 8), x == kSpaces8)) {
            std::memcpy(o + w, &x, 8);
            w += 8;
            i += 8;
          }
          if (i >= n || s[i] >= 0x80) break;
        }
        const uint8_t v = ascii_[s[i]];
        o[w] = v;
        w += v != 0xFF;
      } while (++i < n && s[i] < 0x80);
      out.w = w;
      continue;
    }
    size_t len;
    uint32_t cp = decode_utf8_at(s, n, i, &len);
    i += len;
    const size_t room = n - i + kCharRoom;
    out.ensure(room);
    if (cp == kBadCodePoint) {  // not from a str (always valid UTF-8): the byte is kept as it is
      out.flush(room);
      out.o[out.w++] = b;
      continue;
    }
    const tf_bert::Rec& r = tf_bert::lookup(cp);
    if (clean_) {
      if (r.flags & tf_bert::DROP) continue;
      if (r.flags & tf_bert::SPACE) cp = ' ';
    }
    const bool pad = chinese_ && (r.flags & tf_bert::CJK) && cp != ' ';
    if (!strip_) {
      if (pad) out.o[out.w++] = ' ';
      if (cp == ' ')
        out.o[out.w++] = ' ';
      else
        out.put(cp, r);
      if (pad) out.o[out.w++] = ' ';
      continue;
    }
    if (pad) out.decomposed(' ', room);
    if (cp - kSBase < kSCount) {  // a Hangul syllable: L V (T), all starters
      const uint32_t k = cp - kSBase;
      out.decomposed(kLBase + k / kNCount, room);
      out.decomposed(kVBase + (k % kNCount) / kTCount, room);
      if (k % kTCount) out.decomposed(kTBase + k % kTCount, room);
    } else if (cp != ' ' && (r.flags & tf_bert::DECOMP)) {
      for (unsigned k = 0; k < r.dec_len; ++k) out.decomposed(tf_bert::pool[r.dec_off + k], room);
    } else if (cp == ' ') {
      out.decomposed(' ', room);
    } else {
      out.decomposed(cp, r, room);
    }
    if (pad) out.decomposed(' ', room);
  }
  out.flush(kCharRoom);
  return out.w;
}

void WordPieceEncoder::set_normalizer(bool clean, bool chinese, bool strip, bool lower) {
  norm_.reset(new BertNormalizer(clean, chinese, strip, lower));
}

void WordPieceEncoder::encode_text(const uint8_t* s, size_t n, std::vector<uint32_t>& out) const {
  if (!norm_) {
    encode(s, n, out);
    return;
  }
  thread_local std::string buf;
  const size_t m = norm_->normalize(s, n, buf);
  encode((const uint8_t*)buf.data(), m, out);
  if (buf.size() > (size_t{1} << 24)) std::string().swap(buf);  // keep no huge buffer per thread
}

}  // namespace tf
