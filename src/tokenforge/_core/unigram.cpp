#include "unigram.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace tf {
namespace unigram {

template <>
const std::vector<float>& UnigramLattice::scores<float>() const { return score_f_; }
template <>
const std::vector<double>& UnigramLattice::scores<double>() const { return score_d_; }

UnigramLattice::UnigramLattice(const std::vector<U32>& pieces, const std::vector<double>& scores, double unk_score,
               bool float32)
    : float32_(float32), unk_f_(f32(unk_score)), unk_d_(unk_score) {
  if (float32) {
    score_f_.resize(scores.size());
    for (size_t i = 0; i < scores.size(); ++i) score_f_[i] = f32(scores[i]);
  } else {
    score_d_ = scores;
  }
  // 1. a pointer trie over the UTF-8 bytes (surrogates as "surrogatepass")
  struct TNode {
    std::vector<std::pair<uint8_t, int32_t>> kids;
    int32_t value = -1;
  };
  std::vector<TNode> t(1);
  uint8_t b[4];
  for (size_t i = 0; i < pieces.size(); ++i) {
    const U32& p = pieces[i];
    if (p.empty()) continue;
    int32_t node = 0;
    for (char32_t c : p) {
      int len = utf8_of((uint32_t)c, b);
      for (int k = 0; k < len; ++k) {
        int32_t next = -1;
        for (auto& kid : t[(size_t)node].kids)
          if (kid.first == b[k]) { next = kid.second; break; }
        if (next < 0) {
          next = (int32_t)t.size();
          t[(size_t)node].kids.emplace_back(b[k], next);
          t.emplace_back();
        }
        node = next;
      }
    }
    t[(size_t)node].value = (int32_t)i;  // a repeated piece: the later id, as the training trie (unigram_train.h)
  }
  // 2. placed breadth first: the child of unit s by byte c is unit base(s) + c, owned
  //    by s (check == s). Free units have check -1 and are kept in a list, which the
  //    search for a base walks (a unit that keeps failing is dropped from it, as darts'
  //    builder does); leaves get a base that no byte reaches.
  std::vector<int32_t> next_free, prev_free;
  std::vector<uint8_t> tries;
  int32_t head = -1, tail = -1;
  auto unlink = [&](int32_t u) {
    int32_t a = prev_free[(size_t)u], b = next_free[(size_t)u];
    if (a >= 0) next_free[(size_t)a] = b; else head = b;
    if (b >= 0) prev_free[(size_t)b] = a; else tail = a;
    prev_free[(size_t)u] = next_free[(size_t)u] = -2;  // not in the list
  };
  auto grow = [&](size_t size) {
    if (size > (size_t)INT32_MAX - 1024) throw std::length_error("unigram trie too large");
    size_t old = da_.size();
    if (size <= old) return;
    da_.resize(size, Unit{0, -1, -1});
    next_free.resize(size, -1);
    prev_free.resize(size, -1);
    tries.resize(size, 0);
    for (size_t u = old; u < size; ++u) {
      prev_free[u] = tail;
      next_free[u] = -1;
      if (tail >= 0) next_free[(size_t)tail] = (int32_t)u; else head = (int32_t)u;
      tail = (int32_t)u;
    }
  };
  grow(1024);
  da_[0].check = -2;  // the root
  unlink(0);
  std::vector<std::pair<int32_t, int32_t>> queue{{0, 0}};  // (pointer node, unit)
  for (size_t q = 0; q < queue.size(); ++q) {
    auto [tn, unit] = queue[q];
    auto& kids = t[(size_t)tn].kids;
    da_[(size_t)unit].value = t[(size_t)tn].value;
    if (kids.empty()) {
      da_[(size_t)unit].base = LEAF;
      continue;
    }
    std::sort(kids.begin(), kids.end());
    int64_t base = 0;
    for (int32_t f = head;;) {
      if (f < 0) {
        size_t old = da_.size();
        grow(old + 1024);
        f = (int32_t)old;
      }
      int32_t after = next_free[(size_t)f];
      base = (int64_t)f - kids[0].first;
      if (base >= 1) {
        grow((size_t)base + 512);
        bool ok = true;
        for (auto& kid : kids)
          if (da_[(size_t)base + kid.first].check != -1) { ok = false; break; }
        if (ok) break;
      }
      if (++tries[(size_t)f] >= 16) unlink(f);
      f = after;
    }
    da_[(size_t)unit].base = (int32_t)base;
    for (auto& kid : kids) {
      size_t u = (size_t)base + kid.first;
      da_[u].check = unit;
      if (prev_free[u] != -2) unlink((int32_t)u);
      queue.emplace_back(kid.second, (int32_t)u);
    }
    std::vector<std::pair<uint8_t, int32_t>>().swap(kids);
  }
}

// T: the score type. float rebases path scores past +-1e5 (sentencepiece's kScoreResetThreshold).
template <class T>
void UnigramLattice::run(const uint32_t* s, size_t n, std::vector<int32_t>& ids, std::vector<uint32_t>& starts) const {
  constexpr bool kRebase = std::is_same<T, float>::value;
  const std::vector<T>& score = scores<T>();
  const T unk_score = kRebase ? (T)unk_f_ : (T)unk_d_;
  ids.clear();
  starts.clear();
  if (n == 0) return;
  // UTF-8 of the text and where each character starts in it (written in place: a
  // vector::insert per character was not always inlined, and cost 20% of the run)
  // Work arrays reused by each thread across calls (no allocation per short text; a
  // thread keeps no more than kKeep entries after a long one).
  constexpr size_t kKeep = size_t{1} << 16;
  thread_local std::vector<uint32_t> at;
  thread_local std::vector<uint8_t> bytes;
  thread_local std::vector<T> best;
  thread_local std::vector<int64_t> from;
  thread_local std::vector<int32_t> last;
  struct Release {
    ~Release() {
      if (at.capacity() > kKeep) std::vector<uint32_t>().swap(at);
      if (bytes.capacity() > 4 * kKeep) std::vector<uint8_t>().swap(bytes);
      if (best.capacity() > kKeep) std::vector<T>().swap(best);
      if (from.capacity() > kKeep) std::vector<int64_t>().swap(from);
      if (last.capacity() > kKeep) std::vector<int32_t>().swap(last);
    }
  } release;
  at.resize(n + 1);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    at[i] = (uint32_t)total;
    const uint32_t c = s[i];
    total += utf8_len(c);
  }
  if (total > (size_t)UINT32_MAX) throw std::length_error("text too long");
  at[n] = (uint32_t)total;
  bytes.resize(total);
  for (size_t i = 0; i < n; ++i) utf8_of(s[i], bytes.data() + at[i]);
  constexpr T kReset = (T)kScoreReset;
  best.assign(n + 1, (T)0);
  from.assign(n + 1, -1);
  last.assign(n + 1, -1);
  const Unit* da = da_.data();
  const size_t da_size = da_.size();
  size_t frontier = 0;
  for (size_t i = 0; i < n; ++i) {
    T here = best[i];
    if (kRebase && (here < -kReset || here > kReset)) {
      const T offset = here;
      for (size_t j = i; j <= frontier; ++j)
        if (j == i || from[j] >= 0) best[j] -= offset;
      here = (T)0;
    }
    int64_t unit = 0;
    bool single = false;
    size_t q = at[i];
    for (size_t j = i; j < n; ++j) {
      const size_t stop = at[j + 1];
      bool ok = true;
      for (; q < stop; ++q) {
        const int64_t next = (int64_t)da[unit].base + bytes[q];
        if (next < 0 || (size_t)next >= da_size || da[next].check != unit) { ok = false; break; }
        unit = next;
      }
      if (!ok) break;
      const int32_t id = da[unit].value;
      if (id < 0) continue;
      if (j == i) single = true;
      const size_t e = j + 1;
      frontier = std::max(frontier, e);
      const T cand = score[(size_t)id] + here;
      if (from[e] < 0 || cand > best[e]) {
        best[e] = cand;
        from[e] = (int64_t)i;
        last[e] = id;
      }
    }
    if (!single) {
      const size_t e = i + 1;
      frontier = std::max(frontier, e);
      const T cand = unk_score + here;
      if (from[e] < 0 || cand > best[e]) {
        best[e] = cand;
        from[e] = (int64_t)i;
        last[e] = -1;
      }
    }
  }
  for (size_t e = n; e > 0; e = (size_t)from[e]) {
    ids.push_back(last[e]);
    starts.push_back((uint32_t)from[e]);
  }
  std::reverse(ids.begin(), ids.end());
  std::reverse(starts.begin(), starts.end());
}

void UnigramLattice::viterbi(const uint32_t* s, size_t n, std::vector<int32_t>& ids, std::vector<uint32_t>& starts) const {
  if (float32_)
    run<float>(s, n, ids, starts);
  else
    run<double>(s, n, ids, starts);
}

}  // namespace unigram
}  // namespace tf
