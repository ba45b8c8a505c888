// The backend interface: everything a device kind implements, and nothing else.
// Core code talks to backends only through these two classes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dtype.h"
#include "layout.h"
#include "op_table.h"

namespace ember {

class BackendStorage;

enum class RandomDist { Uniform, Normal };

// The inclusive scans along a dim: cumsum and cumprod.
enum class ScanOp { Sum, Prod };

struct UnaryParams {
  double lo = 0, hi = 0;  // clamp bounds
};

using DeviceId = int64_t;

// ember.set_float32_matmul_precision (PyTorch's name and values): "highest" keeps f32
// products in full f32; "high" and "medium" let GPUs use TF32 tensor cores.
enum class MatmulPrecision { Highest, High, Medium };
MatmulPrecision float32_matmul_precision();
void set_float32_matmul_precision(MatmulPrecision p);

// ember.use_deterministic_algorithms (PyTorch's name): off (the default), a backend may
// add floats atomically where the order of the adds changes the last bits (CUDA's
// scatter_add and what is built on it); on, it takes its deterministic kernel.
bool deterministic_algorithms();
void set_deterministic_algorithms(bool on);

// Where a Device was made, read from the Python caller.
struct CreationSite {
  std::string file;
  int64_t line = 0;
  std::string function;
  std::string str() const;  // "model.py:12 in load", or "" when unknown
};

// A point in one device's queue, recorded after some work: once it has completed, that
// work (and all queued before it there) is done. A backend records one after the work that
// writes a storage (BackendStorage::last_write) and after the last work that uses a
// buffer it frees (stream-ordered frees).
class Event {
 public:
  virtual ~Event() = default;
  virtual bool completed() const = 0;  // never waits
  // Blocks the host until completed; a failure of queued work surfaces as DeviceError.
  virtual void wait() const = 0;
  // Milliseconds from `start` to this event, both from one device's record_event(), once
  // both completed (Python: start.elapsed_time(end), as torch.cuda.Event).
  virtual double elapsed_ms_since(const Event& start) const;
};

// nullptr stands for "nothing pending": work done when its call returned (the CPU).
using EventPtr = std::shared_ptr<const Event>;

class BackendDevice : public std::enable_shared_from_this<BackendDevice> {
 public:
  BackendDevice();  // takes the next process-unique id
  virtual ~BackendDevice() = default;
  BackendDevice(const BackendDevice&) = delete;
  BackendDevice& operator=(const BackendDevice&) = delete;

  DeviceId id() const { return id_; }
  bool same_device(const BackendDevice& other) const { return id_ == other.id_; }
  const CreationSite& site() const { return site_; }
  void set_site(CreationSite site) { site_ = std::move(site); }
  std::string spec() const;      // "metal:0"
  std::string describe() const;  // "metal:0 (Device id=1, created at model.py:12 in load)"

  virtual std::string kind() const = 0;  // "cpu", "metal", "cuda"
  virtual int64_t ordinal() const = 0;
  virtual std::string location() const = 0;  // kind, ordinal and hardware id
  virtual std::string name() const = 0;      // the hardware's name
  virtual bool supports_dtype(DType) const { return true; }
  virtual void synchronize() = 0;
  // Whether all work queued so far has completed; never waits (PyTorch's Stream.query).
  virtual bool query() const { return true; }
  // Orders work queued on this device after the call behind `event`, recorded on another
  // instance of the same kind, on the device and without a host wait (CUDA:
  // cudaStreamWaitEvent). The default, for queues that cannot, waits on the host.
  virtual void wait_on_device(const Event& event) { event.wait(); }
  // A timing event after all work queued so far. The default waits for the queue and
  // takes the host's clock (right for the CPU, whose work is done when its call returns).
  virtual EventPtr record_event();

