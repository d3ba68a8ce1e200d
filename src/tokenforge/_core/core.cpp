// The thin CPython binding of tokenforge's native core.
//
// One immutable type, CoreBPE: a vocabulary (token bytes -> rank), a decoder
// (id -> bytes, special tokens included) and one of the named scanners. Every
// hot loop runs with the GIL released; errors become Python exceptions, and
// C++ exceptions (std::bad_alloc) never cross the boundary, so the process is
// never aborted. Policy (special tokens, custom patterns, files) stays in
// Python.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <atomic>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <mutex>

#include "backtrack.h"
#include "bpe.h"
#include "ranks.h"
#include "scan.h"
#include "spm.h"
#include "spm_bpe_train.h"
#include "train.h"
#include "unigram.h"
#include "wordpiece_train.h"

namespace {

using tf::Pattern;
using tf::Vocab;

// Per-call memo of pieces that needed merging: piece bytes -> ids. Direct-mapped,
// keys and ids in two flat arenas, so a miss costs one probe and a put no malloc.
class PieceCache {
 public:
  explicit PieceCache(size_t cap_pow2 = 1 << 13) : slots_(cap_pow2), mask_(cap_pow2 - 1) {}
  bool get(const uint8_t* p, size_t n, uint64_t h, std::vector<uint32_t>& out) const {
    const Slot& s = slots_[h & mask_];
    if (s.hash != h || s.key_len != n || std::memcmp(keys_.data() + s.key_off, p, n) != 0) return false;
    out.insert(out.end(), ids_.begin() + s.ids_off, ids_.begin() + s.ids_off + s.ids_len);
    return true;
  }
  void put(const uint8_t* p, size_t n, uint64_t h, const uint32_t* ids, size_t k) {
    if (keys_.size() + n > (1u << 22) || ids_.size() + k > (1u << 20)) {  // bounded: start over
      keys_.clear();
      ids_.clear();
      for (auto& s : slots_) s.hash = 0;
    }
    Slot& s = slots_[h & mask_];
    s.hash = h;
    s.key_off = (uint32_t)keys_.size();
    s.key_len = (uint32_t)n;
    s.ids_off = (uint32_t)ids_.size();
    s.ids_len = (uint32_t)k;
    keys_.insert(keys_.end(), p, p + n);
    ids_.insert(ids_.end(), ids, ids + k);
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_off = 0, key_len = 0, ids_off = 0, ids_len = 0;
  };
  std::vector<Slot> slots_;
  size_t mask_;
  std::vector<uint8_t> keys_;
  std::vector<uint32_t> ids_;
};

constexpr size_t CACHE_MAX_PIECE = 15;
//: Pieces longer than this use the linear backtracking encoder instead of the heap.
constexpr size_t BACKTRACK_MIN_PIECE = 16;

// The backtracker needs a trie of the vocabulary (30-220 ms to build, 13-54 MB). It is
// built only once long pieces have cost enough to pay for it (ski rental): after
// BUILD_AFTER_BYTES of pieces of BACKTRACK_MIN_PIECE+ bytes went through the array/heap
// merge, or at once for a single piece of HUGE_PIECE+ bytes, where the heap is slowest.
constexpr size_t BUILD_AFTER_BYTES = 4 << 20;
constexpr size_t HUGE_PIECE = 1 << 16;

struct LazyBacktracker {
  std::once_flag once;
  std::atomic<const tf::Backtracker*> built{nullptr};
  std::atomic<size_t> long_bytes{0};
  tf::Backtracker* owned = nullptr;
  const tf::Backtracker& get(const Vocab& v) {
    std::call_once(once, [&] {
      owned = new tf::Backtracker(v);
      built.store(owned, std::memory_order_release);
    });
    return *owned;
  }
  ~LazyBacktracker() { delete owned; }
};

inline void merge_piece(const Vocab& v, LazyBacktracker& lazy, const uint8_t* p, size_t m, std::vector<uint32_t>& out) {
  if (m < BACKTRACK_MIN_PIECE) {
    tf::bpe_merge(v, p, m, out);
    return;
  }
  const tf::Backtracker* bt = lazy.built.load(std::memory_order_acquire);
  if (!bt) {
    size_t seen = lazy.long_bytes.fetch_add(m, std::memory_order_relaxed) + m;
    if (seen < BUILD_AFTER_BYTES && m < HUGE_PIECE) {
      tf::bpe_merge(v, p, m, out);
      return;
    }
    bt = &lazy.get(v);
  }
  bt->encode(p, m, out);
}

void encode_text(const Vocab& v, LazyBacktracker& lazy, Pattern pat, const uint8_t* s, size_t n,
                 std::vector<uint32_t>& out, PieceCache& cache) {
  tf::Text t{s, n};
  size_t i = 0;
  while (i < n) {
    size_t e = tf::next_piece(pat, t, i);
    if (e <= i) e = i + 1;  // cannot happen; guards against an infinite loop
    const uint8_t* p = s + i;
    size_t m = e - i;
    uint32_t r = v.rank(p, m);
    if (r != Vocab::NONE) {
      out.push_back(r);
    } else if (m <= CACHE_MAX_PIECE) {
      uint64_t h = tf::hash_bytes(p, m) | 1;
      if (!cache.get(p, m, h, out)) {
        size_t before = out.size();
        tf::bpe_merge(v, p, m, out);
        cache.put(p, m, h, out.data() + before, out.size() - before);
      }
    } else {
      merge_piece(v, lazy, p, m, out);
    }
    i = e;
  }
}

struct CoreBPE {
  PyObject_HEAD
  Vocab* vocab;
  LazyBacktracker* lazy;
  std::vector<std::string>* decoder;  // id -> bytes ("" = no token)
  std::vector<uint8_t>* has_id;
  int pattern;
  std::vector<PyObject*>* ints;  // id -> a shared int object, so lists are built without allocating
};

// A list of ids. Every id below the decoder size reuses one int object per id (made on
// first use, under the GIL): building the list is then an INCREF per token instead of an
// allocation, which is most of what a list output costs.
PyObject* list_of_ids(CoreBPE* self, const std::vector<uint32_t>& ids) {
  std::vector<PyObject*>& cache = *self->ints;
  if (cache.empty()) cache.assign(self->decoder->size(), nullptr);
  PyObject* list = PyList_New((Py_ssize_t)ids.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < ids.size(); ++k) {
    uint32_t id = ids[k];
    PyObject* o;
    if (id < cache.size()) {
      o = cache[id];
      if (!o) {
        o = PyLong_FromUnsignedLong(id);
        if (!o) { Py_DECREF(list); return nullptr; }
        cache[id] = o;
      }
      Py_INCREF(o);
    } else {
      o = PyLong_FromUnsignedLong(id);
      if (!o) { Py_DECREF(list); return nullptr; }
    }
    PyList_SET_ITEM(list, (Py_ssize_t)k, o);
  }
  return list;
}

PyObject* list_from_ids(const std::vector<uint32_t>& ids) {
  PyObject* list = PyList_New((Py_ssize_t)ids.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < ids.size(); ++k) {
    PyObject* o = PyLong_FromUnsignedLong(ids[k]);
    if (!o) { Py_DECREF(list); return nullptr; }
    PyList_SET_ITEM(list, (Py_ssize_t)k, o);
  }
  return list;
}

int CoreBPE_init(CoreBPE* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"ranks", "decoder", "pattern", nullptr};
  PyObject *ranks, *decoder;
  int pattern;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!i", (char**)kwlist, &PyDict_Type, &ranks, &PyDict_Type,
                                   &decoder, &pattern))
    return -1;
  if (pattern < -1 || pattern > 4) {
    PyErr_Format(PyExc_ValueError, "unknown scanner %d", pattern);
    return -1;
  }
  if (self->vocab) return 0;  // immutable: a second __init__ changes nothing
  try {
    auto* v = new Vocab();
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(ranks, &pos, &key, &value)) {
      if (!PyBytes_Check(key)) { delete v; PyErr_SetString(PyExc_TypeError, "ranks keys must be bytes"); return -1; }
      unsigned long r = PyLong_AsUnsignedLong(value);
      if (PyErr_Occurred() || r >= 0xFFFFFFFFul) {
        delete v;
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_OverflowError, "rank does not fit in 32 bits");
        return -1;
      }
      v->add((const uint8_t*)PyBytes_AS_STRING(key), (size_t)PyBytes_GET_SIZE(key), (uint32_t)r);
    }
    v->finish();
    auto* dec = new std::vector<std::string>();
    auto* has = new std::vector<uint8_t>();
    pos = 0;
    while (PyDict_Next(decoder, &pos, &key, &value)) {
      unsigned long id = PyLong_AsUnsignedLong(key);
      if (PyErr_Occurred() || id >= 0xFFFFFFFFul || !PyBytes_Check(value)) {
        delete v; delete dec; delete has;
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "decoder must map int ids to bytes");
        return -1;
      }
      if (id >= dec->size()) { dec->resize(id + 1); has->resize(id + 1, 0); }
      (*dec)[id].assign(PyBytes_AS_STRING(value), (size_t)PyBytes_GET_SIZE(value));
      (*has)[id] = 1;
    }
    self->vocab = v;
    self->ints = new std::vector<PyObject*>();
    self->lazy = new LazyBacktracker();
    self->decoder = dec;
    self->has_id = has;
    self->pattern = pattern;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

