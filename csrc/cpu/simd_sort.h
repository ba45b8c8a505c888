// Vectorised sorts from x86-simd-sort where the CPU has the instructions.
#pragma once

#include <cstdint>

namespace ember::cpu {

// Sorts a[0..n) ascending with x86-simd-sort's AVX-512 quicksort and returns true on a CPU
// with AVX-512 (x86-64-v4); returns false, a untouched, elsewhere. Not stable, which does
// not matter for distinct values (the sort's packed key-and-position integers).
bool simd_sort_u64(uint64_t* a, int64_t n);

}  // namespace ember::cpu
