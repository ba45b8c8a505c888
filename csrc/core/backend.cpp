#include "backend.h"

namespace ember {

namespace {
std::atomic<DeviceId> next_device_id{0};
}

BackendDevice::BackendDevice() : id_(next_device_id.fetch_add(1)) {}

std::string CreationSite::str() const {
  if (file.empty()) return "";
  std::string s = file + ":" + std::to_string(line);
  if (!function.empty()) s += " in " + function;
  return s;
}

std::string BackendDevice::spec() const {
  return kind() + ":" + std::to_string(ordinal());
}

std::string BackendDevice::describe() const {
  std::string s = spec() + " (Device id=" + std::to_string(id_);
  std::string where = site_.str();
  if (!where.empty()) s += ", created at " + where;
  return s + ")";
}

void BackendDevice::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(rng_mu_);
  seed_ = seed;
  counter_ = 0;
}

std::pair<uint64_t, uint64_t> BackendDevice::take_random(uint64_t count) {
  std::lock_guard<std::mutex> lock(rng_mu_);
  uint64_t first = counter_;
  counter_ += count;
  return {seed_, first};
}

}  // namespace ember
