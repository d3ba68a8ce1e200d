// The CPython binding of tokenforge's native core: the one file that includes Python.h
// (the role of tiktoken's py.rs).
//
// Everything Python happens here: argument parsing, conversion of Python objects to
// bytes, code points and integer ids, building results, releasing the GIL around every
// hot loop, and turning C++ exceptions into Python ones (std::bad_alloc -> MemoryError,
// std::invalid_argument / a NaN -> ValueError, overflow -> OverflowError, tf::FormatError
// -> tokenforge.errors.FileFormatError), so no exception crosses into CPython and the
// process is never aborted. The algorithms are plain C++ units (see setup.py); policy
// (special tokens, custom patterns, files) stays in Python.
//
// Types: CoreBPE (byte-level BPE, core_bpe.h), SpmNormalizer (spm_normalizer.h), SpmBPE
// (spm_bpe.h), SpmUnigram (unigram.h). Module functions: the trainers (bpe_train.h,
// unigram_train.h, spm_bpe_train.h, wordpiece_train.h), parse_ranks (ranks.h), jsonl_field
// (jsonl.h), class_table (scan.h).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backtrack.h"
#include "bpe.h"
#include "bpe_train.h"
#include "common.h"
#include "core_bpe.h"
#include "jsonl.h"
#include "ranks.h"
#include "scan.h"
#include "spm_bpe.h"
#include "spm_bpe_train.h"
#include "spm_normalizer.h"
#include "unigram.h"
#include "unigram_train.h"
#include "wordpiece.h"
#include "wordpiece_train.h"

namespace {

using tf::Pattern;
using tf::U32;
using tf::LazyBacktracker;
using tf::PieceCache;
using tf::Vocab;

// Runs work(k) on `threads` threads: this one as k = 0 and threads - 1 new ones. If a thread
// cannot be started, the ones running do the rest: work pulls its items from a shared counter.
// The caller releases the GIL around it when work does not touch Python objects.
template <class F>
void run_on_threads(size_t threads, F&& work) {
  std::vector<std::thread> pool;
  try {
    pool.reserve(threads > 1 ? threads - 1 : 0);
    for (size_t k = 1; k < threads; ++k) pool.emplace_back(work, k);
  } catch (...) {
    // could not start a thread: the threads already started and this one do all the work
  }
  work(0);
  for (auto& th : pool) th.join();
}

// ---------------------------------------------------------------------------------------
// Conversions shared by every function

// The code points of a str (the caller checked PyUnicode_Check) into out; no Python code runs.
template <class C>
bool code_points_of(PyObject* s, C& out) {
  if (PyUnicode_READY(s) < 0) return false;
  const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  out.resize((size_t)n);
  const void* data = PyUnicode_DATA(s);
  using T = typename C::value_type;
  switch (PyUnicode_KIND(s)) {
    case PyUnicode_1BYTE_KIND: {
      const Py_UCS1* q = (const Py_UCS1*)data;
      for (Py_ssize_t k = 0; k < n; ++k) out[(size_t)k] = (T)q[k];
      break;
    }
    case PyUnicode_2BYTE_KIND: {
      const Py_UCS2* q = (const Py_UCS2*)data;
      for (Py_ssize_t k = 0; k < n; ++k) out[(size_t)k] = (T)q[k];
      break;
    }
    default:
      if (n) std::memcpy(&out[0], data, (size_t)n * 4);
  }
  return true;
}

// The code points of a str; TypeError "expected str, got <type>" for anything else.
bool u32_of(PyObject* s, std::vector<uint32_t>& out) {
  if (!PyUnicode_Check(s)) {
    PyErr_Format(PyExc_TypeError, "expected str, got %.100s", Py_TYPE(s)->tp_name);
    return false;
  }
  return code_points_of(s, out);
}

// The code points of a str; TypeError "expected str" for anything else (the unigram_* functions).
bool utf32_of(PyObject* s, std::vector<uint32_t>& out) {
  if (!PyUnicode_Check(s)) {
    PyErr_SetString(PyExc_TypeError, "expected str");
    return false;
  }
  return code_points_of(s, out);
}

// all code points of a str (the caller checked PyUnicode_Check)
bool code_points(PyObject* s, std::u32string& out) { return code_points_of(s, out); }

// Numbers read without running Python code: PyLong_AsLongLong / PyFloat_AsDouble call __index__ /
// __float__ of other objects, which may mutate the list being read while its size and borrowed
// items are cached by the caller (out-of-bounds reads and use-after-free, found by fuzz_*_hostile).
// int (and subclasses: read directly), else TypeError "<what>, got <type>".
bool as_i64(PyObject* o, long long& out, const char* what) {
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s, got %.100s", what, Py_TYPE(o)->tp_name);
    return false;
  }
  out = PyLong_AsLongLong(o);
  return !(out == -1 && PyErr_Occurred());
}

// ---------------------------------------------------------------------------------------
// CoreBPE

//: Pieces at least this long (bytes) are merged with the GIL released (encode_piece, merge_with).
constexpr size_t RELEASE_GIL_AT_BYTES = 4096;

struct CoreBPE {
  PyObject_HEAD
  Vocab* vocab;
  LazyBacktracker* lazy;
  std::vector<std::string>* decoder;  // id -> bytes ("" = no token)
  std::vector<uint8_t>* has_id;
  int pattern;
  std::vector<PyObject*>* ints;  // id -> a shared int object, so lists are built without allocating
  tf::PairMerges* pairs;  // merge by priority (HF's BPE) instead of rank; nullptr: by rank
  bool whole;             // a piece that is a token is that token (by rank always; HF's ignore_merges)
};

// A list of ids. Every id below the decoder size reuses one int object per id (made on
// first use, under the GIL): building the list is then an INCREF per token instead of an
// allocation, which is most of what a list output costs.
PyObject* list_of_ids(CoreBPE* self, const uint32_t* ids, size_t n) {
  std::vector<PyObject*>& cache = *self->ints;
  if (cache.empty()) cache.assign(self->decoder->size(), nullptr);
  PyObject* list = PyList_New((Py_ssize_t)n);
  if (!list) return nullptr;
  for (size_t k = 0; k < n; ++k) {
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

PyObject* list_of_ids(CoreBPE* self, const std::vector<uint32_t>& ids) {
  return list_of_ids(self, ids.data(), ids.size());
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
  static const char* kwlist[] = {"ranks", "decoder", "pattern", "merges", "ignore_merges", nullptr};
  PyObject *ranks, *decoder, *merges = Py_None;
  int pattern, ignore_merges = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!i|Op", (char**)kwlist, &PyDict_Type, &ranks, &PyDict_Type,
                                   &decoder, &pattern, &merges, &ignore_merges))
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
    tf::PairMerges* pm = nullptr;
    if (merges != Py_None) {  // (left, right, result) ids, merge k at position k
      for (unsigned b = 0; b < 256; ++b)
        if (v->byte_rank((uint8_t)b) == Vocab::NONE) {
          delete v; delete dec; delete has;
          PyErr_Format(PyExc_ValueError, "merging by priority needs every single byte as a token; 0x%02X is not", b);
          return -1;
        }
      PyObject* seq = PySequence_Fast(merges, "merges must be a sequence of (left, right, result) id triples");
      if (!seq) { delete v; delete dec; delete has; return -1; }
      pm = new tf::PairMerges();
      Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
      for (Py_ssize_t k = 0; k < count; ++k) {
        unsigned long a, b, r;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "kkk", &a, &b, &r) || a >= dec->size() ||
            b >= dec->size() || r >= dec->size() || !(*has)[r] || k >= 0xFFFFFFFFl) {
          if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "merge %zd names an id that is not a token", k);
          Py_DECREF(seq);
          delete v; delete dec; delete has; delete pm;
          return -1;
        }
        pm->add((uint32_t)a, (uint32_t)b, (uint32_t)k, (uint32_t)r);
      }
      Py_DECREF(seq);
      pm->finish(*v);
    }
    self->pairs = pm;
    self->whole = pm == nullptr || ignore_merges != 0;
    self->vocab = v;
    self->ints = new std::vector<PyObject*>();
    self->lazy = new LazyBacktracker();
    self->decoder = dec;
    self->has_id = has;
    self->pattern = pattern;
  } catch (const std::exception&) {
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
  delete self->pairs;
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
    tf::encode_text(*self->vocab, *self->lazy, (Pattern)self->pattern, (const uint8_t*)s, (size_t)n, out,
                    tf::thread_piece_cache(*self->lazy), self->pairs, self->whole);
  } catch (const std::exception&) {
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

//: Batches with fewer ids than this build their lists with the GIL held, on this thread.
constexpr size_t PARALLEL_LISTS_AT_IDS = 1 << 16;

// The ids of a batch: every worker thread appends the ids of the documents it takes to a
// buffer of its own, and document k is ids(k)[0:size(k)] in the buffer of the worker that
// encoded it. (One std::vector per document, as before, made the two threads write the
// end pointers of neighbouring vector headers, on one cache line, at every token, and grew
// thousands of small vectors through malloc on both threads.)
struct BatchIds {
  struct Span {
    size_t off = 0, len = 0;
    uint32_t worker = 0;
  };
  std::vector<std::vector<uint32_t>> bufs;  // one per worker
  std::vector<Span> spans;                  // one per document
  size_t total = 0;
  // With counting on: counts[w][id] = how often worker w emitted id (for lists built off the
  // GIL); all_counted is false when an id was past the counted range.
  size_t count_below = 0;
  std::vector<std::vector<uint32_t>> counts;
  bool all_counted = true;
  const uint32_t* ids(size_t k) const { return bufs[spans[k].worker].data() + spans[k].off; }
  size_t size(size_t k) const { return spans[k].len; }
};

// Encodes a list of str on up to num_threads threads (GIL released) into out.
// Returns false with a Python error set on failure.
bool encode_many(CoreBPE* self, PyObject* texts, int num_threads, BatchIds& out) {
  if (!need_scanner(self)) return false;
  Py_ssize_t count = PyList_GET_SIZE(texts);
  std::vector<PyObject*> keep;
  std::vector<std::pair<const char*, size_t>> items((size_t)count);
  keep.reserve((size_t)count);
  size_t bytes = 0;
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
    bytes += (size_t)n;
  }
  size_t threads = (size_t)(num_threads < 1 ? 1 : num_threads);
  if (threads > items.size()) threads = items.size() ? items.size() : 1;
  // too few ids to pay for zeroing a count per vocabulary entry
  if (threads < 2 || bytes < 4 * PARALLEL_LISTS_AT_IDS) out.count_below = 0;
  bool oom = false;
  try {
    out.spans.assign(items.size(), {});
    out.bufs.assign(threads, {});
    if (out.count_below) out.counts.assign(threads, {});
  } catch (const std::exception&) {
    oom = true;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{oom};
  std::atomic<bool> failed_count{false};
  const Vocab& v = *self->vocab;
  LazyBacktracker& lazy = *self->lazy;
  Pattern pat = (Pattern)self->pattern;
  const tf::PairMerges* pairs = self->pairs;
  const bool whole = self->whole;
  auto work = [&](uint32_t me) {
    try {
      // Local until the end: no other thread touches this vector's header meanwhile.
      std::vector<uint32_t> buf;
      buf.reserve(bytes / threads / 4 + 64);  // ~4 bytes a token in English, more in CJK
      PieceCache& cache = tf::thread_piece_cache(lazy);
      for (;;) {
        size_t k = next.fetch_add(1, std::memory_order_relaxed);
        if (k >= items.size() || failed.load(std::memory_order_relaxed)) break;
        size_t before = buf.size();
        tf::encode_text(v, lazy, pat, (const uint8_t*)items[k].first, items[k].second, buf, cache, pairs, whole);
        out.spans[k] = {before, buf.size() - before, me};
      }
      if (out.count_below) {
        // counted here, in parallel, so that the GIL-held part is per distinct id, not per token
        // (out of memory here only means the lists are built the serial way)
        try {
          std::vector<uint32_t> counts(out.count_below, 0);
          bool all = true;
          for (uint32_t id : buf) {
            if (id < out.count_below) ++counts[id];
            else all = false;
          }
          if (!all) failed_count = true;
          out.counts[me] = std::move(counts);
        } catch (const std::exception&) {
          failed_count = true;
        }
      }
      out.bufs[me] = std::move(buf);
    } catch (const std::exception&) {
      failed = true;
    }
  };
  if (!oom) {
    Py_BEGIN_ALLOW_THREADS
    run_on_threads(threads, [&](size_t k) { work((uint32_t)k); });
    Py_END_ALLOW_THREADS
  }
  for (PyObject* o : keep) Py_DECREF(o);
  if (failed) {
    out = BatchIds();
    PyErr_NoMemory();
    return false;
  }
  for (auto& b : out.bufs) out.total += b.size();
  out.all_counted = !failed_count;
  return true;
}

// The lists of a batch whose ids were counted (encode_many with count_below = size of the
// int cache). Under the GIL: one int object per distinct id made, its reference count raised
// by its number of uses at once, and every list allocated (untracked by the garbage collector,
// which must not see it half filled). Then, GIL released, the workers fill the item arrays,
// which are not shared with anything yet; back under the GIL the lists are tracked again.
// Building lists on one thread with the GIL held was about a fifth of a one-thread batch of
// English, and all of it serial.
PyObject* lists_of_batch(CoreBPE* self, const BatchIds& out, size_t threads) {
  std::vector<PyObject*>& cache = *self->ints;
  const size_t docs = out.spans.size();
  PyObject* result = PyList_New((Py_ssize_t)docs);
  if (!result) return nullptr;
  for (size_t k = 0; k < docs; ++k) {
    PyObject* l = PyList_New((Py_ssize_t)out.size(k));
    if (!l) { Py_DECREF(result); return nullptr; }
    PyObject_GC_UnTrack(l);
    PyList_SET_ITEM(result, (Py_ssize_t)k, l);
  }
  auto uses = [&](size_t id) {
    size_t n = 0;
    for (const auto& c : out.counts) n += c[id];
    return n;
  };
  for (size_t id = 0; id < out.count_below; ++id) {
    if (cache[id] || !uses(id)) continue;
    cache[id] = PyLong_FromSize_t(id);
    if (!cache[id]) { Py_DECREF(result); return nullptr; }
  }
  // (a second pass: nothing can fail once references are added)
  for (size_t id = 0; id < out.count_below; ++id) {
    if (size_t n = uses(id)) Py_SET_REFCNT(cache[id], Py_REFCNT(cache[id]) + (Py_ssize_t)n);  // no-op if immortal
  }
  PyObject* const* ints = cache.data();
  std::atomic<size_t> next{0};
  auto fill = [&] {
    for (;;) {
      size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= docs) break;
      PyObject** items = ((PyListObject*)PyList_GET_ITEM(result, (Py_ssize_t)k))->ob_item;
      const uint32_t* ids = out.ids(k);
      for (size_t j = 0, n = out.size(k); j < n; ++j) items[j] = ints[ids[j]];
    }
  };
  Py_BEGIN_ALLOW_THREADS
  run_on_threads(threads, [&](size_t) { fill(); });
  Py_END_ALLOW_THREADS
  for (size_t k = 0; k < docs; ++k) PyObject_GC_Track(PyList_GET_ITEM(result, (Py_ssize_t)k));
  return result;
}