void CoreBPE_dealloc(CoreBPE* self) {
  if (self->ints) {
    for (PyObject* o : *self->ints) Py_XDECREF(o);
    delete self->ints;
  }
  delete self->vocab;
  delete self->lazy;
  delete self->decoder;
  delete self->has_id;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

bool ready(CoreBPE* self) {
  if (!self->vocab) {
    PyErr_SetString(PyExc_ValueError, "CoreBPE is not initialised");
    return false;
  }
  return true;
}

bool need_scanner(CoreBPE* self) {
  if (!ready(self)) return false;
  if (self->pattern < 0) {
    PyErr_SetString(PyExc_ValueError, "this core has no native scanner (custom pattern)");
    return false;
  }
  return true;
}

// Encodes a str with the native scanner into out; false with a Python error set on failure.
bool encode_str(CoreBPE* self, PyObject* arg, std::vector<uint32_t>& out) {
  if (!need_scanner(self)) return false;
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(arg, &n);
  if (!s) return false;  // TypeError, or UnicodeEncodeError for lone surrogates
  bool oom = false;
  Py_BEGIN_ALLOW_THREADS
  try {
    out.reserve((size_t)n / 3 + 16);
    PieceCache cache;
    encode_text(*self->vocab, *self->lazy, (Pattern)self->pattern, (const uint8_t*)s, (size_t)n, out, cache);
  } catch (const std::bad_alloc&) {
    oom = true;
  }
  Py_END_ALLOW_THREADS
  if (oom) {
    PyErr_NoMemory();
    return false;
  }
  return true;
}

// encode_ordinary(text: str) -> list[int]
PyObject* CoreBPE_encode_ordinary(CoreBPE* self, PyObject* arg) {
  std::vector<uint32_t> out;
  if (!encode_str(self, arg, out)) return nullptr;
  return list_of_ids(self, out);
}

// encode_ordinary_u32(text: str) -> bytes (native-endian uint32 ids, for numpy.frombuffer)
PyObject* CoreBPE_encode_ordinary_u32(CoreBPE* self, PyObject* arg) {
  std::vector<uint32_t> out;
  if (!encode_str(self, arg, out)) return nullptr;
  return PyBytes_FromStringAndSize((const char*)out.data(), (Py_ssize_t)(out.size() * sizeof(uint32_t)));
}

// Encodes a list of str on up to num_threads threads (GIL released) into outs.
// Returns false with a Python error set on failure.
bool encode_many(CoreBPE* self, PyObject* texts, int num_threads, std::vector<std::vector<uint32_t>>& outs) {
  if (!need_scanner(self)) return false;
  Py_ssize_t count = PyList_GET_SIZE(texts);
  std::vector<PyObject*> keep;
  std::vector<std::pair<const char*, size_t>> items((size_t)count);
  keep.reserve((size_t)count);
  for (Py_ssize_t k = 0; k < count; ++k) {
    PyObject* o = PyList_GET_ITEM(texts, k);
    Py_ssize_t n;
    const char* s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) {
      for (PyObject* x : keep) Py_DECREF(x);
      return false;
    }
    Py_INCREF(o);
    keep.push_back(o);
    items[(size_t)k] = {s, (size_t)n};
  }
  outs.assign((size_t)count, {});
  std::atomic<size_t> next{0};
  std::atomic<bool> oom{false};
  const Vocab& v = *self->vocab;
  LazyBacktracker& lazy = *self->lazy;
  Pattern pat = (Pattern)self->pattern;
  auto work = [&]() {
    try {
      PieceCache cache;
      for (;;) {
        size_t k = next.fetch_add(1);
        if (k >= items.size()) break;
        encode_text(v, lazy, pat, (const uint8_t*)items[k].first, items[k].second, outs[k], cache);
      }
    } catch (const std::bad_alloc&) {
      oom = true;
    }
  };
  Py_BEGIN_ALLOW_THREADS
  size_t threads = (size_t)(num_threads < 1 ? 1 : num_threads);
  if (threads > items.size()) threads = items.size() ? items.size() : 1;
  std::vector<std::thread> pool;
  try {
    for (size_t k = 1; k < threads; ++k) pool.emplace_back(work);
  } catch (...) {
    // could not start a thread: the calling thread does all the work
  }
  work();
  for (auto& th : pool) th.join();
  Py_END_ALLOW_THREADS
  for (PyObject* o : keep) Py_DECREF(o);
  if (oom) {
    PyErr_NoMemory();
    return false;
  }
  return true;
}

