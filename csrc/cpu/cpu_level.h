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

// One body built for each level (AVX-512, AVX2+FMA, the baseline), for the compiler to
// vectorise, and a function `name` that calls the build cpu_level() picks: so
// EMBER_CPU_CAPABILITY caps these as it caps the hand-written kernels (a loader-chosen
// target_clones would not). Defines name_base, name_v3 and name_v4 and name(...);
// Tmpl: a template head or nothing; targs: the template arguments the call passes on
// where they are not deduced; args: params' names, in parentheses; the body last.
#define EMBER_COMMA ,
#define EMBER_UNPAREN(...) __VA_ARGS__
// (Tmpl and targs come in parentheses: a comma in them stays inside one argument.)
#define EMBER_CPU_LEVELS_RET(Tmpl, targs, ret, name, params, args, ...) \
  EMBER_UNPAREN Tmpl ret name##_base params __VA_ARGS__                \
  EMBER_UNPAREN Tmpl EMBER_CPU_V3 ret name##_v3 params __VA_ARGS__     \
  EMBER_UNPAREN Tmpl EMBER_CPU_V4 ret name##_v4 params __VA_ARGS__     \
  EMBER_UNPAREN Tmpl ret name params {                                 \
    switch (cpu_level()) {                                             \
      case 2: return name##_v4 EMBER_UNPAREN targs args;               \
      case 1: return name##_v3 EMBER_UNPAREN targs args;               \
      default: return name##_base EMBER_UNPAREN targs args;            \
    }                                                                  \
  }
// ... returning void (the op loops), and a plain function returning ret.
#define EMBER_CPU_LEVELS(Tmpl, targs, name, params, args, ...) \
  EMBER_CPU_LEVELS_RET((Tmpl), (targs), void, name, params, args, __VA_ARGS__)
#define EMBER_CPU_CLONES(ret, name, params, args, ...) \
  EMBER_CPU_LEVELS_RET((), (), ret, name, params, args, __VA_ARGS__)

}  // namespace ember::cpu
