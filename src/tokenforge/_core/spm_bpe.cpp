#include "spm_bpe.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace tf {
namespace spm {

BPE::BPE(std::vector<U32> pieces, std::vector<double> scores, std::vector<int> types, int32_t unk_id,
    std::vector<int32_t> byte_ids)
    : pieces_(std::move(pieces)), scores_(std::move(scores)), types_(std::move(types)), unk_id_(unk_id),
      byte_ids_(std::move(byte_ids)) {
  size_t n = pieces_.size();
  if (scores_.size() != n || types_.size() != n) throw std::invalid_argument("pieces, scores and types must have the same length");
  if (unk_id_ < 0 || (size_t)unk_id_ >= n) throw std::invalid_argument("unk_id is not a piece id");
  if (!byte_ids_.empty() && byte_ids_.size() != 256) throw std::invalid_argument("byte_ids must hold 256 ids");
  for (int32_t b : byte_ids_)
    if (b < 0 || (size_t)b >= n) throw std::invalid_argument("byte_ids must be piece ids");
  pair_bits_.assign(PAIR_BITS / 64, 0);
  for (size_t i = 0; i < n; ++i) {
    const U32& p = pieces_[i];
    if (p.empty()) throw std::invalid_argument("piece " + std::to_string(i) + " is empty");
    int t = types_[i];
    if (t < SP_NORMAL || t > SP_BYTE) throw std::invalid_argument("piece " + std::to_string(i) + " has unknown type");
    bool mergeable = t == SP_NORMAL || t == SP_USER_DEFINED || t == SP_UNUSED;
    PieceMap& table = mergeable ? merge_ : reserved_;
    if (table.contains_key(p)) throw std::invalid_argument("piece " + std::to_string(i) + " is already defined");
    table.add(p, (int32_t)i);
    if (mergeable && p.size() > max_len_) max_len_ = p.size();
    if (mergeable && p.size() >= 2) {
      size_t h = pair_slot((uint32_t)p[0], (uint32_t)p[1]);
      pair_bits_[h >> 6] |= 1ull << (h & 63);
    }
    if (t == SP_USER_DEFINED) {
      user_.add(p, (int32_t)i);
      user_first_.insert((uint32_t)p[0]);
      if (p.size() > user_max_) user_max_ = p.size();
    }
    if (t == SP_UNUSED) has_unused_ = true;
  }
  split_ok_ = !has_unused_ && !user_max_;
  join_bits_.assign(((size_t)1 << JOIN_LOG) / 64, 0);
  std::vector<int32_t> order;  // mergeable pieces, best score first
  for (size_t i = 0; i < n; ++i) {
    int t = types_[i];
    if (!(t == SP_NORMAL || t == SP_USER_DEFINED || t == SP_UNUSED)) continue;
    if (scores_[i] != scores_[i]) has_nan_ = true;
    order.push_back((int32_t)i);
    const U32& p = pieces_[i];
    for (size_t k = 1; k < p.size(); ++k) {
      size_t h = pair_slot((uint32_t)p[k - 1], (uint32_t)p[k]) >> (20 - JOIN_LOG);
      join_bits_[h >> 6] |= 1ull << (h & 63);
    }
  }
  single_mid_.resize(0x10000);
  for (uint32_t c = 0; c < 0x10000; ++c) single_mid_[c] = merge_.get(&c, 1);
  ranked_ = !has_nan_ && n < PairTable::MAX_ID;
  if (ranked_) {
    // ranks: equal scores share one, so the leftmost of a tie wins as in the reference
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return scores_[(size_t)a] > scores_[(size_t)b]; });
    rank_.assign(n, 0);
    uint32_t rank = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      if (k && scores_[(size_t)order[k]] != scores_[(size_t)order[k - 1]]) ++rank;
      rank_[(size_t)order[k]] = rank;
    }
    ranks_ = order.empty() ? 0 : (size_t)rank + 1;
    // every split of a mergeable piece into two mergeable pieces
    std::vector<std::array<int32_t, 3>> splits;
    for (int32_t i : order) {
      const U32& p = pieces_[(size_t)i];
      const uint32_t* q = (const uint32_t*)p.data();
      for (size_t k = 1; k < p.size(); ++k) {
        int32_t l = merge_.get(q, k);
        if (l < 0) continue;
        int32_t r = merge_.get(q + k, p.size() - k);
        if (r >= 0) splits.push_back({l, r, i});
      }
    }
    pairs_.reserve(splits.size());
    for (const auto& s : splits) pairs_.add(s[0], s[1], s[2]);
  }
  // what a one-character symbol of the BMP emits
  single_id_.resize(0x10000);
  for (uint32_t c = 0; c < 0x10000; ++c) single_id_[c] = piece_to_id(&c, 1);
  // what a mergeable piece emits (PieceToId looks up reserved pieces first)
  emit_id_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const U32& p = pieces_[i];
    int32_t r = reserved_.get((const uint32_t*)p.data(), p.size());
    emit_id_[i] = r >= 0 ? r : (int32_t)i;
  }
}

