// The kernel runner: threadgroups one after another on the calling thread; within a
// group, lanes as straight calls or as fibers (see runner.h).
#include "runner.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define EMBER_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBER_EMU_ASAN 1
#endif
#endif
#ifdef EMBER_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define EMBER_EMU_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif

namespace ember::metal::emu {
namespace {

// Kernel frames are small even with AddressSanitizer's redzones. (ASan's swapcontext
// interceptor clears a lane's whole stack shadow at every switch: keep stacks small.)
constexpr size_t kStackBytes = 256 * 1024;
constexpr size_t kSimdSlotBytes = 16;

enum class LaneState : uint8_t { Ready, AtBarrier, AtSimd, Done, Failed };

struct Group;

struct Lane {
  Group* group = nullptr;
  ThreadArgs args{};
  uint32_t index = 0;  // linear index in the group
  LaneState state = LaneState::Ready;
  uint32_t tg_next = 0;  // index of the lane's next EMBER_THREADGROUP
  const char* barrier_file = nullptr;
  int barrier_line = 0;
  const char* simd_op = nullptr;
  size_t simd_size = 0;
  uint64_t simd_calls = 0;  // parity picks the exchange buffer
  std::string error;
  // The fiber. ucontext_t points into itself (fpregs), so a Lane never moves.
  ucontext_t ctx{};
  char* stack_map = nullptr;  // guard page, then kStackBytes of stack
  void* asan_fake = nullptr;
  void* tsan_fiber = nullptr;  // ThreadSanitizer's record of this stack (it must know each)
  char* stack_lo() const { return stack_map + page_size(); }
  static size_t page_size() { return size_t(sysconf(_SC_PAGESIZE)); }
};

struct TgArray {
  void* data;
  size_t elem, n;
};

struct Group {
  const KernelInfo* kernel = nullptr;
  void* const* buffers = nullptr;
  const void* params = nullptr;
  bool fibers = false;
  void* tsan_sched = nullptr;  // the scheduler's ThreadSanitizer fiber (the OS thread's)
  uint32_t size = 0;           // lanes
  uint32_t gs[3] = {1, 1, 1};
  uint32_t tgid[3] = {0, 0, 0};
  std::vector<TgArray> arrays;
  size_t tg_bytes = 0;
  uint64_t barriers_passed = 0;
  std::vector<unsigned char> simd_slots;  // [2][size][kSimdSlotBytes]
  ucontext_t sched{};
  const void* sched_bottom = nullptr;
  size_t sched_size = 0;

  ~Group() {
    for (TgArray& a : arrays) std::free(a.data);
  }
  unsigned char* slot(uint64_t parity, uint32_t lane) {
    return simd_slots.data() + (size_t(parity & 1) * size + lane) * kSimdSlotBytes;
  }
};

thread_local Lane* tl_lane = nullptr;

std::string where(const Group& g) {
  return "kernel " + std::string(g.kernel->name) + ", threadgroup (" + std::to_string(g.tgid[0]) +
         "," + std::to_string(g.tgid[1]) + "," + std::to_string(g.tgid[2]) + ")";
}

std::string site(const Lane& l) {
  const char* f = l.barrier_file ? l.barrier_file : "?";
  const char* slash = std::strrchr(f, '/');
  return std::string(slash ? slash + 1 : f) + ":" + std::to_string(l.barrier_line);
}

Lane& current_lane(const char* op) {
  if (!tl_lane)
    throw std::logic_error(std::string(op) + " called outside a kernel run by the emulator");
  return *tl_lane;
}

[[noreturn]] void needs_grouped(const Group& g, const char* op) {
  throw KernelError(where(g) + ": " + op + " called, but " + g.kernel->name +
                    " is instantiated with EMBER_KERNEL; kernels that call threadgroup_barrier "
                    "or simd_* must use EMBER_KERNEL_GROUPED");
}

// splitmix64: a deterministic, well-mixed stream for the lane order.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  void shuffle(std::vector<uint32_t>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[next() % i]);
  }
};

