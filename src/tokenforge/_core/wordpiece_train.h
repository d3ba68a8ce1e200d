// Native WordPiece training: the merge loop of trainers/wordpiece.py, merge for merge.
//
// Each step merges the live pair with the highest score f(xy) / (f(x) f(y)),
// where f(xy) is the pair count and f(x), f(y) the unit counts (64-bit).
// Scores are compared exactly: a double quotient decides when two differ by
// more than its rounding error, otherwise the products are compared in 192-bit
// integers. Ties: larger f(xy), then the smaller (left, right) pair of token
// strings (UTF-8 byte order = code point order).
//
// Why not one heap of pairs. A merge of x y lowers f(x) and f(y), which raises
// the score of *every* pair holding x or y. Late in training x and y are
// frequent units ("##e") with thousands of pairs, and re-scoring them all at
// each merge is what makes the Python reference slow. Here every pair is owned
// by one of its units, the one with the larger count when the pair first
// appeared (frequent units change most often). Each unit u keeps a row: a heap
// of its owned pairs keyed by f(ux) / f(x), the score times f(u), which does
// not change when f(u) does. A global heap holds, for every row, its best pair
// with the exact current score. So a change of f(u) costs one row refresh plus
// a re-key of the few pairs u does *not* own (where the partner was more
// frequent); a change of a pair count costs one row push. Entries carry the
// state they were computed from and are dropped when popped if it is stale;
// every change refreshes the row that owns the pair, so each row's best always
// has a current entry in the global heap.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bpe.h"
#include "pair_table.h"

namespace tf_wordpiece {

using tf::mix64;

using tf::pk;

struct Pair {
  uint64_t key;
  int64_t count;
  uint32_t stamp;
  uint32_t list;      // index into Trainer::holders, or NONE
  uint32_t owner;     // the unit whose row holds the pair
  uint32_t other;     // the other unit (= owner for a pair x x)
  uint8_t assigned;   // owner/other are set (at the first appearance, for good)
  uint8_t listed;     // present in Trainer::others[other]
  uint8_t banned;     // its merge would spell a special token
  static Pair blank() { return Pair{~0ull, 0, ~0u, ~0u, 0, 0, 0, 0, 0}; }
};

using PairTable = tf::PairTable<Pair, 1 << 16>;

// x * y * z as a 192-bit number, most significant word first.
struct U192 {
  uint64_t w[3];
};
inline U192 mul3(uint64_t x, uint64_t y, uint64_t z) {
  unsigned __int128 xy = (unsigned __int128)x * y;
  uint64_t lo = (uint64_t)xy, hi = (uint64_t)(xy >> 64);
  unsigned __int128 a = (unsigned __int128)lo * z;
  unsigned __int128 b = (unsigned __int128)hi * z + (uint64_t)(a >> 64);
  return U192{{(uint64_t)(b >> 64), (uint64_t)b, (uint64_t)a}};
}
inline int cmp192(const U192& p, const U192& q) {
  for (int k = 0; k < 3; ++k)
    if (p.w[k] != q.w[k]) return p.w[k] < q.w[k] ? -1 : 1;
  return 0;
}

// A pair with its exact current score (global heap).
struct Entry {
  double score;
  uint64_t c, fa, fb;  // the state it was scored with
  uint32_t a, b;
};
// A pair in its owner's row, keyed by c / f(other).
struct RowEntry {
  uint64_t c, fo;  // count and f(other) it was keyed with
  uint32_t a, b;
};

// Equal scores: larger f(xy) first, then the smaller (left, right) strings.
inline bool tie_lower(const std::vector<std::string>& tokens, uint64_t xc, uint32_t xa, uint32_t xb, uint64_t yc,
                      uint32_t ya, uint32_t yb) {
  if (xc != yc) return xc < yc;
  int s = tokens[xa].compare(tokens[ya]);
  if (s != 0) return s > 0;
  s = tokens[xb].compare(tokens[yb]);
  return s > 0;
}

struct Trainer {
  std::vector<std::string> tokens;  // UTF-8
  std::unordered_map<std::string, uint32_t> token_id;
  std::vector<uint8_t> special;  // per token id
  std::vector<std::vector<uint32_t>> words;
  std::vector<int64_t> freqs;
  std::vector<int64_t> unit_freq;
  size_t prefix_len = 0;
  size_t vocab_size = 0;
  int64_t min_frequency = 0;

