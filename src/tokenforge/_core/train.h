// Native BPE training: piece counting with the scanners, and the incremental merge loop.
//
// learn_merges keeps, as trainers/bpe.py does, the count of every adjacent pair
// (64-bit), an index from each pair to the words that gained it, and a max-heap
// of (count, pair) with lazy deletion. A merge visits only the words indexed
// under the merged pair, recomputes their pairs, applies the net count changes
// and pushes each changed pair once. Ties go to the greatest pair of token
// strings compared through `order` (a byte permutation), so the result equals
// the pure-Python trainer's, merge for merge.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bpe.h"
#include "pair_table.h"
#include "scan.h"

namespace tf_train {

using tf::mix64;

using tf::pk;

// Everything the loop knows about one pair, in one open-addressing table:
// its count, the last merge that touched it, and its list of holder words.
struct PairInfo {
  uint64_t key;
  int64_t count;
  uint32_t stamp;
  uint32_t list;  // index into Merger::lists, or NONE
  static PairInfo blank() { return PairInfo{~0ull, 0, ~0u, ~0u}; }
};

using PairTable = tf::PairTable<PairInfo, 1 << 16>;

struct Merger {
  std::vector<std::string> keys;  // token id -> bytes mapped through `order`
  std::vector<std::vector<uint32_t>> words;
  std::vector<int64_t> freqs;
  PairTable pairs;
  std::vector<std::vector<uint32_t>> lists;  // holder words of a pair (may hold stale entries)

  struct Entry {
    int64_t count;
    uint32_t a, b;
  };
  struct Less {
    const std::vector<std::string>* keys;
    // "x < y" = x has lower priority: smaller count, or on a tie the smaller pair
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      int c = (*keys)[x.a].compare((*keys)[y.a]);
      if (c != 0) return c < 0;
      c = (*keys)[x.b].compare((*keys)[y.b]);
      if (c != 0) return c < 0;
      return x.a != y.a ? x.a < y.a : x.b < y.b;
    }
  };

  void hold(PairInfo& info, uint32_t idx) {
    if (info.list == PairTable::NONE) {
      info.list = (uint32_t)lists.size();
      lists.emplace_back();
    }
    auto& l = lists[info.list];
    if (l.empty() || l.back() != idx) l.push_back(idx);
  }

  std::vector<std::pair<uint32_t, uint32_t>> run(size_t num_merges) {
    for (uint32_t idx = 0; idx < words.size(); ++idx) {
      const auto& w = words[idx];
      for (size_t k = 0; k + 1 < w.size(); ++k) {
        PairInfo& info = pairs.get(pk(w[k], w[k + 1]));
        info.count += freqs[idx];
        hold(info, idx);
      }
    }
    std::vector<Entry> init;
    pairs.for_each([&](const PairInfo& s) {
      if (s.count > 0) init.push_back(Entry{s.count, (uint32_t)(s.key >> 32), (uint32_t)s.key});
    });
    std::priority_queue<Entry, std::vector<Entry>, Less> heap(Less{&keys}, std::move(init));

    std::vector<std::pair<uint32_t, uint32_t>> merges;
    std::vector<uint64_t> touched;
    uint32_t stamp = 0;
    while (merges.size() < num_merges && !heap.empty()) {
      Entry e = heap.top();
      heap.pop();
      uint64_t p = pk(e.a, e.b);
      PairInfo* top = const_cast<PairInfo*>(pairs.find(p));
      if (!top || top->count != e.count || e.count <= 0) continue;  // stale
      uint32_t a = e.a, b = e.b, nw = (uint32_t)keys.size();
      keys.push_back(keys[a] + keys[b]);
      merges.emplace_back(a, b);
      ++stamp;
      touched.clear();
      std::vector<uint32_t> holders;
      if (top->list != PairTable::NONE) holders.swap(lists[top->list]);
      auto change = [&](uint32_t x, uint32_t y, int64_t d, uint32_t idx) {
        PairInfo& info = pairs.get(pk(x, y));
        info.count += d;
        if (d > 0) hold(info, idx);
        if (info.stamp != stamp) { info.stamp = stamp; touched.push_back(info.key); }
      };
      for (uint32_t idx : holders) {
        auto& w = words[idx];
        int64_t f = freqs[idx];
        size_t n = w.size(), out = 0;
        for (size_t k = 0; k < n;) {
          if (k + 1 < n && w[k] == a && w[k + 1] == b) {
            if (out > 0) {  // left neighbour: the symbol already written (maybe a new token)
              uint32_t prev = w[out - 1];
              change(prev, a, -f, idx);
              change(prev, nw, +f, idx);
            }
            if (k + 2 < n) {  // right neighbour: the original next symbol
              uint32_t next = w[k + 2];
              change(b, next, -f, idx);
              change(nw, next, +f, idx);
            }
            w[out++] = nw;
            k += 2;
          } else {
            w[out++] = w[k++];
          }
        }
        w.resize(out);
      }
      // The merged pair is gone everywhere.
      PairInfo& gone = pairs.get(p);
      gone.count = 0;
      for (uint64_t key : touched) {
        const PairInfo* info = pairs.find(key);
        if (key != p && info->count > 0) heap.push(Entry{info->count, (uint32_t)(key >> 32), (uint32_t)key});
      }
    }
    return merges;
  }
};

}  // namespace tf_train