// encode_ordinary_batch(texts: list[str], num_threads: int) -> list[list[int]]
PyObject* CoreBPE_encode_ordinary_batch(CoreBPE* self, PyObject* args) {
  PyObject* texts;
  int num_threads;
  if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &texts, &num_threads)) return nullptr;
  BatchIds out;
#ifndef Py_GIL_DISABLED
  if (num_threads > 1) {
    if (self->ints->empty()) self->ints->assign(self->decoder->size(), nullptr);
    out.count_below = self->ints->size();
  }
#endif
  if (!encode_many(self, texts, num_threads, out)) return nullptr;
  if (out.count_below && out.all_counted && out.total >= PARALLEL_LISTS_AT_IDS)
    return lists_of_batch(self, out, out.bufs.size());
  PyObject* result = PyList_New((Py_ssize_t)out.spans.size());
  if (!result) return nullptr;
  for (size_t k = 0; k < out.spans.size(); ++k) {
    PyObject* l = list_of_ids(self, out.ids(k), out.size(k));
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
  BatchIds out;
  if (!encode_many(self, texts, num_threads, out)) return nullptr;
  const size_t docs = out.spans.size();
  if (out.total > (size_t)PY_SSIZE_T_MAX / 4 || docs + 1 > (size_t)PY_SSIZE_T_MAX / 8) return PyErr_NoMemory();
  PyObject* ids = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)(out.total * sizeof(uint32_t)));
  PyObject* offs = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)((docs + 1) * sizeof(uint64_t)));
  if (!ids || !offs) { Py_XDECREF(ids); Py_XDECREF(offs); return nullptr; }
  uint32_t* w = (uint32_t*)PyBytes_AS_STRING(ids);
  uint64_t* o = (uint64_t*)PyBytes_AS_STRING(offs);
  // the two bytes objects are not shared yet: a big copy runs without the GIL
  auto fill = [&] {
    size_t pos = 0;
    for (size_t k = 0; k < docs; ++k) {
      o[k] = pos;
      if (out.size(k)) std::memcpy(w + pos, out.ids(k), out.size(k) * sizeof(uint32_t));
      pos += out.size(k);
    }
    o[docs] = pos;
  };
  if (out.total * sizeof(uint32_t) >= RELEASE_GIL_AT_BYTES) {
    Py_BEGIN_ALLOW_THREADS
    fill();
    Py_END_ALLOW_THREADS
  } else {
    fill();
  }
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
  bool oom = false;
  const bool big = (size_t)n >= RELEASE_GIL_AT_BYTES;  // (the bytes object is immutable and referenced)
  PyThreadState* released = big ? PyEval_SaveThread() : nullptr;
  try {
    const uint8_t* p = (const uint8_t*)PyBytes_AS_STRING(arg);
    uint32_t r = self->whole ? self->vocab->rank(p, (size_t)n) : Vocab::NONE;
    if (r != Vocab::NONE) out.push_back(r);
    else tf::merge_piece(*self->vocab, *self->lazy, p, (size_t)n, out, self->pairs);
  } catch (const std::exception&) {
    oom = true;
  }
  if (released) PyEval_RestoreThread(released);
  if (oom) return PyErr_NoMemory();
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
  } catch (const std::exception&) {
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
  bool oom = false;
  // (the buffer stays exported, so its memory stays put while the GIL is released)
  PyThreadState* released = (size_t)piece.len >= RELEASE_GIL_AT_BYTES ? PyEval_SaveThread() : nullptr;
  try {
    if (piece.len > 0) {
      if (method == 1) self->lazy->get(*self->vocab).encode((const uint8_t*)piece.buf, (size_t)piece.len, out);
      else tf::bpe_merge(*self->vocab, (const uint8_t*)piece.buf, (size_t)piece.len, out);
    }
  } catch (const std::exception&) {
    oom = true;
  }
  if (released) PyEval_RestoreThread(released);
  PyBuffer_Release(&piece);
  if (oom) return PyErr_NoMemory();
  return list_from_ids(out);
}

// first_underived_merge(merges: list[tuple[int, int]]) -> int: see tf::first_underived_merge
PyObject* CoreBPE_first_underived_merge(CoreBPE* self, PyObject* arg) {
  if (!ready(self)) return nullptr;
  PyObject* seq = PySequence_Fast(arg, "merges must be a sequence of (left_id, right_id) pairs");
  if (!seq) return nullptr;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  const std::vector<std::string>& dec = *self->decoder;
  try {
    merges.reserve((size_t)n);
    for (Py_ssize_t k = 0; k < n; ++k) {
      unsigned long a, b;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "kk", &a, &b)) { Py_DECREF(seq); return nullptr; }
      if (a >= dec.size() || b >= dec.size() || dec[a].empty() || dec[b].empty()) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "merge %zd names an id that is not a token", k);
        return nullptr;
      }
      merges.emplace_back((uint32_t)a, (uint32_t)b);
    }
  } catch (const std::exception&) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  Py_DECREF(seq);
  long found = -1;
  bool oom = false;
  Py_BEGIN_ALLOW_THREADS
  try {
    found = tf::first_underived_merge(*self->vocab, merges, [&](uint32_t id) -> const std::string& { return dec[id]; });
  } catch (const std::exception&) {
    oom = true;
  }
  Py_END_ALLOW_THREADS
  if (oom) return PyErr_NoMemory();
  return PyLong_FromLong(found);
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
    {"first_underived_merge", (PyCFunction)CoreBPE_first_underived_merge, METH_O,
     "Index of the first merge that merging its token's bytes with the lower ranks does not give, or -1."},
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
  tf::class_table(w);  // (no GIL release: 2 MB of table lookups, as before)
  return out;
}





// Sets FileFormatError (tokenforge.errors) with msg.
inline void set_format_error(const std::string& msg) {
  PyObject* mod = PyImport_ImportModule("tokenforge.errors");
  PyObject* cls = mod ? PyObject_GetAttrString(mod, "FileFormatError") : nullptr;
  Py_XDECREF(mod);
  if (!cls) return;  // the import error stays set
  PyErr_SetString(cls, msg.c_str());
  Py_DECREF(cls);
}

// A tuple of the items of seq (owning them), or nullptr with TypeError(msg).
inline PyObject* as_tuple(PyObject* seq, const char* msg) {
  if (PyTuple_Check(seq)) {
    Py_INCREF(seq);
    return seq;
  }
  if (!PyList_Check(seq)) {
    PyErr_SetString(PyExc_TypeError, msg);
    return nullptr;
  }
  return PyList_AsTuple(seq);
}

inline bool u32_string_of(PyObject* s, U32& out) {
  std::vector<uint32_t> v;
  if (!u32_of(s, v)) return false;
  out.assign((const char32_t*)v.data(), v.size());
  return true;
}

// Runs f() (which may throw SpmError or bad_alloc) with the GIL released when big;
// false with a Python exception set on failure.
template <class F>
bool run_released(bool big, F&& f) {
  std::string err;
  int kind = 0;  // 1 = format error, 2 = out of memory
  auto body = [&] {
    try {
      f();
    } catch (const tf::FormatError& e) {
      kind = 1;
      try { err = e.what(); } catch (...) { kind = 2; }
    } catch (const std::bad_alloc&) {
      kind = 2;
    } catch (const std::length_error&) {
      kind = 3;
    }
  };
  if (big) {
    Py_BEGIN_ALLOW_THREADS
    body();
    Py_END_ALLOW_THREADS
  } else {
    body();
  }
  if (kind == 1) { set_format_error(err); return false; }
  if (kind == 2) { PyErr_NoMemory(); return false; }
  if (kind == 3) { PyErr_SetString(PyExc_OverflowError, "text too long (2**31 code points or more)"); return false; }
  return true;
}

// --- SpmNormalizer ---------------------------------------------------------------------

struct SpmNormalizerObject {
  PyObject_HEAD
  tf::spm::Normalizer* impl;
};

inline int SpmNormalizer_init(SpmNormalizerObject* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"charsmap", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces",
                                 "user_defined", "hf_precompiled", "hf_prepend", "reject", "hf_split", nullptr};
  Py_buffer blob;
  int adp, rew, esc;
  PyObject* udf;
  int hf = 0, hf_prepend = 0, hf_split = 0;
  PyObject* reject = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*pppO|$ppUp", (char**)kwlist, &blob, &adp, &rew, &esc, &udf, &hf,
                                   &hf_prepend, &reject, &hf_split))
    return -1;
  if (self->impl) {  // immutable: a second __init__ changes nothing
    PyBuffer_Release(&blob);
    return 0;
  }
  std::vector<U32> symbols;
  PyObject* seq = as_tuple(udf, "user_defined must be a sequence of str");
  if (!seq) { PyBuffer_Release(&blob); return -1; }
  bool ok = true;
  try {
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(seq) && ok; ++k) {
      U32 s;
      ok = u32_string_of(PySequence_Fast_GET_ITEM(seq, k), s);
      if (ok && s.empty()) {
        PyErr_SetString(PyExc_ValueError, "user-defined symbols must be non-empty strings");
        ok = false;
      }
      if (ok) symbols.push_back(std::move(s));
    }
  } catch (const std::exception&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_DECREF(seq);
  U32 reject_text;
  if (ok && reject) {
    try {
      ok = u32_string_of(reject, reject_text);
    } catch (const std::exception&) {
      PyErr_NoMemory();
      ok = false;
    }
  }
  if (ok && hf_split && !(hf && esc)) {
    PyErr_SetString(PyExc_ValueError, "hf_split: needs hf_precompiled and escape_whitespaces");
    ok = false;
  }
  if (ok && hf && (adp || rew || !symbols.empty())) {
    PyErr_SetString(PyExc_ValueError,
                    "hf_precompiled: the Precompiled normalizer takes no dummy prefix, white-space removal or "
                    "user-defined symbols");
    ok = false;
  }
  if (!ok) { PyBuffer_Release(&blob); return -1; }
  tf::spm::Normalizer* impl = nullptr;
  bool done = run_released(false, [&] {
    std::unique_ptr<tf::spm::Normalizer> made(new tf::spm::Normalizer(
        (const uint8_t*)blob.buf, (size_t)blob.len, adp != 0, rew != 0, esc != 0, std::move(symbols)));
    if (hf) made->set_hf(hf_prepend != 0, std::move(reject_text), hf_split != 0);
    impl = made.release();
  });
  PyBuffer_Release(&blob);
  if (!done) return -1;
  self->impl = impl;
  return 0;
}

inline void SpmNormalizer_dealloc(SpmNormalizerObject* self) {
  delete self->impl;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

inline bool normalizer_ready(SpmNormalizerObject* self) {
  if (!self->impl) {
    PyErr_SetString(PyExc_ValueError, "SpmNormalizer is not initialised");
    return false;
  }
  return true;
}

// normalize(text: str) -> str
inline PyObject* SpmNormalizer_normalize(SpmNormalizerObject* self, PyObject* arg) {
  if (!normalizer_ready(self)) return nullptr;
  std::vector<uint32_t> text;
  U32 out;
  try {
    if (!u32_of(arg, text)) return nullptr;
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  const tf::spm::Normalizer& impl = *self->impl;
  if (!run_released(text.size() >= tf::spm::RELEASE_GIL_AT, [&] { impl.normalize(text.data(), text.size(), out); }))
    return nullptr;
  return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out.data(), (Py_ssize_t)out.size());
}

// normalize_spans(text: str) -> (str, bytes): the normalized text and, per output character,
// the input range it came from as two uint32 (start, end) in native byte order.
inline PyObject* SpmNormalizer_normalize_spans(SpmNormalizerObject* self, PyObject* arg) {
  if (!normalizer_ready(self)) return nullptr;
  std::vector<uint32_t> text, spans;
  U32 out;
  try {
    if (!u32_of(arg, text)) return nullptr;
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  if (text.size() >= UINT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "normalize_spans: text too long");
    return nullptr;
  }
  const tf::spm::Normalizer& impl = *self->impl;
  if (!run_released(text.size() >= tf::spm::RELEASE_GIL_AT,
                    [&] { impl.normalize(text.data(), text.size(), out, &spans); }))
    return nullptr;
  PyObject* s = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out.data(), (Py_ssize_t)out.size());
  if (!s) return nullptr;
  PyObject* b = PyBytes_FromStringAndSize((const char*)spans.data(), (Py_ssize_t)(spans.size() * sizeof(uint32_t)));
  if (!b) { Py_DECREF(s); return nullptr; }
  return Py_BuildValue("(NN)", s, b);
}

// A dict {word: count} of a first-seen-order table, or nullptr with an exception set.
inline PyObject* word_dict(const tf::spm::WordTable& table) {
  PyObject* d = PyDict_New();
  if (!d) return nullptr;
  for (size_t k = 0; k < table.size(); ++k) {
    PyObject* key = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, table.key(k), (Py_ssize_t)table.length(k));
    PyObject* val = key ? PyLong_FromUnsignedLongLong(table.count(k)) : nullptr;
    if (!val || PyDict_SetItem(d, key, val) < 0) {
      Py_XDECREF(key);
      Py_XDECREF(val);
      Py_DECREF(d);
      return nullptr;
    }
    Py_DECREF(key);
    Py_DECREF(val);
  }
  return d;
}

inline PyMethodDef SpmNormalizer_methods[] = {
    {"normalize", (PyCFunction)SpmNormalizer_normalize, METH_O, "sentencepiece's normalization of a str."},
    {"normalize_spans", (PyCFunction)SpmNormalizer_normalize_spans, METH_O,
     "sentencepiece's normalization of a str, with the input range of each output character."},
    {nullptr, nullptr, 0, nullptr},
};

inline PyTypeObject SpmNormalizerType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- WordCounter: the SentencePiece trainers' word counts (spm::WordCounts) -------------------

// A mutable native table owned by a Python object, unlike the other types: `lock` keeps two
// threads from using one table at once (its methods count with the GIL released).
template <class Impl>
struct LockedObject {
  PyObject_HEAD
  Impl* impl;
  std::mutex* lock;
};

template <class Impl>
PyObject* LockedObject_new(PyTypeObject* type, PyObject*, PyObject*) {
  auto* self = (LockedObject<Impl>*)type->tp_alloc(type, 0);
  if (!self) return nullptr;
  self->impl = new (std::nothrow) Impl();
  self->lock = new (std::nothrow) std::mutex();
  if (!self->impl || !self->lock) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject*)self;
}