BPE::BPE(std::vector<U32> pieces, const std::vector<HfMerge>& merges, int32_t unk_id, std::vector<int32_t> byte_ids,
    bool fuse_unk)
    : pieces_(std::move(pieces)), unk_id_(unk_id), byte_ids_(std::move(byte_ids)) {
  const size_t n = pieces_.size();
  hf_ = true;
  fuse_unk_ = fuse_unk;
  if (unk_id_ < -1 || unk_id_ >= (int64_t)n) throw std::invalid_argument("unk_id is not a token id");
  if (!byte_ids_.empty() && byte_ids_.size() != 256) throw std::invalid_argument("byte_ids must hold 256 ids");
  for (int32_t b : byte_ids_)
    if (b < -1 || b >= (int64_t)n) throw std::invalid_argument("byte_ids must be token ids or -1");
  for (size_t i = 0; i < n; ++i) {
    const U32& p = pieces_[i];
    if (p.empty()) throw std::invalid_argument("token " + std::to_string(i) + " is empty");
    if (merge_.contains_key(p)) throw std::invalid_argument("token " + std::to_string(i) + " is already defined");
    merge_.add(p, (int32_t)i);
  }
  if (n >= PairTable::MAX_ID || merges.size() >= PairTable::MAX_ID)
    throw std::invalid_argument("too many tokens or merges for SpmBPE (2**21 or more)");
  // the merge of each pair: the one given last wins (HF's merge map)
  std::unordered_map<uint64_t, size_t> last;
  last.reserve(merges.size() * 2);
  for (size_t k = 0; k < merges.size(); ++k) {
    const HfMerge& m = merges[k];
    if (m.left < 0 || m.right < 0 || m.merged < 0 || (size_t)m.left >= n || (size_t)m.right >= n || (size_t)m.merged >= n ||
        m.rank < 0)
      throw std::invalid_argument("a merge names an id that is not a token");
    last[(uint64_t)(uint32_t)m.left << 32 | (uint32_t)m.right] = k;
  }
  std::vector<size_t> order;
  order.reserve(last.size());
  for (const auto& kv : last) order.push_back(kv.second);
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return merges[x].rank != merges[y].rank ? merges[x].rank < merges[y].rank : x < y;
  });
  pairs_.reserve(order.size());
  hf_rank_.resize(order.size());
  hf_merged_.resize(order.size());
  join_bits_.assign(((size_t)1 << JOIN_LOG) / 64, 0);
  std::vector<uint8_t> takes(n, 0);  // ids some merge takes
  bool unk_made = false;              // a merge spells the unknown token
  uint32_t rank = 0;
  for (size_t j = 0; j < order.size(); ++j) {
    const HfMerge& m = merges[order[j]];
    if (j && m.rank != merges[order[j - 1]].rank) ++rank;
    hf_rank_[j] = rank;
    hf_merged_[j] = m.merged;
    pairs_.add(m.left, m.right, (int32_t)j);
    takes[(size_t)m.left] = takes[(size_t)m.right] = 1;
    if (m.merged == unk_id_) unk_made = true;
    const U32& p = pieces_[(size_t)m.merged];
    for (size_t k = 1; k < p.size(); ++k) {
      size_t h = pair_slot((uint32_t)p[k - 1], (uint32_t)p[k]) >> (20 - JOIN_LOG);
      join_bits_[h >> 6] |= 1ull << (h & 63);
    }
  }
  ranks_ = order.empty() ? 0 : (size_t)rank + 1;
  ranked_ = true;
  // Cuts beside byte tokens and unknown runs (see hf_class_of).
  bool bytes_taken = false, bytes_missing = false;
  for (int32_t b : byte_ids_) {
    if (b < 0) bytes_missing = true;
    else if (takes[(size_t)b]) bytes_taken = true;
  }
  const bool open_unk = bytes_missing && unk_id_ >= 0;  // a pending unknown run can outlive byte tokens
  hf_isolated_bytes_ = !bytes_taken && !open_unk;
  // A merge that spells the unknown token makes an id that must not fuse with an unknown
  // run: then no cut beside an unknown character, and parts never fuse at their edges.
  hf_isolated_unk_ = unk_id_ >= 0 && !takes[(size_t)unk_id_] && !open_unk && !unk_made;
  fuse_parts_ = fuse_unk && !unk_made;
  split_ok_ = true;
  single_id_.resize(0x10000);
  for (uint32_t c = 0; c < 0x10000; ++c) single_id_[c] = merge_.get(&c, 1);
  hf_class_.resize(0x10000);
  for (uint32_t c = 0; c < 0x10000; ++c) hf_class_[c] = hf_class_of(c);
}