// learn_merges(words: list[bytes], counts: list[int], num_merges: int, order: bytes) -> list[tuple[int, int]]
// Ids below 256 are bytes; merge k creates id 256 + k.
static PyObject* tf_learn_merges(PyObject*, PyObject* args) {
  PyObject *words, *counts;
  Py_ssize_t num_merges;
  Py_buffer order;
  if (!PyArg_ParseTuple(args, "O!O!ny*", &PyList_Type, &words, &PyList_Type, &counts, &num_merges, &order))
    return nullptr;
  if (order.len != 256 || PyList_GET_SIZE(words) != PyList_GET_SIZE(counts) || num_merges < 0) {
    PyBuffer_Release(&order);
    PyErr_SetString(PyExc_ValueError, "learn_merges: need equal-length words/counts, num_merges >= 0, a 256-byte order");
    return nullptr;
  }
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  try {
    tf_train::Merger m;
    const uint8_t* ord = (const uint8_t*)order.buf;
    m.keys.reserve(256 + (size_t)num_merges);
    for (int c = 0; c < 256; ++c) m.keys.emplace_back(1, (char)ord[c]);
    Py_ssize_t n = PyList_GET_SIZE(words);
    for (Py_ssize_t k = 0; k < n; ++k) {
      PyObject* w = PyList_GET_ITEM(words, k);
      PyObject* c = PyList_GET_ITEM(counts, k);
      if (!PyBytes_Check(w)) { PyBuffer_Release(&order); PyErr_SetString(PyExc_TypeError, "words must be bytes"); return nullptr; }
      long long f = PyLong_AsLongLong(c);
      if (f == -1 && PyErr_Occurred()) { PyBuffer_Release(&order); return nullptr; }
      Py_ssize_t len = PyBytes_GET_SIZE(w);
      if (len < 2 || f <= 0) continue;
      const uint8_t* s = (const uint8_t*)PyBytes_AS_STRING(w);
      m.words.emplace_back(s, s + len);
      m.freqs.push_back((int64_t)f);
    }
    PyBuffer_Release(&order);
    bool oom = false;
    Py_BEGIN_ALLOW_THREADS
    try {
      merges = m.run((size_t)num_merges);
    } catch (const std::bad_alloc&) {
      oom = true;
    }
    Py_END_ALLOW_THREADS
    if (oom) return PyErr_NoMemory();
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  PyObject* out = PyList_New((Py_ssize_t)merges.size());
  if (!out) return nullptr;
  for (size_t k = 0; k < merges.size(); ++k) {
    PyObject* t = Py_BuildValue("(II)", merges[k].first, merges[k].second);
    if (!t) { Py_DECREF(out); return nullptr; }
    PyList_SET_ITEM(out, (Py_ssize_t)k, t);
  }
  return out;
}

// count_pieces(segments: list[str], pattern: int) -> dict[bytes, int]
static PyObject* tf_count_pieces(PyObject*, PyObject* args) {
  PyObject* segments;
  int pattern;
  if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &segments, &pattern)) return nullptr;
  if (pattern < 0 || pattern > 4) { PyErr_Format(PyExc_ValueError, "unknown scanner %d", pattern); return nullptr; }
  Py_ssize_t n = PyList_GET_SIZE(segments);
  std::vector<std::pair<const char*, size_t>> items((size_t)n);
  for (Py_ssize_t k = 0; k < n; ++k) {
    Py_ssize_t len;
    const char* s = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(segments, k), &len);
    if (!s) return nullptr;
    items[(size_t)k] = {s, (size_t)len};
  }
  std::unordered_map<std::string_view, int64_t> table;
  bool oom = false;
  Py_BEGIN_ALLOW_THREADS
  try {
    for (auto& it : items) {
      tf::Text t{(const uint8_t*)it.first, it.second};
      size_t i = 0;
      while (i < t.n) {
        size_t e = tf::next_piece((tf::Pattern)pattern, t, i);
        if (e <= i) e = i + 1;
        ++table[std::string_view(it.first + i, e - i)];
        i = e;
      }
    }
  } catch (const std::bad_alloc&) {
    oom = true;
  }
  Py_END_ALLOW_THREADS
  if (oom) return PyErr_NoMemory();
  PyObject* d = PyDict_New();
  if (!d) return nullptr;
  for (auto& kv : table) {
    PyObject* key = PyBytes_FromStringAndSize(kv.first.data(), (Py_ssize_t)kv.first.size());
    PyObject* val = key ? PyLong_FromLongLong(kv.second) : nullptr;
    if (!key || !val || PyDict_SetItem(d, key, val) < 0) {
      Py_XDECREF(key); Py_XDECREF(val); Py_DECREF(d);
      return nullptr;
    }
    Py_DECREF(key);
    Py_DECREF(val);
  }
  return d;
}
