// The pair table the three training merge loops share (byte-level BPE in bpe_train.h,
// WordPiece in wordpiece_train.h, SentencePiece BPE in spm_bpe_train.h): one
// open-addressing hash table from a 64-bit pair key to that loop's record of the
// pair (count, stamp, holder list, ...). Linear probing, grown at half full; a
// record's reference is only valid until the next get(), which may grow the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common.h"

namespace tf {

// A pair (a, b) of ids as one table key.
inline uint64_t pk(uint32_t a, uint32_t b) { return ((uint64_t)a << 32) | b; }

// Rec has a uint64_t ``key`` and a ``static Rec blank()`` whose key is EMPTY.
template <class Rec, size_t Initial>
class PairTable {
 public:
  static constexpr uint64_t EMPTY = ~0ull;
  static constexpr uint32_t NONE = ~0u;
  PairTable() { slots_.assign(Initial, Rec::blank()); mask_ = slots_.size() - 1; }
  Rec& get(uint64_t key) {
    size_t i = mix64(key) & mask_;
    for (;;) {
      Rec& s = slots_[i];
      if (s.key == key) return s;
      if (s.key == EMPTY) {
        if ((used_ + 1) * 2 > slots_.size()) { grow(); return get(key); }
        ++used_;
        s.key = key;
        return s;
      }
      i = (i + 1) & mask_;
    }
  }
  Rec* find(uint64_t key) { return const_cast<Rec*>(static_cast<const PairTable*>(this)->find(key)); }
  const Rec* find(uint64_t key) const {
    size_t i = mix64(key) & mask_;
    for (;;) {
      const Rec& s = slots_[i];
      if (s.key == key) return &s;
      if (s.key == EMPTY) return nullptr;
      i = (i + 1) & mask_;
    }
  }
  template <class F>
  void for_each(F f) {
    for (auto& s : slots_)
      if (s.key != EMPTY) f(s);
  }
  template <class F>
  void for_each(F f) const {
    for (const auto& s : slots_)
      if (s.key != EMPTY) f(s);
  }

 private:
  void grow() {
    std::vector<Rec> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Rec::blank());
    mask_ = slots_.size() - 1;
    for (const auto& s : old) {
      if (s.key == EMPTY) continue;
      size_t i = mix64(s.key) & mask_;
      while (slots_[i].key != EMPTY) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Rec> slots_;
  size_t mask_;
  size_t used_ = 0;
};

}  // namespace tf
