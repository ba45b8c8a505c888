// The emulated Metal runtime (runtime/runtime.h) for Linux: devices are the CPU,
// buffers are exact-size host allocations, each queue a worker thread that runs its
// committed command buffers in order, asynchronously, through the kernel runner.
// Switches play what a Mac may do: EMBER_METAL_EMULATOR_FAIL_I64, _MAX_THREADS and
// _OUT_OF_ORDER (emulator/README.md).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "emulator.h"
#include "kernel_registry.h"
#include "runner.h"
#include "runtime/device_list.h"

namespace ember::metal::emu {
namespace {

using rt::RuntimeError;

constexpr uint64_t kRegistryIdBase = 0x100000a00ull;
constexpr int kMaxGpus = 64;
constexpr uint64_t kMaxBuffer = uint64_t(1) << 40;
constexpr size_t kFilledBytes = size_t(256) << 20;  // new buffers are filled up to this

// A committed command buffer that nobody waits for waits this long for a later one to
// overtake it (out-of-order mode); handlers run this long after completion.
constexpr auto kOvertakeWindow = std::chrono::milliseconds(50);
constexpr auto kHandlerDelay = std::chrono::milliseconds(1);

// "" or "0": off, "1": on; anything else sets *why (the runtime is then unavailable).
bool env_flag(const char* name, std::string* why) {
  const char* v = std::getenv(name);
  const std::string s = v ? v : "";
  if (s.empty() || s == "0") return false;
  if (s != "1" && why && why->empty())
    *why = std::string(name) + "='" + s + "' is not a switch: set it to 1 or unset it";
  return s == "1";
}

// EMBER_METAL_EMULATOR_MAX_THREADS=N: every pipeline's maxTotalThreadsPerThreadgroup, as a
// kernel that needs many registers gets on a Mac (default: the device limit).
uint32_t pipeline_max_threads(std::string* why) {
  const char* v = std::getenv("EMBER_METAL_EMULATOR_MAX_THREADS");
  if (!v || !*v) return kMaxThreadsPerGroup;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end == '\0' && n >= 1 && n <= long(kMaxThreadsPerGroup)) return uint32_t(n);
  if (why && why->empty())
    *why = "EMBER_METAL_EMULATOR_MAX_THREADS='" + std::string(v) + "' is not 1.." +
           std::to_string(kMaxThreadsPerGroup) + " threads per threadgroup";
  return kMaxThreadsPerGroup;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A kernel of 64-bit integers: an i64 or b64 token in its name (kernels/common.h).
bool has_int64_kernel(const std::string& family) {
  for (const KernelInfo* k : registered_kernels(family)) {
    const std::string padded = "_" + std::string(k->name) + "_";
    if (padded.find("_i64_") != std::string::npos || padded.find("_b64_") != std::string::npos)
      return true;
  }
  return false;
}

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : (uint64_t(8) << 30);
}

class EmuBuffer : public rt::Buffer {
 public:
  EmuBuffer(void* data, size_t length) : data_(data), length_(length) {}
  ~EmuBuffer() override { std::free(data_); }
  void* contents() override { return data_; }
  size_t length() const override { return length_; }

 private:
  void* data_;
  size_t length_;
};

class EmuPipeline : public rt::Pipeline {
 public:
  explicit EmuPipeline(const KernelInfo* kernel)
      : kernel_(kernel), name_(kernel->name), max_threads_(pipeline_max_threads(nullptr)) {}
  const std::string& name() const override { return name_; }
  uint32_t max_threads_per_group() const override { return max_threads_; }
  uint32_t simd_width() const override { return kSimdWidth; }
  const KernelInfo* kernel() const { return kernel_; }

 private:
  const KernelInfo* kernel_;
  std::string name_;
  uint32_t max_threads_;
};

class EmuLibrary : public rt::Library {
 public:
  explicit EmuLibrary(std::string family) : family_(std::move(family)) {}
  std::shared_ptr<rt::Pipeline> pipeline(const std::string& function) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(function);
    if (it != cache_.end()) return it->second;
    const KernelInfo* k = find_kernel(family_, function);
    if (!k) throw RuntimeError("function " + function + " not found in library " + family_);
    auto p = std::make_shared<EmuPipeline>(k);
    cache_.emplace(function, p);
    return p;
  }

