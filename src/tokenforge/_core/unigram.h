// Unigram language-model training: the hot loops of EM.
//
// A model is a table of log-probabilities (one score per id) and a trie of the
// pieces that may appear in a segmentation, over Unicode code points; training
// switches pieces off between rounds (Model::absent) without rebuilding it. Every
// position of a text starts the pieces the trie finds there; a position with no
// one-character piece also starts an "unknown" node of score min_score - 10
// (sentencepiece's kUnkPenalty), so a segmentation always exists.
//
// Encoding does not use this file: its one native Viterbi is tf_spm::UnigramLattice
// (spm.h, a double-array trie, float32 or double arithmetic; core.SpmUnigram).
//
//   viterbi   best segmentation, with sentencepiece 0.2.3's arithmetic: float node
//             and path scores, path scores rebased to 0 when they pass +-1e5. On
//             equal scores the earlier start (the longer last piece) wins. Used by
//             viterbi_counts and alternatives (pruning; exclude_whole gives a piece's
//             second-best segmentation) and by the unigram_viterbi binding, which tests
//             and fuzz/fuzz_core.py use to cross-check the two tries (and a model
//             after unigram_rescore).
//   estep     forward-backward expected counts of every piece over ALL
//             segmentations of every word (the E-step of EM training), in double.
//             Per-node contributions are rounded to 2^-24 and summed as int64,
//             so the result does not depend on the number of threads or on the
//             order of the words.
//   viterbi_counts   how often each piece is on the Viterbi path (pruning).
//   alternatives     for each piece: its second-best segmentation (pruning).
//
// The pure-Python twins live in tokenforge/models/unigram.py and
// tokenforge/trainers/unigram.py; tests compare them with these.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace tf_uni {

constexpr double kFixedScale = 16777216.0;  // 2^24: the unit of the expected-count sums

// Children of the trie in one open-addressing table keyed by (node << 21 | code point).
class Trie {
 public:
  Trie() : keys_(16, 0), vals_(16, -1), mask_(15) { value_.push_back(-1); }

  int32_t child(int32_t node, uint32_t cp) const {
    const uint64_t k = key(node, cp);
    for (size_t i = hash(k) & mask_;; i = (i + 1) & mask_) {
      if (keys_[i] == k) return vals_[i];
      if (keys_[i] == 0) return -1;
    }
  }
  int32_t value(int32_t node) const { return value_[(size_t)node]; }

  void insert(const uint32_t* s, size_t n, int32_t id) {
    int32_t node = 0;
    for (size_t i = 0; i < n; ++i) {
      int32_t c = child(node, s[i]);
      if (c < 0) {
        c = (int32_t)value_.size();
        value_.push_back(-1);
        put(key(node, s[i]), c);
      }
      node = c;
    }
    value_[(size_t)node] = id;
  }

 private:
  static uint64_t key(int32_t node, uint32_t cp) { return (((uint64_t)node << 21) | cp) + 1; }
  static size_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
  }
  void put(uint64_t k, int32_t v) {
    if ((used_ + 1) * 2 > keys_.size()) grow();
    size_t i = hash(k) & mask_;
    while (keys_[i] != 0) i = (i + 1) & mask_;
    keys_[i] = k;
    vals_[i] = v;
    ++used_;
  }
  void grow() {
    std::vector<uint64_t> ok;
    std::vector<int32_t> ov;
    ok.swap(keys_);
    ov.swap(vals_);
    keys_.assign(ok.size() * 2, 0);
    vals_.assign(ok.size() * 2, -1);
    mask_ = keys_.size() - 1;
    for (size_t j = 0; j < ok.size(); ++j) {
      if (ok[j] == 0) continue;
      size_t i = hash(ok[j]) & mask_;
      while (keys_[i] != 0) i = (i + 1) & mask_;
      keys_[i] = ok[j];
      vals_[i] = ov[j];
    }
  }
  std::vector<uint64_t> keys_;
  std::vector<int32_t> vals_;
  size_t mask_;
  size_t used_ = 0;
  std::vector<int32_t> value_;  // piece id of each trie node, or -1
};

struct Model {
  Trie trie;
  std::vector<double> score;    // per id: the score a node of this piece gets
  std::vector<uint8_t> absent;  // per id (or empty): 1 = left out of segmentations (training)
  float unk_score = 0;          // score of an unknown-character node
  size_t max_len = 0;           // longest piece, in code points
  std::vector<int32_t> root;    // trie children of the root, by code point (a direct table)
  // Passes running with the GIL released (changed only with the GIL held). unigram_rescore
  // refuses to change the scores under them: another Python thread could otherwise resize
  // `absent` while a pass reads it (a use-after-free found by fuzz_unigram_hostile's review).
  int busy = 0;

  int32_t id_at(int32_t node) const {
    const int32_t id = trie.value(node);
    return (id >= 0 && !absent.empty() && absent[(size_t)id]) ? -1 : id;
  }
  int32_t step(int32_t node, uint32_t cp) const {
    if (node == 0) return cp < root.size() ? root[cp] : -1;
    return trie.child(node, cp);
  }
};

struct Node {
  uint32_t start, end;
  int32_t id;  // -1: unknown character
  double score;
};

