// MetalDevice: one queue per instance, command buffers batched and committed at waits,
// pooled buffers, per-instance libraries and pipelines; and registration with core.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/blocking.h"
#include "core/error.h"
#include "metal_backend.h"

namespace ember::metal {

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string fork_advice(int64_t owner_pid) {
  return "opened by process " + std::to_string(owner_pid) +
         ", and a forked child cannot use it (its queue's threads and Metal's state do not "
         "survive fork). Start worker processes with the 'spawn' start method "
         "(multiprocessing.get_context(\"spawn\")) and open the device there";
}

// Each instance owns a queue, and the system hands out only so many (newCommandQueue
// returns nil past that): say so as DeviceError, with the fix.
std::unique_ptr<rt::Queue> new_queue(int64_t ordinal, rt::Device& gpu) {
  try {
    return gpu.new_queue();
  } catch (const rt::RuntimeError& e) {
    throw Error(ErrorKind::Device,
                "cannot open a new Device on metal:" + std::to_string(ordinal) + " (GPU '" +
                    gpu.info().name + "'): the system refused a new command queue (" + e.what() +
                    "). Every Device.metal() call opens its own queue: drop Device instances you "
                    "no longer use (and their tensors), or share one through "
                    "ember.device(\"metal:" +
                    std::to_string(ordinal) + "\")");
  }
}

// The pool's cap: EMBER_METAL_MAX_CACHED_BYTES, else a quarter of the GPU's recommended
// working set; 1 GiB on the emulator, whose "working set" is all of the host's memory.
int64_t pool_cap(const rt::GpuInfo& gpu) {
  const char* v = std::getenv("EMBER_METAL_MAX_CACHED_BYTES");
  if (!v || !*v)
    return gpu.emulated ? int64_t(1) << 30 : int64_t(gpu.recommended_working_set_bytes / 4);
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 0)
    throw Error(ErrorKind::InvalidArgument,
                std::string("EMBER_METAL_MAX_CACHED_BYTES='") + v +
                    "' is not a byte count: set it to 0 or more (the most bytes a Metal "
                    "device's buffer pool keeps), or unset it")
        .with("op", std::string("Device.metal"));
  return n;
}

}  // namespace

MetalDevice::MetalDevice(int64_t ordinal, std::shared_ptr<rt::Device> gpu)
    : ordinal_(ordinal),
      owner_pid_(getpid()),
      gpu_(std::move(gpu)),
      queue_(new_queue(ordinal_, *gpu_)),
      completed_seq_(std::make_shared<CompletedPrefix>()),
      pool_(pool_cap(gpu_->info())) {}

MetalDevice::~MetalDevice() {
  if (getpid() != owner_pid_) {
    // A forked child: the queue's worker is in the parent, so waiting or joining it would
    // hang. Leave its state to the process's exit.
    (void)queue_.release();
    (void)open_.release();
    return;
  }
  try {
    // Nothing can read this instance's results any more: the emulator stops its work at the
    // next dispatch (Metal cannot). What still runs must finish, Ctrl-C or not.
    queue_->abandon();
    drain(/*interruptible=*/false);
  } catch (...) {
    // a failed command buffer nobody waited for: nothing left to report it to
  }
}

std::string MetalDevice::location() const {
  const rt::GpuInfo& info = gpu_->info();
  return "metal:" + std::to_string(ordinal_) + " (" + (info.emulated ? "emulated GPU '" : "GPU '") +
         info.name + "', registryID " + hex(info.registry_id) + ")";
}

void MetalDevice::check_process(const std::string& op) const {
  if (getpid() != owner_pid_)
    throw Error(ErrorKind::Device, describe() + ": cannot " + op +
                                       " in this process: the device was " +
                                       fork_advice(owner_pid_) + ".")
        .with("device", std::const_pointer_cast<BackendDevice>(shared_from_this()));
}

