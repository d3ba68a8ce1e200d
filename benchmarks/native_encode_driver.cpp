// Encodes text files with the compiled rank-BPE core alone (no Python), for instruction and
// cache-miss counts with callgrind or for perf with symbols. One piece cache for the whole run,
// as one thread of the library keeps it across calls. Prints MB/s per file, then a checksum of
// the ids (equal checksums: equal ids).
//
//   python tools/gen_unicode_tables.py /tmp/uc/unicode_tables.h
//   C=src/tokenforge/_core
//   g++ -std=c++17 -O3 -g -I/tmp/uc -I$C benchmarks/native_encode_driver.cpp $C/bpe.cpp $C/core_bpe.cpp
//       $C/backtrack.cpp $C/common.cpp $C/ranks.cpp $C/scan.cpp $C/pair_bpe.cpp -o native_encode_driver -lpthread
//   (one command)
//   ./native_encode_driver RANKFILE PATTERN ROUNDS TEXT...   (PATTERN: 0 gpt2, 1 cl100k, 2 o200k, 3 llama3, 4 qwen)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core_bpe.h"
#include "ranks.h"

using namespace tf;

static std::string slurp(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s RANKFILE PATTERN ROUNDS TEXT...\n", argv[0]);
    return 2;
  }
  const std::string file = slurp(argv[1]);
  RankFile ranks;
  if (const char* problem = parse_ranks((const unsigned char*)file.data(), file.size(), ranks, false)) {
    std::fprintf(stderr, "%s: %s\n", argv[1], problem);
    return 1;
  }
  Vocab v;
  for (size_t k = 0; k < ranks.size(); ++k)
    v.add((const uint8_t*)ranks.bytes.data() + ranks.offsets[k], ranks.offsets[k + 1] - ranks.offsets[k],
          (uint32_t)ranks.ranks[k]);
  v.finish();
  const Pattern pat = (Pattern)std::atoi(argv[2]);
  const int rounds = std::atoi(argv[3]);
  LazyBacktracker lazy;
  PieceCache& cache = thread_piece_cache(lazy);
  std::vector<uint32_t> out;
  uint64_t sum = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int a = 4; a < argc; ++a) {
      const std::string text = slurp(argv[a]);
      out.clear();
      const auto t0 = std::chrono::steady_clock::now();
      encode_text(v, lazy, pat, (const uint8_t*)text.data(), text.size(), out, cache);
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (uint32_t id : out) sum = sum * 31 + id;
      std::printf("%6.1f ", text.size() / dt / 1e6);
    }
    std::printf(" MB/s\n");
  }
  std::printf("checksum %llu\n", (unsigned long long)sum);
  return 0;
}