uint64_t schedule_seed() {
  static const uint64_t seed = [] {
    const char* s = std::getenv("EMBER_METAL_EMULATOR_SEED");
    return s ? std::strtoull(s, nullptr, 10) : 0ull;
  }();
  return seed;
}

uint64_t group_seed(const Group& g) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the kernel name
  for (const char* c = g.kernel->name; *c; ++c) h = (h ^ uint8_t(*c)) * 1099511628211ull;
  for (uint32_t v : {g.tgid[0], g.tgid[1], g.tgid[2], g.size}) h = (h ^ v) * 1099511628211ull;
  return h ^ schedule_seed();
}

// Switches between the scheduler and lanes, telling AddressSanitizer about the stacks.
void resume(Group& g, Lane& l) {
  tl_lane = &l;
#ifdef EMBER_EMU_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, l.stack_lo(), kStackBytes);
#endif
#ifdef EMBER_EMU_TSAN
  g.tsan_sched = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(l.tsan_fiber, 0);  // 0: the switch orders the lanes' accesses
#endif
  swapcontext(&g.sched, &l.ctx);
#ifdef EMBER_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  tl_lane = nullptr;
}

void yield(Lane& l) {
  Group& g = *l.group;
#ifdef EMBER_EMU_ASAN
  __sanitizer_start_switch_fiber(&l.asan_fake, g.sched_bottom, g.sched_size);
#endif
#ifdef EMBER_EMU_TSAN
  __tsan_switch_to_fiber(g.tsan_sched, 0);
#endif
  swapcontext(&l.ctx, &g.sched);
#ifdef EMBER_EMU_ASAN
  __sanitizer_finish_switch_fiber(l.asan_fake, &g.sched_bottom, &g.sched_size);
#endif
}

void fiber_main() {
  Lane& l = *tl_lane;
  Group& g = *l.group;
#ifdef EMBER_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &g.sched_bottom, &g.sched_size);
#endif
  try {
    g.kernel->invoke(g.buffers, g.params, l.args);
    l.state = LaneState::Done;
  } catch (const std::exception& e) {
    l.state = LaneState::Failed;
    l.error = e.what();
  } catch (...) {
    l.state = LaneState::Failed;
    l.error = "unknown exception";
  }
#ifdef EMBER_EMU_ASAN
  __sanitizer_start_switch_fiber(nullptr, g.sched_bottom, g.sched_size);
#endif
#ifdef EMBER_EMU_TSAN
  __tsan_switch_to_fiber(g.tsan_sched, 0);
#endif
  swapcontext(&l.ctx, &g.sched);  // never resumed
  std::abort();
}

class Runner {
 public:
  ~Runner() {
    for (auto& l : lanes_) {
      if (l->stack_map) munmap(l->stack_map, kStackBytes + Lane::page_size());
#ifdef EMBER_EMU_TSAN
      if (l->tsan_fiber) __tsan_destroy_fiber(l->tsan_fiber);
#endif
    }
  }

  void run(Group& g) {
    ensure_lanes(g.fibers ? g.size : 1);
    if (!g.fibers) return run_straight(g);
    g.simd_slots.assign(size_t(2) * g.size * kSimdSlotBytes, 0);
    for (uint32_t i = 0; i < g.size; ++i) start_fiber(g, *lanes_[i], i);
    std::vector<uint32_t> order(g.size);
    for (uint32_t i = 0; i < g.size; ++i) order[i] = i;
    Rng rng{group_seed(g)};
    while (true) {
      rng.shuffle(order);  // a new order for every phase between barriers
      for (uint32_t i : order) {
        Lane& l = *lanes_[i];
        if (l.state != LaneState::Ready) continue;
        resume(g, l);
        if (l.state == LaneState::Failed) throw KernelError(l.error);
      }
      if (release_simdgroups(g)) continue;
      if (release_barrier(g)) continue;
      return;  // every lane done
    }
  }

