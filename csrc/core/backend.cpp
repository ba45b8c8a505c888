#include "backend.h"

#include <chrono>

#include "error.h"

namespace ember {

namespace {
std::atomic<DeviceId> next_device_id{0};
std::atomic<MatmulPrecision> matmul_precision{MatmulPrecision::Highest};
std::atomic<bool> deterministic{false};
}  // namespace

bool deterministic_algorithms() { return deterministic.load(std::memory_order_relaxed); }

void set_deterministic_algorithms(bool on) { deterministic.store(on, std::memory_order_relaxed); }

MatmulPrecision float32_matmul_precision() {
  return matmul_precision.load(std::memory_order_relaxed);
}

void set_float32_matmul_precision(MatmulPrecision p) {
  matmul_precision.store(p, std::memory_order_relaxed);
}

namespace {

// An event that completed when it was made, stamped with the host's clock.
class HostTimeEvent : public Event {
 public:
  bool completed() const override { return true; }
  void wait() const override {}
  double elapsed_ms_since(const Event& start) const override {
    auto* s = dynamic_cast<const HostTimeEvent*>(&start);
    if (!s) return Event::elapsed_ms_since(start);
    return std::chrono::duration<double, std::milli>(at_ - s->at_).count();
  }

 private:
  std::chrono::steady_clock::time_point at_ = std::chrono::steady_clock::now();
};

}  // namespace

double Event::elapsed_ms_since(const Event&) const {
  throw_invalid("elapsed_time",
                "both events must come from record_event() of the same kind of device");
}

EventPtr BackendDevice::record_event() {
  synchronize();
  return std::make_shared<HostTimeEvent>();
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