// All nodes of the lattice of s[0:n], ordered by start, then by length.
inline void lattice(const Model& m, const uint32_t* s, size_t n, std::vector<Node>& nodes) {
  nodes.clear();
  for (size_t i = 0; i < n; ++i) {
    int32_t node = 0;
    bool single = false;
    for (size_t j = i; j < n; ++j) {
      node = m.step(node, s[j]);
      if (node < 0) break;
      const int32_t id = m.id_at(node);
      if (id < 0) continue;
      if (j == i) single = true;
      nodes.push_back(Node{(uint32_t)i, (uint32_t)(j + 1), id, m.score[(size_t)id]});
    }
    if (!single) nodes.push_back(Node{(uint32_t)i, (uint32_t)(i + 1), -1, (double)m.unk_score});
  }
}

// Best path of s[0:n]: ids (-1 = unknown character) and their start positions, in order.
// exclude_whole: ignore the single node covering all of s (the second-best of a piece).
// Returns false if no path exists. Float path scores rebased past +-1e5, as sentencepiece 0.2.3.
inline bool viterbi(const Model& m, const uint32_t* s, size_t n, std::vector<int32_t>& ids,
                    std::vector<uint32_t>& starts, bool exclude_whole = false) {
  ids.clear();
  starts.clear();
  if (n == 0) return true;
  constexpr float kReset = 100000.0f;
  std::vector<float> best(n + 1, 0.0f);
  std::vector<int64_t> from(n + 1, -1);
  std::vector<int32_t> last(n + 1, -1);
  size_t frontier = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && from[i] < 0) continue;  // unreachable (only when exclude_whole cuts every path)
    float here = best[i];
    if (here < -kReset || here > kReset) {
      const float offset = here;
      for (size_t j = i; j <= frontier; ++j)
        if (j == i || from[j] >= 0) best[j] -= offset;
      here = 0.0f;
    }
    int32_t node = 0;
    bool single = false;
    for (size_t j = i; j < n; ++j) {
      node = m.step(node, s[j]);
      if (node < 0) break;
      const int32_t id = m.id_at(node);
      if (id < 0) continue;
      if (j == i) single = true;
      if (exclude_whole && i == 0 && j + 1 == n) continue;
      const size_t e = j + 1;
      frontier = std::max(frontier, e);
      const float cand = (float)m.score[(size_t)id] + here;
      if (from[e] < 0 || cand > best[e]) {
        best[e] = cand;
        from[e] = (int64_t)i;
        last[e] = id;
      }
    }
    if (!single && !(exclude_whole && n == 1)) {
      const size_t e = i + 1;
      frontier = std::max(frontier, e);
      const float cand = m.unk_score + here;
      if (from[e] < 0 || cand > best[e]) {
        best[e] = cand;
        from[e] = (int64_t)i;
        last[e] = -1;
      }
    }
  }
  if (from[n] < 0) return false;
  for (size_t e = n; e > 0; e = (size_t)from[e]) {
    ids.push_back(last[e]);
    starts.push_back((uint32_t)from[e]);
  }
  std::reverse(ids.begin(), ids.end());
  std::reverse(starts.begin(), starts.end());
  return true;
}

// Errors of a pass that become Python exceptions (not out of memory): a NaN (from +-inf
// scores; the Python twin's int(nan) raises ValueError too) or a result past int64
// (OverflowError).
struct NotANumber : std::domain_error {
  using std::domain_error::domain_error;
};
struct Overflow : std::overflow_error {
  using std::overflow_error::overflow_error;
};

// The passes sum in 128 bits and narrow once at the end (narrow()): the result is exact, or
// OverflowError exactly when the exact total does not fit int64, whatever the word order and
// thread count. (They summed int64 terms before: signed overflow, UB, with huge frequencies or
// scores; and llround of NaN, +-inf or past int64 is unspecified, x86 gives INT64_MIN: silently
// wrong expected counts for -inf scores, found by fuzz_unigram_estep.)
using Acc = __int128;

// llround(x) (halves away from zero) in 128 bits, or throw.
inline Acc fixed_round(double x) {
  if (std::isnan(x)) throw NotANumber("unigram: NaN in the E-step (infinite scores?)");
  if (!(std::fabs(x) < 0x1p126)) throw Overflow("unigram: an E-step term is too large");
  if (std::fabs(x) >= 0x1p52) return (Acc)x;  // already an integer
  return (Acc)std::llround(x);
}
inline void add_checked(Acc& acc, Acc d) {
  if (__builtin_add_overflow(acc, d, &acc)) throw Overflow("unigram: a sum does not fit 128 bits");
}
inline int64_t narrow(Acc v) {
  if (v < (Acc)INT64_MIN || v > (Acc)INT64_MAX) throw Overflow("unigram: a count does not fit int64");
  return (int64_t)v;
}

struct Corpus {
  std::vector<uint32_t> chars;  // all words, back to back
  std::vector<size_t> offsets;  // word k is chars[offsets[k]:offsets[k+1]]
  std::vector<int64_t> freqs;
  size_t size() const { return freqs.size(); }
};