 private:
  void ensure_lanes(uint32_t n) {
    while (lanes_.size() < n) lanes_.push_back(std::make_unique<Lane>());
  }

  static void set_args(Group& g, Lane& l, uint32_t i) {
    const uint32_t* gs = g.gs;
    l.group = &g;
    l.index = i;
    l.state = LaneState::Ready;
    l.tg_next = 0;
    l.simd_calls = 0;
    l.error.clear();
    const uint32_t lid[3] = {i % gs[0], (i / gs[0]) % gs[1], i / (gs[0] * gs[1])};
    for (int d = 0; d < 3; ++d) {
      l.args.lid[d] = lid[d];
      l.args.tgid[d] = g.tgid[d];
      l.args.tgsize[d] = gs[d];
      l.args.gid[d] = g.tgid[d] * gs[d] + lid[d];
    }
    l.args.simd_lane = i % kSimdWidth;
    l.args.simd_group = i / kSimdWidth;
  }

  void run_straight(Group& g) {
    Lane& l = *lanes_[0];
    struct Reset {
      ~Reset() { tl_lane = nullptr; }
    } reset;
    for (uint32_t i = 0; i < g.size; ++i) {
      set_args(g, l, i);
      tl_lane = &l;
      g.kernel->invoke(g.buffers, g.params, l.args);
    }
  }

  static void start_fiber(Group& g, Lane& l, uint32_t i) {
    set_args(g, l, i);
    if (!l.stack_map) {
      const size_t page = Lane::page_size();
      void* m = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
      if (m == MAP_FAILED) throw KernelError(where(g) + ": cannot map a lane stack");
      mprotect(m, page, PROT_NONE);  // a stack overflow faults instead of corrupting
      l.stack_map = static_cast<char*>(m);
      if (getcontext(&l.ctx) != 0) throw KernelError(where(g) + ": getcontext failed");
#ifdef EMBER_EMU_TSAN
      l.tsan_fiber = __tsan_create_fiber(0);
#endif
    }
    l.ctx.uc_stack.ss_sp = l.stack_lo();
    l.ctx.uc_stack.ss_size = kStackBytes;
    l.ctx.uc_link = nullptr;
    makecontext(&l.ctx, fiber_main, 0);
  }

  // Releases every simdgroup whose lanes all wait at the same simd_* call.
  bool release_simdgroups(Group& g) {
    bool released = false;
    for (uint32_t first = 0; first < g.size; first += kSimdWidth) {
      const uint32_t end = std::min(g.size, first + kSimdWidth);
      uint32_t waiting = 0;
      for (uint32_t i = first; i < end; ++i) waiting += lanes_[i]->state == LaneState::AtSimd;
      if (waiting == 0) continue;
      if (waiting < end - first) continue;  // reported below if nothing else can move
      const Lane& a = *lanes_[first];
      for (uint32_t i = first + 1; i < end; ++i) {
        const Lane& b = *lanes_[i];
        if (std::strcmp(a.simd_op, b.simd_op) != 0 || a.simd_size != b.simd_size)
          throw KernelError(where(g) + ": lanes of simdgroup " +
                            std::to_string(first / kSimdWidth) +
                            " call different simd functions (lane " + std::to_string(first) + ": " +
                            a.simd_op + ", lane " + std::to_string(i) + ": " + b.simd_op + ")");
      }
      for (uint32_t i = first; i < end; ++i) lanes_[i]->state = LaneState::Ready;
      released = true;
    }
    return released;
  }