void MetalDevice::dispatch(const char* family, const std::string& kernel,
                           const KernelBuffers& buffers, const void* params, size_t params_size,
                           rt::Size3 groups, rt::Size3 group_size, size_t written) {
  check_process("run kernel " + kernel);
  if (groups.x == 0 || groups.y == 0 || groups.z == 0) return;  // nothing to run
  const rt::Pipeline& p = pipeline(family, kernel);
  const uint64_t lanes = uint64_t(group_size.x) * group_size.y * group_size.z;
  if (lanes > p.max_threads_per_group())
    throw Error(ErrorKind::Device, describe() + ": kernel " + kernel + " needs " +
                                       std::to_string(lanes) +
                                       " threads per threadgroup, the GPU allows " +
                                       std::to_string(p.max_threads_per_group()))
        .with("device", shared_from_this());
  std::vector<rt::BufferArg> args;
  args.reserve(buffers.size());
  for (const MetalStorage* s : buffers) args.push_back(rt::BufferArg{s->buffer(), 0});
  std::unique_lock<std::mutex> lock(mu_);
  if (!open_) open_ = queue_->command_buffer();
  try {
    open_->dispatch(p, args, params, params_size, groups, group_size);
  } catch (const rt::RuntimeError& e) {  // the runtime refused the encoding
    throw Error(ErrorKind::Device,
                describe() + ": cannot encode kernel " + kernel + ": " + e.what())
        .with("device", shared_from_this());
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    buffers[i]->note_use(open_seq_, /*write=*/i + written >= buffers.size());
  ++dispatches_;
  threadgroups_ += int64_t(groups.x) * groups.y * groups.z;
  if (++open_dispatches_ < kDispatchesPerCommandBuffer) return;
  commit_locked();
  lock.unlock();
  throttle();
}

void MetalDevice::throttle() {
  // As a GPU queue does: without a bound, a loop of ops would queue (and allocate) ahead
  // of the device without limit.
  InFlight oldest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop_finished_locked();
    if (in_flight_.size() <= kMaxCommandBuffersInFlight) return;
    oldest = in_flight_.front();
  }
  wait_committed(oldest.seq, {oldest.cb}, /*interruptible=*/true);
}

void MetalDevice::wait_committed(uint64_t seq,
                                 const std::vector<std::shared_ptr<rt::CommandBuffer>>& buffers,
                                 bool interruptible) {
  // Slices on the completion watermark, as Metal's waitUntilCompleted cannot be timed.
  wait_in_slices([&](auto slice) { return completed_seq_->wait_for(seq, slice); }, interruptible);
  for (auto& cb : buffers) cb->wait();  // done: only lets their other handlers finish
}

void MetalDevice::commit_locked() {
  if (!open_) return;
  const uint64_t seq = open_seq_++;
  std::shared_ptr<CompletedPrefix> done = completed_seq_;
  open_->on_completed([done, seq] { done->complete(seq); });
  open_->commit();
  in_flight_.push_back(InFlight{seq, std::move(open_)});
  open_dispatches_ = 0;
  drop_finished_locked();
}

void MetalDevice::drop_finished_locked() {
  auto it = in_flight_.begin();
  for (; it != in_flight_.end() && it->cb->completed(); ++it) {
    completed_seq_->complete(it->seq);  // seen done: its handler may not have run yet
    std::string err = it->cb->error();
    if (!err.empty() && pending_error_.empty()) pending_error_ = err;
  }
  in_flight_.erase(in_flight_.begin(), it);
}

void MetalDevice::synchronize() {
  drain(/*interruptible=*/true);
}

void MetalDevice::drain(bool interruptible) {
  check_process("synchronize");
  std::vector<std::shared_ptr<rt::CommandBuffer>> waiting;
  uint64_t last = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    commit_locked();
    ++host_waits_;
    // a copy: another thread may be waiting for the same buffers
    for (const InFlight& f : in_flight_) waiting.push_back(f.cb);
    if (!in_flight_.empty()) last = in_flight_.back().seq;
  }
  wait_committed(last, waiting, interruptible);
  raise_pending_error();
}

void MetalDevice::raise_pending_error() {
  std::string err;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop_finished_locked();
    err.swap(pending_error_);
  }
  if (!err.empty())
    throw Error(ErrorKind::Device, describe() + ": a command buffer failed on the GPU: " + err +
                                       ". Results of work queued before this wait are undefined.")
        .with("device", shared_from_this());
}