 private:
  std::string family_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<rt::Pipeline>> cache_;
};

struct Encoded {
  const KernelInfo* kernel;
  std::vector<rt::BufferArg> buffers;  // the caller keeps the buffers alive until completion
  std::vector<std::max_align_t> params;
  uint32_t groups[3], group_size[3];
};

struct QueueState;

struct CommandState : std::enable_shared_from_this<CommandState> {
  enum class Phase { Encoding, Committed, Completed };
  std::shared_ptr<QueueState> queue;
  std::vector<Encoded> dispatches;
  std::vector<std::function<void()>> handlers;
  std::mutex mu;
  std::condition_variable done_cv;
  Phase phase = Phase::Encoding;
  std::atomic<bool> completed{false};
  std::atomic<bool> waited{false};  // someone is in wait(): out-of-order mode runs it now
  std::string error;
  std::set<const rt::Buffer*> buffers;  // every buffer its dispatches bind
};

using Clock = std::chrono::steady_clock;

struct QueueState {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<CommandState>> pending;
  bool gate_open = true;
  bool stopping = false;
  // EMBER_METAL_EMULATOR_OUT_OF_ORDER=1: an independent later command buffer may run (and
  // complete) first, and handlers run late on a thread of their own.
  bool out_of_order = false;
  std::deque<std::pair<Clock::time_point, std::shared_ptr<CommandState>>> handlers_due;
  std::condition_variable handler_cv;
  bool handlers_stopping = false;
  std::atomic<bool> abandoned{false};  // abandon(): the rest of its work is not run
};

void run_handlers(CommandState& cb) {
  for (auto& h : cb.handlers) {
    try {
      h();
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "ember metal emulator: a completion handler threw: %s\n", ex.what());
    }
  }
  cb.handlers.clear();
}

void mark_completed(CommandState& cb) {
  {
    std::lock_guard<std::mutex> lock(cb.mu);
    cb.phase = CommandState::Phase::Completed;
    cb.completed = true;
  }
  cb.done_cv.notify_all();
}

// Records `error` ("" on success), then runs the handlers and marks the buffer completed.
void finish(CommandState& cb, const std::string& error) {
  cb.dispatches.clear();
  {
    std::lock_guard<std::mutex> lock(cb.mu);
    cb.error = error;
  }
  QueueState& q = *cb.queue;
  if (!q.out_of_order) {
    // In order: handlers run before wait() returns, so what they record is visible then.
    run_handlers(cb);
    mark_completed(cb);
    return;
  }
  mark_completed(cb);  // wait() returns; the handlers come later, from another thread
  std::lock_guard<std::mutex> lock(q.mu);
  q.handlers_due.emplace_back(Clock::now() + kHandlerDelay, cb.shared_from_this());
  q.handler_cv.notify_all();
}

constexpr const char* kAbandoned = "abandoned: the queue's device instance was released";

void execute(CommandState& cb) {
  std::string error;
  for (const Encoded& e : cb.dispatches) {
    if (cb.queue->abandoned.load()) {
      error = kAbandoned;
      break;
    }
    Dispatch d;
    d.kernel = e.kernel;
    for (const rt::BufferArg& b : e.buffers)
      d.buffers.push_back(static_cast<char*>(b.buffer->contents()) + b.offset);
    d.params = e.params.data();
    std::memcpy(d.groups, e.groups, sizeof d.groups);
    std::memcpy(d.group_size, e.group_size, sizeof d.group_size);
    try {
      run_dispatch(d);
    } catch (const std::exception& ex) {
      error = ex.what();  // Metal abandons the rest of a failed command buffer
      break;
    }
  }
  finish(cb, error);
}

bool shares_buffer(const CommandState& a, const CommandState& b) {
  for (const rt::Buffer* buffer : a.buffers)
    if (b.buffers.count(buffer)) return true;
  return false;
}

