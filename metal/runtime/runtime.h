// The small C++ interface between ember's Metal backend and a Metal runtime.
// Two implementations: mtl_runtime.mm (Objective-C++ over Apple's Metal, macOS) and
// emulator/ (runs the kernels of kernels/*.metal compiled as C++, for Linux tests).
// Everything above this header (identity, pooling, kernel choice, errors) is portable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::metal::rt {

// A runtime failure (library compile error, command buffer error), with Metal's text.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Size3 {
  uint32_t x = 1, y = 1, z = 1;
};

// A GPU as enumerated by the runtime (MTLCopyAllDevices order).
struct GpuInfo {
  std::string name;          // MTLDevice.name
  uint64_t registry_id = 0;  // MTLDevice.registryID
  bool emulated = false;     // true for the Linux emulator
  uint64_t max_buffer_bytes = 0;
  uint64_t recommended_working_set_bytes = 0;
};

// A buffer in shared storage mode: the host sees the same memory as the GPU.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* contents() = 0;
  virtual size_t length() const = 0;
};

// A compute pipeline of one kernel function.
class Pipeline {
 public:
  virtual ~Pipeline() = default;
  virtual const std::string& name() const = 0;
  virtual uint32_t max_threads_per_group() const = 0;  // maxTotalThreadsPerThreadgroup
  virtual uint32_t simd_width() const = 0;             // threadExecutionWidth
};

// One buffer argument of a dispatch, bound at index `index` of the kernel.
struct BufferArg {
  Buffer* buffer = nullptr;
  size_t offset = 0;  // bytes
};

// A batch of dispatches, executed in order once committed.
class CommandBuffer {
 public:
  virtual ~CommandBuffer() = default;
  // Binds buffers at indices 0..n-1 and `bytes` (setBytes) at index n, then dispatches
  // `groups` threadgroups of `group_size` threads each.
  virtual void dispatch(const Pipeline& pipeline, const std::vector<BufferArg>& buffers,
                        const void* bytes, size_t bytes_size, Size3 groups, Size3 group_size) = 0;
  // Runs `fn` on some runtime thread after the buffer completed (or failed). Before commit.
  virtual void on_completed(std::function<void()> fn) = 0;
  virtual void commit() = 0;
  virtual void wait() = 0;  // waitUntilCompleted; returns at once when already complete
  virtual bool completed() const = 0;
  // After completion: "" when it succeeded, else the runtime's description of the error.
  virtual std::string error() const = 0;
};

// An ordered queue of command buffers (MTLCommandQueue). Queues of one device are not
// ordered with respect to each other.
class Queue {
 public:
  virtual ~Queue() = default;
  virtual std::unique_ptr<CommandBuffer> command_buffer() = 0;
  // Stops the queue's work at the next dispatch: committed command buffers complete with an
  // error, the rest of their dispatches not run. For a queue whose results nobody can read
  // any more. Metal cannot take committed work back: there it does nothing (the GPU
  // finishes it quickly).
  virtual void abandon() {}
};

// A compiled library of kernels.
class Library {
 public:
  virtual ~Library() = default;
  // Throws RuntimeError when the library has no such function.
  virtual std::shared_ptr<Pipeline> pipeline(const std::string& function) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const GpuInfo& info() const = 0;
  virtual std::unique_ptr<Queue> new_queue() = 0;
  // nullptr when the device cannot allocate `bytes`.
  virtual std::shared_ptr<Buffer> new_buffer(size_t bytes) = 0;
  // Compiles MSL source (`label` names it in errors); throws RuntimeError with the log.
  virtual std::shared_ptr<Library> compile_library(const std::string& label,
                                                   const std::string& source) = 0;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  // "" when usable, else why not (no GPU, not macOS, emulator not enabled).
  virtual std::string unavailable_reason() const = 0;
  virtual std::vector<GpuInfo> devices() const = 0;
  // The device at `ordinal` of devices(); ordinal already range-checked.
  virtual std::shared_ptr<Device> open(int64_t ordinal) = 0;
};

// The runtime of this build: Apple's Metal on macOS; on Linux the emulator when
// EMBER_METAL_EMULATOR is set, else one whose unavailable_reason() says why.
Runtime& system_runtime();

}  // namespace ember::metal::rt
