// Native SentencePiece-style BPE training: the merge loop of trainers/spm_bpe.py, merge for merge.
//
// Symbols are the alphabet characters (ids in code-point order, so comparing
// two id strings compares the pieces by code point, as Python compares str)
// and the merged pieces after them. The loop keeps, as the Python reference
// does, the 64-bit count of every *valid* adjacent pair (its concatenation
// passes sentencepiece's IsValidSentencePiece: length, ▁ only first, one
// script, digits), an index from each pair to the words that gained it, and a
// max-heap of (count, left, right) with lazy deletion: an entry is stale when
// the pair's count has changed since it was pushed or the pair is dead. The
// best live pair is merged unless its string is already a piece (another
// split of the same string, or a meta piece): then it is dead for good.
// Ties: the smaller (left, right) piece strings win. Each merge visits only
// the words indexed under the pair, merges left to right without overlap,
// subtracts the pairs touching an occurrence, adds the pairs touching a new
// symbol and pushes every pair whose count changed once.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bpe.h"
#include "pair_table.h"

namespace tf_spm_bpe {

using tf::mix64;

using tf::pk;

struct Pair {
  uint64_t key;
  int64_t count;
  uint32_t stamp;
  uint32_t list;  // index into Trainer::holders, or NONE
  int8_t valid;   // -1 not yet decided, 0/1
  uint8_t dead;   // its string was already a piece when it came up
  static Pair blank() { return Pair{~0ull, 0, 0, ~0u, -1, 0}; }
};

using PairTable = tf::PairTable<Pair, 1 << 14>;

// per-character flags (from Python)
constexpr int F_BAD = 1;    // U+2585, NUL or space: no piece of length > 1 holds it
constexpr int F_WS = 2;     // ▁: only as the first character
constexpr int F_DIGIT = 4;  // str.isdecimal()
constexpr int32_t S_INHERITED = -1;  // script: takes the script of the character before
constexpr int32_t S_ANY = -2;        // Python's None: compatible with every script

// the first k in [i, n) with w[k] == a, else n (blocks of 8 compile to vector compares)
inline size_t find_from(const uint32_t* w, size_t i, size_t n, uint32_t a) {
  for (; i + 8 <= n; i += 8) {
    uint32_t any = 0;
    for (int j = 0; j < 8; ++j) any |= (uint32_t)(w[i + j] == a);
    if (any) break;
  }
  for (; i < n; ++i)
    if (w[i] == a) return i;
  return n;
}

struct Trainer {
  // settings
  size_t max_len = 16;
  bool split_digits = false, split_by_number = true, split_by_script = true;
  // alphabet (ids in code-point order)
  std::vector<int32_t> script;
  std::vector<uint8_t> flags;
  // symbols: alphabet characters, then merged pieces, as strings of character ids
  std::vector<std::u32string> sym;
  std::unordered_set<std::u32string> pieces;  // merged pieces and multi-character meta pieces
  std::vector<std::vector<uint32_t>> words;
  std::vector<int64_t> freqs;
  size_t n_merges = 0;

  PairTable pairs;
  std::vector<std::vector<uint32_t>> holders;
  uint32_t stamp = 0;

  struct Entry {
    int64_t count;
    uint32_t a, b;
  };
  // "x has lower priority than y": smaller count, or on a tie the larger (left, right) strings
  struct Less {
    const std::vector<std::u32string>* sym;
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      if (x.a != y.a) return (*sym)[x.a].compare((*sym)[y.a]) > 0;
      return (*sym)[x.b].compare((*sym)[y.b]) > 0;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, Less> heap{Less{&sym}};

  // is_valid_piece(sym[a] + sym[b]) of trainers/spm_bpe.py
  bool valid_concat(uint32_t a, uint32_t b) const {
    const std::u32string& x = sym[a];
    const std::u32string& y = sym[b];
    size_t n = x.size() + y.size();
    if (n == 0 || n > max_len) return false;
    int32_t prev = S_ANY;
    for (size_t pos = 0; pos < n; ++pos) {
      uint32_t c = pos < x.size() ? (uint32_t)x[pos] : (uint32_t)y[pos - x.size()];
      uint8_t f = flags[c];
      if (f & F_BAD) return false;
      if (f & F_WS) {
        if (pos > 0) return false;
        continue;
      }
      int32_t s = script[c];
      if (s == S_INHERITED) s = prev;
      bool digit = (f & F_DIGIT) != 0;
      if (digit && !split_by_number) s = S_ANY;
      if (digit && split_digits && n > 1) return false;
      if (split_by_script && s != S_ANY && prev != S_ANY && prev != s) return false;
      prev = s;
    }
    return true;
  }