// Out of order: the newest pending command buffer that binds no buffer of an older
// pending one goes first (it cannot see their effects); else the oldest. q->mu held.
size_t pick_next(const QueueState& q) {
  if (!q.out_of_order) return 0;
  for (size_t i = q.pending.size(); i-- > 1;) {
    bool independent = true;
    for (size_t j = 0; j < i && independent; ++j)
      independent = !shares_buffer(*q.pending[i], *q.pending[j]);
    if (independent) return i;
  }
  return 0;
}

// Out of order, one lone command buffer nobody waits for is held a moment, so that a
// later one can overtake it. q->mu held (through `lock`).
void hold_for_overtaking(QueueState& q, std::unique_lock<std::mutex>& lock) {
  if (!q.out_of_order || q.pending.size() != 1 || q.pending.front()->waited) return;
  q.cv.wait_for(lock, kOvertakeWindow, [&] {
    return q.pending.size() != 1 || q.pending.front()->waited || q.stopping || !q.gate_open;
  });
}

void worker_main(std::shared_ptr<QueueState> q) {
  while (true) {
    std::shared_ptr<CommandState> cb;
    {
      std::unique_lock<std::mutex> lock(q->mu);
      q->cv.wait(lock, [&] {
        return (q->gate_open && !q->pending.empty()) || (q->stopping && q->pending.empty());
      });
      if (q->pending.empty()) return;
      hold_for_overtaking(*q, lock);
      if (!q->gate_open || q->pending.empty()) continue;
      const size_t next = pick_next(*q);
      cb = std::move(q->pending[next]);
      q->pending.erase(q->pending.begin() + std::ptrdiff_t(next));
    }
    execute(*cb);
  }
}

// Out-of-order mode's handler thread: each completed buffer's handlers, kHandlerDelay
// after its completion, in completion order; the rest at once when the queue goes.
void handler_main(std::shared_ptr<QueueState> q) {
  std::unique_lock<std::mutex> lock(q->mu);
  while (true) {
    q->handler_cv.wait(lock, [&] { return !q->handlers_due.empty() || q->handlers_stopping; });
    if (q->handlers_due.empty()) return;
    const Clock::time_point due = q->handlers_due.front().first;
    if (!q->handlers_stopping && Clock::now() < due) {
      q->handler_cv.wait_until(lock, due, [&] { return q->handlers_stopping; });
      continue;
    }
    std::shared_ptr<CommandState> cb = std::move(q->handlers_due.front().second);
    q->handlers_due.pop_front();
    lock.unlock();
    run_handlers(*cb);
    cb.reset();
    lock.lock();
  }
}

class EmuCommandBuffer : public rt::CommandBuffer {
 public:
  explicit EmuCommandBuffer(std::shared_ptr<QueueState> q) : s_(std::make_shared<CommandState>()) {
    s_->queue = std::move(q);
  }