uint8_t BPE::hf_class_of(uint32_t c) const {
  if (hf_char_id(c) >= 0) return 0;
  if (!byte_ids_.empty()) {
    uint8_t b[4];
    const int len = utf8_of(c, b);
    bool all = true;
    for (int q = 0; q < len; ++q) all = all && byte_ids_[b[q]] >= 0;
    if (all) return hf_isolated_bytes_ ? 1 : 2;
  }
  if (unk_id_ >= 0) return hf_isolated_unk_ ? 1 : 2;
  return 2;  // dropped: its neighbours become adjacent symbols
}

// part's tokens (offsets relative to start) after out's; with fuse, an unknown token that
// starts part joins an unknown token that ends out.
void BPE::append_part(std::vector<Token>& out, const std::vector<Token>& part, size_t start, bool fuse) const {
  size_t k = 0;
  if (fuse && unk_id_ >= 0 && !out.empty() && !part.empty() && part[0].id == unk_id_ && out.back().id == unk_id_) {
    out.back().end = (uint32_t)start + part[0].end;
    k = 1;
  }
  for (; k < part.size(); ++k) {
    const Token& t = part[k];
    out.push_back(Token{t.id, (uint32_t)start + t.start, (uint32_t)start + t.end});
  }
}

void BPE::tokenize(const uint32_t* text, size_t n, std::vector<Token>& out, PartMemo* memo) const {
  out.clear();
  if (n > (size_t)INT32_MAX) throw std::length_error("text too long for SpmBPE (2**31 code points or more)");
  Scratch w;
  if (!split_ok_) {
    merge(text, n, out, w);
    return;
  }
  PartMemo& parts_memo = memo ? *memo : memo_;
  const bool fuse = hf_ ? fuse_parts_ : byte_ids_.empty();
  out.reserve(n / 2 + 4);
  std::vector<Token>& part = w.part;
  size_t start = 0;
  while (start < n) {
    size_t end = start + 1;
    if (hf_)
      while (end < n && !hf_cut(text[end - 1], text[end])) ++end;
    else
      while (end < n && may_join(text[end - 1], text[end])) ++end;
    const size_t len = end - start;
    if (len == 1) {
      const uint32_t c = text[start];
      if (hf_) {
        // a token, or byte tokens or unknown that no merge takes (else merge_word's symbols below)
        const int32_t id = hf_char_id(c);
        if (id >= 0 || hf_class(c) == 1) {
          hf_symbols(&c, 1, [&](int32_t i, uint32_t, uint32_t) {
            if (i == unk_id_ && fuse && !out.empty() && out.back().id == unk_id_)
              out.back().end = (uint32_t)end;
            else
              out.push_back(Token{i, (uint32_t)start, (uint32_t)end});
            return true;
          });
          start = end;
          continue;
        }
      } else {
        // one character: its piece, <unk> (fused with a preceding one) or its bytes
        const int32_t id = c < 0x10000 ? single_id_[c] : piece_to_id(&c, 1);
        if (id != unk_id_) {
          out.push_back(Token{id, (uint32_t)start, (uint32_t)end});
        } else if (!byte_ids_.empty()) {
          emit_byte_pieces(c, byte_ids_, [&](int32_t b) { out.push_back(Token{b, (uint32_t)start, (uint32_t)end}); });
        } else if (!out.empty() && out.back().id == unk_id_) {
          out.back().end = (uint32_t)end;
        } else {
          out.push_back(Token{id, (uint32_t)start, (uint32_t)end});
        }
        start = end;
        continue;
      }
    }
    if (len <= MEMO_PART) {
      const uint64_t h = hash_u32(text + start, len);
      part.clear();
      if (!parts_memo.get(text + start, len, h, part)) {
        merge(text + start, len, part, w);
        parts_memo.put(text + start, len, h, part);
      }
    } else {
      merge(text + start, len, part, w);
    }
    append_part(out, part, start, fuse);
    start = end;
  }
}