  PairTable pairs;
  std::vector<std::vector<uint32_t>> holders;  // per pair: its words (may be stale)
  std::vector<std::vector<uint64_t>> others;   // per unit: pairs where it is `other` (may be stale)
  std::vector<std::vector<RowEntry>> rows;     // per unit: heap of owned pairs
  std::vector<uint32_t> row_stamp;             // per unit: last merge that touched its row
  std::vector<Entry> row_best;                 // per unit: the global entry its row pushed last
  std::vector<uint32_t> touched_rows;
  uint32_t stamp = 0;

  // "x has lower priority than y"
  struct Less {
    const std::vector<std::string>* tokens;
    bool operator()(const Entry& x, const Entry& y) const {
      // the double quotients are within a few ulp of the exact values
      double hi = std::max(x.score, y.score);
      if (std::fabs(x.score - y.score) > hi * 1e-12) return x.score < y.score;
      int c = cmp192(mul3(x.c, y.fa, y.fb), mul3(y.c, x.fa, x.fb));
      if (c != 0) return c < 0;
      if (x.a == y.a && x.b == y.b) return x.fa != y.fa ? x.fa < y.fa : x.fb < y.fb;  // duplicates
      return tie_lower(*tokens, x.c, x.a, x.b, y.c, y.a, y.b);
    }
  };
  struct RowLess {
    const std::vector<std::string>* tokens;
    bool operator()(const RowEntry& x, const RowEntry& y) const {
      unsigned __int128 l = (unsigned __int128)x.c * y.fo, r = (unsigned __int128)y.c * x.fo;
      if (l != r) return l < r;
      if (x.a == y.a && x.b == y.b) return x.fo < y.fo;  // duplicates of one pair
      return tie_lower(*tokens, x.c, x.a, x.b, y.c, y.a, y.b);
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, Less> heap{Less{&tokens}};

  bool eligible(const Pair& p) const {
    uint32_t a = (uint32_t)(p.key >> 32), b = (uint32_t)p.key;
    return p.count > 0 && p.count >= min_frequency && !p.banned && !special[a] && !special[b];
  }

  void touch_row(uint32_t u) {
    if (row_stamp[u] != stamp) { row_stamp[u] = stamp; touched_rows.push_back(u); }
  }

  // the pair first appears: its owner is the unit with the larger count (ties: the left one)
  void assign(Pair& p) {
    uint32_t a = (uint32_t)(p.key >> 32), b = (uint32_t)p.key;
    if (!p.assigned) {
      bool left = unit_freq[a] >= unit_freq[b];
      p.owner = left ? a : b;
      p.other = left ? b : a;
      p.assigned = 1;
    }
    if (!p.listed) { p.listed = 1; others[p.other].push_back(p.key); }
  }

  // push the pair's current key into its owner's row
  void row_push(Pair& p) {
    touch_row(p.owner);
    if (!eligible(p)) return;
    auto& r = rows[p.owner];
    r.push_back(RowEntry{(uint64_t)p.count, (uint64_t)unit_freq[p.other], (uint32_t)(p.key >> 32), (uint32_t)p.key});
    std::push_heap(r.begin(), r.end(), RowLess{&tokens});
  }

  // drop stale tops, then give the row's best pair a current global entry
  void refresh(uint32_t u) {
    auto& r = rows[u];
    RowLess less{&tokens};
    while (!r.empty()) {
      const RowEntry& t = r.front();
      Pair* p = pairs.find(pk(t.a, t.b));
      if (p && eligible(*p) && p->owner == u && (uint64_t)p->count == t.c &&
          (uint64_t)unit_freq[p->other] == t.fo) {
        uint64_t c = t.c, fa = (uint64_t)unit_freq[t.a], fb = (uint64_t)unit_freq[t.b];
        Entry& last = row_best[u];
        if (last.a == t.a && last.b == t.b && last.c == c && last.fa == fa && last.fb == fb) return;  // still there
        last = Entry{(double)c / ((double)fa * (double)fb), c, fa, fb, t.a, t.b};
        heap.push(last);
        return;
      }
      std::pop_heap(r.begin(), r.end(), less);
      r.pop_back();
    }
  }

  // f(u) changed: re-key the pairs u does not own, refresh the row u owns
  void unit_changed(uint32_t u) {
    touch_row(u);
    auto& l = others[u];
    size_t out = 0;
    for (size_t k = 0; k < l.size(); ++k) {
      Pair& p = pairs.get(l[k]);
      if (p.count <= 0) { p.listed = 0; continue; }
      l[out++] = l[k];
      row_push(p);
    }
    l.resize(out);
  }

  void hold(Pair& p, uint32_t idx) {
    if (p.list == PairTable::NONE) {
      p.list = (uint32_t)holders.size();
      holders.emplace_back();
    }
    auto& l = holders[p.list];
    if (l.empty() || l.back() != idx) l.push_back(idx);
  }

  void add_unit() {
    unit_freq.push_back(0);
    special.push_back(0);
    others.emplace_back();
    rows.emplace_back();
    row_stamp.push_back(0);
    row_best.push_back(Entry{0, 0, 0, 0, PairTable::NONE, PairTable::NONE});
  }

  std::vector<std::pair<uint32_t, uint32_t>> run() {
    size_t n_units = tokens.size();
    others.resize(n_units);
    rows.resize(n_units);
    row_stamp.assign(n_units, 0);
    row_best.assign(n_units, Entry{0, 0, 0, 0, PairTable::NONE, PairTable::NONE});
    for (uint32_t idx = 0; idx < words.size(); ++idx) {
      const auto& w = words[idx];
      for (size_t k = 0; k + 1 < w.size(); ++k) {
        Pair& p = pairs.get(pk(w[k], w[k + 1]));
        p.count += freqs[idx];
        hold(p, idx);
      }
    }
    {
      std::vector<uint64_t> keys;
      pairs.for_each([&](Pair& p) { keys.push_back(p.key); });
      std::sort(keys.begin(), keys.end());
      ++stamp;
      for (uint64_t key : keys) {
        Pair& p = pairs.get(key);
        assign(p);
        row_push(p);
      }
      for (uint32_t u : touched_rows) refresh(u);
      touched_rows.clear();
    }

    std::vector<std::pair<uint32_t, uint32_t>> merges;
    std::vector<uint64_t> touched;
    std::vector<uint32_t> out, list;
    std::vector<uint64_t> old_pairs;
    while (tokens.size() < vocab_size && !heap.empty()) {
      Entry e = heap.top();
      heap.pop();
      uint32_t a = e.a, b = e.b;
      uint64_t key = pk(a, b);
      {
        Pair* p = pairs.find(key);
        if (!p || !eligible(*p) || p->count != (int64_t)e.c || unit_freq[a] != (int64_t)e.fa ||
            unit_freq[b] != (int64_t)e.fb)
          continue;  // stale: the owner row has pushed a current entry since
      }
      std::string s = tokens[a] + tokens[b].substr(std::min(prefix_len, tokens[b].size()));
      uint32_t nw;
      auto it = token_id.find(s);
      if (it == token_id.end()) {
        nw = (uint32_t)tokens.size();
        token_id.emplace(s, nw);
        tokens.push_back(std::move(s));
        add_unit();
      } else {
        nw = it->second;
        if (special[nw]) {
          Pair& p = pairs.get(key);
          p.banned = 1;
          refresh(p.owner);
          continue;
        }
      }
      merges.emplace_back(a, b);
      ++stamp;
      touched.clear();
      touched_rows.clear();
      list.clear();
      {
        Pair& p = pairs.get(key);
        if (p.list != PairTable::NONE) list.swap(holders[p.list]);
      }
      auto change = [&](uint64_t k, int64_t d) {
        Pair& p = pairs.get(k);
        if (p.stamp != stamp) { p.stamp = stamp; touched.push_back(k); }
        p.count += d;
      };
      int64_t merged = 0;
      for (uint32_t idx : list) {
        auto& w = words[idx];
        size_t n = w.size();
        out.clear();
        int64_t hits = 0;
        for (size_t k = 0; k < n;) {
          if (k + 1 < n && w[k] == a && w[k + 1] == b) { out.push_back(nw); k += 2; ++hits; }
          else out.push_back(w[k++]);
        }
        if (!hits) continue;  // stale holder
        int64_t f = freqs[idx];
        merged += hits * f;
        old_pairs.clear();
        for (size_t k = 0; k + 1 < n; ++k) {
          uint64_t q = pk(w[k], w[k + 1]);
          old_pairs.push_back(q);
          change(q, -f);
        }
        for (size_t k = 0; k + 1 < out.size(); ++k) {
          uint64_t q = pk(out[k], out[k + 1]);
          change(q, +f);
          if (std::find(old_pairs.begin(), old_pairs.end(), q) == old_pairs.end()) hold(pairs.get(q), idx);
        }
        w.swap(out);
      }
      unit_freq[a] -= merged;
      unit_freq[b] -= merged;
      unit_freq[nw] += merged;
      for (uint64_t k : touched) {
        Pair& p = pairs.get(k);
        if (p.count > 0) assign(p);
        if (p.assigned) row_push(p);
      }
      unit_changed(a);
      if (b != a) unit_changed(b);
      if (nw != a && nw != b) unit_changed(nw);
      for (uint32_t u : touched_rows) refresh(u);
    }
    return merges;
  }
};

}  // namespace tf_wordpiece

namespace tf_wordpiece_py {

// An int read without running Python code (int and subclasses only): PyLong_AsLongLong calls
// __index__ of other objects, which can mutate the lists being read while their sizes and
// borrowed items are cached below (a heap overflow of `ids` and use-after-free, found by
// fuzz_wordpiece_hostile).
inline bool as_i64(PyObject* o, long long& out) {
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "wordpiece_learn: expected int, got %.100s", Py_TYPE(o)->tp_name);
    return false;
  }
  out = PyLong_AsLongLong(o);
  return !(out == -1 && PyErr_Occurred());
}

}  // namespace tf_wordpiece_py

