// x86-simd-sort's AVX-512 and AVX2 quicksorts of uint64 (third_party/x86-simd-sort,
// vendored unmodified): vectorised partitions and sorting networks. The library's code is
// built for those ISAs by target pragmas around its headers, not by flags for this file:
// the standard library's templates, included first, stay built for the baseline, so no
// shared inline function instantiated here can carry AVX-512 into other callers.
#include "simd_sort.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <numeric>
#include <utility>
#include <stdlib.h>
#include <vector>

#include "cpu_level.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx512cd,avx2,fma,bmi,bmi2,popcnt")
// The library picks its ISA by these macros, which a target pragma does not define.
#if !defined(__AVX512F__)
#define EMBER_XSS_MACROS 1
#define __AVX512F__ 1
#define __AVX512DQ__ 1
#define __AVX512VL__ 1
#define __AVX512BW__ 1
#define __AVX2__ 1
#endif
#include "x86simdsort-static-incl.h"
#ifdef EMBER_XSS_MACROS
#undef __AVX512F__
#undef __AVX512DQ__
#undef __AVX512VL__
#undef __AVX512BW__
#undef __AVX2__
#undef EMBER_XSS_MACROS
#endif

namespace {
void xss_sort_u64(uint64_t* a, size_t n) { x86simdsortStatic::qsort(a, n); }
}  // namespace
#pragma GCC pop_options

namespace ember::cpu {
bool simd_sort_u64(uint64_t* a, int64_t n) {
  if (cpu_level() != 2) return false;
  xss_sort_u64(a, size_t(n));
  return true;
}
}  // namespace ember::cpu
#else
namespace ember::cpu {
bool simd_sort_u64(uint64_t*, int64_t) { return false; }
}  // namespace ember::cpu
#endif