template <class Impl>
void LockedObject_dealloc(LockedObject<Impl>* self) {
  delete self->impl;
  delete self->lock;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

// merge(packed: bytes) of a locked table: merge(p, n) -> bool runs under the lock; false
// (bytes its pack() cannot have written) is a ValueError naming `type`.
template <class Impl, class Merge>
PyObject* LockedObject_merge(LockedObject<Impl>* self, PyObject* arg, const char* type, Merge merge) {
  Py_buffer buf;
  if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return nullptr;
  bool ok = false;
  bool oom = false;
  {
    std::lock_guard<std::mutex> hold(*self->lock);
    try {
      ok = merge((const uint8_t*)buf.buf, (size_t)buf.len);
    } catch (const std::exception&) {
      oom = true;
    }
  }
  PyBuffer_Release(&buf);
  if (oom) return PyErr_NoMemory();
  if (!ok) return PyErr_Format(PyExc_ValueError, "%s.merge: not the bytes of %s.pack()", type, type);
  Py_RETURN_NONE;
}

using WordCounterObject = LockedObject<tf::spm::WordCounts>;

// add_lines(normalizer, lines: list[str], max_line_bytes: int, line_ends: bool) -> int:
// spm::count_words over the lines, into this table; returns how many lines were skipped.
inline PyObject* WordCounter_add_lines(WordCounterObject* self, PyObject* args) {
  PyObject *norm, *lines;
  long long max_bytes;
  int want_ends;
  if (!PyArg_ParseTuple(args, "O!O!Lp", &SpmNormalizerType, &norm, &PyList_Type, &lines, &max_bytes, &want_ends))
    return nullptr;
  auto* ns = (SpmNormalizerObject*)norm;
  if (!normalizer_ready(ns)) return nullptr;
  if (max_bytes < 0) {
    PyErr_SetString(PyExc_ValueError, "add_lines: max_line_bytes must be >= 0 (0: no limit)");
    return nullptr;
  }
  std::vector<uint32_t> text, one;
  std::vector<size_t> bounds;
  try {
    // read whole before the GIL is released (no Python code runs while reading it)
    bounds.push_back(0);
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(lines); ++k) {
      if (!u32_of(PyList_GET_ITEM(lines, k), one)) return nullptr;
      text.insert(text.end(), one.begin(), one.end());
      bounds.push_back(text.size());
    }
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  tf::spm::WordCounts& counts = *self->impl;
  uint64_t skipped = 0;
  if (!run_released(true, [&] {
        std::lock_guard<std::mutex> hold(*self->lock);
        const uint64_t before = counts.skipped;
        tf::spm::count_words(*ns->impl, text.data(), bounds, (size_t)max_bytes, want_ends != 0, counts);
        skipped = counts.skipped - before;
      }))
    return nullptr;
  return PyLong_FromUnsignedLongLong(skipped);
}

// pack() -> bytes: both tables, for merge() in another process.
inline PyObject* WordCounter_pack(WordCounterObject* self, PyObject*) {
  std::string out;
  std::lock_guard<std::mutex> hold(*self->lock);
  try {
    std::string words;
    self->impl->words.pack(words);
    const uint64_t n = words.size();
    out.append((const char*)&n, sizeof n);
    out += words;
    self->impl->ends.pack(out);
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  return PyBytes_FromStringAndSize(out.data(), (Py_ssize_t)out.size());
}

// merge(packed: bytes) -> None: adds the counts of another counter's pack().
inline PyObject* WordCounter_merge(WordCounterObject* self, PyObject* arg) {
  tf::spm::WordCounts& counts = *self->impl;
  return LockedObject_merge(self, arg, "WordCounter", [&](const uint8_t* p, size_t n) {
    uint64_t nw = 0;  // the words' part, then the line ends'
    if (n < sizeof nw) return false;
    std::memcpy(&nw, p, sizeof nw);
    return nw <= n - sizeof nw && counts.words.merge_packed(p + sizeof nw, (size_t)nw) &&
           counts.ends.merge_packed(p + sizeof nw + nw, n - sizeof nw - (size_t)nw);
  });
}

// to_dicts() -> (dict[str, int], dict[str, int]): every word, and the last word of each line,
// with their counts, first seen first.
inline PyObject* WordCounter_to_dicts(WordCounterObject* self, PyObject*) {
  std::lock_guard<std::mutex> hold(*self->lock);
  PyObject* words = word_dict(self->impl->words);
  if (!words) return nullptr;
  PyObject* ends = word_dict(self->impl->ends);
  if (!ends) { Py_DECREF(words); return nullptr; }
  return Py_BuildValue("(NN)", words, ends);
}

inline Py_ssize_t WordCounter_len(WordCounterObject* self) {
  std::lock_guard<std::mutex> hold(*self->lock);
  return (Py_ssize_t)self->impl->words.size();
}

inline PyMethodDef WordCounter_methods[] = {
    {"add_lines", (PyCFunction)WordCounter_add_lines, METH_VARARGS,
     "add_lines(normalizer, lines, max_line_bytes, line_ends): count the U+2581-words of the normalized lines "
     "(and, with line_ends, the last word of each line); lines over max_line_bytes UTF-8 bytes (0: no limit) "
     "are skipped; returns how many were."},
    {"pack", (PyCFunction)WordCounter_pack, METH_NOARGS, "The counts as bytes, for merge()."},
    {"merge", (PyCFunction)WordCounter_merge, METH_O, "Add the counts of another counter's pack()."},
    {"to_dicts", (PyCFunction)WordCounter_to_dicts, METH_NOARGS,
     "(words, line ends): dicts of counts, first seen first."},
    {nullptr, nullptr, 0, nullptr},
};

inline PySequenceMethods WordCounter_as_sequence = {};
inline PyTypeObject WordCounterType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- PieceCounter: byte-level BPE training's pre-token counts (bpe_train::PieceTable) --------

// The UTF-8 bytes of each str of a list; false with a Python exception set on failure.
inline bool utf8_items(PyObject* list, std::vector<std::pair<const char*, size_t>>& items) {
  const Py_ssize_t n = PyList_GET_SIZE(list);
  items.resize((size_t)n);
  for (Py_ssize_t k = 0; k < n; ++k) {
    Py_ssize_t len;
    const char* s = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(list, k), &len);
    if (!s) return false;
    items[(size_t)k] = {s, (size_t)len};
  }
  return true;
}

// dict[bytes, int] of a table, first seen first.
inline PyObject* piece_dict(const tf::bpe_train::PieceTable& table) {
  PyObject* d = PyDict_New();
  if (!d) return nullptr;
  for (size_t k = 0; k < table.size(); ++k) {
    PyObject* key = PyBytes_FromStringAndSize((const char*)table.key(k), (Py_ssize_t)table.length(k));
    PyObject* val = key ? PyLong_FromUnsignedLongLong(table.count(k)) : nullptr;
    if (!val || PyDict_SetItem(d, key, val) < 0) {
      Py_XDECREF(key);
      Py_XDECREF(val);
      Py_DECREF(d);
      return nullptr;
    }
    Py_DECREF(key);
    Py_DECREF(val);
  }
  return d;
}

using PieceCounterObject = LockedObject<tf::bpe_train::PieceTable>;

// add(segments: list[str], pattern: int) -> None: counts the scanner's pieces of each str.
inline PyObject* PieceCounter_add(PieceCounterObject* self, PyObject* args) {
  PyObject* segments;
  int pattern;
  if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &segments, &pattern)) return nullptr;
  if (pattern < 0 || pattern > 4) { PyErr_Format(PyExc_ValueError, "unknown scanner %d", pattern); return nullptr; }
  std::vector<std::pair<const char*, size_t>> items;
  if (!utf8_items(segments, items)) return nullptr;  // the list keeps the str (and their UTF-8) alive
  if (!run_released(true, [&] {
        std::lock_guard<std::mutex> hold(*self->lock);
        tf::bpe_train::count_pieces(items, (Pattern)pattern, *self->impl);
      }))
    return nullptr;
  Py_RETURN_NONE;
}

// pack() -> bytes, for merge() in another process.
inline PyObject* PieceCounter_pack(PieceCounterObject* self, PyObject*) {
  std::string out;
  std::lock_guard<std::mutex> hold(*self->lock);
  try {
    self->impl->pack(out);
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  return PyBytes_FromStringAndSize(out.data(), (Py_ssize_t)out.size());
}

// merge(packed: bytes) -> None: adds the counts of another counter's pack().
inline PyObject* PieceCounter_merge(PieceCounterObject* self, PyObject* arg) {
  tf::bpe_train::PieceTable& table = *self->impl;
  return LockedObject_merge(self, arg, "PieceCounter",
                            [&](const uint8_t* p, size_t n) { return table.merge_packed(p, n); });
}

inline PyObject* PieceCounter_to_dict(PieceCounterObject* self, PyObject*) {
  std::lock_guard<std::mutex> hold(*self->lock);
  return piece_dict(*self->impl);
}

inline Py_ssize_t PieceCounter_len(PieceCounterObject* self) {
  std::lock_guard<std::mutex> hold(*self->lock);
  return (Py_ssize_t)self->impl->size();
}

inline PyMethodDef PieceCounter_methods[] = {
    {"add", (PyCFunction)PieceCounter_add, METH_VARARGS,
     "add(segments, pattern): count the pieces of each str under a native scanner."},
    {"pack", (PyCFunction)PieceCounter_pack, METH_NOARGS, "The counts as bytes, for merge()."},
    {"merge", (PyCFunction)PieceCounter_merge, METH_O, "Add the counts of another counter's pack()."},
    {"to_dict", (PyCFunction)PieceCounter_to_dict, METH_NOARGS, "dict of bytes -> count, first seen first."},
    {nullptr, nullptr, 0, nullptr},
};

inline PySequenceMethods PieceCounter_as_sequence = {};
inline PyTypeObject PieceCounterType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- SpmBPE ----------------------------------------------------------------------------

struct SpmBPEObject {
  PyObject_HEAD
  tf::spm::BPE* impl;
  std::vector<PyObject*>* ints;  // id -> a shared int object
};

inline int SpmBPE_init(SpmBPEObject* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"pieces", "scores", "types", "unk_id", "byte_ids", "merges", "fuse_unk", nullptr};
  PyObject *pieces, *scores, *types, *byte_ids;
  PyObject* merges = Py_None;
  int unk_id;
  int fuse_unk = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOiO|Op", (char**)kwlist, &pieces, &scores, &types, &unk_id, &byte_ids,
                                   &merges, &fuse_unk))
    return -1;
  if (self->impl) return 0;
  std::vector<tf::spm::BPE::HfMerge> hf;
  if (merges != Py_None) {  // HF semantics: merges is a flat sequence of (left, right, rank, new id)
    PyObject* ms = as_tuple(merges, "merges must be None or a sequence of int");
    if (!ms) return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(ms);
    bool good = count % 4 == 0;
    if (!good) PyErr_SetString(PyExc_ValueError, "merges must hold 4 ints per merge");
    try {
      for (Py_ssize_t k = 0; good && k + 3 < count; k += 4) {
        long v[4];
        for (int q = 0; good && q < 4; ++q) {
          v[q] = PyLong_AsLong(PySequence_Fast_GET_ITEM(ms, k + q));
          good = !(v[q] == -1 && PyErr_Occurred());
          if (good && (v[q] < INT32_MIN || v[q] > INT32_MAX)) {
            PyErr_SetString(PyExc_ValueError, "merges: an int is out of range");
            good = false;
          }
        }
        if (good) hf.push_back({(int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3]});
      }
    } catch (const std::exception&) {
      PyErr_NoMemory();
      good = false;
    }
    Py_DECREF(ms);
    if (!good) return -1;
  }
  std::vector<U32> p;
  std::vector<double> s;
  std::vector<int> t;
  std::vector<int32_t> b;
  PyObject *ps = nullptr, *ss = nullptr, *ts = nullptr, *bs = nullptr;
  bool ok = false;
  try {
    ps = as_tuple(pieces, "pieces must be a sequence of str");
    ss = ps ? as_tuple(scores, "scores must be a sequence of float") : nullptr;
    ts = ss ? as_tuple(types, "types must be a sequence of int") : nullptr;
    if (ts && byte_ids != Py_None) bs = as_tuple(byte_ids, "byte_ids must be None or a sequence of int");
    if (ts && (byte_ids == Py_None || bs)) {
      ok = true;
      for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(ps); ++k) {
        U32 x;
        ok = u32_string_of(PySequence_Fast_GET_ITEM(ps, k), x);
        if (ok) p.push_back(std::move(x));
      }
      for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(ss); ++k) {
        double d = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(ss, k));
        ok = !(d == -1.0 && PyErr_Occurred());
        s.push_back(d);
      }
      for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(ts); ++k) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(ts, k));
        ok = !(v == -1 && PyErr_Occurred());
        t.push_back((int)v);
      }
      for (Py_ssize_t k = 0; ok && bs && k < PySequence_Fast_GET_SIZE(bs); ++k) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(bs, k));
        ok = !(v == -1 && PyErr_Occurred());
        b.push_back((int32_t)v);
      }
    }
  } catch (const std::exception&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_XDECREF(ps);
  Py_XDECREF(ss);
  Py_XDECREF(ts);
  Py_XDECREF(bs);
  if (!ok) return -1;
  tf::spm::BPE* impl = nullptr;
  std::string err;
  try {
    if (merges != Py_None)
      impl = new tf::spm::BPE(std::move(p), hf, unk_id, std::move(b), fuse_unk != 0);
    else
      impl = new tf::spm::BPE(std::move(p), std::move(s), std::move(t), unk_id, std::move(b));
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
    return -1;
  } catch (const std::exception&) {
    PyErr_NoMemory();
    return -1;
  }
  self->impl = impl;
  self->ints = new (std::nothrow) std::vector<PyObject*>();
  if (!self->ints) { PyErr_NoMemory(); return -1; }
  return 0;
}