  // Every lane blocked and no simdgroup releasable: a complete barrier passes, all
  // lanes done ends the group, anything else is the kernel's error.
  bool release_barrier(Group& g) {
    uint32_t at_barrier = 0, done = 0, at_simd = 0;
    for (uint32_t i = 0; i < g.size; ++i) {
      const LaneState s = lanes_[i]->state;
      at_barrier += s == LaneState::AtBarrier;
      done += s == LaneState::Done;
      at_simd += s == LaneState::AtSimd;
    }
    if (done == g.size) return false;
    if (at_simd > 0) throw KernelError(where(g) + ": " + describe_simd_stall(g));
    const uint64_t n = g.barriers_passed + 1;
    const Lane* first_at = nullptr;
    for (uint32_t i = 0; i < g.size && !first_at; ++i)
      if (lanes_[i]->state == LaneState::AtBarrier) first_at = lanes_[i].get();
    if (at_barrier == g.size) {
      for (uint32_t i = 0; i < g.size; ++i) {
        const Lane& l = *lanes_[i];
        if (l.barrier_line != first_at->barrier_line ||
            std::strcmp(l.barrier_file, first_at->barrier_file) != 0)
          throw KernelError(where(g) +
                            ": lanes wait at different threadgroup_barrier calls (lane " +
                            std::to_string(first_at->index) + " at " + site(*first_at) + ", lane " +
                            std::to_string(l.index) + " at " + site(l) +
                            "); every lane must reach the same barriers");
      }
      for (uint32_t i = 0; i < g.size; ++i) lanes_[i]->state = LaneState::Ready;
      ++g.barriers_passed;
      return true;
    }
    uint32_t first_done = 0;
    while (lanes_[first_done]->state != LaneState::Done) ++first_done;
    throw KernelError(where(g) + ": threadgroup_barrier #" + std::to_string(n) + " (" +
                      site(*first_at) + ") reached by " + std::to_string(at_barrier) + " of " +
                      std::to_string(g.size) + " lanes; lane " + std::to_string(first_done) +
                      (done > 1 ? " and " + std::to_string(done - 1) + " other lanes" : "") +
                      " returned without reaching it (every lane must reach every barrier: "
                      "guard the work instead of returning early)");
  }

  std::string describe_simd_stall(Group& g) {
    for (uint32_t first = 0; first < g.size; first += kSimdWidth) {
      const uint32_t end = std::min(g.size, first + kSimdWidth);
      const Lane* waiting = nullptr;
      const Lane* other = nullptr;
      uint32_t count = 0;
      for (uint32_t i = first; i < end; ++i) {
        const Lane* l = lanes_[i].get();
        if (l->state == LaneState::AtSimd) {
          ++count;
          if (!waiting) waiting = l;
        } else if (!other) {
          other = l;
        }
      }
      if (!waiting || !other) continue;
      const std::string what = other->state == LaneState::Done
                                   ? "returned"
                                   : "waits at threadgroup_barrier (" + site(*other) + ")";
      return std::string(waiting->simd_op) + " reached by " + std::to_string(count) + " of " +
             std::to_string(end - first) + " lanes of simdgroup " +
             std::to_string(first / kSimdWidth) + "; lane " + std::to_string(other->index) + " " +
             what + " (every lane of a simdgroup must make the same simd_* calls)";
    }
    return "simd_* calls stalled";
  }

  std::vector<std::unique_ptr<Lane>> lanes_;
};

thread_local Runner tl_runner;

}  // namespace

void lane_barrier(const char* file, int line) {
  Lane& l = current_lane("threadgroup_barrier");
  Group& g = *l.group;
  if (!g.fibers) needs_grouped(g, "threadgroup_barrier");
  l.state = LaneState::AtBarrier;
  l.barrier_file = file;
  l.barrier_line = line;
  yield(l);
}

