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

const char* unary_name(UnaryOp op) {
  static const char* names[] = {"neg", "abs",  "exp",  "log",  "sqrt", "sqr",     "recip", "sin",
                                "cos", "tanh", "relu", "gelu", "silu", "sigmoid", "clamp"};
  return names[int(op)];
}
const char* binary_name(BinaryOp op) {
  static const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum"};
  return names[int(op)];
}
const char* cmp_name(CmpOp op) {
  static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return names[int(op)];
}
const char* reduce_name(ReduceOp op) {
  static const char* names[] = {"sum", "max", "min", "argmax", "argmin"};
  return names[int(op)];
}

}  // namespace ember