// encode_ordinary_batch(texts: list[str], num_threads: int) -> list[list[int]]
PyObject* CoreBPE_encode_ordinary_batch(CoreBPE* self, PyObject* args) {
  PyObject* texts;
  int num_threads;
  if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &texts, &num_threads)) return nullptr;
  std::vector<std::vector<uint32_t>> outs;
  if (!encode_many(self, texts, num_threads, outs)) return nullptr;
  PyObject* result = PyList_New((Py_ssize_t)outs.size());
  if (!result) return nullptr;
  for (size_t k = 0; k < outs.size(); ++k) {
    PyObject* l = list_of_ids(self, outs[k]);
    if (!l) { Py_DECREF(result); return nullptr; }
    PyList_SET_ITEM(result, (Py_ssize_t)k, l);
  }
  return result;
}

// encode_ordinary_batch_flat(texts, num_threads) -> (bytes of uint32 ids, bytes of uint64 offsets):
// document k is ids[offsets[k]:offsets[k+1]]. No Python object per token.
PyObject* CoreBPE_encode_ordinary_batch_flat(CoreBPE* self, PyObject* args) {
  PyObject* texts;
  int num_threads;
  if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &texts, &num_threads)) return nullptr;
  std::vector<std::vector<uint32_t>> outs;
  if (!encode_many(self, texts, num_threads, outs)) return nullptr;
  size_t total = 0;
  for (auto& o : outs) total += o.size();
  PyObject* ids = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)(total * sizeof(uint32_t)));
  PyObject* offs = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)((outs.size() + 1) * sizeof(uint64_t)));
  if (!ids || !offs) { Py_XDECREF(ids); Py_XDECREF(offs); return nullptr; }
  uint32_t* w = (uint32_t*)PyBytes_AS_STRING(ids);
  uint64_t* o = (uint64_t*)PyBytes_AS_STRING(offs);
  size_t pos = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    o[k] = pos;
    if (!outs[k].empty()) std::memcpy(w + pos, outs[k].data(), outs[k].size() * sizeof(uint32_t));
    pos += outs[k].size();
  }
  o[outs.size()] = pos;
  PyObject* t = PyTuple_Pack(2, ids, offs);
  Py_DECREF(ids);
  Py_DECREF(offs);
  return t;
}