// wordpiece_learn(tokens: list[bytes], words: list[list[int]], freqs: list[int],
//                 unit_freq: list[int], prefix_len: int, vocab_size: int,
//                 min_frequency: int, specials: list[int]) -> list[tuple[int, int]]
// `tokens` are the base tokens (UTF-8); each merge (a, b) in the result makes
// tokens[a] + tokens[b][prefix_len:], a new id when that string is new.
// The inputs must be what trainers/wordpiece.py builds, else ValueError: distinct tokens, counts
// >= 0, unit_freq[u] >= the occurrences of u in the words (weighted), sum(unit_freq) < 2^63. Then
// every unit and pair count stays in [0, 2^63) (a merge moves counts, the total only falls) and
// no score divides by zero. (Unchecked, a unit count of 0 gave inf/NaN scores, which break the
// heap order, and a duplicate token took the first id where the Python reference takes the last.)
static PyObject* tf_wordpiece_learn(PyObject*, PyObject* args) {
  PyObject *tokens, *words, *freqs, *unit_freq, *specials;
  Py_ssize_t prefix_len, vocab_size;
  long long min_frequency;
  if (!PyArg_ParseTuple(args, "O!O!O!O!nnLO!", &PyList_Type, &tokens, &PyList_Type, &words, &PyList_Type, &freqs,
                        &PyList_Type, &unit_freq, &prefix_len, &vocab_size, &min_frequency, &PyList_Type, &specials))
    return nullptr;
  Py_ssize_t n_tok = PyList_GET_SIZE(tokens), n_words = PyList_GET_SIZE(words);
  if (PyList_GET_SIZE(freqs) != n_words || PyList_GET_SIZE(unit_freq) != n_tok || prefix_len < 0 || vocab_size < 0) {
    PyErr_SetString(PyExc_ValueError, "wordpiece_learn: inconsistent arguments");
    return nullptr;
  }
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  try {
    tf_wordpiece::Trainer t;
    t.prefix_len = (size_t)prefix_len;
    t.vocab_size = (size_t)vocab_size;
    t.min_frequency = min_frequency;
    t.tokens.reserve((size_t)n_tok + (size_t)std::min<Py_ssize_t>(vocab_size, 1 << 16));
    for (Py_ssize_t k = 0; k < n_tok; ++k) {
      PyObject* s = PyList_GET_ITEM(tokens, k);
      if (!PyBytes_Check(s)) { PyErr_SetString(PyExc_TypeError, "tokens must be bytes"); return nullptr; }
      t.tokens.emplace_back(PyBytes_AS_STRING(s), (size_t)PyBytes_GET_SIZE(s));
      if (!t.token_id.emplace(t.tokens.back(), (uint32_t)k).second) {
        PyErr_SetString(PyExc_ValueError, "wordpiece_learn: duplicate token");
        return nullptr;
      }
      long long f;
      if (!tf_wordpiece_py::as_i64(PyList_GET_ITEM(unit_freq, k), f)) return nullptr;
      if (f < 0) { PyErr_SetString(PyExc_ValueError, "wordpiece_learn: negative unit count"); return nullptr; }
      t.unit_freq.push_back((int64_t)f);
    }
    t.special.assign((size_t)n_tok, 0);
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(specials); ++k) {
      long long s;
      if (!tf_wordpiece_py::as_i64(PyList_GET_ITEM(specials, k), s)) return nullptr;
      if (s < 0 || s >= n_tok) { PyErr_SetString(PyExc_ValueError, "special id out of range"); return nullptr; }
      t.special[(size_t)s] = 1;
    }
    t.words.reserve((size_t)n_words);
    std::vector<unsigned __int128> occ((size_t)n_tok, 0);  // weighted occurrences of each unit
    for (Py_ssize_t k = 0; k < n_words; ++k) {
      PyObject* w = PyList_GET_ITEM(words, k);
      if (!PyList_Check(w)) { PyErr_SetString(PyExc_TypeError, "words must be lists of ids"); return nullptr; }
      long long f;
      if (!tf_wordpiece_py::as_i64(PyList_GET_ITEM(freqs, k), f)) return nullptr;
      if (f < 0) { PyErr_SetString(PyExc_ValueError, "wordpiece_learn: negative word count"); return nullptr; }
      const Py_ssize_t len = PyList_GET_SIZE(w);
      std::vector<uint32_t> ids((size_t)len);
      for (Py_ssize_t j = 0; j < len; ++j) {
        long long v;
        if (!tf_wordpiece_py::as_i64(PyList_GET_ITEM(w, j), v)) return nullptr;
        if (v < 0 || v >= n_tok) { PyErr_SetString(PyExc_ValueError, "unit id out of range"); return nullptr; }
        ids[(size_t)j] = (uint32_t)v;
        if (__builtin_add_overflow(occ[(size_t)v], (unsigned __int128)f, &occ[(size_t)v])) occ[(size_t)v] = ~(unsigned __int128)0;
      }
      t.words.push_back(std::move(ids));
      t.freqs.push_back((int64_t)f);
    }
    unsigned __int128 total = 0;
    for (Py_ssize_t k = 0; k < n_tok; ++k) {
      if (occ[(size_t)k] > (unsigned __int128)t.unit_freq[(size_t)k]) {
        PyErr_SetString(PyExc_ValueError, "wordpiece_learn: a unit count is below its occurrences in the words");
        return nullptr;
      }
      total += (unsigned __int128)t.unit_freq[(size_t)k];
    }
    if (total > (unsigned __int128)INT64_MAX) {
      PyErr_SetString(PyExc_OverflowError, "wordpiece_learn: the unit counts sum past int64");
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
