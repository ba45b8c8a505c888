// A caching allocator for host buffers: freed blocks are kept by size class and
// handed out again, so a loop of ops does not map fresh pages (and fault) per op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace ember::cpu {

// 64-byte aligned above 4 KiB (2 MiB, on huge pages where possible, from 4 MiB), 16-byte
// below; nullptr when the OS refuses.
void* host_alloc(size_t bytes);
void host_free(void* p, size_t bytes);
void host_empty_cache();
std::map<std::string, int64_t> host_memory_stats();

}  // namespace ember::cpu
