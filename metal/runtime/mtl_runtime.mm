// runtime.h over Apple's Metal (macOS; Objective-C++ with ARC and blocks). Deliberately
// thin: every decision (pooling, kernel choice, grid sizes, error wording for users) lives
// in the portable backend; this file only translates calls and Metal's failures.
// Linux cannot build this; metal/check_objc.sh syntax-checks it against metal/stubs/.

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device_list.h"
#include "runtime.h"

#if !__has_feature(objc_arc)
#error "mtl_runtime.mm must be compiled with -fobjc-arc"
#endif

namespace ember::metal::rt {
namespace {

// setBytes:length:atIndex: is documented only for data smaller than 4 KB.
constexpr size_t kMaxSetBytes = 4096;

std::string to_std(NSString* s) {
  @autoreleasepool {
    const char* c = s ? s.UTF8String : nullptr;
    return c ? std::string(c) : std::string();
  }
}

// nil when `s` is not valid UTF-8.
NSString* to_ns(const std::string& s) {
  @autoreleasepool {
    return [[NSString alloc] initWithBytes:s.data() length:s.size() encoding:NSUTF8StringEncoding];
  }
}

std::string describe(NSError* error, const char* fallback) {
  std::string text;
  @autoreleasepool {
    if (error) text = to_std(error.localizedDescription);
  }
  return text.empty() ? std::string(fallback) : text;
}

GpuInfo info_of(id<MTLDevice> device) {
  GpuInfo info;
  @autoreleasepool {
    info.name = to_std(device.name);
    info.registry_id = device.registryID;
    info.emulated = false;
    info.max_buffer_bytes = device.maxBufferLength;
    info.recommended_working_set_bytes = device.recommendedMaxWorkingSetSize;
  }
  return info;
}

class MtlBuffer final : public Buffer {
 public:
  explicit MtlBuffer(id<MTLBuffer> buffer) : buffer_(buffer) {}
  void* contents() override {
    @autoreleasepool {
      return [buffer_ contents];
    }
  }
  size_t length() const override {
    @autoreleasepool {
      return buffer_.length;
    }
  }
  id<MTLBuffer> handle() const { return buffer_; }

 private:
  id<MTLBuffer> buffer_;
};

class MtlPipeline final : public Pipeline {
 public:
  MtlPipeline(std::string name, id<MTLComputePipelineState> state)
      : name_(std::move(name)), state_(state) {
    @autoreleasepool {
      max_threads_ = uint32_t(state.maxTotalThreadsPerThreadgroup);
      simd_width_ = uint32_t(state.threadExecutionWidth);
    }
  }
  const std::string& name() const override { return name_; }
  uint32_t max_threads_per_group() const override { return max_threads_; }
  uint32_t simd_width() const override { return simd_width_; }
  id<MTLComputePipelineState> handle() const { return state_; }

 private:
  std::string name_;
  id<MTLComputePipelineState> state_;
  uint32_t max_threads_ = 0, simd_width_ = 0;
};

MTLSize mtl_size(Size3 s) {
  return MTLSizeMake(s.x, s.y, s.z);
}

// One command buffer with at most one open compute encoder, reused by every dispatch until
// commit: the backend batches many dispatches per buffer, a serial encoder already runs
// them in encoding order with hazard tracking, and one encoder per dispatch would only add
// CPU cost per kernel.
class MtlCommandBuffer final : public CommandBuffer {
 public:
  explicit MtlCommandBuffer(id<MTLCommandBuffer> buffer) : buffer_(buffer) {}
  // An encoder must be ended before its command buffer goes away, committed or not.
  ~MtlCommandBuffer() override { end_encoder(); }

  void dispatch(const Pipeline& pipeline, const std::vector<BufferArg>& buffers, const void* bytes,
                size_t bytes_size, Size3 groups, Size3 group_size) override {
    if (committed_) throw RuntimeError("Metal: dispatch on a committed command buffer");
    if (bytes_size > kMaxSetBytes)
      throw RuntimeError("Metal: kernel parameters of " + std::to_string(bytes_size) +
                         " bytes exceed setBytes' 4 KB limit (" + pipeline.name() + ")");
    bool encoder_ok = true;
    @autoreleasepool {
      if (!encoder_) encoder_ = [buffer_ computeCommandEncoder];
      if (!encoder_) {
        encoder_ok = false;
      } else {
        encode(static_cast<const MtlPipeline&>(pipeline), buffers, bytes, bytes_size, groups,
               group_size);
      }
    }
    if (!encoder_ok) throw RuntimeError("Metal: could not open a compute command encoder");
  }