void BPE::initial_symbols(const uint32_t* text, size_t n, Scratch& w) const {
  std::vector<uint32_t>& starts = w.starts;
  std::vector<uint32_t>& ends = w.ends;
  std::vector<int32_t>& pid = w.pid;  // mergeable piece id of the symbol, -1 = none
  std::vector<uint8_t>& frozen = w.frozen;
  starts.clear();
  ends.clear();
  frozen.clear();
  pid.clear();
  if (user_max_) {
    size_t pos = 0;
    while (pos < n) {
      size_t size = 1;
      int32_t hit = -1;
      if (user_first_.count(text[pos])) {
        size_t top = user_max_ < n - pos ? user_max_ : n - pos;
        for (size_t k = top; k > 0; --k) {
          int32_t id = user_.get(text + pos, k);
          if (id >= 0) { size = k; hit = id; break; }
        }
      }
      starts.push_back((uint32_t)pos);
      ends.push_back((uint32_t)(pos + size));
      frozen.push_back(hit >= 0);
      pid.push_back(hit >= 0 ? hit : char_piece(text[pos]));
      pos += size;
    }
  } else {
    starts.resize(n);
    ends.resize(n);
    pid.resize(n);
    for (size_t k = 0; k < n; ++k) {
      starts[k] = (uint32_t)k;
      ends[k] = (uint32_t)(k + 1);
      pid[k] = char_piece(text[k]);
    }
    frozen.assign(n, 0);
  }
  link_symbols(w);
}

void BPE::link_symbols(Scratch& w) const {
  const size_t m = w.starts.size();
  w.nxt.resize(m);
  w.prv.resize(m);
  for (size_t k = 0; k < m; ++k) {
    w.nxt[k] = k + 1 < m ? (int32_t)(k + 1) : -1;
    w.prv[k] = (int32_t)k - 1;
  }
  w.alive.assign(m, 1);
  w.rev.clear();
}