std::shared_ptr<rt::Buffer> MetalDevice::acquire(size_t bytes) {
  check_process("allocate " + std::to_string(bytes) + " bytes");
  const size_t cls = BufferPool::size_class(bytes);
  if (auto b = pool_.take(cls)) return b;
  // Over its cap, the pool holds buffers that queued work still uses: the queue catches
  // up first (as in throttle()), so a loop of ops cannot pile up freed buffers.
  while (EventPtr last_use = pool_.pending_over_cap()) {
    last_use->wait();
    pool_.trim();
    if (auto b = pool_.take(cls)) return b;
  }
  std::shared_ptr<rt::Buffer> b = gpu_->new_buffer(cls);
  if (!b) {  // give the pool's buffers back and try once more
    synchronize();
    pool_.clear();
    b = gpu_->new_buffer(cls);
    if (!b) throw_out_of_memory(shared_from_this(), int64_t(bytes));
  }
  pool_.note_allocated(cls);
  return b;
}

void MetalDevice::release(std::shared_ptr<rt::Buffer> buffer, uint64_t last_use_seq) {
  pool_.give(std::move(buffer), passed(last_use_seq) ? nullptr : event_at(last_use_seq));
}

std::unique_ptr<BackendStorage> MetalDevice::alloc_uninit(int64_t numel, DType dtype) {
  return std::make_unique<MetalStorage>(shared_from_this(), dtype, numel);
}

std::unique_ptr<BackendStorage> MetalDevice::zeros(int64_t numel, DType dtype) {
  auto s = std::make_unique<MetalStorage>(shared_from_this(), dtype, numel);
  // A fresh buffer is not in use by the GPU, so the host may write it directly.
  std::memset(s->host_data(), 0, size_t(numel) * dtype_size(dtype));
  return s;
}

std::unique_ptr<BackendStorage> MetalDevice::from_host(const void* data, int64_t numel,
                                                       DType dtype) {
  auto s = std::make_unique<MetalStorage>(shared_from_this(), dtype, numel);
  if (numel > 0) std::memcpy(s->host_data(), data, size_t(numel) * dtype_size(dtype));
  return s;
}

std::map<std::string, std::string> MetalDevice::info() const {
  const rt::GpuInfo& g = gpu_->info();
  return {{"gpu", g.name},
          {"registry_id", hex(g.registry_id)},
          {"emulated", g.emulated ? "yes (EMBER_METAL_EMULATOR)" : "no"},
          {"max_buffer_bytes", std::to_string(g.max_buffer_bytes)},
          {"recommended_working_set_bytes", std::to_string(g.recommended_working_set_bytes)},
          {"dispatches_per_command_buffer", std::to_string(kDispatchesPerCommandBuffer)},
          {"max_cached_bytes", std::to_string(pool_.cap_bytes())}};
}

void MetalDevice::empty_cache() {
  synchronize();
  pool_.clear();
}

std::map<std::string, int64_t> MetalDevice::memory_stats() const {
  return pool_.stats();
}

std::map<std::string, int64_t> MetalDevice::queue_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {{"command_buffers_committed", int64_t(open_seq_ - 1)},
          {"command_buffers_completed", int64_t(completed_seq_->load(std::memory_order_acquire))},
          {"dispatches_open", open_dispatches_},
          {"host_waits", host_waits_},
          {"dispatches", dispatches_},
          {"threadgroups", threadgroups_}};
}

namespace {

// Opened GPUs by ordinal: instances of one ordinal share the rt::Device, not the queue.
std::shared_ptr<rt::Device> open_gpu(int64_t ordinal) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<rt::Device>> gpus;
  static const int64_t opened_by = getpid();  // the process that first opened a GPU
  std::lock_guard<std::mutex> lock(mu);
  if (getpid() != opened_by)
    throw Error(ErrorKind::Device, "cannot open metal:" + std::to_string(ordinal) +
                                       " in this forked child: Metal was first " +
                                       fork_advice(opened_by) + ".");
  auto& slot = gpus[ordinal];
  if (!slot) slot = rt::system_runtime().open(ordinal);
  return slot;
}

const bool registered = register_backend(BackendFactory{
    "metal",
    [] {
      rt::Runtime& r = rt::system_runtime();
      return r.unavailable_reason().empty() ? int64_t(r.devices().size()) : int64_t(0);
    },
    [] { return rt::system_runtime().unavailable_reason(); },
    [](int64_t ordinal, bool) -> DevicePtr {
      return std::make_shared<MetalDevice>(ordinal, open_gpu(ordinal));
    }});

}  // namespace

}  // namespace ember::metal
