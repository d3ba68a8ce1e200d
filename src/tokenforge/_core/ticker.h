// A watch over a long native loop (the training merge loops): lets the binding
// check for Ctrl-C and report progress without the loop knowing about Python.
//
// When `tick` is set, poll(done) calls it every `every` units of work (0: never
// by count) and whenever about INTERVAL has passed since the last call, with
// the work done so far. Loops call poll(done, false) from their inner loops too,
// so a single long step is still watched by time. tick returning false stops the
// loop: `stopped` becomes true and the loop returns at once with a result that is
// not complete. What the loop computes never depends on the ticks.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

namespace tf {

struct Ticker {
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds INTERVAL{50};

  std::function<bool(size_t)> tick;
  size_t every = 0;
  bool stopped = false;

  // At the start of a run.
  void start() {
    stopped = false;
    last_ = Clock::now();
    done_ = 0;
  }

  // Calls tick when it is due (by count, if by_count, or by time); false when it asked to stop.
  bool poll(size_t done, bool by_count = true) {
    if (!tick) return true;
    const bool due = by_count && every && done - done_ >= every;
    if (!due && Clock::now() - last_ < INTERVAL) return true;
    return call(done);
  }

  // At the end of a run: the final count, if it was not the last one reported.
  void finish(size_t done) {
    if (tick && !stopped && done != done_) call(done);
  }

 private:
  bool call(size_t done) {
    if (!tick(done)) {
      stopped = true;
      return false;
    }
    last_ = Clock::now();
    done_ = done;
    return true;
  }

  Clock::time_point last_ = Clock::now();
  size_t done_ = 0;
};

}  // namespace tf
