#include "device.h"

#include <cctype>
#include <map>
#include <mutex>

namespace ember {

namespace {

std::vector<BackendFactory>& factories() {
  static std::vector<BackendFactory> all;
  return all;
}

const char* kKnownKinds[] = {"cpu", "metal", "cuda"};

bool known_kind(const std::string& kind) {
  for (const char* k : kKnownKinds)
    if (kind == k) return true;
  return false;
}

// Checks kind and ordinal, returns the factory. Every failure is a typed error.
const BackendFactory& checked_factory(const std::string& kind, int64_t ordinal) {
  if (!known_kind(kind))
    throw Error(ErrorKind::InvalidArgument,
                "unknown device kind '" + kind + "': expected one of cpu, metal, cuda")
        .with("kind", kind);
  const BackendFactory* f = find_backend(kind);
  if (!f)
    throw Error(ErrorKind::BackendUnavailable,
                "the " + kind + " backend is not built into this ember; reinstall ember on a " +
                    (kind == "metal" ? std::string("Mac (pip install ember builds Metal there)")
                                     : std::string("machine with the CUDA toolkit and cuBLAS")) +
                    ", or use ember.device(\"cpu\")")
        .with("kind", kind)
        .with("reason", std::string("not built in"));
  std::string reason = f->unavailable_reason();
  if (!reason.empty())
    throw Error(ErrorKind::BackendUnavailable,
                "the " + kind + " backend cannot be used on this machine: " + reason)
        .with("kind", kind)
        .with("reason", reason);
  int64_t count = f->device_count();
  if (ordinal < 0 || ordinal >= count) {
    std::string msg = "no " + kind + " device with ordinal " + std::to_string(ordinal) +
                      ": this machine has " + std::to_string(count) + " " + kind + " device" +
                      (count == 1 ? "" : "s");
    if (count > 0) msg += ", valid ordinals are 0.." + std::to_string(count - 1);
    throw Error(ErrorKind::DeviceNotFound, msg)
        .with("kind", kind)
        .with("ordinal", ordinal)
        .with("count", count);
  }
  return *f;
}

std::mutex cache_mu;
std::map<std::pair<std::string, int64_t>, DevicePtr>& cache() {
  static std::map<std::pair<std::string, int64_t>, DevicePtr> c;
  return c;
}

}  // namespace

bool register_backend(const BackendFactory& factory) {
  factories().push_back(factory);
  return true;
}

const BackendFactory* find_backend(const std::string& kind) {
  for (const auto& f : factories())
    if (f.kind == kind) return &f;
  return nullptr;
}

DevicePtr shared_device(const std::string& kind, int64_t ordinal) {
  const BackendFactory& f = checked_factory(kind, ordinal);
  std::lock_guard<std::mutex> lock(cache_mu);
  DevicePtr& slot = cache()[{kind, ordinal}];
  if (!slot) slot = f.open(ordinal, false);
  return slot;
}

DevicePtr new_device(const std::string& kind, int64_t ordinal) {
  if (kind == "cpu") return shared_device(kind, ordinal);
  return checked_factory(kind, ordinal).open(ordinal, true);
}

DevicePtr cpu_device() {
  static DevicePtr cpu = shared_device("cpu", 0);
  return cpu;
}

std::pair<std::string, int64_t> parse_device_spec(const std::string& spec) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::InvalidArgument,
                 "bad device spec '" + spec + "': " + why +
                     "; expected 'cpu', 'metal', 'metal:N', 'cuda' or 'cuda:N'")
        .with("op", std::string("device"))
        .with("spec", spec);
  };
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  for (char& c : kind) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (!known_kind(kind)) throw bad("unknown kind '" + kind + "'");
  if (colon == std::string::npos) return {kind, 0};
  std::string num = spec.substr(colon + 1);
  bool negative = !num.empty() && num[0] == '-';
  std::string digits = negative ? num.substr(1) : num;
  if (digits.empty() || digits.size() > 9) throw bad("the ordinal must be a small integer");
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) throw bad("the ordinal must be an integer");
  int64_t ordinal = std::stoll(digits);
  return {kind, negative ? -ordinal : ordinal};
}

int64_t device_count(const std::string& kind) {
  const BackendFactory* f = find_backend(kind);
  if (!f || !f->unavailable_reason().empty()) return 0;
  return f->device_count();
}

bool is_compiled(const std::string& kind) {
  return find_backend(kind) != nullptr;
}

bool is_available(const std::string& kind) {
  return device_count(kind) > 0;
}

std::vector<std::string> compiled_backends() {
  std::vector<std::string> out;
  for (const char* k : kKnownKinds)
    if (find_backend(k)) out.emplace_back(k);
  return out;
}

std::vector<DevicePtr> shared_devices() {
  std::lock_guard<std::mutex> lock(cache_mu);
  std::vector<DevicePtr> out;
  for (auto& [key, dev] : cache()) out.push_back(dev);
  return out;
}

}  // namespace ember