// E-step over words [lo, hi): adds fixed-point expected counts to `expected` and
// fixed-point freq * log P(word) to `objective`.
inline void estep_range(const Model& m, const Corpus& c, size_t lo, size_t hi, std::vector<Acc>& expected,
                        Acc& objective) {
  std::vector<Node> nodes;
  std::vector<double> alpha, beta, terms;
  std::vector<uint32_t> by_end, end_first;
  for (size_t k = lo; k < hi; ++k) {
    const uint32_t* s = c.chars.data() + c.offsets[k];
    const size_t n = c.offsets[k + 1] - c.offsets[k];
    if (n == 0) continue;
    const double freq = (double)c.freqs[k];
    lattice(m, s, n, nodes);
    // nodes grouped by end (stable: by start within an end)
    end_first.assign(n + 2, 0);
    for (const Node& v : nodes) ++end_first[v.end + 1];
    for (size_t e = 1; e <= n + 1; ++e) end_first[e] += end_first[e - 1];
    by_end.resize(nodes.size());
    {
      std::vector<uint32_t> fill(end_first.begin(), end_first.end() - 1);
      for (size_t q = 0; q < nodes.size(); ++q) by_end[fill[nodes[q].end]++] = (uint32_t)q;
    }
    alpha.assign(n + 1, 0.0);
    for (size_t e = 1; e <= n; ++e) {
      double mx = -std::numeric_limits<double>::infinity();
      for (uint32_t q = end_first[e]; q < end_first[e + 1]; ++q) {
        const Node& v = nodes[by_end[q]];
        mx = std::max(mx, alpha[v.start] + v.score);
      }
      double sum = 0.0;
      for (uint32_t q = end_first[e]; q < end_first[e + 1]; ++q) {
        const Node& v = nodes[by_end[q]];
        sum += std::exp(alpha[v.start] + v.score - mx);
      }
      alpha[e] = mx + std::log(sum);
    }
    beta.assign(n + 1, 0.0);
    size_t q_end = nodes.size();
    for (size_t st = n; st-- > 0;) {
      size_t q_begin = q_end;
      while (q_begin > 0 && nodes[q_begin - 1].start == st) --q_begin;
      double mx = -std::numeric_limits<double>::infinity();
      for (size_t q = q_begin; q < q_end; ++q) mx = std::max(mx, nodes[q].score + beta[nodes[q].end]);
      double sum = 0.0;
      for (size_t q = q_begin; q < q_end; ++q) sum += std::exp(nodes[q].score + beta[nodes[q].end] - mx);
      beta[st] = mx + std::log(sum);
      q_end = q_begin;
    }
    const double z = alpha[n];
    for (const Node& v : nodes) {
      if (v.id < 0) continue;
      const double p = freq * std::exp(alpha[v.start] + v.score + beta[v.end] - z);
      add_checked(expected[(size_t)v.id], fixed_round(p * kFixedScale));
    }
    add_checked(objective, fixed_round(freq * z * kFixedScale));
  }
}

// Viterbi frequency of every piece over words [lo, hi).
inline void viterbi_counts_range(const Model& m, const Corpus& c, size_t lo, size_t hi, std::vector<Acc>& counts,
                                 Acc& ntokens) {
  std::vector<int32_t> ids;
  std::vector<uint32_t> starts;
  for (size_t k = lo; k < hi; ++k) {
    const uint32_t* s = c.chars.data() + c.offsets[k];
    const size_t n = c.offsets[k + 1] - c.offsets[k];
    viterbi(m, s, n, ids, starts);
    for (int32_t id : ids)
      if (id >= 0) add_checked(counts[(size_t)id], c.freqs[k]);
    add_checked(ntokens, (Acc)ids.size() * c.freqs[k]);
  }
}

