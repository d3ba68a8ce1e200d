#include "unigram_train.h"

namespace tf {
namespace unigram {

void lattice(const Model& m, const uint32_t* s, size_t n, std::vector<Node>& nodes) {
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

bool viterbi(const Model& m, const uint32_t* s, size_t n, std::vector<int32_t>& ids,
                    std::vector<uint32_t>& starts, bool exclude_whole) {
  ids.clear();
  starts.clear();
  if (n == 0) return true;
  constexpr float kReset = kScoreReset;
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
      const float cand = f32(m.score[(size_t)id]) + here;
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

void estep_range(const Model& m, const Corpus& c, size_t lo, size_t hi, std::vector<Acc>& expected,
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

void viterbi_counts_range(const Model& m, const Corpus& c, size_t lo, size_t hi, std::vector<Acc>& counts,
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

bool valid_piece(const uint32_t* s, size_t n, const std::vector<uint32_t>& keys,
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

void seed_candidates(const Corpus& c, size_t max_len, const std::vector<uint32_t>& keys,
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

}  // namespace unigram
}  // namespace tf
