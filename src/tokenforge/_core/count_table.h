// Counting distinct strings for the trainers: a table of keys (byte strings for byte-level
// BPE's pre-tokens, code-point strings for the SentencePiece trainers' words) and how often
// each was added, in the order first added. Open addressing over (hash, entry) slots, the
// keys stored one after another in one pool: no allocation per key, one cache line to
// compare. pack() and merge_packed() carry a table between processes of one machine.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace tf {

inline uint64_t hash_key(const uint8_t* p, size_t n) { return hash_bytes(p, n); }
inline uint64_t hash_key(const uint32_t* p, size_t n) { return hash_u32(p, n); }

template <class T>
class CountTable {
 public:
  void add(const T* w, size_t n, uint64_t times = 1) {
    if (2 * (count_.size() + 1) > slots_.size()) grow();  // at most half full
    const uint64_t h = hash_key(w, n);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.entry == kEmpty) {
        s.hash = h;
        s.entry = count_.size();
        pool_.insert(pool_.end(), w, w + n);
        start_.push_back(pool_.size());
        count_.push_back(times);
        return;
      }
      if (s.hash == h && length(s.entry) == n && (n == 0 || std::memcmp(w, key(s.entry), n * sizeof(T)) == 0)) {
        count_[s.entry] += times;
        return;
      }
    }
  }

  // Appends the table to out: per entry a uint32 length (in keys' units), a uint64 count
  // and the units (native byte order: the bytes travel between processes of one machine).
  void pack(std::string& out) const {
    out.reserve(out.size() + pool_.size() * sizeof(T) + 12 * size());
    for (size_t k = 0; k < size(); ++k) {
      const uint32_t len = (uint32_t)length(k);
      const uint64_t c = count_[k];
      out.append((const char*)&len, sizeof len);
      out.append((const char*)&c, sizeof c);
      out.append((const char*)key(k), (size_t)len * sizeof(T));
    }
  }

  // Adds the entries of pack()'s bytes; false on bytes pack() cannot have written.
  bool merge_packed(const uint8_t* p, size_t n) {
    std::vector<T> w;
    size_t at = 0;
    while (at < n) {
      uint32_t len;
      uint64_t c;
      if (n - at < sizeof len + sizeof c) return false;
      std::memcpy(&len, p + at, sizeof len);
      std::memcpy(&c, p + at + sizeof len, sizeof c);
      at += sizeof len + sizeof c;
      if ((n - at) / sizeof(T) < len) return false;
      w.resize(len);
      if (len) std::memcpy(w.data(), p + at, (size_t)len * sizeof(T));  // the bytes may be unaligned
      at += (size_t)len * sizeof(T);
      add(w.data(), len, c);
    }
    return true;
  }

  size_t size() const { return count_.size(); }
  const T* key(size_t k) const { return pool_.data() + start_[k]; }
  size_t length(size_t k) const { return start_[k + 1] - start_[k]; }
  uint64_t count(size_t k) const { return count_[k]; }

 private:
  static constexpr size_t kEmpty = SIZE_MAX;
  struct Slot {
    uint64_t hash;
    size_t entry;
  };
  void grow() {
    const size_t cap = slots_.empty() ? 1024 : 2 * slots_.size();
    std::vector<Slot> fresh(cap, Slot{0, kEmpty});
    for (const Slot& s : slots_) {
      if (s.entry == kEmpty) continue;
      size_t i = s.hash & (cap - 1);
      while (fresh[i].entry != kEmpty) i = (i + 1) & (cap - 1);
      fresh[i] = s;
    }
    slots_.swap(fresh);
  }
  std::vector<Slot> slots_;
  std::vector<T> pool_;
  std::vector<size_t> start_{0};  // entry k is pool_[start_[k], start_[k + 1])
  std::vector<uint64_t> count_;
};

}  // namespace tf