bool BPE::merge_small(const uint32_t* text, size_t n, std::vector<Token>& out) const {
  constexpr uint32_t NONE = UINT32_MAX;
  uint32_t st[SMALL_RUN], en[SMALL_RUN], rk[SMALL_RUN];
  int32_t id[SMALL_RUN], pc[SMALL_RUN];
  size_t m = 0;
  if (hf_) {
    const bool fits = hf_symbols(text, n, [&](int32_t i, uint32_t s, uint32_t e) {
      if (m == SMALL_RUN) return false;
      st[m] = s;
      en[m] = e;
      id[m++] = i;
      return true;
    });
    if (!fits) return false;
  } else {
    m = n;
    for (size_t k = 0; k < n; ++k) {
      st[k] = (uint32_t)k;
      en[k] = (uint32_t)(k + 1);
      id[k] = char_piece(text[k]);
    }
  }
  // the candidate of symbols k and k + 1
  auto pair = [&](size_t k) {
    rk[k] = NONE;
    const int32_t pl = id[k], pr = id[k + 1];
    if (pl >= 0 && pr >= 0) {
      uint32_t rank;
      int32_t piece;
      if (pair_lookup(pl, pr, rank, piece)) {
        rk[k] = rank;
        pc[k] = piece;
      }
      return;
    }
    // (SentencePiece) a character that is no piece may still begin or end one
    const uint32_t a = st[k], b = en[k + 1];
    if (b - a > max_len_ || !may_start(text[a], text[a + 1])) return;
    const int32_t piece = merge_.get(text + a, b - a);
    if (piece >= 0) {
      rk[k] = rank_[(size_t)piece];
      pc[k] = piece;
    }
  };
  for (size_t k = 0; k + 1 < m; ++k) pair(k);
  while (m > 1) {
    size_t best = 0;
    uint32_t top = NONE;
    for (size_t k = 0; k + 1 < m; ++k)
      if (rk[k] < top) {
        top = rk[k];
        best = k;
      }
    if (top == NONE) break;
    id[best] = pc[best];
    en[best] = en[best + 1];
    // erase symbol best + 1
    const size_t tail = m - best - 2;
    std::memmove(st + best + 1, st + best + 2, tail * sizeof(uint32_t));
    std::memmove(en + best + 1, en + best + 2, tail * sizeof(uint32_t));
    std::memmove(id + best + 1, id + best + 2, tail * sizeof(int32_t));
    std::memmove(rk + best + 1, rk + best + 2, tail * sizeof(uint32_t));
    std::memmove(pc + best + 1, pc + best + 2, tail * sizeof(int32_t));
    --m;
    if (best > 0) pair(best - 1);
    if (best + 1 < m) pair(best);
  }
  out.clear();
  if (hf_) {
    for (size_t k = 0; k < m; ++k) out.push_back(Token{id[k], st[k], en[k]});
    return true;
  }
  bool prev_unk = false;
  for (size_t k = 0; k < m; ++k) {
    const uint32_t s = st[k], e = en[k];
    const int32_t known = id[k];
    const int32_t tid = known >= 0 ? emit_id_[(size_t)known]
                        : (e - s == 1 && text[s] < 0x10000) ? single_id_[text[s]]
                                                             : piece_to_id(text + s, e - s);
    emit(text, tid, s, e, out, prev_unk);
  }
  return true;
}