  void on_completed(std::function<void()> fn) override {
    if (committed_) throw RuntimeError("Metal: on_completed after commit");
    // Shared so the block's copies of the capture all call the same function object.
    auto handler = std::make_shared<std::function<void()>>(std::move(fn));
    @autoreleasepool {
      [buffer_ addCompletedHandler:^(id<MTLCommandBuffer> done) {
        (void)done;
        // Metal's callback thread drains no pool of ours: the handler's objects go here.
        @autoreleasepool {
          // A Metal callback thread has nowhere to send an exception: never let one escape.
          try {
            (*handler)();
          } catch (...) {
          }
        }
      }];
    }
  }

  void commit() override {
    if (committed_) return;
    end_encoder();
    @autoreleasepool {
      [buffer_ commit];
    }
    committed_ = true;
  }

  void wait() override {
    // waitUntilCompleted on a buffer that was never committed would block forever.
    if (!committed_) throw RuntimeError("Metal: wait on a command buffer that was not committed");
    @autoreleasepool {
      [buffer_ waitUntilCompleted];
    }
  }

  bool completed() const override {
    @autoreleasepool {
      const MTLCommandBufferStatus status = buffer_.status;
      return status == MTLCommandBufferStatusCompleted || status == MTLCommandBufferStatusError;
    }
  }

  std::string error() const override {
    @autoreleasepool {
      if (buffer_.status != MTLCommandBufferStatusError) return std::string();
      return describe(buffer_.error, "Metal command buffer failed");
    }
  }

 private:
  void encode(const MtlPipeline& pipeline, const std::vector<BufferArg>& buffers, const void* bytes,
              size_t bytes_size, Size3 groups, Size3 group_size) {
    @autoreleasepool {
      [encoder_ setComputePipelineState:pipeline.handle()];
      for (size_t i = 0; i < buffers.size(); ++i) {
        const auto* buffer = static_cast<const MtlBuffer*>(buffers[i].buffer);
        [encoder_ setBuffer:(buffer ? buffer->handle() : nil) offset:buffers[i].offset atIndex:i];
      }
      if (bytes_size > 0) [encoder_ setBytes:bytes length:bytes_size atIndex:buffers.size()];
      [encoder_ dispatchThreadgroups:mtl_size(groups) threadsPerThreadgroup:mtl_size(group_size)];
    }
  }

  void end_encoder() {
    if (!encoder_) return;
    @autoreleasepool {
      [encoder_ endEncoding];
    }
    encoder_ = nil;
  }

  id<MTLCommandBuffer> buffer_;
  id<MTLComputeCommandEncoder> encoder_ = nil;
  bool committed_ = false;
};

class MtlQueue final : public Queue {
 public:
  explicit MtlQueue(id<MTLCommandQueue> queue) : queue_(queue) {}

  std::unique_ptr<CommandBuffer> command_buffer() override {
    std::unique_ptr<CommandBuffer> out;
    @autoreleasepool {
      id<MTLCommandBuffer> buffer = [queue_ commandBuffer];
      if (buffer) out = std::make_unique<MtlCommandBuffer>(buffer);
    }
    if (!out) throw RuntimeError("Metal: could not create a command buffer");
    return out;
  }

 private:
  id<MTLCommandQueue> queue_;
};

class MtlLibrary final : public Library {
 public:
  MtlLibrary(std::string label, id<MTLDevice> device, id<MTLLibrary> library)
      : label_(std::move(label)), device_(device), library_(library) {}

  std::shared_ptr<Pipeline> pipeline(const std::string& function) override {
    std::shared_ptr<Pipeline> out;
    std::string failure;
    @autoreleasepool {
      NSString* name = to_ns(function);
      id<MTLFunction> fn = name ? [library_ newFunctionWithName:name] : nil;
      if (!fn) {
        failure = "Metal library '" + label_ + "' has no kernel '" + function + "'";
      } else {
        NSError* error = nil;
        id<MTLComputePipelineState> state = [device_ newComputePipelineStateWithFunction:fn
                                                                                   error:&error];
        if (state) {
          out = std::make_shared<MtlPipeline>(function, state);
        } else {
          failure = "Metal pipeline '" + function + "' of library '" + label_ +
                    "' failed: " + describe(error, "unknown error");
        }
      }
    }
    if (!out) throw RuntimeError(failure);
    return out;
  }