inline void SpmBPE_dealloc(SpmBPEObject* self) {
  if (self->ints) {
    for (PyObject* o : *self->ints) Py_XDECREF(o);
    delete self->ints;
  }
  delete self->impl;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

inline bool run_bpe(SpmBPEObject* self, PyObject* arg, std::vector<tf::Token>& out) {
  if (!self->impl) {
    PyErr_SetString(PyExc_ValueError, "SpmBPE is not initialised");
    return false;
  }
  std::vector<uint32_t> text;
  try {
    if (!u32_of(arg, text)) return false;
  } catch (const std::exception&) {
    PyErr_NoMemory();
    return false;
  }
  const tf::spm::BPE& impl = *self->impl;
  return run_released(text.size() >= tf::spm::RELEASE_GIL_AT, [&] { impl.tokenize(text.data(), text.size(), out); });
}

// A list of ids, one shared int object per id (as CoreBPE's list_of_ids).
inline PyObject* SpmBPE_list_of_ids(SpmBPEObject* self, const std::vector<tf::Token>& toks) {
  std::vector<PyObject*>& cache = *self->ints;
  if (cache.empty()) cache.assign(self->impl->size(), nullptr);
  PyObject* list = PyList_New((Py_ssize_t)toks.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < toks.size(); ++k) {
    size_t id = (size_t)toks[k].id;
    PyObject* o = id < cache.size() ? cache[id] : nullptr;
    if (!o) {
      o = PyLong_FromSize_t(id);
      if (!o) { Py_DECREF(list); return nullptr; }
      if (id < cache.size()) cache[id] = o;
      else { PyList_SET_ITEM(list, (Py_ssize_t)k, o); continue; }
    }
    Py_INCREF(o);
    PyList_SET_ITEM(list, (Py_ssize_t)k, o);
  }
  return list;
}

// encode(text: str) -> list[int]
inline PyObject* SpmBPE_encode(SpmBPEObject* self, PyObject* arg) {
  std::vector<tf::Token> out;
  if (!run_bpe(self, arg, out)) return nullptr;
  return SpmBPE_list_of_ids(self, out);
}

// tokenize(text: str) -> list[tuple[int, int, int]]: (id, start, end) in code points
inline PyObject* SpmBPE_tokenize(SpmBPEObject* self, PyObject* arg) {
  std::vector<tf::Token> out;
  if (!run_bpe(self, arg, out)) return nullptr;
  PyObject* list = PyList_New((Py_ssize_t)out.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < out.size(); ++k) {
    PyObject* t = Py_BuildValue("(iII)", out[k].id, out[k].start, out[k].end);
    if (!t) { Py_DECREF(list); return nullptr; }
    PyList_SET_ITEM(list, (Py_ssize_t)k, t);
  }
  return list;
}

inline PyMethodDef SpmBPE_methods[] = {
    {"encode", (PyCFunction)SpmBPE_encode, METH_O, "Ids of a normalized text (sentencepiece BPE)."},
    {"tokenize", (PyCFunction)SpmBPE_tokenize, METH_O, "(id, start, end) of a normalized text."},
    {nullptr, nullptr, 0, nullptr},
};

inline PyTypeObject SpmBPEType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// spm_bpe_encode(normalizer: SpmNormalizer, model: SpmBPE, text: str) -> list[int]:
// model.encode(normalizer.normalize(text)) without the intermediate str.
inline PyObject* spm_bpe_encode(PyObject*, PyObject* args) {
  PyObject *norm, *bpe, *text;
  if (!PyArg_ParseTuple(args, "O!O!U", &SpmNormalizerType, &norm, &SpmBPEType, &bpe, &text)) return nullptr;
  auto* ns = (SpmNormalizerObject*)norm;
  auto* bs = (SpmBPEObject*)bpe;
  if (!normalizer_ready(ns)) return nullptr;
  if (!bs->impl) {
    PyErr_SetString(PyExc_ValueError, "SpmBPE is not initialised");
    return nullptr;
  }
  std::vector<uint32_t> in;
  try {
    if (!u32_of(text, in)) return nullptr;
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  std::vector<tf::Token> out;
  const tf::spm::Normalizer& n = *ns->impl;
  const tf::spm::BPE& b = *bs->impl;
  if (!run_released(in.size() >= tf::spm::RELEASE_GIL_AT, [&] {
        U32 s;
        n.normalize(in.data(), in.size(), s);
        b.tokenize((const uint32_t*)s.data(), s.size(), out);
      }))
    return nullptr;
  return SpmBPE_list_of_ids(bs, out);
}

// --- SpmUnigram ------------------------------------------------------------------------

struct SpmUnigramObject {
  PyObject_HEAD
  tf::unigram::UnigramLattice* impl;
  int32_t unk_id;                  // -1: none
  std::vector<int32_t>* byte_ids;  // 256 ids (byte fallback) or empty
  uint64_t serial;                 // unique per model for the life of the process (word caches)
};

inline uint64_t next_model_serial() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

// 256 non-negative ids from a sequence (byte_ids), or empty for None.
inline bool byte_ids_of(PyObject* o, std::vector<int32_t>& out) {
  out.clear();
  if (o == Py_None) return true;
  PyObject* seq = as_tuple(o, "byte_ids must be None or a sequence of 256 ints");
  if (!seq) return false;
  bool ok = PyTuple_GET_SIZE(seq) == 256;
  try {
    for (Py_ssize_t k = 0; ok && k < 256; ++k) {
      PyObject* x = PyTuple_GET_ITEM(seq, k);
      long v = PyLong_Check(x) ? PyLong_AsLong(x) : -1;
      ok = !(v == -1 && PyErr_Occurred()) && v >= 0 && v <= INT32_MAX;
      out.push_back((int32_t)v);
    }
  } catch (const std::exception&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_DECREF(seq);
  if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "byte_ids must hold 256 non-negative ids");
  if (!ok) out.clear();
  return ok;
}

// SpmUnigram(pieces: list[str | None], scores: list[float], unk_score: float, float32=True,
//            unk_id=-1, byte_ids=None): pieces[i] None = not in the lattice; float32 chooses the
// arithmetic (UnigramLattice); unk_id (-1: none) and byte_ids (256 ids, byte fallback) are what
// encode/tokenize make of runs of unknown characters (Unigram._finish).
inline int SpmUnigram_init(SpmUnigramObject* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"pieces", "scores", "unk_score", "float32", "unk_id", "byte_ids", nullptr};
  PyObject *pieces, *scores, *byte_ids = Py_None;
  double unk_score;
  int float32 = 1, unk_id = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOd|piO", (char**)kwlist, &pieces, &scores, &unk_score, &float32,
                                   &unk_id, &byte_ids))
    return -1;
  if (self->impl) return 0;
  if (std::isnan(unk_score)) {
    PyErr_SetString(PyExc_ValueError, "SpmUnigram: unk_score is NaN");
    return -1;
  }
  if (unk_id < -1) {
    PyErr_SetString(PyExc_ValueError, "SpmUnigram: unk_id must be an id or -1");
    return -1;
  }
  std::vector<int32_t> bytes;
  if (!byte_ids_of(byte_ids, bytes)) return -1;
  PyObject* ps = as_tuple(pieces, "pieces must be a list of str or None");
  if (!ps) return -1;
  PyObject* ss = as_tuple(scores, "scores must be a list of float");
  if (!ss) { Py_DECREF(ps); return -1; }
  bool ok = PyTuple_GET_SIZE(ps) == PyTuple_GET_SIZE(ss);
  if (!ok) PyErr_SetString(PyExc_ValueError, "SpmUnigram: pieces and scores must have the same length");
  std::vector<U32> p;
  std::vector<double> sc;
  try {
    for (Py_ssize_t k = 0; ok && k < PyTuple_GET_SIZE(ps); ++k) {
      PyObject* o = PyTuple_GET_ITEM(ps, k);
      PyObject* f = PyTuple_GET_ITEM(ss, k);
      if (!PyFloat_Check(f) && !PyLong_Check(f)) {
        PyErr_Format(PyExc_TypeError, "SpmUnigram: score %zd must be a number", k);
        ok = false;
        break;
      }
      double d = PyFloat_Check(f) ? PyFloat_AS_DOUBLE(f) : PyLong_AsDouble(f);
      if (d == -1.0 && PyErr_Occurred()) { ok = false; break; }
      if (std::isnan(d)) {
        PyErr_Format(PyExc_ValueError, "SpmUnigram: score %zd is NaN", k);
        ok = false;
        break;
      }
      sc.push_back(d);
      U32 x;
      if (o != Py_None && !u32_string_of(o, x)) { ok = false; break; }
      p.push_back(std::move(x));
    }
  } catch (const std::exception&) {
    PyErr_NoMemory();
    ok = false;
  }
  Py_DECREF(ps);
  Py_DECREF(ss);
  if (!ok) return -1;
  tf::unigram::UnigramLattice* impl = nullptr;
  std::vector<int32_t>* held = nullptr;
  if (!run_released(false, [&] {
        held = new std::vector<int32_t>(std::move(bytes));
        impl = new tf::unigram::UnigramLattice(p, sc, unk_score, float32 != 0);
      })) {
    delete held;
    return -1;
  }
  self->impl = impl;
  self->serial = next_model_serial();
  self->byte_ids = held;
  self->unk_id = (int32_t)unk_id;
  return 0;
}