// encode_piece(piece: bytes) -> list[int]
PyObject* CoreBPE_encode_piece(CoreBPE* self, PyObject* arg) {
  if (!ready(self)) return nullptr;
  if (!PyBytes_Check(arg)) { PyErr_SetString(PyExc_TypeError, "piece must be bytes"); return nullptr; }
  Py_ssize_t n = PyBytes_GET_SIZE(arg);
  std::vector<uint32_t> out;
  if (n == 0) return list_from_ids(out);
  try {
    const uint8_t* p = (const uint8_t*)PyBytes_AS_STRING(arg);
    uint32_t r = self->vocab->rank(p, (size_t)n);
    if (r != Vocab::NONE) out.push_back(r);
    else merge_piece(*self->vocab, *self->lazy, p, (size_t)n, out);
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  return list_from_ids(out);
}

// _check_pair(a: int, b: int, by_merging: bool) -> bool: the backtracker's pair test (for tests)
PyObject* CoreBPE_check_pair(CoreBPE* self, PyObject* args) {
  if (!ready(self)) return nullptr;
  unsigned int a, b;
  int by_merging;
  if (!PyArg_ParseTuple(args, "IIp", &a, &b, &by_merging)) return nullptr;
  bool ok;
  try {
    const tf::Backtracker& bt = self->lazy->get(*self->vocab);
    if (a == 0xFFFFFFFFu && b == 0xFFFFFFFFu) return PyBool_FromLong(bt.monotone());  // tests: which path runs
    ok = bt.check_pair(a, b, by_merging != 0);
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  return PyBool_FromLong(ok);
}

// merge_with(piece: bytes, method: int) -> list[int]: merging only, by 0 = array/heap, 1 = backtracking.
// For the differential tests of the two algorithms.
PyObject* CoreBPE_merge_with(CoreBPE* self, PyObject* args) {
  if (!ready(self)) return nullptr;
  Py_buffer piece;
  int method;
  if (!PyArg_ParseTuple(args, "y*i", &piece, &method)) return nullptr;
  std::vector<uint32_t> out;
  try {
    if (piece.len > 0) {
      if (method == 1) self->lazy->get(*self->vocab).encode((const uint8_t*)piece.buf, (size_t)piece.len, out);
      else tf::bpe_merge(*self->vocab, (const uint8_t*)piece.buf, (size_t)piece.len, out);
    }
  } catch (const std::bad_alloc&) {
    PyBuffer_Release(&piece);
    return PyErr_NoMemory();
  }
  PyBuffer_Release(&piece);
  return list_from_ids(out);
}

// split(text: str) -> list[str]: the scanner's pieces (for tests against the regex module)
PyObject* CoreBPE_split(CoreBPE* self, PyObject* arg) {
  if (!need_scanner(self)) return nullptr;
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(arg, &n);
  if (!s) return nullptr;
  tf::Text t{(const uint8_t*)s, (size_t)n};
  PyObject* list = PyList_New(0);
  if (!list) return nullptr;
  size_t i = 0;
  while (i < (size_t)n) {
    size_t e = tf::next_piece((Pattern)self->pattern, t, i);
    if (e <= i) e = i + 1;
    PyObject* piece = PyUnicode_DecodeUTF8(s + i, (Py_ssize_t)(e - i), "strict");
    if (!piece || PyList_Append(list, piece) < 0) { Py_XDECREF(piece); Py_DECREF(list); return nullptr; }
    Py_DECREF(piece);
    i = e;
  }
  return list;
}

// decode_bytes(ids: sequence of int) -> bytes; raises KeyError(position) on an unknown id
PyObject* CoreBPE_decode_bytes(CoreBPE* self, PyObject* arg) {
  if (!ready(self)) return nullptr;
  PyObject* seq = PySequence_Fast(arg, "ids must be a sequence of ints");
  if (!seq) return nullptr;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  const auto& dec = *self->decoder;
  const auto& has = *self->has_id;
  size_t total = 0;
  std::vector<uint32_t> ids((size_t)count);
  for (Py_ssize_t k = 0; k < count; ++k) {
    PyObject* o = items[k];
    long long id = PyLong_Check(o) ? PyLong_AsLongLong(o) : -1;
    if ((id == -1 && PyErr_Occurred()) || !PyLong_Check(o) || id < 0 || (unsigned long long)id >= has.size() ||
        !has[(size_t)id]) {
      PyErr_Clear();
      Py_DECREF(seq);
      PyObject* pos = PyLong_FromSsize_t(k);
      if (pos) { PyErr_SetObject(PyExc_LookupError, pos); Py_DECREF(pos); }
      return nullptr;
    }
    ids[(size_t)k] = (uint32_t)id;
    total += dec[(size_t)id].size();
  }
  Py_DECREF(seq);
  PyObject* out = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)total);
  if (!out) return nullptr;
  char* w = PyBytes_AS_STRING(out);
  for (uint32_t id : ids) {
    const std::string& b = dec[id];
    std::memcpy(w, b.data(), b.size());
    w += b.size();
  }
  return out;
}

