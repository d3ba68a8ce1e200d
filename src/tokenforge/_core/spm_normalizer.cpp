#include "spm_normalizer.h"

#include "grapheme.h"

#include <algorithm>

#include <cstring>
#include <utility>

namespace tf {
namespace spm {

Charsmap::Charsmap(const uint8_t* blob, size_t n) {
  if (n == 0) return;
  if (n < 4) throw FormatError("precompiled_charsmap: " + std::to_string(n) + " bytes is too short for the trie size");
  uint32_t size = (uint32_t)blob[0] | ((uint32_t)blob[1] << 8) | ((uint32_t)blob[2] << 16) | ((uint32_t)blob[3] << 24);
  if (size % 4 || (uint64_t)size + 4 > n || size == 0)
    throw FormatError("precompiled_charsmap: trie size " + std::to_string(size) + " does not fit a blob of " +
                   std::to_string(n) + " bytes (expected a multiple of 4, at most the blob length - 4)");
  units_.resize(size / 4);
  for (size_t k = 0; k < units_.size(); ++k) {
    const uint8_t* u = blob + 4 + 4 * k;
    units_[k] = (uint32_t)u[0] | ((uint32_t)u[1] << 8) | ((uint32_t)u[2] << 16) | ((uint32_t)u[3] << 24);
  }
  pool_.assign((const char*)blob + 4 + size, n - 4 - size);
  uint32_t u0 = units_[0];
  root_ = (int64_t)((uint64_t)(u0 >> 10) << ((u0 & 0x200) >> 6));
  // Per-character table of the Basic Multilingual Plane: the node after the character
  // and the value of the rule for exactly it; ERR when the walk would raise (then the
  // slow path raises when the character is met).
  fast_node_.assign(0x10000, -1);
  fast_value_.assign(0x10000, -1);
  for (uint32_t c = 0; c < 0x10000; ++c) {
    if (is_surrogate(c)) continue;
    try {
      int64_t node, value;
      walk_char(c, node, value);
      fast_node_[c] = (int32_t)node;
      fast_value_[c] = (int32_t)value;
      if (value >= 0 && !repl_.count((int32_t)value)) {
        Repl r;
        r.ok = decode_at(value, r.text);
        repl_.emplace((int32_t)value, std::move(r));
      }
    } catch (const FormatError&) {
      fast_node_[c] = ERR;
    }
  }
}

Normalizer::Normalizer(const uint8_t* blob, size_t n, bool add_dummy_prefix, bool remove_extra_whitespaces,
           bool escape_whitespaces, std::vector<U32> user_defined)
    : cm_(blob, n),
      add_dummy_prefix_(add_dummy_prefix),
      remove_extra_(remove_extra_whitespaces),
      escape_(escape_whitespaces),
      udf_store_(std::move(user_defined)) {
  for (const U32& s : udf_store_) {
    if (s.empty()) continue;
    udf_.insert(U32View(s));
    udf_first_.insert(s[0]);
    if (s.size() > udf_max_) udf_max_ = s.size();
  }
}

size_t Normalizer::prefix(const uint32_t* text, size_t n, size_t i, U32& sp) const {
  uint32_t c = text[i];
  if (udf_max_ && udf_first_.count(c)) {
    size_t top = udf_max_ < n - i ? udf_max_ : n - i;
    for (size_t k = top; k > 0; --k) {
      if (udf_.count(U32View((const char32_t*)text + i, k))) {
        sp.append((const char32_t*)text + i, k);
        return k;
      }
    }
  }
  int64_t node, value;
  cm_.char_info(c, node, value);
  size_t best_len = 0;
  int64_t best_value = -1;
  if (value >= 0) { best_len = 1; best_value = value; }
  size_t j = i + 1;
  while (node >= 0 && j < n) {
    uint32_t d = text[j];
    if (lead_byte(d) == 0) break;  // NUL never continues a key
    cm_.extend(node, value, d);
    ++j;
    if (value >= 0) { best_len = j - i; best_value = value; }
  }
  if (best_len) {
    cm_.append_replacement(best_value, sp);
    return best_len;
  }
  sp.push_back(is_surrogate(c) ? 0xFFFD : c);
  return 1;
}

bool Normalizer::rejects(const U32& normalized) const {
  return !reject_.empty() && normalized.find(reject_) != U32::npos;
}

void Normalizer::normalize_hf(const uint32_t* text, size_t n, U32& out, std::vector<uint32_t>* spans) const {
  if (n == 0) return;
  out.reserve(n + n / 8 + 4);
  if (spans) spans->reserve(2 * (n + n / 8 + 4));
  const char32_t space = escape_ ? U'\u2581' : U' ';
  if (hf_prepend_) out.push_back(space);  // dropped below when not needed
  const bool empty = cm_.empty();
  size_t i = 0;
  while (i < n) {
    const uint32_t c = text[i];
    size_t j;
    if (c < 0x80 && (i + 1 == n || text[i + 1] < 0x80) && c != '\r') j = i + 1;  // ASCII: a cluster of its own
    else j = grapheme::cluster_end(text, n, i);
    const size_t before = out.size();
    if (!empty) {
      bool whole = false;
      if (j > i + 1) {
        size_t bytes = 0;
        for (size_t k = i; k < j && bytes < 6; ++k) bytes += text[k] < 0x80 ? 1 : text[k] < 0x800 ? 2 : text[k] < 0x10000 ? 3 : 4;
        if (bytes < 6) {
          int64_t node, value;
          cm_.char_info(c, node, value);
          for (size_t k = i + 1; value < 0 && node >= 0 && k < j; ++k) {
            if (lead_byte(text[k]) == 0) break;  // NUL never continues a key
            cm_.extend(node, value, text[k]);
          }
          if (value >= 0) {
            cm_.append_replacement(value, out);
            whole = true;
          }
        }
      }
      if (!whole) {
        for (size_t k = i; k < j; ++k) {
          int64_t node, value;
          cm_.char_info(text[k], node, value);
          if (value >= 0) cm_.append_replacement(value, out);
          else out.push_back(text[k]);
        }
      }
    } else {
      out.append((const char32_t*)text + i, j - i);
    }
    for (size_t k = before; k < out.size(); ++k) {
      if (out[k] == U' ') out[k] = space;
      if (spans) { spans->push_back((uint32_t)i); spans->push_back((uint32_t)j); }
    }
    i = j;
  }
  if (hf_prepend_) {
    if (out.size() == 1) {
      out.clear();
    } else if (out[1] == U'\u2581' || out[1] == U' ') {
      out.erase(0, 1);
    } else if (spans) {
      spans->insert(spans->begin(), {0u, 0u});
    }
  }
}

void Normalizer::normalize(const uint32_t* text, size_t n, U32& out, std::vector<uint32_t>* spans) const {
  out.clear();
  if (spans) spans->clear();
  if (hf_) {
    normalize_hf(text, n, out, spans);
    return;
  }
  U32 sp;
  size_t i = 0;
  if (remove_extra_) {
    while (i < n) {
      sp.clear();
      size_t k = prefix(text, n, i, sp);
      if (!(sp.size() == 1 && sp[0] == U' ')) break;
      i += k;
    }
  }
  if (i >= n) return;
  out.reserve(n + n / 8 + 4);
  if (spans) spans->reserve(2 * (n + n / 8 + 4));
  const char32_t space = escape_ ? U'\u2581' : U' ';
  bool pending = add_dummy_prefix_;
  const size_t pending_at = i;
  bool is_prev_space = remove_extra_;
  while (i < n) {
    sp.clear();
    size_t k = prefix(text, n, i, sp);
    size_t a = 0;
    if (is_prev_space)
      while (a < sp.size() && sp[a] == U' ') ++a;
    if (a < sp.size()) {
      bool ends_with_space = sp.back() == U' ';
      if (pending) {
        out.push_back(space);
        if (spans) { spans->push_back((uint32_t)pending_at); spans->push_back((uint32_t)(i + k)); }
        pending = false;
      }
      for (size_t q = a; q < sp.size(); ++q) {
        out.push_back(escape_ && sp[q] == U' ' ? U'\u2581' : sp[q]);
        if (spans) { spans->push_back((uint32_t)i); spans->push_back((uint32_t)(i + k)); }
      }
      is_prev_space = ends_with_space;
    }
    i += k;
    if (!remove_extra_) is_prev_space = false;
  }
  if (pending) {
    out.push_back(space);
    if (spans) { spans->push_back((uint32_t)pending_at); spans->push_back((uint32_t)pending_at); }
  }
  if (remove_extra_)
    while (!out.empty() && out.back() == space) {
      out.pop_back();
      if (spans) spans->resize(spans->size() - 2);
    }
}

namespace {

size_t utf8_length(const uint32_t* text, size_t n) {
  size_t bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t c = text[i];
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return bytes;
}

}  // namespace

void count_words(const Normalizer& norm, const uint32_t* text, const std::vector<size_t>& bounds,
                 size_t max_line_bytes, bool line_ends, WordCounts& out) {
  U32 line;
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    const uint32_t* at = text + bounds[k];
    const size_t n = bounds[k + 1] - bounds[k];
    if (max_line_bytes && (n > max_line_bytes || (4 * n > max_line_bytes && utf8_length(at, n) > max_line_bytes))) {
      ++out.skipped;
      continue;
    }
    if (n == 0) continue;
    norm.normalize(at, n, line);
    if (line.empty()) continue;
    const uint32_t* s = reinterpret_cast<const uint32_t*>(line.data());
    const size_t len = line.size();
    size_t start = 0;
    for (size_t i = 1; i <= len; ++i) {
      if (i == len || s[i] == kWordBoundary) {
        out.words.add(s + start, i - start);
        if (i == len && line_ends) out.ends.add(s + start, i - start);
        start = i;
      }
    }
  }
}

}  // namespace spm
}  // namespace tf