inline void SpmUnigram_dealloc(SpmUnigramObject* self) {
  delete self->impl;
  delete self->byte_ids;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

inline const tf::unigram::UnigramLattice* unigram_ready(SpmUnigramObject* self) {
  if (!self->impl) PyErr_SetString(PyExc_ValueError, "SpmUnigram is not initialised");
  return self->impl;
}

// viterbi(text: str) -> (ids, starts): the best path before unknown merging (id -1: unknown character)
inline PyObject* SpmUnigram_viterbi(SpmUnigramObject* self, PyObject* arg) {
  const tf::unigram::UnigramLattice* impl = unigram_ready(self);
  if (!impl) return nullptr;
  std::vector<uint32_t> text;
  std::vector<int32_t> ids;
  std::vector<uint32_t> starts;
  try {
    if (!u32_of(arg, text)) return nullptr;
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  if (!run_released(text.size() >= tf::spm::RELEASE_GIL_AT, [&] {
        if (text.size() > (size_t)INT32_MAX) throw std::length_error("text too long");
        impl->viterbi(text.data(), text.size(), ids, starts);
      }))
    return nullptr;
  PyObject* a = PyList_New((Py_ssize_t)ids.size());
  PyObject* b = PyList_New((Py_ssize_t)starts.size());
  if (!a || !b) { Py_XDECREF(a); Py_XDECREF(b); return nullptr; }
  for (size_t k = 0; k < ids.size(); ++k) {
    PyObject* x = PyLong_FromLong(ids[k]);
    PyObject* y = PyLong_FromUnsignedLong(starts[k]);
    if (!x || !y) { Py_XDECREF(x); Py_XDECREF(y); Py_DECREF(a); Py_DECREF(b); return nullptr; }
    PyList_SET_ITEM(a, (Py_ssize_t)k, x);
    PyList_SET_ITEM(b, (Py_ssize_t)k, y);
  }
  return Py_BuildValue("(NN)", a, b);
}

// Viterbi and unknown merging of t[0:n] (GIL-free), each token to emit(id, start, end); false
// when a run of unknown characters has neither unk_id nor byte_ids.
template <class Emit>
bool unigram_tokens(const SpmUnigramObject* self, const uint32_t* t, size_t n, Emit&& emit) {
  if (n > (size_t)INT32_MAX) throw std::length_error("text too long");
  thread_local std::vector<int32_t> ids;  // reused across calls (emit never re-enters)
  thread_local std::vector<uint32_t> starts;
  self->impl->viterbi(t, n, ids, starts);
  const bool ok = tf::unigram::finish_path(t, n, ids, starts, self->unk_id, *self->byte_ids, emit);
  if (ids.capacity() > (size_t{1} << 16)) {
    std::vector<int32_t>().swap(ids);
    std::vector<uint32_t>().swap(starts);
  }
  return ok;
}

// HF tokenizers' Unigram after Metaspace's split: t[0:n] (normalized, U+2581 for spaces) cut
// before every U+2581 but a leading one, each word's ids (unigram_tokens) passed to emit(id).
// HF runs its lattice on each word; a whole-text lattice cuts there too when no piece holds
// U+2581 after its first character (the plan checks that) but adds each word's scores to
// the path before it, whose rounding can turn a tie. Words of up to kCachedChars characters
// are kept in a per-thread cache (word -> ids, bounded) tied to the model by its serial, so
// repeated words cost a hash lookup.
template <class Emit>
bool unigram_words(const SpmUnigramObject* self, const uint32_t* t, size_t n, Emit&& emit) {
  constexpr size_t kCachedChars = 48;
  struct Cache {  // core_bpe.h's direct-mapped PieceCache, keyed by the word's code points
    uint64_t owner = 0;
    // room for the distinct words of a book's worth of English (keys are UTF-32: 4 bytes a
    // character); at most ~5.5 MB a thread
    PieceCache words{size_t{1} << 16, size_t{1} << 21, size_t{1} << 19};
  };
  thread_local Cache cache;
  thread_local std::vector<uint32_t> ids;
  if (cache.owner != self->serial) {
    cache.words.clear();
    cache.owner = self->serial;
  }
  size_t i = 0;
  while (i < n) {
    size_t j = i + 1;
    while (j < n && t[j] != 0x2581) ++j;
    const size_t len = j - i;
    if (len > kCachedChars) {
      if (!unigram_tokens(self, t + i, len, [&](int32_t id, uint32_t, uint32_t) { emit(id); })) return false;
      i = j;
      continue;
    }
    const uint8_t* key = (const uint8_t*)(t + i);
    const uint64_t h = tf::hash_bytes(key, len * 4);
    ids.clear();
    if (!cache.words.get(key, len * 4, h, ids)) {
      if (!unigram_tokens(self, t + i, len, [&](int32_t id, uint32_t, uint32_t) { ids.push_back((uint32_t)id); }))
        return false;
      cache.words.put(key, len * 4, h, ids.data(), ids.size());
    }
    for (uint32_t id : ids) emit((int32_t)id);
    i = j;
  }
  return true;
}

// The tokens of text (a str) to emit; covered = false when unknown characters are left uncovered.
template <class Emit>
bool run_unigram(SpmUnigramObject* self, PyObject* arg, bool& covered, Emit&& emit) {
  if (!unigram_ready(self)) return false;
  std::vector<uint32_t> text;
  try {
    if (!u32_of(arg, text)) return false;
  } catch (const std::exception&) {
    PyErr_NoMemory();
    return false;
  }
  return run_released(text.size() >= tf::spm::RELEASE_GIL_AT,
                      [&] { covered = unigram_tokens(self, text.data(), text.size(), emit); });
}

// A list of non-negative ids; ids below 2^20 reuse one int object each, kept for the life
// of the process (made on first use, with the GIL held), so a list costs an INCREF per id.
inline std::vector<PyObject*>& shared_ints() {
  static std::vector<PyObject*> cache;
  return cache;
}

template <class T>
inline PyObject* list_of_shared_ints(const T* ids, size_t n) {
  std::vector<PyObject*>& cache = shared_ints();
  constexpr size_t kMax = 1 << 20;
  PyObject* list = PyList_New((Py_ssize_t)n);
  if (!list) return nullptr;
  for (size_t k = 0; k < n; ++k) {
    size_t id = (size_t)ids[k];
    PyObject* o = nullptr;
    if (id < kMax) {
      if (id >= cache.size()) {
        try {
          cache.resize(id + 1 > 2 * cache.size() ? id + 1 : (2 * cache.size() < kMax ? 2 * cache.size() : kMax), nullptr);
        } catch (const std::exception&) {
          Py_DECREF(list);
          return PyErr_NoMemory();
        }
      }
      o = cache[id];
      if (!o) {
        o = PyLong_FromSize_t(id);
        if (!o) { Py_DECREF(list); return nullptr; }
        cache[id] = o;
      }
      Py_INCREF(o);
    } else {
      o = PyLong_FromSize_t(id);
      if (!o) { Py_DECREF(list); return nullptr; }
    }
    PyList_SET_ITEM(list, (Py_ssize_t)k, o);
  }
  return list;
}

inline PyObject* list_of_shared_ints(const std::vector<int32_t>& ids) { return list_of_shared_ints(ids.data(), ids.size()); }

// encode(text: str) -> list[int] | None: ids of the best segmentation (Unigram.encode_piece);
// None when a run of unknown characters has neither unk_id nor byte_ids (the caller raises).
inline PyObject* SpmUnigram_encode(SpmUnigramObject* self, PyObject* arg) {
  std::vector<int32_t> ids;
  bool covered = true;
  if (!run_unigram(self, arg, covered, [&](int32_t id, uint32_t, uint32_t) { ids.push_back(id); })) return nullptr;
  if (!covered) Py_RETURN_NONE;
  return list_of_shared_ints(ids);
}

// tokenize(text: str) -> list[(id, start, end)] | None: as encode, with code-point spans (Unigram.tokenize)
inline PyObject* SpmUnigram_tokenize(SpmUnigramObject* self, PyObject* arg) {
  std::vector<tf::Token> out;
  bool covered = true;
  if (!run_unigram(self, arg, covered, [&](int32_t id, uint32_t a, uint32_t b) { out.push_back(tf::Token{id, a, b}); }))
    return nullptr;
  if (!covered) Py_RETURN_NONE;
  PyObject* list = PyList_New((Py_ssize_t)out.size());
  if (!list) return nullptr;
  for (size_t k = 0; k < out.size(); ++k) {
    PyObject* t = Py_BuildValue("(iII)", out[k].id, out[k].start, out[k].end);
    if (!t) { Py_DECREF(list); return nullptr; }
    PyList_SET_ITEM(list, (Py_ssize_t)k, t);
  }
  return list;
}

inline PyObject* SpmUnigram_float32(SpmUnigramObject* self, void*) {
  if (!unigram_ready(self)) return nullptr;
  return PyBool_FromLong(self->impl->float32());
}

inline PyMethodDef SpmUnigram_methods[] = {
    {"viterbi", (PyCFunction)SpmUnigram_viterbi, METH_O, "Best path: (ids, starts); id -1 = unknown character."},
    {"encode", (PyCFunction)SpmUnigram_encode, METH_O, "Ids of the best segmentation, unknown runs merged (None: uncovered)."},
    {"tokenize", (PyCFunction)SpmUnigram_tokenize, METH_O, "(id, start, end) of the best segmentation (None: uncovered)."},
    {nullptr, nullptr, 0, nullptr},
};

inline PyGetSetDef SpmUnigram_getset[] = {
    {"float32", (getter)SpmUnigram_float32, nullptr, "True: sentencepiece's float32 arithmetic; False: doubles (HF).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

inline PyTypeObject SpmUnigramType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- Unigram, fused with the normalizer -----------------------------------------------

// spm_unigram_encode(normalizer: SpmNormalizer, model: SpmUnigram, text: str) -> list[int] | None
// The ids of sentencepiece's Unigram encoding of text in one call: normalization, then
// SpmUnigram.encode of the normalized text. None when a run of unknown characters is left
// uncovered (the caller raises as the Python path does).
inline PyObject* spm_unigram_encode(PyObject*, PyObject* args) {
  PyObject *norm, *cap, *text;
  if (!PyArg_ParseTuple(args, "O!O!U", &SpmNormalizerType, &norm, &SpmUnigramType, &cap, &text)) return nullptr;
  auto* self = (SpmNormalizerObject*)norm;
  if (!normalizer_ready(self)) return nullptr;
  auto* model = (SpmUnigramObject*)cap;
  if (!unigram_ready(model)) return nullptr;
  std::vector<uint32_t> in;
  try {
    if (!u32_of(text, in)) return nullptr;
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  std::vector<int32_t> out;
  bool covered = true;
  const tf::spm::Normalizer& impl = *self->impl;
  bool done = run_released(in.size() >= tf::spm::RELEASE_GIL_AT, [&] {
    U32 s;
    impl.normalize(in.data(), in.size(), s);
    if (impl.rejects(s)) {
      covered = false;
      return;
    }
    if (impl.hf_split()) {
      covered = unigram_words(model, (const uint32_t*)s.data(), s.size(), [&](int32_t id) { out.push_back(id); });
      return;
    }
    covered = unigram_tokens(model, (const uint32_t*)s.data(), s.size(),
                             [&](int32_t id, uint32_t, uint32_t) { out.push_back(id); });
  });
  if (!done) return nullptr;
  if (!covered) Py_RETURN_NONE;
  return list_of_shared_ints(out);
}

// The flat form of a batch's result: (bytes of uint32 ids, bytes of uint64 offsets), text k
// being ids[offsets[k]:offsets[k+1]]. With `covered` (spm_encode_batch), a third item lists
// the texts left uncovered, which are empty in the ids.
template <class T>
inline PyObject* flat_result(const std::vector<std::vector<T>>& outs, const std::vector<char>* covered) {
  static_assert(sizeof(T) == 4, "ids are 32-bit");
  auto kept = [&](size_t k) { return !covered || (*covered)[k]; };
  size_t total = 0;
  for (size_t k = 0; k < outs.size(); ++k)
    if (kept(k)) total += outs[k].size();
  if (total > (size_t)PY_SSIZE_T_MAX / 4 || outs.size() + 1 > (size_t)PY_SSIZE_T_MAX / 8) return PyErr_NoMemory();
  PyObject* ids = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)(total * 4));
  PyObject* offs = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)((outs.size() + 1) * 8));
  PyObject* uncovered = covered ? PyList_New(0) : nullptr;
  if (!ids || !offs || (covered && !uncovered)) {
    Py_XDECREF(ids);
    Py_XDECREF(offs);
    Py_XDECREF(uncovered);
    return nullptr;
  }
  char* ip = PyBytes_AS_STRING(ids);
  char* op = PyBytes_AS_STRING(offs);
  uint64_t pos = 0;
  std::memcpy(op, &pos, 8);
  for (size_t k = 0; k < outs.size(); ++k) {
    if (kept(k)) {
      if (!outs[k].empty()) std::memcpy(ip + pos * 4, outs[k].data(), outs[k].size() * 4);
      pos += outs[k].size();
    } else {
      PyObject* idx = PyLong_FromSize_t(k);
      if (!idx || PyList_Append(uncovered, idx) < 0) {
        Py_XDECREF(idx);
        Py_DECREF(ids);
        Py_DECREF(offs);
        Py_DECREF(uncovered);
        return nullptr;
      }
      Py_DECREF(idx);
    }
    std::memcpy(op + (k + 1) * 8, &pos, 8);
  }
  return covered ? Py_BuildValue("(NNN)", ids, offs, uncovered) : Py_BuildValue("(NN)", ids, offs);
}

// spm_encode_batch(normalizer, model: SpmBPE | SpmUnigram, texts: list[str], num_threads: int,
//                  flat: bool = False) -> list[list[int] | None]
// spm_bpe_encode / spm_unigram_encode of every text, on num_threads threads with the GIL
// released (texts are taken one at a time from a shared counter, so long and short texts
// balance). None for a Unigram text left uncovered, as spm_unigram_encode.
// With flat: (bytes of uint32 ids, bytes of uint64 offsets, list of the uncovered indices),
// text k being ids[offsets[k]:offsets[k+1]] (empty when uncovered): no Python int per id.
inline PyObject* spm_encode_batch(PyObject*, PyObject* args) {
  PyObject *norm, *model, *texts;
  int num_threads;
  int flat = 0;
  if (!PyArg_ParseTuple(args, "O!OO!i|p", &SpmNormalizerType, &norm, &model, &PyList_Type, &texts, &num_threads,
                        &flat))
    return nullptr;
  auto* ns = (SpmNormalizerObject*)norm;
  if (!normalizer_ready(ns)) return nullptr;
  SpmBPEObject* bs = nullptr;
  SpmUnigramObject* us = nullptr;
  if (PyObject_TypeCheck(model, &SpmBPEType)) {
    bs = (SpmBPEObject*)model;
    if (!bs->impl) {
      PyErr_SetString(PyExc_ValueError, "SpmBPE is not initialised");
      return nullptr;
    }
  } else if (PyObject_TypeCheck(model, &SpmUnigramType)) {
    us = (SpmUnigramObject*)model;
    if (!unigram_ready(us)) return nullptr;
  } else {
    PyErr_SetString(PyExc_TypeError, "model must be an SpmBPE or an SpmUnigram");
    return nullptr;
  }
  Py_ssize_t count = PyList_GET_SIZE(texts);
  std::vector<std::vector<uint32_t>> ins;
  std::vector<std::vector<int32_t>> outs;
  std::vector<char> covered;
  try {
    ins.resize((size_t)count);
    outs.resize((size_t)count);
    covered.assign((size_t)count, 1);
    for (Py_ssize_t k = 0; k < count; ++k) {
      PyObject* t = PyList_GET_ITEM(texts, k);
      if (!PyUnicode_Check(t)) {
        PyErr_Format(PyExc_TypeError, "texts[%zd] must be str", k);
        return nullptr;
      }
      if (!u32_of(t, ins[(size_t)k])) return nullptr;
    }
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  const tf::spm::Normalizer& n = *ns->impl;
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};  // 1 = out of memory, 2 = format error, 3 = too long
  std::string err;
  std::mutex err_mu;
  auto work = [&]() {
    std::vector<tf::Token> toks;
    U32 s;
    std::unique_ptr<tf::spm::BPE::PartMemo> memo;  // this thread's own: threads never wait for a lock
    try {
      if (bs) memo.reset(new tf::spm::BPE::PartMemo(false));
    } catch (const std::bad_alloc&) {
      failed = 1;
      return;
    }
    for (;;) {
      size_t k = next.fetch_add(1);
      if (k >= ins.size() || failed.load()) break;
      try {
        s.clear();
        n.normalize(ins[k].data(), ins[k].size(), s);
        std::vector<int32_t>& out = outs[k];
        if (bs) {
          toks.clear();
          bs->impl->tokenize((const uint32_t*)s.data(), s.size(), toks, memo.get());
          out.reserve(toks.size());
          for (const tf::Token& t : toks) out.push_back((int32_t)t.id);
        } else if (n.rejects(s)) {
          covered[k] = 0;
        } else if (n.hf_split()) {
          covered[k] = unigram_words(us, (const uint32_t*)s.data(), s.size(), [&](int32_t id) { out.push_back(id); });
        } else {
          covered[k] = unigram_tokens(us, (const uint32_t*)s.data(), s.size(),
                                      [&](int32_t id, uint32_t, uint32_t) { out.push_back(id); });
        }
        std::vector<uint32_t>().swap(ins[k]);
      } catch (const tf::FormatError& e) {
        std::lock_guard<std::mutex> lock(err_mu);
        if (!failed.exchange(2)) {
          try { err = e.what(); } catch (...) {}
        }
      } catch (const std::bad_alloc&) {
        failed = 1;
      } catch (const std::length_error&) {
        failed = 3;
      }
    }
  };
  Py_BEGIN_ALLOW_THREADS
  size_t threads = (size_t)(num_threads < 1 ? 1 : num_threads);
  if (threads > ins.size()) threads = ins.size() ? ins.size() : 1;
  run_on_threads(threads, [&](size_t) { work(); });
  Py_END_ALLOW_THREADS
  if (failed == 1) return PyErr_NoMemory();
  if (failed == 2) { set_format_error(err); return nullptr; }
  if (failed == 3) {
    PyErr_SetString(PyExc_OverflowError, "text too long (2**31 code points or more)");
    return nullptr;
  }
  if (flat) return flat_result(outs, &covered);
  PyObject* result = PyList_New(count);
  if (!result) return nullptr;
  for (Py_ssize_t k = 0; k < count; ++k) {
    PyObject* item;
    if (!covered[(size_t)k]) {
      item = Py_None;
      Py_INCREF(item);
    } else {
      item = list_of_shared_ints(outs[(size_t)k]);
      if (!item) { Py_DECREF(result); return nullptr; }
    }
    PyList_SET_ITEM(result, k, item);
  }
  return result;
}

// --- WordPiece ---------------------------------------------------------------------------

struct WordPieceObject {
  PyObject_HEAD
  tf::WordPieceEncoder* impl;
};

// A list of bytes and a list of ids of the same length into strings and ids (<= MAX_ID).
inline bool wordpiece_table(PyObject* toks, PyObject* ids, const char* name, std::vector<std::string>& out_t,
                            std::vector<uint32_t>& out_i) {
  Py_ssize_t n = PyList_GET_SIZE(toks);
  if (PyList_GET_SIZE(ids) != n) {
    PyErr_Format(PyExc_ValueError, "%s: %zd tokens but %zd ids", name, n, PyList_GET_SIZE(ids));
    return false;
  }
  out_t.reserve((size_t)n);
  out_i.reserve((size_t)n);
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* t = PyList_GET_ITEM(toks, k);
    if (!PyBytes_Check(t)) {
      PyErr_Format(PyExc_TypeError, "%s[%zd] must be bytes", name, k);
      return false;
    }
    unsigned long long id = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(ids, k));
    if (PyErr_Occurred()) return false;
    if (id > tf::WordPieceEncoder::MAX_ID) {
      PyErr_Format(PyExc_OverflowError, "%s: id %llu is too large", name, id);
      return false;
    }
    out_t.emplace_back(PyBytes_AS_STRING(t), (size_t)PyBytes_GET_SIZE(t));
    out_i.push_back((uint32_t)id);
  }
  return true;
}

inline int WordPiece_init(WordPieceObject* self, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"tokens", "ids", "continuing", "continuing_ids", "unk_id", "max_chars", "normalizer",
                                 nullptr};
  PyObject *t1, *i1, *t2, *i2, *norm = Py_None;
  unsigned long unk;
  Py_ssize_t max_chars;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!O!kn|O", (char**)kwlist, &PyList_Type, &t1, &PyList_Type, &i1,
                                   &PyList_Type, &t2, &PyList_Type, &i2, &unk, &max_chars, &norm))
    return -1;
  int flags[4] = {0, 0, 0, 0};  // clean_text, handle_chinese_chars, strip_accents, lowercase
  if (norm != Py_None) {
    if (!PyTuple_Check(norm) || PyTuple_GET_SIZE(norm) != 4) {
      PyErr_SetString(PyExc_TypeError, "normalizer must be None or a tuple of 4 bools (clean_text, "
                                       "handle_chinese_chars, strip_accents, lowercase)");
      return -1;
    }
    for (int k = 0; k < 4; ++k)
      if ((flags[k] = PyObject_IsTrue(PyTuple_GET_ITEM(norm, k))) < 0) return -1;
  }
  if (self->impl) return 0;  // immutable: a second __init__ changes nothing
  if (unk > tf::WordPieceEncoder::MAX_ID || max_chars < 0) {
    PyErr_SetString(PyExc_ValueError, "unk_id or max_chars out of range");
    return -1;
  }
  try {
    std::vector<std::string> first, cont;
    std::vector<uint32_t> first_ids, cont_ids;
    if (!wordpiece_table(t1, i1, "tokens", first, first_ids) ||
        !wordpiece_table(t2, i2, "continuing", cont, cont_ids))
      return -1;
    self->impl = new tf::WordPieceEncoder(first, first_ids, cont, cont_ids, (uint32_t)unk, (size_t)max_chars);
    if (norm != Py_None) self->impl->set_normalizer(flags[0], flags[1], flags[2], flags[3]);
  } catch (const std::exception&) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