  virtual std::unique_ptr<BackendStorage> alloc_uninit(int64_t numel, DType dtype) = 0;
  virtual std::unique_ptr<BackendStorage> zeros(int64_t numel, DType dtype) = 0;
  virtual std::unique_ptr<BackendStorage> from_host(const void* data, int64_t numel,
                                                    DType dtype) = 0;
  // A storage over `numel` elements of host memory that another library owns (a DLPack
  // import), no copy: `owner` keeps them alive and is dropped with the storage. nullptr
  // when this device's storages cannot live in host memory.
  virtual std::unique_ptr<BackendStorage> wrap_host(void* data, int64_t numel, DType dtype,
                                                    std::shared_ptr<void> owner) {
    return nullptr;
  }
  // The same over device memory another library owns (a DLPack import from a GPU
  // library): `owner` is dropped only once the work queued here so far is done. nullptr
  // when this device cannot share its memory.
  virtual std::unique_ptr<BackendStorage> wrap_device(void* data, int64_t numel, DType dtype,
                                                      std::shared_ptr<void> owner) {
    return nullptr;
  }
  // DLPack's stream protocol (design §10), for devices that share memory. A stream is
  // the consumer's handle as an integer (CUDA: a cudaStream_t; 1 the legacy default
  // stream, 2 the per-thread default). stream_handle() is this device's own (0: none);
  // order_before_stream makes `stream` wait, on the device, for the work queued here so
  // far.
  virtual intptr_t stream_handle() const { return 0; }
  virtual void order_before_stream(intptr_t stream) {}
  // Fills dst (contiguous) with the counter-based stream of random.h starting at `counter`.
  virtual void fill_random(BackendStorage& dst, RandomDist dist, uint64_t seed, uint64_t counter,
                           double a, double b) = 0;
  // Fills dst (contiguous int64) with random_below(seed, counter + i, range) + low.
  virtual void fill_randint(BackendStorage& dst, uint64_t seed, uint64_t counter, int64_t low,
                            uint64_t range) = 0;

  // Facts for the device report, e.g. {"blas": "OpenBLAS 0.3.28", "threads": "2"}.
  virtual std::map<std::string, std::string> info() const { return {}; }
  virtual void empty_cache() {}
  virtual std::map<std::string, int64_t> memory_stats() const { return {}; }
  // The queue's counters, e.g. {"host_waits": 3}; {} for devices without a queue.
  virtual std::map<std::string, int64_t> queue_stats() const { return {}; }

  // Reads of this device's memory into host memory, counted by core for every backend
  // (read_to_host below): how many, and their bytes. queue_stats reports them from Python.
  void note_host_read(int64_t bytes) {
    host_reads_.fetch_add(1, std::memory_order_relaxed);
    host_read_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  int64_t host_reads() const { return host_reads_.load(std::memory_order_relaxed); }
  int64_t host_read_bytes() const { return host_read_bytes_.load(std::memory_order_relaxed); }

  // Per-device random stream: the seed and how many values were drawn so far.
  void manual_seed(uint64_t seed);
  std::pair<uint64_t, uint64_t> take_random(uint64_t count);  // (seed, first counter)

 private:
  DeviceId id_;
  CreationSite site_;
  std::mutex rng_mu_;
  std::atomic<int64_t> host_reads_{0}, host_read_bytes_{0};
  uint64_t seed_ = 0x853c49e6748fea9bULL, counter_ = 0;
};

using DevicePtr = std::shared_ptr<BackendDevice>;

// The most dims of a mask whose coordinates the backends' nonzero writes itself (Metal's
// parameter structs hold 8); core computes them for masks of more.
constexpr int64_t kNonzeroMaxDims = 8;

// A buffer of `numel` elements on one device. Ops read inputs through their
// Layouts (so views need no copies) and write into `dst` through its Layout.
// dst never overlaps an input unless it is exactly the same view of it.
class BackendStorage {
 public:
  virtual ~BackendStorage() = default;
  virtual DType dtype() const = 0;
  virtual int64_t numel() const = 0;
  virtual const DevicePtr& device() const = 0;
  // Waits for the last write of this storage only (not the whole device), then copies
  // all elements to host memory.
  virtual void to_host(void* dst) const = 0;
  // The event after the last queued work that writes this storage; nullptr when none is
  // pending. copy_to_peer makes the destination queue wait on it.
  virtual EventPtr last_write() const { return nullptr; }
  // The elements in host memory, for backends whose storages live there (the DeviceKind's
  // `host`); nullptr otherwise. Moves read and write it directly, without staging, and
  // DLPack exports it zero-copy.
  virtual void* host_memory() { return nullptr; }
  virtual const void* host_memory() const { return nullptr; }
  // The elements in device memory that another library may use in place (DLPack on
  // CUDA); nullptr where they cannot be shared (the host, Metal's private buffers).
  virtual void* device_memory() const { return nullptr; }

