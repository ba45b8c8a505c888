// The Metal backend: Device instances (one queue each), storages in pooled shared
// buffers, and the helpers op files use to launch kernels. Portable C++ over
// runtime/runtime.h; one file per op family in this folder.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../kernels/common.h"
#include "../runtime/runtime.h"
#include "buffer_pool.h"
#include "completed_prefix.h"
#include "core/backend.h"
#include "core/layout_plan.h"

struct SortKParams;  // kernels/sort.h

namespace ember::metal {

class MetalStorage;

// What a kernel launch binds: buffers of storages, in kernel argument order. A kernel
// writes its last buffer (dst comes last), or its last `written` ones where dispatch is
// told so, and only reads the others: dispatch records uses and writes from that, for
// events and stream-ordered frees.
using KernelBuffers = std::vector<const MetalStorage*>;

class MetalDevice : public BackendDevice {
 public:
  MetalDevice(int64_t ordinal, std::shared_ptr<rt::Device> gpu);
  ~MetalDevice() override;

  std::string kind() const override { return "metal"; }
  int64_t ordinal() const override { return ordinal_; }
  std::string location() const override;
  std::string name() const override { return gpu_->info().name; }
  bool supports_dtype(DType d) const override { return d != DType::F64; }
  // Commits the open command buffer and waits for all work of this instance; a failed
  // command buffer surfaces here as DeviceError.
  void synchronize() override;
  bool query() const override;  // false while a command buffer is open or in flight

  EMBER_BACKEND_DEVICE_ALLOCATION
  std::map<std::string, std::string> info() const override;
  void empty_cache() override;
  std::map<std::string, int64_t> memory_stats() const override;
  // command_buffers_committed / _completed, dispatches_open (encoded, not yet committed),
  // host_waits (synchronize() and waits for one storage), dispatches and threadgroups
  // (encoded since the device opened: how an op's work was shaped).
  std::map<std::string, int64_t> queue_stats() const override;

  // The event of command buffer `seq` of this queue (its sequence number; 0: no work).
  EventPtr event_at(uint64_t seq);
  bool passed(uint64_t seq) const { return completed_seq_->load(std::memory_order_acquire) >= seq; }
  // Waits for command buffer `seq` only, committing it first when it is still open; a
  // failed command buffer (this one or an earlier) surfaces here as DeviceError.
  void wait_for(uint64_t seq);

  // Encodes `kernel` (a host name in kernels/<family>.metal) into the open command
  // buffer: `groups` threadgroups of `group_size` lanes, buffers then `params`; the
  // last `written` buffers are the ones it writes.
  void dispatch(const char* family, const std::string& kernel, const KernelBuffers& buffers,
                const void* params, size_t params_size, rt::Size3 groups, rt::Size3 group_size,
                size_t written = 1);
  template <typename P>
  void dispatch(const char* family, const std::string& kernel, const KernelBuffers& buffers,
                const P& params, rt::Size3 groups, rt::Size3 group_size, size_t written = 1) {
    dispatch(family, kernel, buffers, &params, sizeof(P), groups, group_size, written);
  }
  // One lane per element for n elements (gid.x < n is the kernel's to check).
  // Groups of kElementwiseGroup lanes, or fewer where the pipeline allows fewer.
  template <typename P>
  void dispatch_1d(const char* family, const std::string& kernel, const KernelBuffers& buffers,
                   const P& params, int64_t n) {
    if (n <= 0) return;
    const uint32_t group = std::min(kElementwiseGroup, max_group(family, kernel));
    dispatch(family, kernel, buffers, &params, sizeof(P),
             rt::Size3{uint32_t((n + group - 1) / group), 1, 1}, rt::Size3{group, 1, 1});
  }
  // Throws UnsupportedDTypeError naming the op when `kernel` is an int64 kernel and the
  // family's int64 library does not build, else DeviceError when it cannot be built.
  const rt::Pipeline& pipeline(const char* family, const std::string& kernel);
  // The pipeline's maxTotalThreadsPerThreadgroup: may be below what the device allows.
  uint32_t max_group(const char* family, const std::string& kernel) {
    return pipeline(family, kernel).max_threads_per_group();
  }