  // the pair's slot, with its validity decided
  Pair& pair(uint32_t a, uint32_t b) {
    Pair& p = pairs.get(pk(a, b));
    if (p.valid < 0) p.valid = valid_concat(a, b) ? 1 : 0;
    return p;
  }

  void hold(Pair& p, uint32_t idx) {
    if (p.list == PairTable::NONE) {
      p.list = (uint32_t)holders.size();
      holders.emplace_back();
    }
    auto& l = holders[p.list];
    if (l.empty() || l.back() != idx) l.push_back(idx);
  }

  std::vector<std::pair<uint32_t, uint32_t>> run() {
    for (uint32_t idx = 0; idx < words.size(); ++idx) {
      const auto& w = words[idx];
      for (size_t k = 0; k + 1 < w.size(); ++k) {
        Pair& p = pair(w[k], w[k + 1]);
        if (!p.valid) continue;
        p.count += freqs[idx];
        hold(p, idx);
      }
    }
    pairs.for_each([&](Pair& p) {
      if (p.valid && p.count > 0) heap.push(Entry{p.count, (uint32_t)(p.key >> 32), (uint32_t)p.key});
    });

    std::vector<std::pair<uint32_t, uint32_t>> merges;
    std::vector<uint32_t> list, out, hits, touched_pos;
    std::vector<std::pair<uint64_t, int64_t>> touched;  // pairs changed by this merge, with their count before
    while (merges.size() < n_merges && !heap.empty()) {
      Entry e = heap.top();
      heap.pop();
      const uint32_t a = e.a, b = e.b;
      const uint64_t key = pk(a, b);
      {
        Pair* p = pairs.find(key);
        if (!p || p->dead || p->count != e.count) continue;  // stale entry
        std::u32string s = sym[a] + sym[b];
        if (pieces.count(s)) {  // the same string through another split: dropped
          p->dead = 1;
          continue;
        }
        pieces.insert(s);
        sym.push_back(std::move(s));
        list.clear();
        if (p->list != PairTable::NONE) list.swap(holders[p->list]);
      }
      const uint32_t nw = (uint32_t)sym.size() - 1;
      merges.emplace_back(a, b);
      ++stamp;
      touched.clear();
      // the pair's slot when it is valid, its count moved by d
      auto change = [&](uint32_t x, uint32_t y, int64_t d) -> Pair* {
        Pair& p = pair(x, y);
        if (!p.valid) return nullptr;
        if (p.stamp != stamp) {
          p.stamp = stamp;
          touched.emplace_back(p.key, p.count);
        }
        p.count += d;
        return &p;
      };
      for (uint32_t idx : list) {
        auto& w = words[idx];
        const size_t n = w.size();
        hits.clear();
        if (n < 2) continue;
        for (size_t i = 0;;) {  // left to right, without overlap
          i = find_from(w.data(), i, n - 1, a);
          if (i >= n - 1) break;
          if (w[i + 1] == b) { hits.push_back((uint32_t)i); i += 2; }
          else ++i;
        }
        if (hits.empty()) continue;  // stale index entry
        const int64_t f = freqs[idx];
        // pairs that disappear: those touching an occurrence (positions ascending, each once)
        touched_pos.clear();
        for (uint32_t i : hits) {
          if (i > 0 && (touched_pos.empty() || touched_pos.back() < i - 1)) touched_pos.push_back(i - 1);
          if (touched_pos.empty() || touched_pos.back() < i) touched_pos.push_back(i);
          if (i + 2 < n) touched_pos.push_back(i + 1);
        }
        for (uint32_t k : touched_pos) change(w[k], w[k + 1], -f);
        out.clear();
        touched_pos.clear();  // now: positions of the new symbol in `out`
        size_t prev_end = 0;
        for (uint32_t i : hits) {
          out.insert(out.end(), w.begin() + prev_end, w.begin() + i);
          touched_pos.push_back((uint32_t)out.size());
          out.push_back(nw);
          prev_end = i + 2;
        }
        out.insert(out.end(), w.begin() + prev_end, w.end());
        const size_t m = out.size();
        // pairs that appear: those touching a new symbol (positions ascending, each once)
        size_t next = 0;  // the smallest position not yet added
        auto gain = [&](size_t k) {
          if (k < next || k + 1 >= m) return;
          next = k + 1;
          if (Pair* p = change(out[k], out[k + 1], +f)) hold(*p, idx);
        };
        for (uint32_t j : touched_pos) {
          if (j > 0) gain(j - 1);
          gain(j);
        }
        w.swap(out);
      }
      for (const auto& [k, before] : touched) {
        if (k == key) continue;
        const Pair& p = pairs.get(k);
        if (p.count != before && p.count > 0) heap.push(Entry{p.count, (uint32_t)(k >> 32), (uint32_t)k});
      }
      pairs.get(key).count = 0;
    }
    return merges;
  }
};

// all code points of a str (no Python code runs)
inline bool code_points(PyObject* s, std::u32string& out) {
  if (PyUnicode_READY(s) < 0) return false;
  const int kind = PyUnicode_KIND(s);
  const void* data = PyUnicode_DATA(s);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  out.resize((size_t)n);
  for (Py_ssize_t i = 0; i < n; ++i) out[(size_t)i] = (char32_t)PyUnicode_READ(kind, data, i);
  return true;
}

inline bool as_i64(PyObject* o, long long& out, const char* what) {
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "spm_bpe_learn: %s must be int, got %.100s", what, Py_TYPE(o)->tp_name);
    return false;
  }
  out = PyLong_AsLongLong(o);
  return !(out == -1 && PyErr_Occurred());
}

}  // namespace tf_spm_bpe