// Runs fn(lo, hi, acc, scalar) on `threads` contiguous slices and sums the integer partials
// (128-bit, narrowed to int64 at the end: OverflowError iff the exact result does not fit).
// Slices hold about the same number of characters. The sums are of integers, so neither the
// slicing nor the thread count changes the result.
template <class Fn>
void run_sliced(const Corpus& c, size_t width, int threads, Fn fn, std::vector<int64_t>& out, int64_t& scalar) {
  const size_t nwords = c.size();
  // At most kMaxThreads (each slice holds a `width` accumulator; the result does not depend on
  // the count): num_threads = 2^31 - 1 on a big corpus used to start threads until creation
  // failed, and the std::system_error unwound past joinable threads: std::terminate.
  constexpr int kMaxThreads = 64;
  if (threads < 1) threads = 1;
  if (threads > kMaxThreads) threads = kMaxThreads;
  if ((size_t)threads > nwords) threads = nwords > 0 ? (int)nwords : 1;
  std::vector<size_t> cut((size_t)threads + 1, nwords);
  cut[0] = 0;
  {
    size_t t = 1;
    const size_t total = c.chars.size();
    for (size_t k = 0; k < nwords && t < (size_t)threads; ++k)
      if (c.offsets[k] * (size_t)threads >= total * t) cut[t++] = k;
  }
  std::vector<std::vector<Acc>> acc((size_t)threads, std::vector<Acc>(width, 0));
  std::vector<Acc> scal((size_t)threads, 0);
  // each slice's exception is kept and the first one rethrown after every thread has joined
  // (it used to become bad_alloc: an E-step NaN or overflow would read as out of memory)
  std::vector<std::exception_ptr> failed((size_t)threads);
  auto work = [&](int t) {
    try {
      const size_t lo = cut[(size_t)t], hi = cut[(size_t)t + 1];
      fn(lo, hi, acc[(size_t)t], scal[(size_t)t]);
    } catch (...) {
      failed[(size_t)t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve((size_t)threads);
  int started = 1;
  for (; started < threads; ++started) {
    try {
      pool.emplace_back(work, started);
    } catch (const std::system_error&) {  // no more threads: the rest run here
      break;
    }
  }
  for (int t = started; t < threads; ++t) work(t);
  work(0);
  for (auto& th : pool) th.join();
  for (auto& f : failed)
    if (f) std::rethrow_exception(f);
  out.assign(width, 0);
  scalar = 0;
  for (size_t i = 0; i < width; ++i) {
    Acc v = 0;
    for (int t = 0; t < threads; ++t) add_checked(v, acc[(size_t)t][i]);
    out[i] = narrow(v);
  }
  Acc v = 0;
  for (int t = 0; t < threads; ++t) add_checked(v, scal[(size_t)t]);
  scalar = narrow(v);
}

}  // namespace tf_uni

// ----------------------------------------------------------------------------------------------
// Binding: module functions of tokenforge._core. Models and corpora are PyCapsules.

namespace tf_uni_py {

constexpr const char* kModelCapsule = "tokenforge._core.UnigramModel";
constexpr const char* kCorpusCapsule = "tokenforge._core.UnigramCorpus";

inline bool utf32_of(PyObject* str, std::vector<uint32_t>& out) {
  if (!PyUnicode_Check(str)) {
    PyErr_SetString(PyExc_TypeError, "expected str");
    return false;
  }
  const Py_ssize_t n = PyUnicode_GET_LENGTH(str);
  const int kind = PyUnicode_KIND(str);
  const void* data = PyUnicode_DATA(str);
  out.resize((size_t)n);
  for (Py_ssize_t i = 0; i < n; ++i) out[(size_t)i] = (uint32_t)PyUnicode_READ(kind, data, i);
  return true;
}

// Numbers read without running Python code: PyLong_AsLongLong / PyFloat_AsDouble call __index__ /
// __float__ of other objects, which may mutate the list being read while its size and borrowed
// items are cached here (out-of-bounds reads and use-after-free, found by fuzz_*_hostile).
// int (and subclasses: read directly) or, for as_double, float.
inline bool as_i64(PyObject* o, long long& out) {
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "expected int, got %.100s", Py_TYPE(o)->tp_name);
    return false;
  }
  out = PyLong_AsLongLong(o);
  return !(out == -1 && PyErr_Occurred());
}
inline bool as_double(PyObject* o, double& out) {
  if (PyFloat_Check(o)) {
    out = PyFloat_AS_DOUBLE(o);
    return true;
  }
  if (PyLong_Check(o)) {
    out = PyLong_AsDouble(o);
    return !(out == -1.0 && PyErr_Occurred());
  }
  PyErr_Format(PyExc_TypeError, "expected float, got %.100s", Py_TYPE(o)->tp_name);
  return false;
}

// Marks a model busy while a pass runs without the GIL (see Model::busy).
struct Busy {
  tf_uni::Model* m;
  explicit Busy(tf_uni::Model* m_) : m(m_) { ++m->busy; }
  ~Busy() { --m->busy; }
};

// The exception of a failed pass as a Python error (GIL held).
inline PyObject* raise_pass_error(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const tf_uni::NotANumber& x) {
    PyErr_SetString(PyExc_ValueError, x.what());
  } catch (const tf_uni::Overflow& x) {
    PyErr_SetString(PyExc_OverflowError, x.what());
  } catch (...) {  // bad_alloc, system_error, length_error
    PyErr_NoMemory();
  }
  return nullptr;
}

inline void drop_model(PyObject* cap) { delete (tf_uni::Model*)PyCapsule_GetPointer(cap, kModelCapsule); }
inline void drop_corpus(PyObject* cap) { delete (tf_uni::Corpus*)PyCapsule_GetPointer(cap, kCorpusCapsule); }

// bytes of n bytes at p (p may be null when n == 0: Py_BuildValue's y# would give None)
inline PyObject* bytes_of(const void* p, size_t n) {
  return PyBytes_FromStringAndSize(n ? (const char*)p : "", (Py_ssize_t)n);
}

inline PyObject* list_of_ints(const std::vector<int32_t>& v) {
  PyObject* out = PyList_New((Py_ssize_t)v.size());
  if (!out) return nullptr;
  for (size_t i = 0; i < v.size(); ++i) {
    PyObject* x = PyLong_FromLong(v[i]);
    if (!x) { Py_DECREF(out); return nullptr; }
    PyList_SET_ITEM(out, (Py_ssize_t)i, x);
  }
  return out;
}

}  // namespace tf_uni_py