inline void WordPiece_dealloc(WordPieceObject* self) {
  delete self->impl;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

inline bool wordpiece_ready(WordPieceObject* self) {
  if (self->impl) return true;
  PyErr_SetString(PyExc_ValueError, "WordPieceEncoder is not initialised");
  return false;
}

// encode(text: str) -> list[int]: BERT's split and WordPiece of the text, normalized first by
// BERT's normalizer when the encoder was given its flags (normalizer=(clean_text,
// handle_chinese_chars, strip_accents, lowercase), strip_accents resolved), else taken as
// normalized.
inline PyObject* WordPiece_encode(WordPieceObject* self, PyObject* arg) {
  if (!wordpiece_ready(self)) return nullptr;
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(arg, &n);
  if (!s) return nullptr;
  std::vector<uint32_t> out;
  const tf::WordPieceEncoder& impl = *self->impl;
  if (!run_released((size_t)n >= tf::spm::RELEASE_GIL_AT, [&] { impl.encode_text((const uint8_t*)s, (size_t)n, out); }))
    return nullptr;
  return list_of_shared_ints(out.data(), out.size());
}

// encode_batch(texts: list[str], num_threads: int, flat: bool = False, before: list[int] = [],
//              after: list[int] = []) -> list[list[int]]
// encode() of every text on num_threads threads, GIL released, each text's ids between before
// and after; with flat: (bytes of uint32 ids, bytes of uint64 offsets), text k being
// ids[offsets[k]:offsets[k+1]].
inline PyObject* WordPiece_encode_batch(WordPieceObject* self, PyObject* args) {
  if (!wordpiece_ready(self)) return nullptr;
  PyObject* texts;
  PyObject *before_obj = nullptr, *after_obj = nullptr;
  int num_threads, flat = 0;
  if (!PyArg_ParseTuple(args, "O!i|pO!O!", &PyList_Type, &texts, &num_threads, &flat, &PyList_Type, &before_obj,
                        &PyList_Type, &after_obj))
    return nullptr;
  std::vector<uint32_t> before, after;  // ids put around each text's ids (a post-processor's [CLS] ... [SEP])
  for (auto [obj, ids] : {std::pair<PyObject*, std::vector<uint32_t>*>{before_obj, &before}, {after_obj, &after}}) {
    if (!obj) continue;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(obj); ++k) {
      unsigned long long id = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(obj, k));
      if (PyErr_Occurred()) return nullptr;
      if (id > 0xFFFFFFFFull) {
        PyErr_SetString(PyExc_OverflowError, "encode_batch: an id around the texts is too large");
        return nullptr;
      }
      ids->push_back((uint32_t)id);
    }
  }
  const size_t count = (size_t)PyList_GET_SIZE(texts);
  std::vector<std::pair<const char*, size_t>> items(count);
  std::vector<std::vector<uint32_t>> outs;
  try {
    outs.resize(count);
  } catch (const std::exception&) {
    return PyErr_NoMemory();
  }
  for (size_t k = 0; k < count; ++k) {  // the list holds the str objects (and their UTF-8) meanwhile
    PyObject* t = PyList_GET_ITEM(texts, (Py_ssize_t)k);
    if (!PyUnicode_Check(t)) {
      PyErr_Format(PyExc_TypeError, "texts[%zu] must be str", k);
      return nullptr;
    }
    Py_ssize_t n;
    const char* s = PyUnicode_AsUTF8AndSize(t, &n);
    if (!s) return nullptr;
    items[k] = {s, (size_t)n};
  }
  Py_INCREF(texts);
  const tf::WordPieceEncoder& impl = *self->impl;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    // Each text is encoded into this thread's own vector and copied out once: growing
    // outs[k] in place would write vector headers that share cache lines with the
    // neighbouring texts another thread is writing (false sharing).
    std::vector<uint32_t> ids;
    for (;;) {
      size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= count || failed.load(std::memory_order_relaxed)) break;
      try {
        ids.assign(before.begin(), before.end());
        impl.encode_text((const uint8_t*)items[k].first, items[k].second, ids);
        ids.insert(ids.end(), after.begin(), after.end());
        outs[k].assign(ids.begin(), ids.end());
      } catch (const std::exception&) {
        failed = true;
      }
    }
  };
  Py_BEGIN_ALLOW_THREADS
  size_t threads = (size_t)(num_threads < 1 ? 1 : num_threads);
  if (threads > count) threads = count ? count : 1;
  run_on_threads(threads, [&](size_t) { work(); });
  Py_END_ALLOW_THREADS
  Py_DECREF(texts);
  if (failed) return PyErr_NoMemory();
  if (flat) return flat_result(outs, nullptr);
  PyObject* result = PyList_New((Py_ssize_t)count);
  if (!result) return nullptr;
  for (size_t k = 0; k < count; ++k) {
    PyObject* item = list_of_shared_ints(outs[k].data(), outs[k].size());
    if (!item) { Py_DECREF(result); return nullptr; }
    PyList_SET_ITEM(result, (Py_ssize_t)k, item);
  }
  return result;
}

// normalize(text: str) -> str: the text after the encoder's normalizer (as it is without one).
inline PyObject* WordPiece_normalize(WordPieceObject* self, PyObject* arg) {
  if (!wordpiece_ready(self)) return nullptr;
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(arg, &n);
  if (!s) return nullptr;
  const tf::BertNormalizer* norm = self->impl->normalizer();
  if (!norm) return PyUnicode_FromStringAndSize(s, n);
  std::string buf;
  size_t m = 0;
  if (!run_released((size_t)n >= tf::spm::RELEASE_GIL_AT, [&] { m = norm->normalize((const uint8_t*)s, (size_t)n, buf); }))
    return nullptr;
  return PyUnicode_DecodeUTF8(buf.data(), (Py_ssize_t)m, "strict");
}

inline PyMethodDef WordPiece_methods[] = {
    {"encode", (PyCFunction)WordPiece_encode, METH_O, "Ids of the text: BERT's normalizer (if set), split and WordPiece."},
    {"normalize", (PyCFunction)WordPiece_normalize, METH_O, "The text after the encoder's BERT normalizer."},
    {"encode_batch", (PyCFunction)WordPiece_encode_batch, METH_VARARGS,
     "encode() of a list of str on threads with the GIL released (flat=True: ids and offsets as bytes)."},
    {nullptr, nullptr, 0, nullptr},
};

inline PyTypeObject WordPieceType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// Fills in the slots every type here sets, readies the type and adds it to module m under
// the last part of its name; -1 with an exception set on failure.
inline int add_type(PyObject* m, PyTypeObject& t, const char* name, Py_ssize_t size, const char* doc, newfunc make,
                    initproc init, destructor dealloc, PyMethodDef* methods) {
  t.tp_name = name;
  t.tp_basicsize = size;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = doc;
  t.tp_new = make;
  t.tp_init = init;
  t.tp_dealloc = dealloc;
  t.tp_methods = methods;
  if (PyType_Ready(&t) < 0) return -1;
  Py_INCREF(&t);
  if (PyModule_AddObject(m, std::strrchr(name, '.') + 1, (PyObject*)&t) < 0) {
    Py_DECREF(&t);
    return -1;
  }
  return 0;
}

// Readies the types and adds them to module m; -1 with an exception set on failure.
inline int add_types(PyObject* m) {
  SpmUnigramType.tp_getset = SpmUnigram_getset;
  WordCounter_as_sequence.sq_length = (lenfunc)WordCounter_len;
  WordCounterType.tp_as_sequence = &WordCounter_as_sequence;
  PieceCounter_as_sequence.sq_length = (lenfunc)PieceCounter_len;
  PieceCounterType.tp_as_sequence = &PieceCounter_as_sequence;
  const bool failed =
      add_type(m, SpmNormalizerType, "tokenforge._core.SpmNormalizer", sizeof(SpmNormalizerObject),
               "SpmNormalizer(charsmap, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, user_defined): "
               "sentencepiece's normalizer.",
               PyType_GenericNew, (initproc)SpmNormalizer_init, (destructor)SpmNormalizer_dealloc,
               SpmNormalizer_methods) < 0 ||
      add_type(m, SpmBPEType, "tokenforge._core.SpmBPE", sizeof(SpmBPEObject),
               "SpmBPE(pieces, scores, types, unk_id, byte_ids, merges=None, fuse_unk=True): sentencepiece's BPE by "
               "piece score; with merges (flat (left, right, rank, new id) ints), HF's BPE by merge rank.", PyType_GenericNew,
               (initproc)SpmBPE_init, (destructor)SpmBPE_dealloc, SpmBPE_methods) < 0 ||
      add_type(m, SpmUnigramType, "tokenforge._core.SpmUnigram", sizeof(SpmUnigramObject),
               "SpmUnigram(pieces, scores, unk_score, float32=True, unk_id=-1, byte_ids=None): Unigram Viterbi over a "
               "double-array trie.",
               PyType_GenericNew, (initproc)SpmUnigram_init, (destructor)SpmUnigram_dealloc, SpmUnigram_methods) < 0 ||
      add_type(m, WordCounterType, "tokenforge._core.WordCounter", sizeof(WordCounterObject),
               "WordCounter(): the word counts of SentencePiece training (add_lines, pack, merge, to_dicts).",
               LockedObject_new<tf::spm::WordCounts>, nullptr,
               (destructor)LockedObject_dealloc<tf::spm::WordCounts>, WordCounter_methods) < 0 ||
      add_type(m, PieceCounterType, "tokenforge._core.PieceCounter", sizeof(PieceCounterObject),
               "PieceCounter(): the pre-token counts of byte-level BPE training (add, pack, merge, to_dict); "
               "learn_merges takes one in place of its words and counts.",
               LockedObject_new<tf::bpe_train::PieceTable>, nullptr,
               (destructor)LockedObject_dealloc<tf::bpe_train::PieceTable>, PieceCounter_methods) < 0 ||
      add_type(m, WordPieceType, "tokenforge._core.WordPieceEncoder", sizeof(WordPieceObject),
               "WordPieceEncoder(tokens, ids, continuing, continuing_ids, unk_id, max_chars, normalizer=None): "
               "BERT's normalizer (normalizer=(clean_text, handle_chinese_chars, strip_accents, lowercase)), "
               "split and WordPiece.",
               PyType_GenericNew, (initproc)WordPiece_init, (destructor)WordPiece_dealloc, WordPiece_methods) < 0;
  return failed ? -1 : 0;
}




// Runs work(), a native training loop watched by `ticker` (ticker.h), with the GIL released.
// Each tick takes the GIL back briefly to run the signal handlers (Ctrl-C raises
// KeyboardInterrupt there and stops the loop) and, when progress is not None, to call
// progress(done); progress is then also due every ~1/200 of `total`. Whatever thread this is,
// it is safe: PyErr_CheckSignals does nothing off the main thread. Returns false with a Python
// exception set when the loop was stopped (the exception tick saw) or ran out of memory.
template <class Work>
static bool run_watched(tf::Ticker& ticker, PyObject* progress, size_t total, Work&& work) {
  PyThreadState* released = nullptr;
  if (progress != Py_None) ticker.every = std::max<size_t>(1, std::min<size_t>(total / 200, 1000));
  ticker.tick = [&released, progress](size_t done) -> bool {
    PyEval_RestoreThread(released);
    bool ok = PyErr_CheckSignals() == 0;
    if (ok && progress != Py_None) {
      PyObject* r = PyObject_CallFunction(progress, "n", (Py_ssize_t)done);
      ok = r != nullptr;
      Py_XDECREF(r);
    }
    released = PyEval_SaveThread();
    return ok;
  };
  bool oom = false;
  released = PyEval_SaveThread();
  try {
    work();
  } catch (const std::exception&) {  // bad_alloc, length_error: never abort the process
    oom = true;
  }
  PyEval_RestoreThread(released);
  ticker.tick = nullptr;
  if (ticker.stopped) return false;
  if (oom) PyErr_NoMemory();
  return !oom;
}

static bool progress_ok(PyObject* progress, const char* fn) {
  if (progress == Py_None || PyCallable_Check(progress)) return true;
  PyErr_Format(PyExc_TypeError, "%s: progress must be a callable or None", fn);
  return false;
}