  virtual void fill(const Layout& dst_layout, double value) = 0;
  // dst has the op's result dtype (op_result_dtype: uint8 for predicates).
  virtual void unary(UnaryOp op, const UnaryParams& p, const Layout& src, BackendStorage& dst,
                     const Layout& dst_layout) const = 0;
  // y = x * mul + add
  virtual void affine(const Layout& src, double mul, double add, BackendStorage& dst,
                      const Layout& dst_layout) const = 0;
  // lhs/rhs layouts are already broadcast to dst's shape (strides may be 0).
  virtual void binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs,
                      const Layout& rhs_layout, BackendStorage& dst,
                      const Layout& dst_layout) const = 0;
  // dst is uint8 (0 or 1).
  virtual void cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
                   BackendStorage& dst, const Layout& dst_layout) const = 0;
  // this = condition (bool or uint8, nonzero is true: core makes other dtypes t != 0
  // first); all layouts broadcast to dst's shape.
  virtual void where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
                     const BackendStorage& on_false, const Layout& f_layout, BackendStorage& dst,
                     const Layout& dst_layout) const = 0;
  // Reduces the last `reduced_dims` dims of src into contiguous dst (the kept dims, in
  // order). Sum of integers accumulates into int64 dst; ArgMax/ArgMin write int64
  // indices into the flattened reduced dims, the first one on ties.
  virtual void reduce(ReduceOp op, const Layout& src, int64_t reduced_dims,
                      BackendStorage& dst) const = 0;
  // The sum of x * x over the last `reduced_dims` dims of a float src into contiguous dst
  // of src's dtype, as reduce's Sum: norm(p=2) in one pass. false where the backend has no
  // such kernel (core then squares and sums).
  virtual bool reduce_sum_squares(const Layout& src, int64_t reduced_dims,
                                  BackendStorage& dst) const {
    return false;
  }
  // The product over the trailing `reduced_dims` dims of a float32, float64 or int64 src
  // (integers wrapping) into contiguous dst of src's dtype: prod in one pass. false where
  // the backend has no such kernel (core then multiplies halves pairwise, log2(n) passes).
  virtual bool reduce_prod(const Layout& src, int64_t reduced_dims, BackendStorage& dst) const {
    return false;
  }
  // log(sum(exp(x))) over the trailing `reduced_dims` dims of a float32 src into
  // contiguous dst: one pass (a running max, the sum rescaled as it rises); an infinite
  // max gives itself, a NaN NaN, as core's composition. false where the backend has no
  // such kernel or declines the layout (core then composes max, exp, sum and log).
  virtual bool reduce_logsumexp(const Layout& src, int64_t reduced_dims,
                                BackendStorage& dst) const {
    return false;
  }
  // The variance over the trailing `reduced_dims` dims of a float32 or half src (its std
  // when `root`), into contiguous dst of src's dtype: one pass, accumulated in double
  // about the row's first element (so no cancellation, underflow or overflow that the
  // output's precision would show), divided by max(n - correction, 0). false where the
  // backend has no such kernel (core then composes it from several passes).
  virtual bool reduce_var(const Layout& src, int64_t reduced_dims, double correction, bool root,
                          BackendStorage& dst) const {
    return false;
  }
  // (log-)softmax over dim `dim` of a contiguous src, not its last dim (each softmax a
  // column of a row-major tensor), into contiguous dst of src's shape. false where the
  // backend has no such kernel (core then composes it from column reductions and
  // elementwise ops).
  virtual bool softmax_columns(const Layout& src, int64_t dim, bool log,
                               BackendStorage& dst) const {
    return false;
  }
  // (log-)softmax over the last dim of src into contiguous dst of the same shape.
  virtual void softmax(const Layout& src, bool log, BackendStorage& dst) const = 0;
  // Inclusive cumsum / cumprod along the last dim of src into contiguous dst of the same
  // shape and dtype (core casts to the result dtype first). Integers wrap around; 16-bit
  // floats accumulate in float32.
  virtual void scan(ScanOp op, const Layout& src, BackendStorage& dst) const = 0;
  // The positions of src's non-zero bytes, in row-major order, into contiguous int64 dst.
  // src is a contiguous bool Layout of the mask's shape; core counted its true elements
  // first (the op's one read of a count to the host) and sized dst for them: `count`
  // flat positions, or with `coordinates` (src.ndim() <= kNonzeroMaxDims) `count` rows of
  // src.ndim() coordinates. A backend writes no more than dst.numel() values, whatever
  // src holds.
  virtual void nonzero(const Layout& src, bool coordinates, BackendStorage& dst) const = 0;
  // Stable sort of each row (the last dim) of src: the values into contiguous `values`
  // (src's shape and dtype), each one's position in its row into contiguous int64
  // `indices`. NaN sorts above every number (first when descending); -0.0 equals 0.0;
  // equal values keep their order in both directions.
  virtual void sort(const Layout& src, bool descending, BackendStorage& values,
                    BackendStorage& indices) const = 0;
  // The first k of that sort of each row (the last dim) of src into contiguous `values`
  // and int64 `indices` of k per row, without sorting whole rows: the k largest
  // (`largest`, the descending order) or smallest, equal values by position. false where
  // the backend has no such kernel (core then sorts the rows and keeps k).
  virtual bool topk(const Layout& src, int64_t k, bool largest, BackendStorage& values,
                    BackendStorage& indices) const {
    return false;
  }
  // lhs [..., M, K] @ rhs [..., K, N] into contiguous dst [..., M, N]; batch dims of
  // both are already broadcast to the same shape (strides may be 0).
  virtual void matmul(const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
                      BackendStorage& dst) const = 0;
  // Element-by-element conversion into dst's dtype (same dtype: a strided copy).
  virtual void cast(const Layout& src, BackendStorage& dst, const Layout& dst_layout) const = 0;
  virtual void copy_strided(const Layout& src, BackendStorage& dst,
                            const Layout& dst_layout) const = 0;
  // dst = src.index_select(dim, ids): ids are 1-D, integral and already range-checked.
  virtual void index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                            const Layout& ids_layout, BackendStorage& dst) const = 0;
  // dst[i][j][k] = src[i][ids[i][j][k]][k] for dim 1; ids range-checked; dst contiguous
  // with ids' shape.
  virtual void gather(const Layout& src, int64_t dim, const BackendStorage& ids,
                      const Layout& ids_layout, BackendStorage& dst) const = 0;
  // this[..][ids[i][j][k]][..] = src[i][j][k] for dim 1 (+= when `accumulate`; bool adds
  // are logical or), in place through dst_layout. ids and src share ids' shape, ids are
  // range-checked. The last repeated id wins. Adds sum in index order, except that float
  // adds may go in any order while deterministic_algorithms() is off. `unique_ids`: core knows the
  // writes may go in any order: the ids hold no repeats along dim (a mask's positions), or
  // src is the same along dim (stride 0), so that repeated ids store equal values.
  virtual void scatter(const Layout& dst_layout, int64_t dim, const BackendStorage& ids,
                       const Layout& ids_layout, const BackendStorage& src,
                       const Layout& src_layout, bool accumulate, bool unique_ids) = 0;
  // The smallest and largest value of the integer tensor `src` views (not empty), read in
  // one pass, for core's range check of index arrays: a callable that returns them. A
  // backend whose queue runs behind the host queues the pass and its read-back and returns
  // at once, the callable waiting, so that the bounds of several arrays come back in one
  // wait. nullptr where the backend has no such kernel (core then reduces twice).
  using IndexBounds = std::function<std::pair<int64_t, int64_t>()>;
  virtual IndexBounds index_bounds(const Layout& src) const { return nullptr; }
  // Whether index_select and gather stay in bounds whatever the ids: an id in [-size, 0)
  // counts from the end and one outside [-size, size) reads the dim's first element.
  // Core may then queue a read before its ids' bounds have come back, and raise once
  // they have, so that the host's wait overlaps the kernel (CUDA).
  virtual bool index_reads_clamp() const { return false; }
  // gather that finds its ids' smallest and largest (int64, uint32 or uint8 ids) while it
  // gathers into *lo and *hi: one pass over the ids instead of a bounds pass first. Its
  // reads stay in bounds whatever the ids (an id outside [0, size) reads the dim's first
  // element), dst is a new tensor, and core raises from the bounds afterwards. false where
  // the backend has none (core then checks the ids before the gather).
  virtual bool gather_bounded(const Layout& src, int64_t dim, const BackendStorage& ids,
                              const Layout& ids_layout, BackendStorage& dst, int64_t* lo,
                              int64_t* hi) const {
    return false;
  }
  // One array of gather_points: int64 ids viewed over dst's shape (stride 0 outside the
  // dims the arrays broadcast over), and the stride and length of the dim of src it indexes.
  struct PointIds {
    const BackendStorage* ids;
    Layout layout;
    int64_t stride, size;
  };
  // numpy's read through integer arrays, t[i, j], in one pass: dst (new, contiguous) at
  // position p is src's element at src(p) + sum over k of id_k(p) * ids[k].stride, where
  // `src` views it over dst's shape (stride 0 in the arrays' dims). An id in [-size, 0)
  // counts from the end; one outside [-size, size) reads position 0 of its dim, since the
  // ids are checked only afterwards: each array's smallest and largest id go to lo[k] and
  // hi[k], found in the same pass, and core raises from them. 1 to kMaxPointIds arrays, every
  // size > 0. `offsets`: dst (int64) receives the offsets themselves and no data is read
  // (the linear ids of a write, t[i, j] = v). false where the backend has none (core then
  // checks the ids first and sums their linear positions in two passes more).
  static constexpr size_t kMaxPointIds = 4;
  virtual bool gather_points(const Layout& src, const std::vector<PointIds>& ids,
                             BackendStorage& dst, int64_t* lo, int64_t* hi,
                             bool offsets) const {
    return false;
  }
  // Copies to another instance of the same kind (e.g. CUDA to CUDA), ordered on the
  // device: `dst` waits on last_write() (wait_on_device), then the copy runs on dst's
  // queue and the result's last_write() is recorded there. nullptr when the backend
  // cannot (its DeviceKind says so), so that Storage reports the move as not implemented.
  virtual std::unique_ptr<BackendStorage> copy_to_peer(const DevicePtr&) const { return nullptr; }
};