// unigram_model(pieces: list[str | None], scores: list[float], unk_score: float) -> capsule
// pieces[id] is None for ids that never appear in a segmentation (control, unknown, byte, unused).
static PyObject* tf_unigram_model(PyObject*, PyObject* args) {
  PyObject *pieces, *scores;
  double unk_score;
  if (!PyArg_ParseTuple(args, "O!O!d", &PyList_Type, &pieces, &PyList_Type, &scores, &unk_score)) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(pieces);
  if (PyList_GET_SIZE(scores) != n || n >= (Py_ssize_t)1 << 31) {
    PyErr_SetString(PyExc_ValueError, "unigram_model: pieces and scores must have the same length (< 2^31)");
    return nullptr;
  }
  if (std::isnan(unk_score)) {
    PyErr_SetString(PyExc_ValueError, "unigram_model: unk_score is NaN");
    return nullptr;
  }
  tf_uni::Model* m = nullptr;
  try {
    m = new tf_uni::Model();
    m->unk_score = (float)unk_score;
    m->score.resize((size_t)n);
    std::vector<uint32_t> buf;
    for (Py_ssize_t i = 0; i < n; ++i) {
      double sc;
      if (!tf_uni_py::as_double(PyList_GET_ITEM(scores, i), sc)) { delete m; return nullptr; }
      if (std::isnan(sc)) {  // no order: the Python model rejects it too (rescore's NaN = absent)
        delete m;
        PyErr_Format(PyExc_ValueError, "unigram_model: score %zd is NaN", i);
        return nullptr;
      }
      m->score[(size_t)i] = sc;
      PyObject* p = PyList_GET_ITEM(pieces, i);
      if (p == Py_None) continue;
      if (!tf_uni_py::utf32_of(p, buf)) { delete m; return nullptr; }
      if (buf.empty()) continue;
      m->trie.insert(buf.data(), buf.size(), (int32_t)i);
      m->max_len = std::max(m->max_len, buf.size());
      if (buf[0] >= m->root.size()) m->root.resize((size_t)buf[0] + 1, -1);
      m->root[buf[0]] = m->trie.child(0, buf[0]);
    }
  } catch (const std::bad_alloc&) {
    delete m;
    return PyErr_NoMemory();
  }
  PyObject* cap = PyCapsule_New(m, tf_uni_py::kModelCapsule, tf_uni_py::drop_model);
  if (!cap) delete m;
  return cap;
}

// unigram_rescore(model, scores: bytes of float64 per id, unk_score: float) -> None
// Training: new scores for the same trie; a NaN score leaves the piece out of segmentations.
static PyObject* tf_unigram_rescore(PyObject*, PyObject* args) {
  PyObject* cap;
  Py_buffer buf;
  double unk_score;
  if (!PyArg_ParseTuple(args, "Oy*d", &cap, &buf, &unk_score)) return nullptr;
  auto* m = (tf_uni::Model*)PyCapsule_GetPointer(cap, tf_uni_py::kModelCapsule);
  if (!m || (size_t)buf.len != m->score.size() * sizeof(double)) {
    PyBuffer_Release(&buf);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "unigram_rescore: need one float64 per id");
    return nullptr;
  }
  if (m->busy || std::isnan(unk_score)) {
    PyBuffer_Release(&buf);
    PyErr_SetString(m->busy ? PyExc_RuntimeError : PyExc_ValueError,
                    m->busy ? "unigram_rescore: the model is in use by another thread" : "unigram_rescore: unk_score is NaN");
    return nullptr;
  }
  try {
    m->absent.assign(m->score.size(), 0);
    for (size_t i = 0; i < m->score.size(); ++i) {
      double v;  // memcpy: a memoryview slice may be unaligned
      std::memcpy(&v, (const char*)buf.buf + i * sizeof(double), sizeof(double));
      if (std::isnan(v)) m->absent[i] = 1;
      else m->score[i] = v;
    }
    m->unk_score = (float)unk_score;
  } catch (const std::bad_alloc&) {
    PyBuffer_Release(&buf);
    return PyErr_NoMemory();
  }
  PyBuffer_Release(&buf);
  Py_RETURN_NONE;
}

// unigram_corpus(words: list[str], freqs: list[int]) -> capsule
static PyObject* tf_unigram_corpus(PyObject*, PyObject* args) {
  PyObject *words, *freqs;
  if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &words, &PyList_Type, &freqs)) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(words);
  if (PyList_GET_SIZE(freqs) != n) {
    PyErr_SetString(PyExc_ValueError, "unigram_corpus: words and freqs must have the same length");
    return nullptr;
  }
  tf_uni::Corpus* c = nullptr;
  try {
    c = new tf_uni::Corpus();
    c->offsets.push_back(0);
    std::vector<uint32_t> buf;
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!tf_uni_py::utf32_of(PyList_GET_ITEM(words, i), buf)) { delete c; return nullptr; }
      long long f;
      if (!tf_uni_py::as_i64(PyList_GET_ITEM(freqs, i), f)) { delete c; return nullptr; }
      c->chars.insert(c->chars.end(), buf.begin(), buf.end());
      c->offsets.push_back(c->chars.size());
      c->freqs.push_back((int64_t)f);
    }
  } catch (const std::bad_alloc&) {
    delete c;
    return PyErr_NoMemory();
  }
  PyObject* cap = PyCapsule_New(c, tf_uni_py::kCorpusCapsule, tf_uni_py::drop_corpus);
  if (!cap) delete c;
  return cap;
}