// spm_bpe_learn(words: list[str], freqs: list[int], alphabet: list[int], scripts: list[int],
//               flags: list[int], taken: list[str], n_merges: int, max_piece_length: int,
//               split_digits: bool, split_by_number: bool, split_by_unicode_script: bool)
//     -> list[tuple[int, int]]
// `alphabet`: the kept code points, strictly ascending; symbol k < len(alphabet) is alphabet[k],
// each merge (a, b) of the result makes the next symbol sym[a] + sym[b]. `scripts[k]`: a script
// number >= 0 or -1 (Inherited); `flags[k]`: 1 bad character, 2 ▁, 4 decimal digit. Words are cut
// into runs of alphabet characters (runs of one are dropped). The caller keeps
// sum(freq * len(word)) < 2^63, so every pair count fits int64 (checked here too).
static PyObject* tf_spm_bpe_learn(PyObject*, PyObject* args) {
  PyObject *words, *freqs, *alphabet, *scripts, *flags, *taken;
  Py_ssize_t n_merges, max_len;
  int split_digits, split_by_number, split_by_script;
  if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!nnppp", &PyList_Type, &words, &PyList_Type, &freqs, &PyList_Type,
                        &alphabet, &PyList_Type, &scripts, &PyList_Type, &flags, &PyList_Type, &taken, &n_merges,
                        &max_len, &split_digits, &split_by_number, &split_by_script))
    return nullptr;
  const Py_ssize_t n_words = PyList_GET_SIZE(words), n_chars = PyList_GET_SIZE(alphabet);
  if (PyList_GET_SIZE(freqs) != n_words || PyList_GET_SIZE(scripts) != n_chars ||
      PyList_GET_SIZE(flags) != n_chars || n_merges < 0 || max_len < 1 || n_chars >= (Py_ssize_t)1 << 30) {
    PyErr_SetString(PyExc_ValueError, "spm_bpe_learn: inconsistent arguments");
    return nullptr;
  }
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  try {
    tf_spm_bpe::Trainer t;
    t.max_len = (size_t)max_len;
    t.split_digits = split_digits != 0;
    t.split_by_number = split_by_number != 0;
    t.split_by_script = split_by_script != 0;
    t.n_merges = (size_t)n_merges;
    // code point -> character id
    std::vector<uint32_t> bmp(0x10000, tf_spm_bpe::PairTable::NONE);
    std::unordered_map<uint32_t, uint32_t> astral;
    long long prev_cp = -1;
    for (Py_ssize_t k = 0; k < n_chars; ++k) {
      long long cp, sc, fl;
      if (!tf_spm_bpe::as_i64(PyList_GET_ITEM(alphabet, k), cp, "alphabet items") ||
          !tf_spm_bpe::as_i64(PyList_GET_ITEM(scripts, k), sc, "scripts items") ||
          !tf_spm_bpe::as_i64(PyList_GET_ITEM(flags, k), fl, "flags items"))
        return nullptr;
      if (cp <= prev_cp || cp > 0x10FFFF || sc < -1 || sc > INT32_MAX || fl < 0 || fl > 7) {
        PyErr_SetString(PyExc_ValueError, "spm_bpe_learn: alphabet must be ascending code points with valid attributes");
        return nullptr;
      }
      prev_cp = cp;
      if (cp < 0x10000) bmp[(size_t)cp] = (uint32_t)k;
      else astral.emplace((uint32_t)cp, (uint32_t)k);
      t.script.push_back((int32_t)sc);
      t.flags.push_back((uint8_t)fl);
      t.sym.emplace_back(1, (char32_t)k);
    }
    auto char_id = [&](char32_t cp) -> uint32_t {
      if (cp < 0x10000) return bmp[cp];
      auto it = astral.find((uint32_t)cp);
      return it == astral.end() ? tf_spm_bpe::PairTable::NONE : it->second;
    };
    std::u32string cps, ids;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(taken); ++k) {
      PyObject* s = PyList_GET_ITEM(taken, k);
      if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_TypeError, "spm_bpe_learn: taken must be str"); return nullptr; }
      if (!tf_spm_bpe::code_points(s, cps)) return nullptr;
      ids.clear();
      bool ok = cps.size() > 1;
      for (char32_t c : cps) {
        uint32_t id = char_id(c);
        if (id == tf_spm_bpe::PairTable::NONE) { ok = false; break; }
        ids.push_back((char32_t)id);
      }
      if (ok) t.pieces.insert(ids);  // only a piece spelled with alphabet characters can collide with a merge
    }
    unsigned __int128 total = 0;
    for (Py_ssize_t k = 0; k < n_words; ++k) {
      PyObject* w = PyList_GET_ITEM(words, k);
      if (!PyUnicode_Check(w)) { PyErr_SetString(PyExc_TypeError, "spm_bpe_learn: words must be str"); return nullptr; }
      long long f;
      if (!tf_spm_bpe::as_i64(PyList_GET_ITEM(freqs, k), f, "freqs items")) return nullptr;
      if (f < 0) { PyErr_SetString(PyExc_ValueError, "spm_bpe_learn: negative word count"); return nullptr; }
      if (!tf_spm_bpe::code_points(w, cps)) return nullptr;
      total += (unsigned __int128)f * cps.size();
      std::vector<uint32_t> run;
      for (size_t i = 0; i <= cps.size(); ++i) {
        uint32_t id = i < cps.size() ? char_id(cps[i]) : tf_spm_bpe::PairTable::NONE;
        if (id != tf_spm_bpe::PairTable::NONE) { run.push_back(id); continue; }
        if (run.size() > 1 && f > 0) {
          t.words.push_back(std::move(run));
          t.freqs.push_back((int64_t)f);
        }
        run = std::vector<uint32_t>();
      }
    }
    if (total > (unsigned __int128)INT64_MAX) {
      PyErr_SetString(PyExc_OverflowError, "spm_bpe_learn: the weighted corpus length passes int64");
      return nullptr;
    }
    if (t.words.size() >= (size_t)UINT32_MAX) {
      PyErr_SetString(PyExc_ValueError, "spm_bpe_learn: too many words");
      return nullptr;
    }
    bool oom = false;
    Py_BEGIN_ALLOW_THREADS
    try {
      merges = t.run();
    } catch (const std::exception&) {  // bad_alloc, length_error: out of memory either way
      oom = true;
    }
    Py_END_ALLOW_THREADS
    if (oom) return PyErr_NoMemory();
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  PyObject* out = PyList_New((Py_ssize_t)merges.size());
  if (!out) return nullptr;
  for (size_t k = 0; k < merges.size(); ++k) {
    PyObject* tup = Py_BuildValue("(II)", merges[k].first, merges[k].second);
    if (!tup) { Py_DECREF(out); return nullptr; }
    PyList_SET_ITEM(out, (Py_ssize_t)k, tup);
  }
  return out;
}