  // The pool's buffer for `bytes`, reusable only once its last command buffer completed.
  std::shared_ptr<rt::Buffer> acquire(size_t bytes);
  // Back to the pool, reused once command buffer `last_use_seq` (the last to use it) completed.
  void release(std::shared_ptr<rt::Buffer> buffer, uint64_t last_use_seq);

  static constexpr uint32_t kElementwiseGroup = 256;
  static constexpr int kDispatchesPerCommandBuffer = 32;
  // Committed command buffers a queue may run behind before the host waits for the oldest.
  static constexpr size_t kMaxCommandBuffersInFlight = 3;

 private:
  struct InFlight {
    uint64_t seq;
    std::shared_ptr<rt::CommandBuffer> cb;  // shared: every waiting thread can wait on it
  };
  rt::Library& library_locked(const std::string& label);  // mu_ held; built on first use
  void commit_locked();                                   // mu_ held
  void drop_finished_locked();  // mu_ held: forgets completed buffers, keeps their errors
  void raise_pending_error();   // DeviceError for a failed command buffer nobody saw yet
  void throttle();              // mu_ not held: waits while too much work is in flight
  // Commits the open buffer and waits for all committed work (the destructor cannot be
  // interrupted: the queue's worker must not outlive the buffers it uses).
  void drain(bool interruptible);
  // Waits for command buffer `seq` (and all before it), committed, of which `buffers` are
  // still in flight; Ctrl-C interrupts the wait when `interruptible`.
  void wait_committed(uint64_t seq, const std::vector<std::shared_ptr<rt::CommandBuffer>>& buffers,
                      bool interruptible);
  // DeviceError naming `op` in a forked child: the queue's threads stay in the parent.
  void check_process(const std::string& op) const;

  int64_t ordinal_;
  int64_t owner_pid_;  // the process that opened it
  std::shared_ptr<rt::Device> gpu_;
  std::unique_ptr<rt::Queue> queue_;
  mutable std::mutex mu_;  // guards the open command buffer, counters, libraries, pipelines
  std::unique_ptr<rt::CommandBuffer> open_;
  int open_dispatches_ = 0;
  std::deque<InFlight> in_flight_;  // committed, not yet known complete, in order
  uint64_t open_seq_ = 1;           // sequence number of the open (not yet committed) buffer
  int64_t host_waits_ = 0;
  int64_t dispatches_ = 0, threadgroups_ = 0;
  std::shared_ptr<CompletedPrefix> completed_seq_;
  std::string pending_error_;  // from a finished command buffer, raised at the next wait
  std::map<std::string, std::shared_ptr<rt::Library>> libraries_;
  std::map<std::string, std::string> library_errors_;  // label -> why it did not build
  std::map<std::string, std::shared_ptr<rt::Pipeline>> pipelines_;
  BufferPool pool_;
};

class MetalStorage : public BackendStorage {
 public:
  MetalStorage(DevicePtr device, DType dtype, int64_t numel);  // uninitialised
  ~MetalStorage() override;

  DType dtype() const override { return dtype_; }
  int64_t numel() const override { return numel_; }
  const DevicePtr& device() const override { return device_; }
  MetalDevice& metal() const { return static_cast<MetalDevice&>(*device_); }
  rt::Buffer* buffer() const { return buffer_.get(); }
  // Host view of the shared buffer: only for fresh buffers or after synchronize().
  void* host_data() const { return buffer_->contents(); }