void BPE::run_ranked(const uint32_t* text, std::vector<Token>& out, Scratch& w) const {
  std::vector<uint32_t>& starts = w.starts;
  std::vector<uint32_t>& ends = w.ends;
  std::vector<int32_t>& nxt = w.nxt;
  std::vector<int32_t>& prv = w.prv;
  std::vector<int32_t>& pid = w.pid;
  const std::vector<uint8_t>& frozen = w.frozen;
  std::vector<uint8_t>& alive = w.alive;
  std::unordered_map<int32_t, uint32_t>& rev = w.rev;  // UNUSED piece id -> length of its left part
  std::vector<Entry>& agenda = w.agenda;
  agenda.clear();
  const size_t m = starts.size();

  // The candidate of symbols left, right (right = nxt[left]); false if they form no piece.
  // Its size tells a stale entry: the span (SentencePiece), the right symbol's id (HF, whose
  // byte tokens of one character share its span; the left symbol changes only by taking the
  // right one, and the right one's id changes with every merge it takes).
  auto candidate = [&](int32_t left, int32_t right, Entry& e) -> bool {
    if (frozen[(size_t)left] || frozen[(size_t)right]) return false;
    int32_t piece;
    uint32_t rank;
    int32_t pl = pid[(size_t)left], pr = pid[(size_t)right];
    uint32_t a = starts[(size_t)left], b = ends[(size_t)right];
    if (pl >= 0 && pr >= 0) {
      if (!pair_lookup(pl, pr, rank, piece)) return false;
    } else {
      // a character that is no piece may still begin or end one
      if (b - a > max_len_ || !may_start(text[a], text[a + 1])) return false;
      piece = merge_.get(text + a, b - a);
      if (piece < 0) return false;
      rank = rank_[(size_t)piece];
    }
    e = Entry{(uint64_t)rank << 32 | (uint32_t)left, right, piece, hf_ ? (uint32_t)pr : b - a};
    if (has_unused_ && types_[(size_t)piece] == SP_UNUSED) rev[piece] = ends[(size_t)left] - a;
    return true;
  };
  auto later = [](const Entry& x, const Entry& y) { return x.key > y.key; };  // min-heap on key

  Entry e;
  auto merge_at = [&](int32_t left, int32_t right, int32_t piece) -> size_t {
    const size_t l = (size_t)left, r = (size_t)right;
    ends[l] = ends[r];
    pid[l] = piece;
    alive[r] = 0;
    const int32_t r2 = nxt[r];
    nxt[l] = r2;
    if (r2 != -1) prv[(size_t)r2] = left;
    return l;
  };
  auto valid = [&](int32_t left, int32_t right, uint32_t size) {
    return alive[(size_t)left] && alive[(size_t)right] && nxt[(size_t)left] == right &&
           (hf_ ? (uint32_t)pid[(size_t)right] == size : ends[(size_t)right] - starts[(size_t)left] == size);
  };
  if (m >= LONG_RUN) {
    RankQueue& q = w.queue;
    q.reset(ranks_);
    auto push = [&](const Entry& x) { q.push((uint32_t)(x.key >> 32), RankQueue::Item{(int32_t)(uint32_t)x.key, x.right, x.piece, x.size}); };
    for (size_t k = 1; k < m; ++k)
      if (candidate((int32_t)k - 1, (int32_t)k, e)) push(e);
    RankQueue::Item it;
    while (q.pop(it)) {
      if (!valid(it.left, it.right, it.size)) continue;
      const size_t l = merge_at(it.left, it.right, it.piece);
      if (prv[l] >= 0 && candidate(prv[l], (int32_t)l, e)) push(e);
      if (nxt[l] >= 0 && candidate((int32_t)l, nxt[l], e)) push(e);
    }
    emit_symbols(text, out, w);
    return;
  }
  for (size_t k = 1; k < m; ++k)
    if (candidate((int32_t)k - 1, (int32_t)k, e)) agenda.push_back(e);
  std::make_heap(agenda.begin(), agenda.end(), later);
  while (!agenda.empty()) {
    std::pop_heap(agenda.begin(), agenda.end(), later);
    const Entry top = agenda.back();
    agenda.pop_back();
    if (!valid((int32_t)(uint32_t)top.key, top.right, top.size)) continue;
    const size_t l = merge_at((int32_t)(uint32_t)top.key, top.right, top.piece);
    if (prv[l] >= 0 && candidate(prv[l], (int32_t)l, e)) {
      agenda.push_back(e);
      std::push_heap(agenda.begin(), agenda.end(), later);
    }
    if (nxt[l] >= 0 && candidate((int32_t)l, nxt[l], e)) {
      agenda.push_back(e);
      std::push_heap(agenda.begin(), agenda.end(), later);
    }
  }
  emit_symbols(text, out, w);
}