// learn_merges(words: list[bytes] | PieceCounter, counts: list[int] | None, num_merges: int,
//              order: bytes, progress: callable | None = None) -> list[tuple[int, int]]
// The words and their counts come as two lists, or as one PieceCounter (counts None).
// Ids below 256 are bytes; merge k creates id 256 + k. The loop runs with the GIL released;
// about every 50 ms (and, with `progress`, every ~1/200 of the merges) it takes the GIL back
// briefly to run the signal handlers (Ctrl-C raises KeyboardInterrupt here and stops the loop)
// and to call progress(merges learned so far); an exception from either is raised.
static PyObject* tf_learn_merges(PyObject*, PyObject* args) {
  PyObject *words, *counts;
  PyObject* progress = Py_None;
  Py_ssize_t num_merges;
  Py_buffer order;
  if (!PyArg_ParseTuple(args, "OOny*|O", &words, &counts, &num_merges, &order, &progress)) return nullptr;
  const bool table = PyObject_TypeCheck(words, &PieceCounterType) && counts == Py_None;
  if (order.len != 256 || num_merges < 0 || (progress != Py_None && !PyCallable_Check(progress)) ||
      (!table && (!PyList_Check(words) || !PyList_Check(counts) || PyList_GET_SIZE(words) != PyList_GET_SIZE(counts)))) {
    PyBuffer_Release(&order);
    PyErr_SetString(PyExc_ValueError,
                    "learn_merges: need equal-length words/counts lists (or a PieceCounter and None), "
                    "num_merges >= 0, a 256-byte order, a callable or None for progress");
    return nullptr;
  }
  uint8_t ord[256];
  std::memcpy(ord, order.buf, 256);
  PyBuffer_Release(&order);
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  try {
    tf::bpe_train::Merger m;
    // Each merge joins two adjacent symbols of some word, so there are at most
    // sum(len - 1) of them: a huge num_merges must not size any allocation.
    size_t possible = 0, n = 0;
    std::unique_lock<std::mutex> held;
    const tf::bpe_train::PieceTable* pieces = nullptr;
    if (table) {
      auto* pc = (PieceCounterObject*)words;
      held = std::unique_lock<std::mutex>(*pc->lock);  // the counter stays as it is while read
      pieces = pc->impl;
      n = pieces->size();
      for (size_t k = 0; k < n; ++k)
        if (pieces->length(k) > 1) possible += pieces->length(k) - 1;
    } else {
      n = (size_t)PyList_GET_SIZE(words);
      for (size_t k = 0; k < n; ++k) {
        PyObject* w = PyList_GET_ITEM(words, (Py_ssize_t)k);
        if (PyBytes_Check(w) && PyBytes_GET_SIZE(w) > 1) possible += (size_t)PyBytes_GET_SIZE(w) - 1;
      }
    }
    if ((size_t)num_merges > possible) num_merges = (Py_ssize_t)possible;
    m.keys.reserve(256 + (size_t)num_merges);
    m.syms.reserve(possible + 4 * n);
    m.at.reserve(n);
    for (int c = 0; c < 256; ++c) m.keys.emplace_back(1, (char)ord[c]);
    for (size_t k = 0; k < n; ++k) {
      const uint8_t* s;
      size_t len;
      long long f;
      if (pieces) {
        s = pieces->key(k);
        len = pieces->length(k);
        f = pieces->count(k) > (uint64_t)INT64_MAX ? -1 : (long long)pieces->count(k);
        if (f < 0) { PyErr_SetString(PyExc_OverflowError, "learn_merges: a count over 2**63 - 1"); return nullptr; }
      } else {
        PyObject* w = PyList_GET_ITEM(words, (Py_ssize_t)k);
        PyObject* c = PyList_GET_ITEM(counts, (Py_ssize_t)k);
        if (!PyBytes_Check(w)) { PyErr_SetString(PyExc_TypeError, "words must be bytes"); return nullptr; }
        f = PyLong_AsLongLong(c);
        if (f == -1 && PyErr_Occurred()) return nullptr;
        s = (const uint8_t*)PyBytes_AS_STRING(w);
        len = (size_t)PyBytes_GET_SIZE(w);
      }
      if (len < 2 || f <= 0) continue;
      if ((uint64_t)len > 0xFFFFFFFFull || m.num_words() >= 0xFFFFFFFFull) {
        PyErr_SetString(PyExc_ValueError, "learn_merges: more than 2**32 - 1 words, or a word of 2**32 bytes or more");
        return nullptr;
      }
      m.add_word(s, len, (int64_t)f);
    }
    if (held.owns_lock()) held.unlock();
    if (!run_watched(m.ticker, progress, (size_t)num_merges, [&] { merges = m.run((size_t)num_merges); }))
      return nullptr;
  } catch (const std::exception&) {
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

// count_pieces(segments: list[str], pattern: int) -> dict[bytes, int] (first seen first)
static PyObject* tf_count_pieces(PyObject*, PyObject* args) {
  PyObject* segments;
  int pattern;
  if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &segments, &pattern)) return nullptr;
  if (pattern < 0 || pattern > 4) { PyErr_Format(PyExc_ValueError, "unknown scanner %d", pattern); return nullptr; }
  std::vector<std::pair<const char*, size_t>> items;
  if (!utf8_items(segments, items)) return nullptr;
  tf::bpe_train::PieceTable table;
  if (!run_released(true, [&] { tf::bpe_train::count_pieces(items, (Pattern)pattern, table); })) return nullptr;
  return piece_dict(table);
}


// ----------------------------------------------------------------------------------------------
// Binding: module functions of tokenforge._core. Models and corpora are PyCapsules.


constexpr const char* kModelCapsule = "tokenforge._core.UnigramModel";
constexpr const char* kCorpusCapsule = "tokenforge._core.UnigramCorpus";


// Numbers read without running Python code: PyLong_AsLongLong / PyFloat_AsDouble call __index__ /
// __float__ of other objects, which may mutate the list being read while its size and borrowed
// items are cached here (out-of-bounds reads and use-after-free, found by fuzz_*_hostile).
// int (and subclasses: read directly) or, for as_double, float.
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
  tf::unigram::Model* m;
  explicit Busy(tf::unigram::Model* m_) : m(m_) { ++m->busy; }
  ~Busy() { --m->busy; }
};

// The exception of a failed pass as a Python error (GIL held).
inline PyObject* raise_pass_error(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const tf::unigram::NotANumber& x) {
    PyErr_SetString(PyExc_ValueError, x.what());
  } catch (const tf::unigram::Overflow& x) {
    PyErr_SetString(PyExc_OverflowError, x.what());
  } catch (...) {  // bad_alloc, system_error, length_error
    PyErr_NoMemory();
  }
  return nullptr;
}

inline void drop_model(PyObject* cap) { delete (tf::unigram::Model*)PyCapsule_GetPointer(cap, kModelCapsule); }
inline void drop_corpus(PyObject* cap) { delete (tf::unigram::Corpus*)PyCapsule_GetPointer(cap, kCorpusCapsule); }

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
  tf::unigram::Model* m = nullptr;
  try {
    m = new tf::unigram::Model();
    m->unk_score = tf::f32(unk_score);
    m->score.resize((size_t)n);
    std::vector<uint32_t> buf;
    for (Py_ssize_t i = 0; i < n; ++i) {
      double sc;
      if (!as_double(PyList_GET_ITEM(scores, i), sc)) { delete m; return nullptr; }
      if (std::isnan(sc)) {  // no order: the Python model rejects it too (rescore's NaN = absent)
        delete m;
        PyErr_Format(PyExc_ValueError, "unigram_model: score %zd is NaN", i);
        return nullptr;
      }
      m->score[(size_t)i] = sc;
      PyObject* p = PyList_GET_ITEM(pieces, i);
      if (p == Py_None) continue;
      if (!utf32_of(p, buf)) { delete m; return nullptr; }
      if (buf.empty()) continue;
      m->add(buf.data(), buf.size(), (int32_t)i);
    }
  } catch (const std::exception&) {
    delete m;
    return PyErr_NoMemory();
  }
  PyObject* cap = PyCapsule_New(m, kModelCapsule, drop_model);
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
  auto* m = (tf::unigram::Model*)PyCapsule_GetPointer(cap, kModelCapsule);
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
    m->unk_score = tf::f32(unk_score);
  } catch (const std::exception&) {
    PyBuffer_Release(&buf);
    return PyErr_NoMemory();
  }
  PyBuffer_Release(&buf);
  Py_RETURN_NONE;
}

// unigram_corpus(words: list[str], freqs: list[int], ends: bytes | None = None) -> capsule
// ends (one byte per word, 1..3): what follows the word in running text, bit 1 a space, bit 2 a
// sentence end (Corpus::ends, for unigram_seed); None: both.
static PyObject* tf_unigram_corpus(PyObject*, PyObject* args) {
  PyObject *words, *freqs, *ends = Py_None;
  if (!PyArg_ParseTuple(args, "O!O!|O", &PyList_Type, &words, &PyList_Type, &freqs, &ends)) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(words);
  if (PyList_GET_SIZE(freqs) != n) {
    PyErr_SetString(PyExc_ValueError, "unigram_corpus: words and freqs must have the same length");
    return nullptr;
  }
  if (ends != Py_None && (!PyBytes_Check(ends) || PyBytes_GET_SIZE(ends) != n)) {
    PyErr_SetString(PyExc_ValueError, "unigram_corpus: ends must be None or bytes, one per word");
    return nullptr;
  }
  if (ends != Py_None) {
    const char* e = PyBytes_AS_STRING(ends);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (e[i] < 1 || e[i] > 3) {
        PyErr_SetString(PyExc_ValueError, "unigram_corpus: each end must be 1, 2 or 3");
        return nullptr;
      }
  }
  tf::unigram::Corpus* c = nullptr;
  try {
    c = new tf::unigram::Corpus();
    if (ends != Py_None) c->ends.assign((const uint8_t*)PyBytes_AS_STRING(ends), (const uint8_t*)PyBytes_AS_STRING(ends) + n);
    size_t total = 0;  // reserved up front: growth by doubling could leave half of `chars` unused
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* w = PyList_GET_ITEM(words, i);
      if (PyUnicode_Check(w)) total += (size_t)PyUnicode_GET_LENGTH(w);
    }
    c->chars.reserve(total);
    c->offsets.reserve((size_t)n + 1);
    c->freqs.reserve((size_t)n);
    c->offsets.push_back(0);
    std::vector<uint32_t> buf;
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!utf32_of(PyList_GET_ITEM(words, i), buf)) { delete c; return nullptr; }
      long long f;
      if (!as_i64(PyList_GET_ITEM(freqs, i), f, "expected int")) { delete c; return nullptr; }
      c->chars.insert(c->chars.end(), buf.begin(), buf.end());
      c->offsets.push_back(c->chars.size());
      c->freqs.push_back((int64_t)f);
    }
  } catch (const std::exception&) {
    delete c;
    return PyErr_NoMemory();
  }
  PyObject* cap = PyCapsule_New(c, kCorpusCapsule, drop_corpus);
  if (!cap) delete c;
  return cap;
}

// unigram_viterbi(model, text: str) -> (ids: list[int], starts: list[int]); id -1 = unknown char
// Not the encoder (that is SpmUnigram, unigram.h): the training model's Viterbi, for cross-checks.
static PyObject* tf_unigram_viterbi(PyObject*, PyObject* args) {
  PyObject *cap, *text;
  if (!PyArg_ParseTuple(args, "OU", &cap, &text)) return nullptr;
  auto* m = (tf::unigram::Model*)PyCapsule_GetPointer(cap, kModelCapsule);
  if (!m) return nullptr;
  std::vector<uint32_t> s;
  std::vector<int32_t> ids;
  std::vector<uint32_t> starts;
  bool oom = false;
  try {
    if (!utf32_of(text, s)) return nullptr;
    Busy busy(m);
    Py_BEGIN_ALLOW_THREADS
    try {
      tf::unigram::viterbi(*m, s.data(), s.size(), ids, starts);
    } catch (const std::exception&) {
      oom = true;
    }
    Py_END_ALLOW_THREADS
  } catch (const std::exception&) {
    oom = true;
  }
  if (oom) return PyErr_NoMemory();
  PyObject* a = list_of_ints(ids);
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
  auto* m = (tf::unigram::Model*)PyCapsule_GetPointer(mcap, kModelCapsule);
  if (!m) return nullptr;
  auto* c = (tf::unigram::Corpus*)PyCapsule_GetPointer(ccap, kCorpusCapsule);
  if (!c) return nullptr;
  std::vector<int64_t> out;
  int64_t scalar = 0;
  std::exception_ptr err;
  const size_t width = m->score.size();
  Busy busy(m);
  Py_BEGIN_ALLOW_THREADS
  try {
    if (kEstep)
      tf::unigram::run_sliced(*c, width, threads,
                         [&](size_t lo, size_t hi, std::vector<tf::unigram::Acc>& acc, tf::unigram::Acc& sc) {
                           tf::unigram::estep_range(*m, *c, lo, hi, acc, sc);
                         },
                         out, scalar);
    else
      tf::unigram::run_sliced(*c, width, threads,
                         [&](size_t lo, size_t hi, std::vector<tf::unigram::Acc>& acc, tf::unigram::Acc& sc) {
                           tf::unigram::viterbi_counts_range(*m, *c, lo, hi, acc, sc);
                         },
                         out, scalar);
  } catch (...) {
    err = std::current_exception();
  }
  Py_END_ALLOW_THREADS
  if (err) return raise_pass_error(err);
  PyObject* b = bytes_of(out.data(), out.size() * sizeof(int64_t));
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
  auto* m = (tf::unigram::Model*)PyCapsule_GetPointer(cap, kModelCapsule);
  if (!m) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(pieces);
  std::vector<int8_t> status;
  std::vector<int64_t> offsets;
  std::vector<int32_t> alts;
  bool oom = false;
  try {
    // the pieces back to back (one buffer: a vector per piece cost twice the memory at 10^5 pieces)
    std::vector<uint32_t> flat, one;
    std::vector<size_t> at((size_t)n + 1, 0);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!utf32_of(PyList_GET_ITEM(pieces, i), one)) return nullptr;
      flat.insert(flat.end(), one.begin(), one.end());
      at[(size_t)i + 1] = flat.size();
    }
    status.assign((size_t)n, 0);
    offsets.assign((size_t)n + 1, 0);
    Busy busy(m);
    Py_BEGIN_ALLOW_THREADS
    try {
      std::vector<int32_t> ids;
      std::vector<uint32_t> starts;
      for (size_t i = 0; i < (size_t)n; ++i) {
        const uint32_t* s = flat.data() + at[i];
        const size_t len = at[i + 1] - at[i];
        if (tf::unigram::viterbi(*m, s, len, ids, starts)) {
          if (ids.size() >= 2) {
            status[i] = 1;
          } else if (tf::unigram::viterbi(*m, s, len, ids, starts, true)) {
            status[i] = 2;
            alts.insert(alts.end(), ids.begin(), ids.end());
          }
        }
        offsets[i + 1] = (int64_t)alts.size();
      }
    } catch (const std::exception&) {
      oom = true;
    }
    Py_END_ALLOW_THREADS
  } catch (const std::exception&) {
    oom = true;
  }
  if (oom) return PyErr_NoMemory();
  return Py_BuildValue("(NNN)", bytes_of(status.data(), status.size()),
                       bytes_of(offsets.data(), offsets.size() * 8),
                       bytes_of(alts.data(), alts.size() * 4));
}



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
  auto* c = (tf::unigram::Corpus*)PyCapsule_GetPointer(ccap, kCorpusCapsule);
  const Py_ssize_t nk = PyList_GET_SIZE(keys_o);
  if (!c || PyList_GET_SIZE(scripts_o) != nk || flags.len != nk || max_len < 1 || limit < 0) {
    PyBuffer_Release(&flags);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "unigram_seed: bad arguments");
    return nullptr;
  }
  std::vector<tf::unigram::SeedCand> out;
  bool oom = false;
  std::exception_ptr err;
  try {
    std::vector<uint32_t> keys((size_t)nk);
    std::vector<tf::unigram::CharInfo> info((size_t)nk);
    for (Py_ssize_t i = 0; i < nk; ++i) {
      long long k, s;
      if (!as_i64(PyList_GET_ITEM(keys_o, i), k, "expected int") || !as_i64(PyList_GET_ITEM(scripts_o, i), s, "expected int")) {
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
      tf::unigram::seed_candidates(*c, (size_t)max_len, keys, info, split_digits != 0, split_by_script != 0, threads, out);
      if (out.size() > (size_t)limit) out.resize((size_t)limit);
    } catch (...) {
      err = std::current_exception();
    }
    Py_END_ALLOW_THREADS
  } catch (const std::exception&) {
    oom = true;
  }
  if (oom) return PyErr_NoMemory();
  if (err) return raise_pass_error(err);
  std::vector<uint64_t> pos(out.size());
  std::vector<uint32_t> len(out.size());
  std::vector<int64_t> fr(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    pos[i] = out[i].pos;
    len[i] = out[i].len;
    fr[i] = out[i].freq;
  }
  return Py_BuildValue("(NNN)", bytes_of(pos.data(), pos.size() * 8),
                       bytes_of(len.data(), len.size() * 4), bytes_of(fr.data(), fr.size() * 8));
}


