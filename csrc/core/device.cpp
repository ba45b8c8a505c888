#include "device.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

namespace ember {

namespace {

// Filled during static initialisation (every registration), read-only afterwards.
std::map<std::string, DeviceKind>& kinds() {
  static std::map<std::string, DeviceKind> all;
  return all;
}

std::map<std::string, BackendFactory>& factories() {
  static std::map<std::string, BackendFactory> all;
  return all;
}

std::string kind_names() {  // "cpu, metal, cuda"
  std::string out;
  for (const DeviceKind* k : device_kinds()) out += (out.empty() ? "" : ", ") + k->name;
  return out;
}

const DeviceKind& known_kind(const std::string& name) {
  const DeviceKind* k = find_kind(name);
  if (!k)
    throw Error(ErrorKind::InvalidArgument,
                "unknown device kind '" + name + "': expected one of " + kind_names())
        .with("kind", name);
  return *k;
}

[[noreturn]] void throw_not_built(const DeviceKind& k) {
  throw Error(ErrorKind::BackendUnavailable,
              "the " + k.name + " backend is not built into this ember; " + k.install_hint +
                  ", or use ember.device(\"" + host_kind().name + "\")")
      .with("kind", k.name)
      .with("reason", std::string("not built in"));
}

[[noreturn]] void throw_not_found(const std::string& kind, int64_t ordinal, int64_t count) {
  std::string msg = "no " + kind + " device with ordinal " + std::to_string(ordinal) +
                    ": this machine has " + std::to_string(count) + " " + kind + " device" +
                    (count == 1 ? "" : "s");
  if (count > 0) msg += ", valid ordinals are 0.." + std::to_string(count - 1);
  throw Error(ErrorKind::DeviceNotFound, msg)
      .with("kind", kind)
      .with("ordinal", ordinal)
      .with("count", count);
}

// Checks kind and ordinal, returns the factory. Every failure is a typed error.
const BackendFactory& checked_factory(const std::string& kind, int64_t ordinal) {
  const DeviceKind& k = known_kind(kind);
  const BackendFactory* f = find_backend(kind);
  if (!f) throw_not_built(k);
  std::string reason = f->unavailable_reason();
  if (!reason.empty())
    throw Error(ErrorKind::BackendUnavailable,
                "the " + kind + " backend cannot be used on this machine: " + reason +
                    "; use ember.device(\"" + host_kind().name + "\") instead, or check " +
                    "ember." + kind + "_is_available() first")
        .with("kind", kind)
        .with("reason", reason);
  int64_t count = f->device_count();
  if (ordinal < 0 || ordinal >= count) throw_not_found(kind, ordinal, count);
  return *f;
}

std::mutex cache_mu;
std::map<std::pair<std::string, int64_t>, DevicePtr>& cache() {
  static std::map<std::pair<std::string, int64_t>, DevicePtr> c;
  return c;
}

}  // namespace

bool register_kind(const DeviceKind& kind) {
  return kinds().emplace(kind.name, kind).second;
}

bool register_backend(const BackendFactory& factory) {
  return factories().emplace(factory.kind, factory).second;
}

std::vector<const DeviceKind*> device_kinds() {
  std::vector<const DeviceKind*> out;
  for (const auto& [name, k] : kinds()) out.push_back(&k);
  std::sort(out.begin(), out.end(), [](const DeviceKind* a, const DeviceKind* b) {
    return std::make_pair(a->rank, a->name) < std::make_pair(b->rank, b->name);
  });
  return out;
}

const DeviceKind* find_kind(const std::string& name) {
  auto it = kinds().find(name);
  return it == kinds().end() ? nullptr : &it->second;
}

const BackendFactory* find_backend(const std::string& kind) {
  auto it = factories().find(kind);
  return it == factories().end() ? nullptr : &it->second;
}

const DeviceKind& host_kind() {
  for (const auto& [name, k] : kinds())
    if (k.host) return k;
  throw Error(ErrorKind::BackendUnavailable, "no host device kind is built into this ember")
      .with("reason", std::string("not built in"));
}

const DeviceKind& kind_of(const BackendDevice& device) {
  return known_kind(device.kind());
}

DevicePtr shared_device(const std::string& kind, int64_t ordinal) {
  const BackendFactory& f = checked_factory(kind, ordinal);
  std::lock_guard<std::mutex> lock(cache_mu);
  DevicePtr& slot = cache()[{kind, ordinal}];
  if (!slot) slot = f.open(ordinal, false);
  return slot;
}

DevicePtr new_device(const std::string& kind, int64_t ordinal) {
  if (known_kind(kind).host) return shared_device(kind, ordinal);  // the host is one device
  return checked_factory(kind, ordinal).open(ordinal, true);
}

DevicePtr cpu_device() {
  static DevicePtr cpu = shared_device(host_kind().name, 0);
  return cpu;
}

std::pair<std::string, int64_t> parse_device_spec(const std::string& spec) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::InvalidArgument,
                 "bad device spec '" + spec + "': " + why + "; expected " + spec_examples())
        .with("op", std::string("device"))
        .with("spec", spec);
  };
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  for (char& c : kind) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (!find_kind(kind)) throw bad("unknown kind '" + kind + "'");
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

std::string spec_examples() {
  std::vector<std::string> specs;
  for (const DeviceKind* k : device_kinds()) {
    specs.push_back("'" + k->name + "'");
    if (!k->host) specs.push_back("'" + k->name + ":N'");
  }
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i)
    out += (i == 0 ? "" : i + 1 == specs.size() ? " or " : ", ") + specs[i];
  return out;
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
  for (const DeviceKind* k : device_kinds())
    if (find_backend(k->name)) out.push_back(k->name);
  return out;
}

std::vector<DevicePtr> shared_devices() {
  std::lock_guard<std::mutex> lock(cache_mu);
  std::vector<DevicePtr> out;
  for (auto& [key, dev] : cache()) out.push_back(dev);
  return out;
}

}  // namespace ember