// unigram_viterbi(model, text: str) -> (ids: list[int], starts: list[int]); id -1 = unknown char
// Not the encoder (that is SpmUnigram, spm.h): the training model's Viterbi, for cross-checks.
static PyObject* tf_unigram_viterbi(PyObject*, PyObject* args) {
  PyObject *cap, *text;
  if (!PyArg_ParseTuple(args, "OU", &cap, &text)) return nullptr;
  auto* m = (tf_uni::Model*)PyCapsule_GetPointer(cap, tf_uni_py::kModelCapsule);
  if (!m) return nullptr;
  std::vector<uint32_t> s;
  std::vector<int32_t> ids;
  std::vector<uint32_t> starts;
  bool oom = false;
  try {
    if (!tf_uni_py::utf32_of(text, s)) return nullptr;
    tf_uni_py::Busy busy(m);
    Py_BEGIN_ALLOW_THREADS
    try {
      tf_uni::viterbi(*m, s.data(), s.size(), ids, starts);
    } catch (const std::bad_alloc&) {
      oom = true;
    }
    Py_END_ALLOW_THREADS
  } catch (const std::bad_alloc&) {
    oom = true;
  }
  if (oom) return PyErr_NoMemory();
  PyObject* a = tf_uni_py::list_of_ints(ids);
  if (!a) return nullptr;
  PyObject* b = PyList_New((Py_ssize_t)starts.size());
  if (!b) { Py_DECREF(a); return nullptr; }
  for (size_t i = 0; i < starts.size(); ++i) {
    PyObject* x = PyLong_FromUnsignedLong(starts[i]);
    if (!x) { Py_DECREF(a); Py_DECREF(b); return nullptr; }
    PyList_SET_ITEM(b, (Py_ssize_t)i, x);
  }
  return Py_BuildValue("(NN)", a, b);
}

// unigram_estep(model, corpus, num_threads) -> (expected: bytes of int64 in units of 2^-24, objective: int in 2^-24)
// unigram_viterbi_counts(model, corpus, num_threads) -> (counts: bytes of int64, ntokens: int)
template <bool kEstep>
static PyObject* tf_unigram_corpus_pass(PyObject*, PyObject* args) {
  PyObject *mcap, *ccap;
  int threads;
  if (!PyArg_ParseTuple(args, "OOi", &mcap, &ccap, &threads)) return nullptr;
  auto* m = (tf_uni::Model*)PyCapsule_GetPointer(mcap, tf_uni_py::kModelCapsule);
  if (!m) return nullptr;
  auto* c = (tf_uni::Corpus*)PyCapsule_GetPointer(ccap, tf_uni_py::kCorpusCapsule);
  if (!c) return nullptr;
  std::vector<int64_t> out;
  int64_t scalar = 0;
  std::exception_ptr err;
  const size_t width = m->score.size();
  tf_uni_py::Busy busy(m);
  Py_BEGIN_ALLOW_THREADS
  try {
    if (kEstep)
      tf_uni::run_sliced(*c, width, threads,
                         [&](size_t lo, size_t hi, std::vector<tf_uni::Acc>& acc, tf_uni::Acc& sc) {
                           tf_uni::estep_range(*m, *c, lo, hi, acc, sc);
                         },
                         out, scalar);
    else
      tf_uni::run_sliced(*c, width, threads,
                         [&](size_t lo, size_t hi, std::vector<tf_uni::Acc>& acc, tf_uni::Acc& sc) {
                           tf_uni::viterbi_counts_range(*m, *c, lo, hi, acc, sc);
                         },
                         out, scalar);
  } catch (...) {
    err = std::current_exception();
  }
  Py_END_ALLOW_THREADS
  if (err) return tf_uni_py::raise_pass_error(err);
  PyObject* b = tf_uni_py::bytes_of(out.data(), out.size() * sizeof(int64_t));
  if (!b) return nullptr;
  return Py_BuildValue("(NL)", b, (long long)scalar);
}

// unigram_alternatives(model, pieces: list[str]) -> (status: bytes of int8, offsets: bytes of int64, ids: bytes of
// int32). What pruning needs to know of each piece: status 0 = it has a single segmentation (keep it, no
// alternative), 1 = its own Viterbi path splits it (it can go), 2 = its best segmentation other than itself is
// ids[offsets[i]:offsets[i+1]] (id -1 = unknown character).
static PyObject* tf_unigram_alternatives(PyObject*, PyObject* args) {
  PyObject *cap, *pieces;
  if (!PyArg_ParseTuple(args, "OO!", &cap, &PyList_Type, &pieces)) return nullptr;
  auto* m = (tf_uni::Model*)PyCapsule_GetPointer(cap, tf_uni_py::kModelCapsule);
  if (!m) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(pieces);
  std::vector<int8_t> status;
  std::vector<int64_t> offsets;
  std::vector<int32_t> alts;
  bool oom = false;
  try {
    std::vector<std::vector<uint32_t>> strs((size_t)n);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!tf_uni_py::utf32_of(PyList_GET_ITEM(pieces, i), strs[(size_t)i])) return nullptr;
    status.assign((size_t)n, 0);
    offsets.assign((size_t)n + 1, 0);
    tf_uni_py::Busy busy(m);
    Py_BEGIN_ALLOW_THREADS
    try {
      std::vector<int32_t> ids;
      std::vector<uint32_t> starts;
      for (size_t i = 0; i < strs.size(); ++i) {
        const auto& s = strs[i];
        if (tf_uni::viterbi(*m, s.data(), s.size(), ids, starts)) {
          if (ids.size() >= 2) {
            status[i] = 1;
          } else if (tf_uni::viterbi(*m, s.data(), s.size(), ids, starts, true)) {
            status[i] = 2;
            alts.insert(alts.end(), ids.begin(), ids.end());
          }
        }
        offsets[i + 1] = (int64_t)alts.size();
      }
    } catch (const std::bad_alloc&) {
      oom = true;
    }
    Py_END_ALLOW_THREADS
  } catch (const std::bad_alloc&) {
    oom = true;
  }
  if (oom) return PyErr_NoMemory();
  return Py_BuildValue("(NNN)", tf_uni_py::bytes_of(status.data(), status.size()),
                       tf_uni_py::bytes_of(offsets.data(), offsets.size() * 8),
                       tf_uni_py::bytes_of(alts.data(), alts.size() * 4));
}