  // Waits for the command buffer that last wrote this storage, not for the whole queue.
  void to_host(void* dst) const override;
  EventPtr last_write() const override;
  // Called by dispatch (device lock held) for every buffer a command buffer binds.
  void note_use(uint64_t seq, bool write) const;
  EMBER_BACKEND_STORAGE_OPS
  // copy_to_peer stays the base's nullptr: instances never copy to each other (§2).
  // A transposed copy in tiles (copy.h, TileKParams); false when the views are not one.
  bool copy_tiled(const Layout& src, BackendStorage& dst, const Layout& dst_layout) const;
  // norm(p=2)'s sum of squares in one pass (reduce_sum's kernel, squaring), float32.
  bool reduce_sum_squares(const Layout& src, int64_t reduced_dims,
                          BackendStorage& dst) const override;
  // prod in one pass (kernels/reduce.metal's reduce_prod): float32, int64 (wrapping).
  bool reduce_prod(const Layout& src, int64_t reduced_dims, BackendStorage& dst) const override;
  // logsumexp of float32 in one pass (kernels/reduce.metal's reduce_lse).
  bool reduce_logsumexp(const Layout& src, int64_t reduced_dims,
                        BackendStorage& dst) const override;
  // var / std in one pass (kernels/reduce.metal's reduce_var) for float32 and half types.
  bool reduce_var(const Layout& src, int64_t reduced_dims, double correction, bool root,
                  BackendStorage& dst) const override;
  // softmax / log_softmax over a dim of a contiguous src that is not its last
  // (kernels/softmax.metal's columns), in one dispatch.
  bool softmax_columns(const Layout& src, int64_t dim, bool log,
                       BackendStorage& dst) const override;
  // topk by selection, a threadgroup per row (sort.h, TopkKParams); false for k past
  // EMBER_TOPK_MAX and for a few rows of millions (core sorts those).
  bool topk(const Layout& src, int64_t k, bool largest, BackendStorage& values,
            BackendStorage& indices) const override;
  // index_select by rows where the layout allows (index.h, IndexRowsKParams).
  bool index_select_rows(const Layout& src, int64_t dim, const BackendStorage& ids,
                         const Layout& ids_layout, BackendStorage& dst) const;
  // An integer tensor's smallest and largest value in one pass (index.h, BoundsKParams),
  // read back when the callable is called.
  IndexBounds index_bounds(const Layout& src) const override;
  // numpy's read through 1-4 int64 arrays (or a write's offsets) in one pass, each
  // threadgroup's bounds of the ids merged on the host (index.h, PointsKParams).
  bool gather_points(const Layout& src, const std::vector<PointIds>& ids, BackendStorage& dst,
                     int64_t* lo, int64_t* hi, bool offsets) const override;
  // The radix sort of nrows long rows (sort.h, RadixKParams).
  void sort_radix(const ::SortKParams& p, int64_t nrows, BackendStorage& values,
                  BackendStorage& indices) const;

 private:
  DevicePtr device_;
  DType dtype_;
  int64_t numel_;
  std::shared_ptr<rt::Buffer> buffer_;
  // Sequence numbers of the last command buffers that wrote / used the buffer (0: none).
  mutable std::atomic<uint64_t> last_write_seq_{0}, last_use_seq_{0};
};

inline const MetalStorage& as_metal(const BackendStorage& s) {
  return static_cast<const MetalStorage&>(s);
}
inline MetalStorage& as_metal(BackendStorage& s) {
  return static_cast<MetalStorage&>(s);
}

// Whether `kernel` is in its family's 64-bit integer library: a name token i64 or b64.
bool is_int64_kernel(const std::string& kernel);

// Kernel name suffix of a dtype: "f32", "f16", "bf16", "i64", "i32", "u32", "u8" (bool
// too).
// F64 never reaches kernels (core checks supports_dtype); reaching it is a bug.
const char* dtype_suffix(DType d);

// Collapses dims that are contiguous in *every* given layout (all of dst's shape), so
// kernels see at most EMBER_MAX_DIMS dims. Throws InvalidArgument naming `op` when
// more than EMBER_MAX_DIMS dims remain.
// Walk order (core/layout_plan.h): Memory for elementwise work, whose lanes may take the
// elements in any order.
std::vector<StridedLayout> kernel_layouts(const char* op, const std::vector<Layout>& layouts,
                                          WalkOrder order = WalkOrder::Logical);
StridedLayout kernel_layout(const char* op, const Layout& layout);

}  // namespace ember::metal