PyMethodDef CoreBPE_methods[] = {
    {"encode_ordinary", (PyCFunction)CoreBPE_encode_ordinary, METH_O, "Encode a str with the native scanner."},
    {"encode_ordinary_u32", (PyCFunction)CoreBPE_encode_ordinary_u32, METH_O, "Encode to packed uint32 bytes."},
    {"encode_ordinary_batch", (PyCFunction)CoreBPE_encode_ordinary_batch, METH_VARARGS, "Encode a list of str on threads."},
    {"encode_ordinary_batch_flat", (PyCFunction)CoreBPE_encode_ordinary_batch_flat, METH_VARARGS,
     "Encode a list of str on threads into flat uint32 ids + uint64 offsets."},
    {"encode_piece", (PyCFunction)CoreBPE_encode_piece, METH_O, "Ids of one pre-token."},
    {"split", (PyCFunction)CoreBPE_split, METH_O, "Pieces of the native scanner."},
    {"merge_with", (PyCFunction)CoreBPE_merge_with, METH_VARARGS, "Merge a piece with a chosen algorithm."},
    {"_check_pair", (PyCFunction)CoreBPE_check_pair, METH_VARARGS, "Pair validity, fast or by merging (tests)."},
    {"decode_bytes", (PyCFunction)CoreBPE_decode_bytes, METH_O, "Concatenated bytes of ids."},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject CoreBPEType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// class_table() -> bytes: the scanner's class bits of every code point, as native uint16.
PyObject* tf_class_table(PyObject*, PyObject*) {
  PyObject* out = PyBytes_FromStringAndSize(nullptr, 0x110000 * 2);
  if (!out) return nullptr;
  uint16_t* w = (uint16_t*)PyBytes_AS_STRING(out);
  for (uint32_t cp = 0; cp < 0x110000; ++cp) w[cp] = tf::flags_of(cp);
  return out;
}

PyMethodDef module_methods[] = {
    {"class_table", (PyCFunction)tf_class_table, METH_NOARGS, "Unicode class bits of every code point."},
    {"learn_merges", (PyCFunction)tf_learn_merges, METH_VARARGS, "Native BPE merge loop."},
    {"count_pieces", (PyCFunction)tf_count_pieces, METH_VARARGS, "Count the scanner's pieces of UTF-8 bytes."},
    {"parse_ranks", (PyCFunction)tf_parse_ranks, METH_O, "A well-formed tiktoken rank file as {bytes: int}."},
    {"unigram_model", (PyCFunction)tf_unigram_model, METH_VARARGS, "Unigram lattice model (capsule)."},
    {"unigram_rescore", (PyCFunction)tf_unigram_rescore, METH_VARARGS, "Unigram training: new scores."},
    {"unigram_corpus", (PyCFunction)tf_unigram_corpus, METH_VARARGS, "Unigram training words (capsule)."},
    {"unigram_viterbi", (PyCFunction)tf_unigram_viterbi, METH_VARARGS, "Unigram best segmentation."},
    {"unigram_estep", (PyCFunction)tf_unigram_corpus_pass<true>, METH_VARARGS, "Unigram expected counts."},
    {"unigram_viterbi_counts", (PyCFunction)tf_unigram_corpus_pass<false>, METH_VARARGS, "Unigram Viterbi counts."},
    {"unigram_alternatives", (PyCFunction)tf_unigram_alternatives, METH_VARARGS, "Unigram second-best pieces."},
    {"unigram_seed", (PyCFunction)tf_unigram_seed, METH_VARARGS, "Unigram seed pieces (suffix array)."},
    {"wordpiece_learn", (PyCFunction)tf_wordpiece_learn, METH_VARARGS, "Native WordPiece merge loop."},
    {"spm_bpe_learn", (PyCFunction)tf_spm_bpe_learn, METH_VARARGS, "Native SentencePiece BPE merge loop."},
    {"spm_unigram_encode", (PyCFunction)tf_spm_py::spm_unigram_encode, METH_VARARGS,
     "SentencePiece Unigram: normalize, Viterbi and unknown merging in one call."},
    {"spm_bpe_encode", (PyCFunction)tf_spm_py::spm_bpe_encode, METH_VARARGS,
     "SentencePiece BPE: normalize and merge in one call."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "tokenforge._core", "tokenforge's native core.", -1, module_methods};

}  // namespace

PyMODINIT_FUNC PyInit__core(void) {
  CoreBPEType.tp_name = "tokenforge._core.CoreBPE";
  CoreBPEType.tp_basicsize = sizeof(CoreBPE);
  CoreBPEType.tp_flags = Py_TPFLAGS_DEFAULT;
  CoreBPEType.tp_doc = "Immutable native BPE: vocabulary, decoder and scanner.";
  CoreBPEType.tp_new = PyType_GenericNew;
  CoreBPEType.tp_init = (initproc)CoreBPE_init;
  CoreBPEType.tp_dealloc = (destructor)CoreBPE_dealloc;
  CoreBPEType.tp_methods = CoreBPE_methods;
  if (PyType_Ready(&CoreBPEType) < 0) return nullptr;
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return nullptr;
  Py_INCREF(&CoreBPEType);
  if (PyModule_AddObject(m, "CoreBPE", (PyObject*)&CoreBPEType) < 0) {
    Py_DECREF(&CoreBPEType);
    Py_DECREF(m);
    return nullptr;
  }
  if (tf_spm_py::add_types(m) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  PyModule_AddStringConstant(m, "UNICODE_SOURCE", tf_ucd::SOURCE);
  return m;
}