// ----------------------------------------------------------------------------------------------
// Seed pieces: every substring of length 2..max_len of the training words that occurs at least
// twice and is right-maximal (followed by two different symbols, a word end being one symbol:
// the internal nodes of a suffix tree, as sentencepiece's enhanced suffix array gives them),
// weighted by word frequency, and valid as a piece. Found with a suffix array of the words (comparisons capped
// at max_len + 1 characters) and the LCP intervals of it.

namespace tf_uni {

struct CharInfo {
  int32_t script = 0;  // script id (Hiragana/Katakana already merged into Han); -2 inherited
  uint8_t flags = 0;   // 1 decimal digit, 2 forbidden in pieces, 4 the word-boundary mark U+2581
};

struct SeedCand {
  size_t pos;     // start in Corpus::chars
  uint32_t len;   // in code points
  int64_t freq;   // weighted occurrences
};

inline bool valid_piece(const uint32_t* s, size_t n, const std::vector<uint32_t>& keys,
                        const std::vector<CharInfo>& info, bool split_digits, bool split_by_script) {
  const int32_t kAny = -1;
  int32_t prev = kAny;
  for (size_t i = 0; i < n; ++i) {
    auto it = std::lower_bound(keys.begin(), keys.end(), s[i]);
    if (it == keys.end() || *it != s[i]) return false;  // not a known character
    const CharInfo& ci = info[(size_t)(it - keys.begin())];
    if (ci.flags & 2) return false;
    if (ci.flags & 4) {
      if (i > 0) return false;  // the boundary mark only as a prefix
      continue;
    }
    int32_t sc = ci.script == -2 ? prev : ci.script;
    if (ci.flags & 1) {
      if (split_digits && n > 1) return false;
    }
    if (split_by_script && sc != kAny && prev != kAny && sc != prev) return false;
    prev = sc;
  }
  return true;
}

inline void seed_candidates(const Corpus& c, size_t max_len, const std::vector<uint32_t>& keys,
                            const std::vector<CharInfo>& info, bool split_digits, bool split_by_script,
                            int threads, std::vector<SeedCand>& out) {
  const size_t total = c.chars.size();
  std::vector<uint32_t> word_of(total);
  for (size_t k = 0; k < c.size(); ++k)
    for (size_t p = c.offsets[k]; p < c.offsets[k + 1]; ++p) word_of[p] = (uint32_t)k;
  std::vector<size_t> sa(total);
  for (size_t p = 0; p < total; ++p) sa[p] = p;
  const size_t cap = max_len + 1;
  auto end_of = [&](size_t p) { return c.offsets[word_of[p] + 1]; };
  // Suffixes compared on at most `cap` characters; a word end sorts first and two word ends
  // differ (by position), so equal prefixes never extend across words. A strict total order:
  // the result does not depend on how the sort is split across threads.
  auto less = [&](size_t a, size_t b) {
    const size_t ea = end_of(a), eb = end_of(b);
    for (size_t i = 0; i < cap; ++i) {
      const bool da = a + i >= ea, db = b + i >= eb;
      if (da || db) {
        if (da && db) return a < b;
        return da;
      }
      const uint32_t x = c.chars[a + i], y = c.chars[b + i];
      if (x != y) return x < y;
    }
    return a < b;
  };
  std::thread other;
  if (threads > 1 && total > 100000) {  // two halves on two threads, then one merge
    try {
      other = std::thread([&] { std::sort(sa.begin(), sa.begin() + (std::ptrdiff_t)(total / 2), less); });
    } catch (const std::system_error&) {  // no thread to be had: sort here
    }
  }
  if (other.joinable()) {
    const auto mid = sa.begin() + (std::ptrdiff_t)(total / 2);
    std::sort(mid, sa.end(), less);  // (std::sort does not throw with this comparator)
    other.join();
    std::inplace_merge(sa.begin(), mid, sa.end(), less);
  } else {
    std::sort(sa.begin(), sa.end(), less);
  }
  auto lcp_of = [&](size_t a, size_t b) {
    const size_t ea = end_of(a), eb = end_of(b);
    size_t i = 0;
    while (i < cap && a + i < ea && b + i < eb && c.chars[a + i] == c.chars[b + i]) ++i;
    return i;
  };
  // prefix sums of word frequencies in suffix-array order, in 128 bits: int64 frequencies
  // (2^62 each) used to overflow the sums (UB) and order the seeds wrongly
  std::vector<__int128> wsum(total + 1, 0);
  for (size_t k = 0; k < total; ++k) wsum[k + 1] = wsum[k] + c.freqs[word_of[sa[k]]];
  std::vector<uint32_t> lcp(total + 1, 0);  // lcp[k] = lcp(sa[k-1], sa[k]); 0 at both ends
  for (size_t k = 1; k < total; ++k) lcp[k] = (uint32_t)lcp_of(sa[k - 1], sa[k]);
  auto consider = [&](size_t pos, size_t len, __int128 freq) {
    if (len < 2 || len > max_len || freq < 2) return;
    if (!valid_piece(c.chars.data() + pos, len, keys, info, split_digits, split_by_script)) return;
    if (freq > (__int128)INT64_MAX) throw Overflow("unigram_seed: a substring frequency does not fit int64");
    out.push_back(SeedCand{pos, (uint32_t)len, (int64_t)freq});
  };
  // LCP intervals (lcp value d >= 2, at least two suffixes). An interval is a right-maximal repeat
  // when its suffixes do not all continue with the same symbol; a word end is one symbol (the
  // space before the next word in running text). Sorted order puts equal next symbols together,
  // so comparing the first and the last suffix is enough.
  auto next_sym = [&](size_t p, size_t d) -> int64_t {
    return p + d < end_of(p) ? (int64_t)c.chars[p + d] : -1;
  };
  struct Open { uint32_t d; size_t lb; };
  std::vector<Open> stack;
  stack.push_back(Open{0, 0});
  for (size_t k = 1; k <= total; ++k) {
    const uint32_t h = k < total ? lcp[k] : 0;
    size_t lb = k - 1;
    while (h < stack.back().d) {
      Open top = stack.back();
      stack.pop_back();
      if (next_sym(sa[top.lb], top.d) != next_sym(sa[k - 1], top.d))  // interval [top.lb, k-1]
        consider(sa[top.lb], top.d, wsum[k] - wsum[top.lb]);
      lb = top.lb;
    }
    if (h > stack.back().d) stack.push_back(Open{h, lb});
  }
  // Best first: score = freq * length, ties by the piece's code points.
  std::sort(out.begin(), out.end(), [&](const SeedCand& a, const SeedCand& b) {
    const __int128 sa_ = (__int128)a.freq * a.len, sb = (__int128)b.freq * b.len;  // no int64 overflow
    if (sa_ != sb) return sa_ > sb;
    const size_t n = std::min(a.len, b.len);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t x = c.chars[a.pos + i], y = c.chars[b.pos + i];
      if (x != y) return x < y;
    }
    return a.len < b.len;
  });
}

}  // namespace tf_uni

