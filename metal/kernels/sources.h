// The MSL source of each kernel family, embedded in the module at build time by
// metal/embed_kernels.py: Metal compiles source at run time and cannot include files,
// so each family's quoted includes (common.h, <family>.h, ...) are inlined.
#pragma once

#include <string>
#include <vector>

namespace ember::metal {

// The source of kernels/<family>.metal, includes inlined; "" for an unknown family.
const std::string& kernel_source(const std::string& family);
// Every embedded family, sorted.
std::vector<std::string> kernel_families();

}  // namespace ember::metal
