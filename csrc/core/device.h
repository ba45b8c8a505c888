// Opening devices by kind and ordinal: range checks, the shared-instance cache,
// and the run-time availability questions. Knows backends only by their factory.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend.h"

namespace ember {

DevicePtr cpu_device();
// The process-wide device of (kind, ordinal): created once, shared by every caller.
DevicePtr shared_device(const std::string& kind, int64_t ordinal);
// A fresh instance with its own queue (for CPU, the one CPU device).
DevicePtr new_device(const std::string& kind, int64_t ordinal);
// "cpu", "metal", "metal:1", "cuda:0" -> (kind, ordinal); raises InvalidArgument.
std::pair<std::string, int64_t> parse_device_spec(const std::string& spec);

int64_t device_count(const std::string& kind);  // 0 when not compiled in
bool is_available(const std::string& kind);
bool is_compiled(const std::string& kind);
std::vector<std::string> compiled_backends();
std::vector<DevicePtr> shared_devices();  // the cached ones, for reports

}  // namespace ember