// s.to_host(dst), counted on s's device when it crosses from device memory: core reads
// storages to the host through this only.
inline void read_to_host(const BackendStorage& s, void* dst) {
  if (!s.host_memory()) s.device()->note_host_read(s.numel() * int64_t(dtype_size(s.dtype())));
  s.to_host(dst);
}

// A backend's device class declares its allocation and random fill with this one line.
#define EMBER_BACKEND_DEVICE_ALLOCATION                                                   \
  std::unique_ptr<BackendStorage> alloc_uninit(int64_t numel, DType dtype) override;      \
  std::unique_ptr<BackendStorage> zeros(int64_t numel, DType dtype) override;             \
  std::unique_ptr<BackendStorage> from_host(const void* data, int64_t numel, DType dtype) \
      override;                                                                           \
  void fill_random(BackendStorage& dst, RandomDist dist, uint64_t seed, uint64_t counter, \
                   double a, double b) override;                                          \
  void fill_randint(BackendStorage& dst, uint64_t seed, uint64_t counter, int64_t low,    \
                    uint64_t range) override;

// A backend's storage class declares every op family above with this one line and
// defines them in its op files: a new family is declared here once, for every backend.
#define EMBER_BACKEND_STORAGE_OPS                                                                  \
  void fill(const Layout& dst_layout, double value) override;                                      \
  void unary(UnaryOp op, const UnaryParams& p, const Layout& src, BackendStorage& dst,             \
             const Layout& dst_layout) const override;                                             \
  void affine(const Layout& src, double mul, double add, BackendStorage& dst,                      \
              const Layout& dst_layout) const override;                                            \
  void binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout, \
              BackendStorage& dst, const Layout& dst_layout) const override;                       \
  void cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,       \
           BackendStorage& dst, const Layout& dst_layout) const override;                          \
  void where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,            \
             const BackendStorage& on_false, const Layout& f_layout, BackendStorage& dst,          \
             const Layout& dst_layout) const override;                                             \
  void reduce(ReduceOp op, const Layout& src, int64_t reduced_dims, BackendStorage& dst)           \
      const override;                                                                              \
  void softmax(const Layout& src, bool log, BackendStorage& dst) const override;                   \
  void scan(ScanOp op, const Layout& src, BackendStorage& dst) const override;                     \
  void nonzero(const Layout& src, bool coordinates, BackendStorage& dst) const override;           \
  void sort(const Layout& src, bool descending, BackendStorage& values, BackendStorage& indices)   \
      const override;                                                                              \
  void matmul(const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,              \
              BackendStorage& dst) const override;                                                 \
  void cast(const Layout& src, BackendStorage& dst, const Layout& dst_layout) const override;      \
  void copy_strided(const Layout& src, BackendStorage& dst, const Layout& dst_layout)              \
      const override;                                                                              \
  void index_select(const Layout& src, int64_t dim, const BackendStorage& ids,                     \
                    const Layout& ids_layout, BackendStorage& dst) const override;                 \
  void gather(const Layout& src, int64_t dim, const BackendStorage& ids, const Layout& ids_layout, \
              BackendStorage& dst) const override;                                                 \
  void scatter(const Layout& dst_layout, int64_t dim, const BackendStorage& ids,                   \
               const Layout& ids_layout, const BackendStorage& src, const Layout& src_layout,      \
               bool accumulate, bool unique_ids) override;