  void dispatch(const rt::Pipeline& pipeline, const std::vector<rt::BufferArg>& buffers,
                const void* bytes, size_t bytes_size, rt::Size3 groups,
                rt::Size3 group_size) override {
    require_encoding("dispatch");
    const auto* p = dynamic_cast<const EmuPipeline*>(&pipeline);
    if (!p) throw RuntimeError("dispatch: pipeline " + pipeline.name() + " is not the emulator's");
    const KernelInfo& k = *p->kernel();
    const std::string name = "dispatch of kernel " + std::string(k.name) + ": ";
    if (buffers.size() != k.num_buffers)
      throw RuntimeError(name + "the kernel takes " + std::to_string(k.num_buffers) + " buffers, " +
                         std::to_string(buffers.size()) + " bound");
    if (bytes_size != k.params_size)
      throw RuntimeError(name + "params are " + std::to_string(bytes_size) +
                         " bytes but the kernel's params struct is " +
                         std::to_string(k.params_size) + " (host and kernel disagree)");
    for (size_t i = 0; i < buffers.size(); ++i) {
      const rt::BufferArg& b = buffers[i];
      if (!b.buffer || b.offset > b.buffer->length())
        throw RuntimeError(name + "buffer " + std::to_string(i) +
                           (b.buffer ? " offset past its end" : " is null"));
    }
    const uint64_t lanes = uint64_t(group_size.x) * group_size.y * group_size.z;
    if (lanes == 0 || lanes > p->max_threads_per_group())
      throw RuntimeError(name + std::to_string(lanes) +
                         " threads per threadgroup (the pipeline takes 1.." +
                         std::to_string(p->max_threads_per_group()) + ")");
    if (uint64_t(groups.x) * groups.y * groups.z == 0) return;
    // thread_position_in_grid is 32 bits wide per dimension: a grid past it would wrap
    const uint64_t grid_x = uint64_t(groups.x) * group_size.x;
    if (grid_x >= (uint64_t(1) << 32) || uint64_t(groups.y) * group_size.y >= (uint64_t(1) << 32) ||
        uint64_t(groups.z) * group_size.z >= (uint64_t(1) << 32))
      throw RuntimeError(name +
                         "a grid of 2^32 or more threads in one dimension (launch it in "
                         "chunks)");
    Encoded e;
    e.kernel = &k;
    e.buffers = buffers;
    for (const rt::BufferArg& b : buffers) s_->buffers.insert(b.buffer);
    e.params.resize((bytes_size + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t) + 1);
    if (bytes_size) std::memcpy(e.params.data(), bytes, bytes_size);  // setBytes copies
    const uint32_t g[3] = {groups.x, groups.y, groups.z},
                   gs[3] = {group_size.x, group_size.y, group_size.z};
    std::memcpy(e.groups, g, sizeof g);
    std::memcpy(e.group_size, gs, sizeof gs);
    s_->dispatches.push_back(std::move(e));
  }

  void on_completed(std::function<void()> fn) override {
    require_encoding("on_completed");
    s_->handlers.push_back(std::move(fn));
  }

  void commit() override {
    require_encoding("commit");
    QueueState& q = *s_->queue;
    {
      std::lock_guard<std::mutex> lock(q.mu);
      if (q.stopping) throw RuntimeError("commit: the command buffer's queue was released");
      {
        std::lock_guard<std::mutex> cb_lock(s_->mu);
        s_->phase = CommandState::Phase::Committed;
      }
      q.pending.push_back(s_);
    }
    q.cv.notify_all();
  }

  void wait() override {
    std::unique_lock<std::mutex> lock(s_->mu);
    if (s_->phase == CommandState::Phase::Encoding)
      throw RuntimeError("wait: the command buffer was never committed");
    if (s_->phase != CommandState::Phase::Completed && !s_->waited.exchange(true)) {
      lock.unlock();  // tell a worker holding it back (queue lock before buffer lock)
      { std::lock_guard<std::mutex> queue_lock(s_->queue->mu); }
      s_->queue->cv.notify_all();
      lock.lock();
    }
    s_->done_cv.wait(lock, [&] { return s_->phase == CommandState::Phase::Completed; });
  }

  bool completed() const override { return s_->completed.load(); }

  std::string error() const override {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->error;
  }

 private:
  void require_encoding(const char* what) {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->phase != CommandState::Phase::Encoding)
      throw RuntimeError(std::string(what) + ": the command buffer was already committed");
  }

  std::shared_ptr<CommandState> s_;
};

std::atomic<int64_t> live_queues{0};

// EMBER_METAL_EMULATOR_MAX_QUEUES=N: more than N live queues are refused, as a Mac's
// newCommandQueue returns nil once the system has no more to give; unset: no limit.
int64_t max_queues() {
  const char* v = std::getenv("EMBER_METAL_EMULATOR_MAX_QUEUES");
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 0)
    throw RuntimeError(std::string("EMBER_METAL_EMULATOR_MAX_QUEUES='") + v +
                       "' is not a queue count: set it to 0 or more, or unset it");
  return n;
}