// unigram_seed(corpus, max_len, keys: list[int], scripts: list[int], flags: bytes, split_digits, split_by_script,
//              limit, num_threads=1) -> (positions: bytes of uint64, lengths: bytes of uint32, freqs: bytes of int64),
//              best first
static PyObject* tf_unigram_seed(PyObject*, PyObject* args) {
  PyObject *ccap, *keys_o, *scripts_o;
  Py_ssize_t max_len, limit;
  Py_buffer flags;
  int split_digits, split_by_script, threads = 1;
  if (!PyArg_ParseTuple(args, "OnO!O!y*ppn|i", &ccap, &max_len, &PyList_Type, &keys_o, &PyList_Type, &scripts_o, &flags,
                        &split_digits, &split_by_script, &limit, &threads))
    return nullptr;
  auto* c = (tf_uni::Corpus*)PyCapsule_GetPointer(ccap, tf_uni_py::kCorpusCapsule);
  const Py_ssize_t nk = PyList_GET_SIZE(keys_o);
  if (!c || PyList_GET_SIZE(scripts_o) != nk || flags.len != nk || max_len < 1 || limit < 0) {
    PyBuffer_Release(&flags);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "unigram_seed: bad arguments");
    return nullptr;
  }
  std::vector<tf_uni::SeedCand> out;
  bool oom = false;
  std::exception_ptr err;
  try {
    std::vector<uint32_t> keys((size_t)nk);
    std::vector<tf_uni::CharInfo> info((size_t)nk);
    for (Py_ssize_t i = 0; i < nk; ++i) {
      long long k, s;
      if (!tf_uni_py::as_i64(PyList_GET_ITEM(keys_o, i), k) || !tf_uni_py::as_i64(PyList_GET_ITEM(scripts_o, i), s)) {
        PyBuffer_Release(&flags);
        return nullptr;
      }
      if (k < 0 || k > 0x10FFFF || s < INT32_MIN || s > INT32_MAX || (i > 0 && (uint32_t)k <= keys[(size_t)i - 1])) {
        PyBuffer_Release(&flags);
        PyErr_SetString(PyExc_ValueError, "unigram_seed: keys must be sorted distinct code points, scripts int32");
        return nullptr;
      }
      keys[(size_t)i] = (uint32_t)k;
      info[(size_t)i].script = (int32_t)s;
      info[(size_t)i].flags = ((const uint8_t*)flags.buf)[i];
    }
    PyBuffer_Release(&flags);
    Py_BEGIN_ALLOW_THREADS
    try {
      tf_uni::seed_candidates(*c, (size_t)max_len, keys, info, split_digits != 0, split_by_script != 0, threads, out);
      if (out.size() > (size_t)limit) out.resize((size_t)limit);
    } catch (...) {
      err = std::current_exception();
    }
    Py_END_ALLOW_THREADS
  } catch (const std::bad_alloc&) {
    oom = true;
  }
  if (oom) return PyErr_NoMemory();
  if (err) return tf_uni_py::raise_pass_error(err);
  std::vector<uint64_t> pos(out.size());
  std::vector<uint32_t> len(out.size());
  std::vector<int64_t> fr(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    pos[i] = out[i].pos;
    len[i] = out[i].len;
    fr[i] = out[i].freq;
  }
  return Py_BuildValue("(NNN)", tf_uni_py::bytes_of(pos.data(), pos.size() * 8),
                       tf_uni_py::bytes_of(len.data(), len.size() * 4), tf_uni_py::bytes_of(fr.data(), fr.size() * 8));
}
