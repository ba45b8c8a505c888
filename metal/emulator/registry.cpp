// The kernel registry, filled by static initialisers of the kernel TUs.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernel_registry.h"

namespace ember::metal::emu {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::map<std::string, KernelInfo>> families;  // nodes never move
};

// Never destroyed: kernels may be looked up from other static destructors.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

bool register_kernel(const KernelInfo& kernel) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.families[kernel.family].emplace(kernel.name, kernel).second) {
    std::fprintf(stderr, "ember metal emulator: kernel %s registered twice in family %s\n",
                 kernel.name, kernel.family);
    std::abort();
  }
  return true;
}

bool register_family(const char* family) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.families[family];
  return true;
}

const KernelInfo* find_kernel(const std::string& family, const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto f = r.families.find(family);
  if (f == r.families.end()) return nullptr;
  auto k = f->second.find(name);
  return k == f->second.end() ? nullptr : &k->second;
}

bool has_family(const std::string& family) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.families.count(family) != 0;
}

std::vector<std::string> registered_families() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& f : r.families) out.push_back(f.first);
  return out;
}

std::vector<const KernelInfo*> registered_kernels(const std::string& family) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const KernelInfo*> out;
  auto f = r.families.find(family);
  if (f != r.families.end())
    for (const auto& k : f->second) out.push_back(&k.second);
  return out;
}

}  // namespace ember::metal::emu