// One live queue of the count above, taken at construction (throws past the limit).
class QueueTicket {
 public:
  QueueTicket() {
    const int64_t limit = max_queues();
    if (live_queues.fetch_add(1) + 1 > limit && limit >= 0) {
      live_queues.fetch_sub(1);
      throw RuntimeError("newCommandQueue returned nil (the emulator allows " +
                         std::to_string(limit) + " live queues: EMBER_METAL_EMULATOR_MAX_QUEUES)");
    }
  }
  ~QueueTicket() { live_queues.fetch_sub(1); }
  QueueTicket(const QueueTicket&) = delete;
  QueueTicket& operator=(const QueueTicket&) = delete;
};

class EmuQueue : public rt::Queue {
 public:
  explicit EmuQueue(bool out_of_order) : q_(std::make_shared<QueueState>()) {
    q_->out_of_order = out_of_order;
    worker_ = std::thread(worker_main, q_);
    if (out_of_order) handler_thread_ = std::thread(handler_main, q_);
  }
  ~EmuQueue() override {
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->stopping = true;
      q_->gate_open = true;  // committed work still completes, as on Metal
    }
    q_->cv.notify_all();
    join_or_detach(worker_);
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->handlers_stopping = true;  // the handlers still due run now
    }
    q_->handler_cv.notify_all();
    join_or_detach(handler_thread_);
  }

  std::unique_ptr<rt::CommandBuffer> command_buffer() override {
    return std::make_unique<EmuCommandBuffer>(q_);
  }

  void abandon() override {
    std::deque<std::shared_ptr<CommandState>> dropped;
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->abandoned = true;  // the running buffer stops at its next dispatch
      dropped.swap(q_->pending);
    }
    for (auto& cb : dropped) finish(*cb, kAbandoned);
  }

  void set_gate(bool open) {
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->gate_open = open;
    }
    q_->cv.notify_all();
  }

 private:
  QueueTicket ticket_;  // first: a refused queue starts no worker
  // A thread may release the queue from its own completion handler: it cannot join itself.
  static void join_or_detach(std::thread& t) {
    if (!t.joinable()) return;
    if (t.get_id() == std::this_thread::get_id())
      t.detach();
    else
      t.join();
  }

  std::shared_ptr<QueueState> q_;
  std::thread worker_, handler_thread_;
};

class EmuDevice : public rt::Device {
 public:
  explicit EmuDevice(int64_t ordinal) {
    info_.name = "ember Metal emulator (CPU)";
    info_.registry_id = kRegistryIdBase + uint64_t(ordinal);
    info_.emulated = true;
    info_.recommended_working_set_bytes = physical_memory();
    info_.max_buffer_bytes = std::min(kMaxBuffer, physical_memory());
  }
  const rt::GpuInfo& info() const override { return info_; }
  std::unique_ptr<rt::Queue> new_queue() override {
    return std::make_unique<EmuQueue>(env_flag("EMBER_METAL_EMULATOR_OUT_OF_ORDER", nullptr));
  }

  std::shared_ptr<rt::Buffer> new_buffer(size_t bytes) override {
    if (bytes > info_.max_buffer_bytes) return nullptr;
    void* p = std::malloc(bytes);  // exactly `bytes`: AddressSanitizer sees any overrun
    if (!p && bytes) return nullptr;
    // GPU memory is not zeroed: NaN / -1 shows a missed write. Huge buffers stay lazy.
    if (p) std::memset(p, 0xff, std::min<size_t>(bytes, kFilledBytes));
    return std::make_shared<EmuBuffer>(p, bytes);
  }

