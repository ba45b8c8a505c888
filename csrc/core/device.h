// Opening devices by kind and ordinal: range checks, the shared-instance cache,
// and the run-time availability questions. Knows backends only by their factory.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend.h"

namespace ember {

// The host's device (the DeviceKind marked `host`): the default device of every op.
DevicePtr cpu_device();
const DeviceKind& host_kind();
const DeviceKind& kind_of(const BackendDevice& device);
// The process-wide device of (kind, ordinal): created once, shared by every caller.
DevicePtr shared_device(const std::string& kind, int64_t ordinal);
// A fresh instance with its own queue (for CPU, the one CPU device).
DevicePtr new_device(const std::string& kind, int64_t ordinal);
// "cpu", "metal", "metal:1", "cuda:0" -> (kind, ordinal); raises InvalidArgument.
// Any described kind is accepted, built or not (opening it says why it is missing).
std::pair<std::string, int64_t> parse_device_spec(const std::string& spec);

// Example specs of every kind for messages: "'cpu', 'metal', 'metal:N', 'cuda' or 'cuda:N'".
std::string spec_examples();

int64_t device_count(const std::string& kind);  // 0 when not compiled in
bool is_available(const std::string& kind);
bool is_compiled(const std::string& kind);
std::vector<std::string> compiled_backends();
std::vector<DevicePtr> shared_devices();  // the cached ones, for reports

}  // namespace ember