 private:
  std::string label_;
  id<MTLDevice> device_;
  id<MTLLibrary> library_;
};

// Compile options: a pinned language version, and IEEE semantics (NaN, inf, signed zero)
// that the CPU backend's results depend on.
MTLCompileOptions* compile_options() {
  @autoreleasepool {
    MTLCompileOptions* options = [[MTLCompileOptions alloc] init];
    // 2.4 (macOS 12+) covers what the kernels use: templates with host_name, simd-group
    // functions, 64-bit integers. Older systems never get here (unavailable_reason()).
    if (@available(macOS 12.0, iOS 15.0, *)) options.languageVersion = MTLLanguageVersion2_4;
      // mathMode and friends exist only in the macOS 15 SDK: an older SDK must not see them.
#if defined(__MAC_OS_X_VERSION_MAX_ALLOWED) && __MAC_OS_X_VERSION_MAX_ALLOWED >= 150000
    if (@available(macOS 15.0, iOS 18.0, *)) {
      options.mathMode = MTLMathModeSafe;
      options.mathFloatingPointFunctions = MTLMathFloatingPointFunctionsPrecise;
      return options;
    }
#endif
    // The pre-15 switch for both of the above; deprecated from 15, where it is not reached.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    options.fastMathEnabled = NO;
#pragma clang diagnostic pop
    return options;
  }
}

class MtlDevice final : public Device {
 public:
  explicit MtlDevice(id<MTLDevice> device) : device_(device), info_(info_of(device)) {}

  const GpuInfo& info() const override { return info_; }

  std::unique_ptr<Queue> new_queue() override {
    std::unique_ptr<Queue> out;
    @autoreleasepool {
      id<MTLCommandQueue> queue = [device_ newCommandQueue];
      if (queue) out = std::make_unique<MtlQueue>(queue);
    }
    if (!out) throw RuntimeError("Metal: could not create a command queue on " + info_.name);
    return out;
  }

  std::shared_ptr<Buffer> new_buffer(size_t bytes) override {
    // Metal rejects zero-length buffers and lengths past maxBufferLength.
    const size_t length = std::max<size_t>(bytes, 1);
    if (length > info_.max_buffer_bytes) return nullptr;
    @autoreleasepool {
      id<MTLBuffer> buffer = [device_ newBufferWithLength:length
                                                  options:MTLResourceStorageModeShared];
      if (!buffer) return nullptr;
      return std::make_shared<MtlBuffer>(buffer);
    }
  }

  std::shared_ptr<Library> compile_library(const std::string& label,
                                           const std::string& source) override {
    std::shared_ptr<Library> out;
    std::string failure;
    @autoreleasepool {
      NSString* text = to_ns(source);
      NSError* error = nil;
      // A library can come back with *error holding warnings: only nil means failure.
      id<MTLLibrary> library =
          text ? [device_ newLibraryWithSource:text options:compile_options() error:&error] : nil;
      if (library) {
        out = std::make_shared<MtlLibrary>(label, device_, library);
      } else {
        failure = "Metal could not compile '" + label +
                  "': " + (text ? describe(error, "unknown error") : "source is not valid UTF-8");
      }
    }
    if (!out) throw RuntimeError(failure);
    return out;
  }

 private:
  id<MTLDevice> device_;
  GpuInfo info_;
};

// MSL 2.4, the version compile_options() pins, exists from macOS 12.
bool os_supported() {
  if (@available(macOS 12.0, iOS 15.0, *)) return true;
  return false;
}

class MtlRuntime final : public Runtime {
 public:
  MtlRuntime() {
    @autoreleasepool {
      std::vector<id<MTLDevice>> listed;
      NSArray<id<MTLDevice>>* all = MTLCopyAllDevices();
      for (NSUInteger i = 0; i < all.count; ++i) listed.push_back(all[i]);
      devices_ = devices_or_default(std::move(listed), []() -> std::optional<id<MTLDevice>> {
        id<MTLDevice> device = MTLCreateSystemDefaultDevice();
        return device ? std::optional<id<MTLDevice>>(device) : std::nullopt;
      });
    }
  }

  std::string unavailable_reason() const override {
    if (!os_supported())
      return "ember's Metal kernels need macOS 12 or later (Metal Shading Language 2.4: "
             "templates with host_name, simd-group functions, 64-bit integers); this macOS is "
             "older";
    return devices_.empty() ? std::string("no Metal device found") : std::string();
  }

  std::vector<GpuInfo> devices() const override {
    std::vector<GpuInfo> out;
    for (id<MTLDevice> device : devices_) out.push_back(info_of(device));
    return out;
  }

  std::shared_ptr<Device> open(int64_t ordinal) override {
    if (ordinal < 0 || uint64_t(ordinal) >= devices_.size())
      throw RuntimeError("Metal: no device with ordinal " + std::to_string(ordinal));
    return std::make_shared<MtlDevice>(devices_[size_t(ordinal)]);
  }

 private:
  // Kept for the process: ordinals index this list, so they stay stable.
  std::vector<id<MTLDevice>> devices_;
};

}  // namespace

Runtime& system_runtime() {
  static MtlRuntime runtime;
  return runtime;
}

}  // namespace ember::metal::rt