  std::shared_ptr<rt::Library> compile_library(const std::string& label,
                                               const std::string& source) override {
    if (source.empty()) throw RuntimeError("library " + label + ": empty MSL source");
    const bool i64_source = source.rfind("#define EMBER_I64_LIBRARY 1\n", 0) == 0;
    if (i64_source != ends_with(label, "_i64"))
      throw RuntimeError("library " + label + ": the host passed " +
                         (i64_source ? "an _i64 source" : "a source without EMBER_I64_LIBRARY"));
    // EMBER_METAL_EMULATOR_FAIL_I64=1 plays a Metal compiler that rejects 64-bit integer
    // code: a library that holds any int64 kernel fails, as a whole.
    if (env_flag("EMBER_METAL_EMULATOR_FAIL_I64", nullptr) && has_int64_kernel(label))
      throw RuntimeError("library " + label +
                         ": program_source: error: 64-bit integer arithmetic is not supported "
                         "(EMBER_METAL_EMULATOR_FAIL_I64=1)");
    if (registered_kernels(label).empty())
      throw RuntimeError("library " + label + ": the emulator has no kernels of family '" + label +
                         "' (is metal/kernels/" + label + ".metal built into this module?)");
    return std::make_shared<EmuLibrary>(label);
  }

 private:
  rt::GpuInfo info_;
};

// EMBER_METAL_EMULATOR: unset or 0 -> no devices; N -> N emulated GPUs; else an error.
int emulated_gpus(std::string* why) {
  const char* v = std::getenv("EMBER_METAL_EMULATOR");
  const std::string s = v ? v : "";
  if (s.empty() || s == "0") {
    *why =
        "Metal needs macOS with an Apple GPU, and this build is for Linux; set "
        "EMBER_METAL_EMULATOR=1 to run ember's Metal backend on its CPU emulator (for testing)";
    return 0;
  }
  char* end = nullptr;
  const long n = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || n < 1 || n > kMaxGpus) {
    *why = "EMBER_METAL_EMULATOR='" + s + "' is not a GPU count: set it to 1.." +
           std::to_string(kMaxGpus) + " to emulate that many Metal GPUs, or unset it";
    return 0;
  }
  why->clear();
  return int(n);
}

// The GPUs offered, through the Mac's policy (runtime/device_list.h).
// EMBER_METAL_EMULATOR_NO_DEVICE_LIST=1 plays a headless Mac: an empty device list, while
// the system default device (GPU 0) exists.
int offered_gpus(std::string* why) {
  const int n = emulated_gpus(why);
  const char* no_list = std::getenv("EMBER_METAL_EMULATOR_NO_DEVICE_LIST");
  std::vector<int> listed;
  if (!no_list || std::string(no_list) != "1")
    for (int i = 0; i < n; ++i) listed.push_back(i);
  return int(rt::devices_or_default(std::move(listed), [n] {
               return n > 0 ? std::optional<int>(0) : std::nullopt;
             }).size());
}

class EmuRuntime : public rt::Runtime {
 public:
  std::string unavailable_reason() const override {
    std::string why;
    if (emulated_gpus(&why) == 0) return why;
    for (const char* name : {"EMBER_METAL_EMULATOR_NO_DEVICE_LIST", "EMBER_METAL_EMULATOR_FAIL_I64",
                             "EMBER_METAL_EMULATOR_OUT_OF_ORDER"})
      env_flag(name, &why);
    pipeline_max_threads(&why);
    return why;
  }
  std::vector<rt::GpuInfo> devices() const override {
    std::string why;
    std::vector<rt::GpuInfo> out;
    const int n = offered_gpus(&why);
    for (int i = 0; i < n; ++i) out.push_back(EmuDevice(i).info());
    return out;
  }
  std::shared_ptr<rt::Device> open(int64_t ordinal) override {
    std::string why;
    const int n = offered_gpus(&why);
    if (ordinal < 0 || ordinal >= n)
      throw RuntimeError("emulated Metal device " + std::to_string(ordinal) + " out of range (" +
                         std::to_string(n) + " devices)");
    return std::make_shared<EmuDevice>(ordinal);
  }
};

}  // namespace

void set_queue_gate(rt::Queue& queue, bool open) {
  auto* q = dynamic_cast<EmuQueue*>(&queue);
  if (!q) throw std::invalid_argument("set_queue_gate: not an emulated Metal queue");
  q->set_gate(open);
}

}  // namespace ember::metal::emu

#if !defined(__APPLE__)
namespace ember::metal::rt {
Runtime& system_runtime() {
  static emu::EmuRuntime runtime;
  return runtime;
}
}  // namespace ember::metal::rt
#endif
