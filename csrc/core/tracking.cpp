#include "tracking.h"

#include <mutex>
#include <unordered_set>

namespace ember::tracking {

Site intern(const std::string& text) {
  static std::mutex mu;
  static auto* sites = new std::unordered_set<std::string>();  // leaked: outlives every storage
  std::lock_guard<std::mutex> lock(mu);
  return &*sites->insert(text).first;
}

}  // namespace ember::tracking