void BPE::merge_heapq(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const {
  out.clear();
  if (n == 0) return;
  initial_symbols(text, n, w);
  std::vector<uint32_t>& starts = w.starts;
  std::vector<uint32_t>& ends = w.ends;
  std::vector<int32_t>& nxt = w.nxt;
  std::vector<int32_t>& prv = w.prv;
  std::vector<int32_t>& pid = w.pid;
  const std::vector<uint8_t>& frozen = w.frozen;
  std::vector<uint8_t>& alive = w.alive;
  std::unordered_map<int32_t, uint32_t>& rev = w.rev;  // UNUSED piece id -> length of its left part
  std::vector<Cand>& heap = w.heap;
  heap.clear();
  const size_t m = starts.size();

  auto add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0 || frozen[(size_t)left] || frozen[(size_t)right]) return;
    uint32_t a = starts[(size_t)left], b = ends[(size_t)right];
    if (b - a > max_len_ || !may_start(text[a], text[a + 1])) return;
    int32_t i = merge_.get(text + a, b - a);
    if (i < 0) return;
    heap_push(heap, Cand{-scores_[(size_t)i], left, right, b - a, i});
    if (types_[(size_t)i] == SP_UNUSED) rev[i] = ends[(size_t)left] - a;
  };

  for (size_t k = 1; k < m; ++k) add((int32_t)k - 1, (int32_t)k);
  while (!heap.empty()) {
    Cand top = heap_pop(heap);
    size_t l = (size_t)top.left, r = (size_t)top.right;
    if (!alive[l] || !alive[r] || ends[r] - starts[l] != top.size || nxt[l] != top.right) continue;
    ends[l] = ends[r];
    pid[l] = top.piece;
    alive[r] = 0;
    int32_t r2 = nxt[r];
    nxt[l] = r2;
    if (r2 != -1) prv[(size_t)r2] = (int32_t)l;
    add(prv[l], (int32_t)l);
    add((int32_t)l, r2);
  }
  emit_symbols(text, out, w);
}

void BPE::emit_symbols(const uint32_t* text, std::vector<Token>& out, Scratch& w) const {
  const std::vector<uint32_t>& starts = w.starts;
  const std::vector<uint32_t>& ends = w.ends;
  const std::vector<int32_t>& nxt = w.nxt;
  const std::vector<int32_t>& pid = w.pid;
  const std::unordered_map<int32_t, uint32_t>& rev = w.rev;
  if (hf_) {
    for (int32_t k = pid.empty() ? -1 : 0; k != -1; k = nxt[(size_t)k])
      out.push_back(Token{pid[(size_t)k], starts[(size_t)k], ends[(size_t)k]});
    return;
  }
  bool prev_unk = false;
  std::vector<std::pair<uint32_t, uint32_t>>& stack = w.stack;  // (start, end) still to emit, last first
  for (int32_t k = 0; k != -1; k = nxt[(size_t)k]) {
    uint32_t s = starts[(size_t)k], e = ends[(size_t)k];
    int32_t known = pid[(size_t)k];
    int32_t id = known >= 0                            ? emit_id_[(size_t)known]
                 : (e - s == 1 && text[s] < 0x10000) ? single_id_[text[s]]
                                                      : piece_to_id(text + s, e - s);
    if (!(has_unused_ && types_[(size_t)id] == SP_UNUSED)) {
      emit(text, id, s, e, out, prev_unk);
      continue;
    }
    stack.clear();
    stack.emplace_back(s, e);
    while (!stack.empty()) {
      auto [ws, we] = stack.back();
      stack.pop_back();
      int32_t wid = piece_to_id(text + ws, we - ws);
      if (types_[(size_t)wid] == SP_UNUSED) {
        auto it = rev.find(wid);
        if (it != rev.end()) {
          uint32_t mid = ws + it->second;
          stack.emplace_back(mid, we);
          stack.emplace_back(ws, mid);
          continue;
        }
      }
      emit(text, wid, ws, we, out, prev_unk);
    }
  }
}

void BPE::merge_hf(const uint32_t* text, size_t n, std::vector<Token>& out, Scratch& w) const {
  if (n <= SMALL_RUN && merge_small(text, n, out)) return;
  out.clear();
  w.starts.clear();
  w.ends.clear();
  w.pid.clear();
  hf_symbols(text, n, [&](int32_t id, uint32_t s, uint32_t e) {
    w.starts.push_back(s);
    w.ends.push_back(e);
    w.pid.push_back(id);
    return true;
  });
  const size_t m = w.pid.size();
  w.frozen.assign(m, 0);
  link_symbols(w);
  run_ranked(text, out, w);
}

}  // namespace spm
}  // namespace tf
