// WordPiece encoding as BERT runs it, natively: BERT's basic split (white space
// dropped, each punctuation character a word of its own) and, per word, greedy
// longest-match-first with a continuation prefix ("##"): the algorithm of BERT's
// WordpieceTokenizer and of HF tokenizers' WordPiece model, which the Python model
// (models/wordpiece.py) implements and the tests hold this one to, id for id.
//
// Why it is fast. The longest match at a position is found by scanning forward, one
// character at a time, through a table that holds every token and every proper prefix
// of a token (at character boundaries): the scan stops at the first string that no
// token begins with, so a position costs about its match length + 1 lookups, and a
// word that is a token (most words of real text) costs one. The tables are the byte
// table of BPE (bpe.h's Vocab: open addressing over the bytes, a hot table of short
// entries in front), with PREFIX as the value of a string that only begins tokens.
//
// The normalizer. HF's BertNormalizer (clean_text, handle_chinese_chars, strip_accents,
// lowercase) runs natively in front of the split when the encoder is given its flags
// (BertNormalizer below); any other normalizer runs before, in Python, and the encoder
// gets normalized UTF-8.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bpe.h"

namespace tf {

// Unicode White_Space (Rust's char::is_whitespace, HF's split rule).
bool bert_whitespace(uint32_t cp);
// BERT's punctuation: ASCII punctuation and symbols, or Unicode category P*.
bool bert_punctuation(uint32_t cp);

// HF tokenizers' BertNormalizer, character by character, in its order: clean_text (drop
// NUL, U+FFFD and "other" characters but tab/LF/CR; white space becomes a space),
// handle_chinese_chars (a space on both sides of each CJK ideograph), strip_accents (NFD,
// then nonspacing marks dropped) and lowercase (full per-character lowercase, no
// final-sigma rule). strip is the effective flag (HF's None follows lowercase; the caller
// resolves it). The per-character data is bert_tables.h (tools/gen_bert_tables.py).
//
// NFD is a per-character decomposition followed by canonical ordering: each run of
// non-starters (combining class != 0) is sorted stably by combining class, and only then
// are the nonspacing marks dropped and the rest lowercased, so the run is held back until
// the next starter. ASCII bytes take one table lookup each: a non-ASCII character costs
// only itself, wherever it is.
class BertNormalizer {
 public:
  BertNormalizer(bool clean, bool chinese, bool strip, bool lower);
  // s[0:n] (valid UTF-8) normalized into out[0:return value] (out is resized as needed).
  size_t normalize(const uint8_t* s, size_t n, std::string& out) const;

 private:
  bool clean_, chinese_, strip_, lower_;
  uint8_t ascii_[128];  // what each ASCII byte becomes; 0xFF: dropped
};

class WordPieceEncoder {
 public:
  static constexpr uint32_t PREFIX = 0xFFFFFFFEu;  // table value: begins tokens, is none
  //: Largest id the tables can hold (PREFIX and Vocab::NONE are taken).
  static constexpr uint32_t MAX_ID = PREFIX - 1;

  // first: every token (UTF-8) with its id; cont: the continuation tokens with their
  // prefix removed (the same lists as first when the prefix is empty). Ids <= MAX_ID.
  WordPieceEncoder(const std::vector<std::string>& first, const std::vector<uint32_t>& first_ids,
                   const std::vector<std::string>& cont, const std::vector<uint32_t>& cont_ids, uint32_t unk_id,
                   size_t max_chars);

  // Normalize with BertNormalizer(clean, chinese, strip, lower) in encode_text.
  void set_normalizer(bool clean, bool chinese, bool strip, bool lower);
  // The normalizer set, or nullptr.
  const BertNormalizer* normalizer() const { return norm_.get(); }
  // Ids of the UTF-8 text s[0:n], appended to out: normalized first when the encoder has
  // a normalizer (set_normalizer), else taken as normalized.
  void encode_text(const uint8_t* s, size_t n, std::vector<uint32_t>& out) const;
  // Ids of the normalized UTF-8 text s[0:n], appended to out.
  void encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out) const;
  // Ids of one word w[0:n] of `chars` code points.
  void encode_word(const uint8_t* w, size_t n, size_t chars, std::vector<uint32_t>& out) const;

 private:
  static void fill(Vocab& table, const std::vector<std::string>& tokens, const std::vector<uint32_t>& ids, size_t max_chars);
  Vocab first_, next_;
  std::unique_ptr<BertNormalizer> norm_;
  uint32_t unk_;
  size_t max_chars_;
};

}  // namespace tf
