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

namespace {

// First UTF-8 byte of code point cp: what tells two continuations apart in sentencepiece's
// byte-level suffix array.
inline int32_t lead_byte(uint32_t cp) {
  if (cp < 0x80) return (int32_t)cp;
  if (cp < 0x800) return (int32_t)(0xC0 | (cp >> 6));
  if (cp < 0x10000) return (int32_t)(0xE0 | (cp >> 12));
  return (int32_t)(0xF0 | (cp >> 18));
}

// The seed search with suffix-array entries of type Idx (uint32_t when the corpus has fewer than
// 2^32 characters: half the memory of size_t).
template <class Idx>
void seed_search(const Corpus& c, size_t max_len, const std::vector<uint32_t>& keys,
                 const std::vector<CharInfo>& info, bool split_digits, bool split_by_script, int threads,
                 std::vector<SeedCand>& out) {
  const size_t total = c.chars.size();
  std::vector<uint32_t> word_of(total);
  for (size_t k = 0; k < c.size(); ++k)
    for (size_t p = c.offsets[k]; p < c.offsets[k + 1]; ++p) word_of[p] = (uint32_t)k;
  std::vector<Idx> sa(total);
  for (size_t p = 0; p < total; ++p) sa[p] = (Idx)p;
  const size_t cap = max_len + 1;
  auto end_of = [&](size_t p) { return c.offsets[word_of[p] + 1]; };
  // Suffixes compared on at most `cap` characters; a word end sorts first and two word ends
  // differ (by position), so equal prefixes never extend across words. A strict total order:
  // the result does not depend on how the sort is split across threads.
  auto less = [&](Idx a, Idx b) {
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
  auto weight = [&](size_t k) -> __int128 { return c.freqs[word_of[sa[k]]]; };
  auto consider = [&](size_t pos, size_t len, __int128 freq) {
    if (len < 2 || len > max_len || freq < 2) return;
    if (!valid_piece(c.chars.data() + pos, len, keys, info, split_digits, split_by_script)) return;
    if (freq > (__int128)INT64_MAX) throw Overflow("unigram_seed: a substring frequency does not fit int64");
    out.push_back(SeedCand{pos, (uint32_t)len, (int64_t)freq});
  };
  // What follows a word in running text (Corpus::ends): 1 the space before the next word (its
  // first UTF-8 byte, that of U+2581), 2 the end of a sentence (sentencepiece's 0 separator).
  auto end_syms = [&](size_t p) -> uint8_t { return c.ends.empty() ? 3 : c.ends[word_of[p]]; };
  const int32_t kSpaceByte = lead_byte(0x2581);
  // Whether the suffixes sa[lb..rb] (sharing d characters) are followed by at least two different
  // symbols: the first UTF-8 byte of the next character, or what follows the word where a suffix
  // ends (those sort first). Sorted order puts equal next bytes together (UTF-8 keeps code-point
  // order), so the first and the last continuing suffix are enough. Each suffix ends a word at one
  // depth only, so the scans add up to the corpus size.
  auto branches = [&](size_t lb, size_t rb, size_t d) {
    uint8_t ends = 0;
    size_t i = lb;
    for (; i <= rb && sa[i] + d >= end_of(sa[i]); ++i) ends |= end_syms(sa[i]);
    if (ends == 3) return true;
    if (i > rb) return false;  // every suffix ends here, and all are followed alike
    const int32_t first = lead_byte(c.chars[sa[i] + d]), last = lead_byte(c.chars[sa[rb] + d]);
    if (first != last) return true;
    return ends != 0 && first != (ends == 1 ? kSpaceByte : 0);
  };
  // LCP intervals (lcp value d >= 2, at least two suffixes), bottom-up with a stack; each open
  // interval sums the frequencies of its suffixes (128 bits: int64 frequencies used to overflow).
  // An interval is a candidate when its occurrences are followed by two different symbols
  // (`branches`). A suffix that ends its word and shares its full length with no neighbour (a
  // leaf) is a candidate when its word is followed both by a space and by a sentence end.
  struct Open {
    uint32_t d;
    size_t lb;
    __int128 w;
  };
  std::vector<Open> stack;
  stack.push_back(Open{0, 0, 0});
  size_t prev_h = 0;  // lcp(sa[k-2], sa[k-1])
  for (size_t k = 1; k <= total; ++k) {
    const size_t p = sa[k - 1];
    const uint32_t h = k < total ? (uint32_t)lcp_of(p, sa[k]) : 0;
    const __int128 wk = weight(k - 1);
    const size_t rest = end_of(p) - p;  // the suffix up to its word end
    if (rest <= max_len && prev_h < rest && h < rest && end_syms(p) == 3) consider(p, rest, wk);  // a leaf
    prev_h = h;
    if (h > stack.back().d) {  // suffix k-1 opens a deeper interval
      stack.push_back(Open{h, k - 1, wk});
      continue;
    }
    stack.back().w += wk;
    size_t lb = k - 1;
    __int128 carry = 0;
    while (h < stack.back().d) {
      Open top = stack.back();
      stack.pop_back();
      if (branches(top.lb, k - 1, top.d)) consider(sa[top.lb], top.d, top.w);  // interval [top.lb, k-1]
      lb = top.lb;
      if (h <= stack.back().d) stack.back().w += top.w;
      else carry = top.w;
    }
    if (h > stack.back().d) stack.push_back(Open{h, lb, carry});
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

}  // namespace

void seed_candidates(const Corpus& c, size_t max_len, const std::vector<uint32_t>& keys,
                            const std::vector<CharInfo>& info, bool split_digits, bool split_by_script,
                            int threads, std::vector<SeedCand>& out) {
  if (c.chars.size() < ((size_t)1 << 32))
    seed_search<uint32_t>(c, max_len, keys, info, split_digits, split_by_script, threads, out);
  else
    seed_search<size_t>(c, max_len, keys, info, split_digits, split_by_script, threads, out);
}

}  // namespace unigram
}  // namespace tf
