// The x86-64 levels the CPU kernels are compiled for, and the one this CPU runs.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace ember::cpu {

// Functions marked EMBER_CPU_V4 / EMBER_CPU_V3 are compiled for AVX-512 (x86-64-v4) or
// AVX2+FMA (x86-64-v3); cpu_level() says which this CPU takes: 2, 1 or 0 (the baseline).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EMBER_CPU_X86 1  // the levels exist: kernels written with intrinsics may be built
#define EMBER_CPU_V3 __attribute__((target("arch=x86-64-v3")))
#define EMBER_CPU_V4 __attribute__((target("arch=x86-64-v4")))

// The highest level EMBER_CPU_CAPABILITY allows (avx512, avx2 or default, the names of
// PyTorch's ATEN_CPU_CAPABILITY): 2, 1 or 0; 2 where it is unset or names none of them.
// It lets a lower level's kernels run, and be tested, on a CPU that has a higher one.
inline int cpu_level_cap() {
  static const int cap = [] {
    const char* env = std::getenv("EMBER_CPU_CAPABILITY");
    if (!env) return 2;
    const std::string_view name(env);
    return name == "default" ? 0 : name == "avx2" ? 1 : 2;
  }();
  return cap;
}

inline int cpu_level() {
  static const int level = std::min(cpu_level_cap(), __builtin_cpu_supports("x86-64-v4")   ? 2
                                                     : __builtin_cpu_supports("x86-64-v3") ? 1
                                                                                           : 0);
  return level;
}
#else
#define EMBER_CPU_V3
#define EMBER_CPU_V4
inline int cpu_level() { return 0; }
#endif

// `ret name params body`, built for each level (AVX-512, AVX2+FMA, the baseline) from one
// plain loop the compiler vectorises, the build called by cpu_level(): so
// EMBER_CPU_CAPABILITY caps these as it caps the hand-written kernels (a loader-chosen
// target_clones would not). args: params' names, in parentheses.
#ifdef EMBER_CPU_X86
#define EMBER_CPU_CLONES(ret, name, params, args, ...)             \
  [[maybe_unused]] static ret name##_level0 params __VA_ARGS__      \
  [[maybe_unused]] EMBER_CPU_V3 static ret name##_level1 params __VA_ARGS__ \
  [[maybe_unused]] EMBER_CPU_V4 static ret name##_level2 params __VA_ARGS__ \
  ret name params {                                                 \
    switch (cpu_level()) {                                          \
      case 2: return name##_level2 args;                            \
      case 1: return name##_level1 args;                            \
      default: return name##_level0 args;                           \
    }                                                               \
  }
#else
#define EMBER_CPU_CLONES(ret, name, params, args, ...) ret name params __VA_ARGS__
#endif

}  // namespace ember::cpu