void lane_simd_exchange(const char* op, const void* value, size_t size, void* all, uint32_t* lanes,
                        uint32_t* self) {
  Lane& l = current_lane(op);
  Group& g = *l.group;
  if (!g.fibers) needs_grouped(g, op);
  if (size > kSimdSlotBytes) throw KernelError(where(g) + ": " + op + " of a value over 16 bytes");
  const uint32_t first = l.index / kSimdWidth * kSimdWidth;
  const uint32_t count = std::min(g.size - first, kSimdWidth);
  const uint64_t parity = l.simd_calls;
  std::memcpy(g.slot(parity, l.index), value, size);
  l.state = LaneState::AtSimd;
  l.simd_op = op;
  l.simd_size = size;
  yield(l);
  // Every lane of the simdgroup has arrived; none can write this parity's slots again
  // before all of them read them (that needs another complete exchange).
  for (uint32_t i = 0; i < count; ++i)
    std::memcpy(static_cast<char*>(all) + i * size, g.slot(parity, first + i), size);
  ++l.simd_calls;
  *lanes = count;
  *self = l.index - first;
}

void* lane_threadgroup_alloc(size_t elem_size, size_t n, size_t align) {
  Lane& l = current_lane("EMBER_THREADGROUP");
  Group& g = *l.group;
  const uint32_t k = l.tg_next++;
  if (k < g.arrays.size()) {
    const TgArray& a = g.arrays[k];
    if (a.elem != elem_size || a.n != n)
      throw KernelError(where(g) + ": threadgroup array #" + std::to_string(k + 1) +
                        " declared with different sizes by different lanes");
    return a.data;
  }
  if (n == 0) throw KernelError(where(g) + ": a threadgroup array of 0 elements");
  if (align > alignof(std::max_align_t))
    throw KernelError(where(g) + ": threadgroup array alignment over " +
                      std::to_string(alignof(std::max_align_t)));
  const size_t bytes = elem_size * n;
  g.tg_bytes += bytes;
  if (g.tg_bytes > kMaxThreadgroupMemory)
    throw KernelError(where(g) + ": threadgroup memory of " + std::to_string(g.tg_bytes) +
                      " bytes, over Metal's limit of " + std::to_string(kMaxThreadgroupMemory));
  void* p = std::malloc(bytes);
  if (!p) throw KernelError(where(g) + ": cannot allocate threadgroup memory");
  std::memset(p, 0xff, bytes);  // uninitialised on a GPU: NaN / -1 here, to show it
  g.arrays.push_back(TgArray{p, elem_size, n});
  return p;
}

void run_dispatch(const Dispatch& d) {
  const KernelInfo& k = *d.kernel;
  const uint64_t lanes = uint64_t(d.group_size[0]) * d.group_size[1] * d.group_size[2];
  if (lanes == 0 || lanes > kMaxThreadsPerGroup)
    throw KernelError("kernel " + std::string(k.name) + ": " + std::to_string(lanes) +
                      " threads per threadgroup (1.." + std::to_string(kMaxThreadsPerGroup) + ")");
  if (d.buffers.size() != k.num_buffers)
    throw KernelError("kernel " + std::string(k.name) + ": takes " + std::to_string(k.num_buffers) +
                      " buffers, the dispatch binds " + std::to_string(d.buffers.size()));
  Runner& runner = tl_runner;
  for (uint32_t z = 0; z < d.groups[2]; ++z)
    for (uint32_t y = 0; y < d.groups[1]; ++y)
      for (uint32_t x = 0; x < d.groups[0]; ++x) {
        Group g;
        g.kernel = &k;
        g.buffers = d.buffers.data();
        g.params = d.params;
        g.fibers = k.grouped;
        g.size = uint32_t(lanes);
        for (int i = 0; i < 3; ++i) g.gs[i] = d.group_size[i];
        g.tgid[0] = x;
        g.tgid[1] = y;
        g.tgid[2] = z;
        try {
          runner.run(g);
        } catch (const KernelError&) {
          throw;
        } catch (const std::exception& e) {
          throw KernelError(where(g) + ": " + e.what());
        }
      }
}

}  // namespace ember::metal::emu