// spm_bpe_learn(words: list[str], freqs: list[int], alphabet: list[int], scripts: list[int],
//               flags: list[int], taken: list[str], n_merges: int, max_piece_length: int,
//               split_digits: bool, split_by_number: bool, split_by_unicode_script: bool)
//               progress: callable | None = None) -> list[tuple[int, int]]
// progress(merges learned so far) and Ctrl-C: see run_watched.
// `alphabet`: the kept code points, strictly ascending; symbol k < len(alphabet) is alphabet[k],
// each merge (a, b) of the result makes the next symbol sym[a] + sym[b]. `scripts[k]`: a script
// number >= 0 or -1 (Inherited); `flags[k]`: 1 bad character, 2 ▁, 4 digit (0-9, ０-９). Words are cut
// into runs of alphabet characters (runs of one are dropped). The caller keeps
// sum(freq * len(word)) < 2^63, so every pair count fits int64 (checked here too).
static PyObject* tf_spm_bpe_learn(PyObject*, PyObject* args) {
  PyObject *words, *freqs, *alphabet, *scripts, *flags, *taken;
  Py_ssize_t n_merges, max_len;
  int split_digits, split_by_number, split_by_script;
  PyObject* progress = Py_None;
  if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!nnppp|O", &PyList_Type, &words, &PyList_Type, &freqs, &PyList_Type,
                        &alphabet, &PyList_Type, &scripts, &PyList_Type, &flags, &PyList_Type, &taken, &n_merges,
                        &max_len, &split_digits, &split_by_number, &split_by_script, &progress) ||
      !progress_ok(progress, "spm_bpe_learn"))
    return nullptr;
  const Py_ssize_t n_words = PyList_GET_SIZE(words), n_chars = PyList_GET_SIZE(alphabet);
  if (PyList_GET_SIZE(freqs) != n_words || PyList_GET_SIZE(scripts) != n_chars ||
      PyList_GET_SIZE(flags) != n_chars || n_merges < 0 || max_len < 1 || n_chars >= (Py_ssize_t)1 << 30) {
    PyErr_SetString(PyExc_ValueError, "spm_bpe_learn: inconsistent arguments");
    return nullptr;
  }
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  try {
    tf::spm_bpe_train::Trainer t;
    t.max_len = (size_t)max_len;
    t.split_digits = split_digits != 0;
    t.split_by_number = split_by_number != 0;
    t.split_by_script = split_by_script != 0;
    t.n_merges = (size_t)n_merges;
    // code point -> character id
    std::vector<uint32_t> bmp(0x10000, tf::spm_bpe_train::PairTable::NONE);
    std::unordered_map<uint32_t, uint32_t> astral;
    long long prev_cp = -1;
    for (Py_ssize_t k = 0; k < n_chars; ++k) {
      long long cp, sc, fl;
      if (!as_i64(PyList_GET_ITEM(alphabet, k), cp, "spm_bpe_learn: alphabet items must be int") ||
          !as_i64(PyList_GET_ITEM(scripts, k), sc, "spm_bpe_learn: scripts items must be int") ||
          !as_i64(PyList_GET_ITEM(flags, k), fl, "spm_bpe_learn: flags items must be int"))
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
      return it == astral.end() ? tf::spm_bpe_train::PairTable::NONE : it->second;
    };
    std::u32string cps, ids;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(taken); ++k) {
      PyObject* s = PyList_GET_ITEM(taken, k);
      if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_TypeError, "spm_bpe_learn: taken must be str"); return nullptr; }
      if (!code_points(s, cps)) return nullptr;
      ids.clear();
      bool ok = cps.size() > 1;
      for (char32_t c : cps) {
        uint32_t id = char_id(c);
        if (id == tf::spm_bpe_train::PairTable::NONE) { ok = false; break; }
        ids.push_back((char32_t)id);
      }
      if (ok) t.pieces.insert(ids);  // only a piece spelled with alphabet characters can collide with a merge
    }
    unsigned __int128 total = 0;
    for (Py_ssize_t k = 0; k < n_words; ++k) {
      PyObject* w = PyList_GET_ITEM(words, k);
      if (!PyUnicode_Check(w)) { PyErr_SetString(PyExc_TypeError, "spm_bpe_learn: words must be str"); return nullptr; }
      long long f;
      if (!as_i64(PyList_GET_ITEM(freqs, k), f, "spm_bpe_learn: freqs items must be int")) return nullptr;
      if (f < 0) { PyErr_SetString(PyExc_ValueError, "spm_bpe_learn: negative word count"); return nullptr; }
      if (!code_points(w, cps)) return nullptr;
      total += (unsigned __int128)f * cps.size();
      std::vector<uint32_t> run;
      for (size_t i = 0; i <= cps.size(); ++i) {
        uint32_t id = i < cps.size() ? char_id(cps[i]) : tf::spm_bpe_train::PairTable::NONE;
        if (id != tf::spm_bpe_train::PairTable::NONE) { run.push_back(id); continue; }
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
    if (!run_watched(t.ticker, progress, (size_t)n_merges, [&] { merges = t.run(); })) return nullptr;
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





// wordpiece_learn(tokens: list[bytes], words: list[list[int]], freqs: list[int],
//                 unit_freq: list[int], prefix_len: int, vocab_size: int,
//                 min_frequency: int, specials: list[int], progress: callable | None = None,
//                 method: int = 0)
//     -> list[tuple[int, int]]
// method: 0 the score f(xy)/(f(x)f(y)), 1 the pair count, 2 the likelihood gain (wordpiece_train.h).
// progress(tokens added so far) and Ctrl-C: see run_watched.
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
  PyObject* progress = Py_None;
  int method = tf::wordpiece_train::SCORE;
  if (!PyArg_ParseTuple(args, "O!O!O!O!nnLO!|Oi", &PyList_Type, &tokens, &PyList_Type, &words, &PyList_Type, &freqs,
                        &PyList_Type, &unit_freq, &prefix_len, &vocab_size, &min_frequency, &PyList_Type, &specials,
                        &progress, &method) ||
      !progress_ok(progress, "wordpiece_learn"))
    return nullptr;
  if (method < tf::wordpiece_train::SCORE || method > tf::wordpiece_train::LIKELIHOOD) {
    PyErr_SetString(PyExc_ValueError, "wordpiece_learn: method must be 0, 1 or 2");
    return nullptr;
  }
  Py_ssize_t n_tok = PyList_GET_SIZE(tokens), n_words = PyList_GET_SIZE(words);
  if (PyList_GET_SIZE(freqs) != n_words || PyList_GET_SIZE(unit_freq) != n_tok || prefix_len < 0 || vocab_size < 0) {
    PyErr_SetString(PyExc_ValueError, "wordpiece_learn: inconsistent arguments");
    return nullptr;
  }
  std::vector<std::pair<uint32_t, uint32_t>> merges;
  try {
    tf::wordpiece_train::Trainer t;
    t.prefix_len = (size_t)prefix_len;
    t.vocab_size = (size_t)vocab_size;
    t.min_frequency = min_frequency;
    t.method = method;
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
      if (!as_i64(PyList_GET_ITEM(unit_freq, k), f, "wordpiece_learn: expected int")) return nullptr;
      if (f < 0) { PyErr_SetString(PyExc_ValueError, "wordpiece_learn: negative unit count"); return nullptr; }
      t.unit_freq.push_back((int64_t)f);
    }
    t.special.assign((size_t)n_tok, 0);
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(specials); ++k) {
      long long s;
      if (!as_i64(PyList_GET_ITEM(specials, k), s, "wordpiece_learn: expected int")) return nullptr;
      if (s < 0 || s >= n_tok) { PyErr_SetString(PyExc_ValueError, "special id out of range"); return nullptr; }
      t.special[(size_t)s] = 1;
    }
    t.words.reserve((size_t)n_words);
    std::vector<unsigned __int128> occ((size_t)n_tok, 0);  // weighted occurrences of each unit
    for (Py_ssize_t k = 0; k < n_words; ++k) {
      PyObject* w = PyList_GET_ITEM(words, k);
      if (!PyList_Check(w)) { PyErr_SetString(PyExc_TypeError, "words must be lists of ids"); return nullptr; }
      long long f;
      if (!as_i64(PyList_GET_ITEM(freqs, k), f, "wordpiece_learn: expected int")) return nullptr;
      if (f < 0) { PyErr_SetString(PyExc_ValueError, "wordpiece_learn: negative word count"); return nullptr; }
      const Py_ssize_t len = PyList_GET_SIZE(w);
      std::vector<uint32_t> ids((size_t)len);
      for (Py_ssize_t j = 0; j < len; ++j) {
        long long v;
        if (!as_i64(PyList_GET_ITEM(w, j), v, "wordpiece_learn: expected int")) return nullptr;
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
    if (!run_watched(t.ticker, progress, (size_t)vocab_size - std::min((size_t)vocab_size, (size_t)n_tok),
                     [&] { merges = t.run(); }))
      return nullptr;
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

// parse_ranks(data: bytes-like) -> dict[bytes, int]: a well-formed tiktoken rank file
// (ranks.h); ValueError(problem) for anything unusual, and the Python parser re-reads the file.
// jsonl_field(block: bytes, field: bytes) -> list: per non-blank line of the block, the
// str value of `field` (UTF-8 of the key), or the line's byte offset (int) when the line
// needs Python's json.loads: malformed, no such string field, or unusual (see jsonl.h).
static PyObject* tf_jsonl_field(PyObject*, PyObject* args) {
  Py_buffer view, key;
  if (!PyArg_ParseTuple(args, "y*y*", &view, &key)) return nullptr;
  std::vector<tf::JsonlLine> lines;
  std::string unescaped;
  bool oom = false;
  Py_BEGIN_ALLOW_THREADS
  try {
    tf::jsonl_field((const uint8_t*)view.buf, (size_t)view.len, std::string_view((const char*)key.buf, (size_t)key.len),
                    lines, unescaped);
  } catch (const std::exception&) {
    oom = true;
  }
  Py_END_ALLOW_THREADS
  PyObject* out = oom ? nullptr : PyList_New((Py_ssize_t)lines.size());
  for (size_t k = 0; out && k < lines.size(); ++k) {
    const tf::JsonlLine& line = lines[k];
    PyObject* item;
    if (!line.found) {
      item = PyLong_FromSize_t(line.start);
    } else {
      const char* base = line.escaped ? unescaped.data() : (const char*)view.buf;
      item = PyUnicode_DecodeUTF8(base + line.value_start, (Py_ssize_t)line.value_len, "strict");
    }
    if (!item) {
      Py_CLEAR(out);
      break;
    }
    PyList_SET_ITEM(out, (Py_ssize_t)k, item);
  }
  PyBuffer_Release(&view);
  PyBuffer_Release(&key);
  if (oom) return PyErr_NoMemory();
  return out;
}

static PyObject* tf_parse_ranks(PyObject*, PyObject* arg) {
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) != 0) return nullptr;
  tf::RankFile file;
  const char* problem = nullptr;
  bool oom = false;
  Py_BEGIN_ALLOW_THREADS
  try {
    problem = tf::parse_ranks((const unsigned char*)view.buf, (size_t)view.len, file, false);
  } catch (const std::exception&) {
    oom = true;
  }
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&view);
  if (oom) return PyErr_NoMemory();
  PyObject* dict = PyDict_New();
  if (!dict) return nullptr;
  // Duplicate tokens are found here (the dict hashes each token once): one among the tokens
  // parsed comes before the problem that stopped the parser, so it is the first problem.
  for (size_t k = 0; k < file.size(); ++k) {
    const size_t a = file.offsets[k], b = file.offsets[k + 1];
    PyObject* key = PyBytes_FromStringAndSize(file.bytes.data() + a, (Py_ssize_t)(b - a));
    PyObject* val = key ? PyLong_FromLongLong(file.ranks[k]) : nullptr;
    const int had = val ? PyDict_Contains(dict, key) : -1;
    const int rc = had == 0 ? PyDict_SetItem(dict, key, val) : -1;
    Py_XDECREF(key);
    Py_XDECREF(val);
    if (had == 1) {
      problem = "duplicate token";
      break;
    }
    if (rc != 0) {
      Py_DECREF(dict);
      return nullptr;
    }
  }
  if (problem) {
    Py_DECREF(dict);
    PyErr_SetString(PyExc_ValueError, problem);
    return nullptr;
  }
  return dict;
}

PyMethodDef module_methods[] = {
    {"class_table", (PyCFunction)tf_class_table, METH_NOARGS, "Unicode class bits of every code point."},
    {"learn_merges", (PyCFunction)tf_learn_merges, METH_VARARGS, "Native BPE merge loop."},
    {"count_pieces", (PyCFunction)tf_count_pieces, METH_VARARGS, "Count the scanner's pieces of UTF-8 bytes."},
    {"parse_ranks", (PyCFunction)tf_parse_ranks, METH_O, "A well-formed tiktoken rank file as {bytes: int}."},
    {"jsonl_field", (PyCFunction)tf_jsonl_field, METH_VARARGS,
     "Per JSON line: the str of one field, or the line's offset when json.loads must decide."},
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
    {"spm_unigram_encode", (PyCFunction)spm_unigram_encode, METH_VARARGS,
     "SentencePiece Unigram: normalize, Viterbi and unknown merging in one call."},
    {"spm_encode_batch", (PyCFunction)spm_encode_batch, METH_VARARGS,
     "spm_bpe_encode / spm_unigram_encode of a list of str, on threads with the GIL released."},
    {"spm_bpe_encode", (PyCFunction)spm_bpe_encode, METH_VARARGS,
     "SentencePiece BPE: normalize and merge in one call."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "tokenforge._core", "tokenforge's native core.", -1, module_methods};

}  // namespace

PyMODINIT_FUNC PyInit__core(void) {
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return nullptr;
  if (add_type(m, CoreBPEType, "tokenforge._core.CoreBPE", sizeof(CoreBPE),
               "Immutable native BPE: vocabulary, decoder and scanner.", PyType_GenericNew, (initproc)CoreBPE_init,
               (destructor)CoreBPE_dealloc, CoreBPE_methods) < 0 ||
      add_types(m) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  PyModule_AddStringConstant(m, "UNICODE_SOURCE", tf_ucd::SOURCE);
  return m;
}