// What core knows of a device kind, whether or not its backend is built into this ember:
// each backend folder always compiles its description (kind.cpp), its factory only when
// built, so that asking for a missing kind says how to get it.
struct DeviceKind {
  std::string name;   // "metal": the spec prefix, Device.metal(), ember.metal_is_available()
  int rank = 0;       // place in listings and messages, the host first
  bool host = false;  // the host itself: one device, storages in host memory (host_memory())
  // How to get a build with this kind; follows "not built into this ember; ".
  std::string install_hint;
  std::string doc;  // Device.<name>()'s docstring
  // Device.<name>(ordinal=0, <fresh_keyword>=<fresh_by_default>): whether a call makes a new
  // instance (its own queue and id) or returns the ordinal's shared one. Without a keyword
  // every call does what fresh_by_default says.
  std::string fresh_keyword;
  bool fresh_by_default = false;
  // Whether two instances of this kind copy to each other on the device (copy_to_peer);
  // if not, why: it ends "these are two <name> Device instances and ".
  bool copies_between_instances = false;
  std::string why_no_copy_between_instances;
};

// How core opens devices of a built backend: each backend registers itself.
struct BackendFactory {
  std::string kind;  // the name of a registered DeviceKind
  // Devices present on this machine (0 when the OS has none).
  int64_t (*device_count)();
  // Why the backend cannot be used here, or "" when it can.
  std::string (*unavailable_reason)();
  // A Device on `ordinal` (already range-checked); `new_instance` asks for a fresh queue.
  DevicePtr (*open)(int64_t ordinal, bool new_instance);
  // Tests only: queues work that faults on the device, so that a test sees how a fault
  // surfaces (DeviceError at the next wait); nullptr where a backend has no such fault.
  void (*queue_fault)(BackendDevice& device) = nullptr;
  // Tests only: queues `seconds` of work on one core of the device, so that a test can
  // show that another queue runs meanwhile; nullptr where a backend has none.
  void (*queue_busy)(BackendDevice& device, double seconds) = nullptr;
  // Page-locked host memory that this backend's devices copy to and from by DMA, with
  // the deleter that frees it (Tensor.pin_memory()); nullptr where the backend has none.
  std::shared_ptr<void> (*pinned_host_alloc)(size_t bytes) = nullptr;
  bool (*is_pinned_host)(const void* p) = nullptr;  // memory such a call gave
};

bool register_kind(const DeviceKind& kind);
bool register_backend(const BackendFactory& factory);
std::vector<const DeviceKind*> device_kinds();                // every described kind, by rank
const DeviceKind* find_kind(const std::string& name);         // nullptr: unknown
const BackendFactory* find_backend(const std::string& kind);  // nullptr: not compiled in

}  // namespace ember
