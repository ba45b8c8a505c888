// Tensor provenance, opt-in (ember.set_tracking / EMBER_TRACK_TENSORS=1): each storage
// remembers where the user's code created it, so a DeviceMismatchError can name both sites.
// Off, the whole cost is one relaxed load per tensor handed to Python. Building with
// EMBER_TRACKING=0 (cmake -DEMBER_TRACKING=OFF) compiles it out: the baseline against which
// benchmarks/tracking_cost.py measures that cost.
#pragma once

#ifndef EMBER_TRACKING
#define EMBER_TRACKING 1
#endif

#include <atomic>
#include <string>

namespace ember::tracking {

// A creation site, "file.py:12 in train_step", interned for the life of the process.
using Site = const std::string*;

inline std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}
inline bool enabled() {
#if EMBER_TRACKING
  return enabled_flag().load(std::memory_order_relaxed);
#else
  return false;  // constant: every check folds away
#endif
}
inline void set_enabled(bool on) {
  enabled_flag().store(on, std::memory_order_relaxed);
}

// The one interned copy of `text` (never freed: storages hold the pointer).
Site intern(const std::string& text);

}  // namespace ember::tracking
