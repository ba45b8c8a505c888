// Checks of the Metal emulator, built with AddressSanitizer and UBSan
// (run_kernel_checks.sh). With no argument: every check; --list: the registered kernel
// families and kernels (fails if a family registers none); --case NAME: one misbehaving
// kernel, run as a child process so that AddressSanitizer's abort can be observed.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend/completed_prefix.h"
#include "emulator/emulator.h"
#include "emulator/kernel_registry.h"
#include "emutest.h"
#include "runtime/runtime.h"
#ifdef EMBER_CHECK_EMBEDDED
#include "kernels/sources.h"
#endif

namespace rt = ember::metal::rt;
namespace emu = ember::metal::emu;

namespace {

int g_failures = 0;
int g_checks = 0;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    ++g_checks;                                                            \
    if (!(cond)) {                                                         \
      ++g_failures;                                                        \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                   \
      std::fputc('\n', stderr);                                            \
    }                                                                      \
  } while (0)

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// One emulated GPU with a queue and the emutest library.
struct Gpu {
  std::shared_ptr<rt::Device> device;
  std::unique_ptr<rt::Queue> queue;
  std::shared_ptr<rt::Library> library;

  Gpu() {
    device = rt::system_runtime().open(0);
    queue = device->new_queue();
#ifdef EMBER_CHECK_EMBEDDED
    const std::string source = ember::metal::kernel_source("emutest");
#else
    const std::string source = "(the emulator needs no source)";
#endif
    library = device->compile_library("emutest", source);
  }

  std::shared_ptr<rt::Buffer> buffer(size_t bytes) {
    auto b = device->new_buffer(bytes);
    if (!b) {
      std::fprintf(stderr, "cannot allocate %zu bytes\n", bytes);
      std::exit(2);
    }
    return b;
  }
  template <typename T>
  std::shared_ptr<rt::Buffer> buffer_of(const std::vector<T>& v) {
    auto b = buffer(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(b->contents(), v.data(), v.size() * sizeof(T));
    return b;
  }

  // Encodes one dispatch into a new command buffer of `q` (this GPU's queue by default).
  std::unique_ptr<rt::CommandBuffer> encode(const std::string& kernel,
                                            const std::vector<rt::Buffer*>& buffers,
                                            const EmuTestParams& p, rt::Size3 groups,
                                            rt::Size3 group_size, rt::Queue* q = nullptr) {
    auto cb = (q ? q : queue.get())->command_buffer();
    std::vector<rt::BufferArg> args;
    for (rt::Buffer* b : buffers) args.push_back(rt::BufferArg{b, 0});
    cb->dispatch(*library->pipeline(kernel), args, &p, sizeof p, groups, group_size);
    return cb;
  }

  // Runs one dispatch to completion; returns the command buffer's error text.
  std::string run(const std::string& kernel, const std::vector<rt::Buffer*>& buffers,
                  const EmuTestParams& p, rt::Size3 groups, rt::Size3 group_size) {
    auto cb = encode(kernel, buffers, p, groups, group_size);
    cb->commit();
    cb->wait();
    return cb->error();
  }
};

EmuTestParams params(int64_t n, float value = 0, float scale = 1, uint32_t bad = 0) {
  EmuTestParams p{};
  p.n = n;
  p.value = value;
  p.scale = scale;
  p.bad = bad;
  return p;
}

template <typename T>
std::vector<T> read(rt::Buffer& b) {
  std::vector<T> v(b.length() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.contents(), v.size() * sizeof(T));
  return v;
}

std::vector<float> small_ints(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = float((i * 7) % 9 - 4);
  return v;
}

// ---- the runtime's identity ----------------------------------------------------------

void check_runtime_identity() {
  rt::Runtime& r = rt::system_runtime();
  unsetenv("EMBER_METAL_EMULATOR");
  CHECK(contains(r.unavailable_reason(), "macOS") &&
            contains(r.unavailable_reason(), "EMBER_METAL_EMULATOR=1"),
        "reason: %s", r.unavailable_reason().c_str());
  CHECK(r.devices().empty(), "devices without the emulator");
  setenv("EMBER_METAL_EMULATOR", "lots", 1);
  CHECK(contains(r.unavailable_reason(), "'lots'"), "reason: %s", r.unavailable_reason().c_str());
  setenv("EMBER_METAL_EMULATOR", "3", 1);
  CHECK(r.unavailable_reason().empty(), "reason: %s", r.unavailable_reason().c_str());
  const auto gpus = r.devices();
  CHECK(gpus.size() == 3, "%zu devices", gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    CHECK(gpus[i].emulated && contains(gpus[i].name, "emulator"), "%s", gpus[i].name.c_str());
    for (size_t j = 0; j < i; ++j) CHECK(gpus[i].registry_id != gpus[j].registry_id, "ids");
  }
  auto dev = r.open(2);
  CHECK(dev->info().registry_id == gpus[2].registry_id, "open(2) id");
  CHECK(dev->new_buffer(size_t(1) << 50) == nullptr, "absurd buffer must be nullptr");
  CHECK(dev->new_buffer(0) != nullptr, "a zero-length buffer");
  setenv("EMBER_METAL_EMULATOR", "1", 1);
}

// A Mac whose device list comes back empty (headless, sandboxed, virtualized sessions)
// still offers its default device (runtime/device_list.h, as mtl_runtime.mm does).
void check_empty_device_list() {
  rt::Runtime& r = rt::system_runtime();
  setenv("EMBER_METAL_EMULATOR", "3", 1);
  setenv("EMBER_METAL_EMULATOR_NO_DEVICE_LIST", "1", 1);
  CHECK(r.unavailable_reason().empty(), "reason: %s", r.unavailable_reason().c_str());
  const auto gpus = r.devices();
  CHECK(gpus.size() == 1, "%zu devices from an empty list, want the default one", gpus.size());
  bool opened = false, out_of_range = false;
  try {
    opened = r.open(0)->info().registry_id == gpus.at(0).registry_id;
    r.open(1);
  } catch (const std::exception&) {
    out_of_range = opened;
  }
  CHECK(opened && out_of_range, "open(0) must give the default device, open(1) must throw");
  unsetenv("EMBER_METAL_EMULATOR_NO_DEVICE_LIST");
  setenv("EMBER_METAL_EMULATOR", "1", 1);
}

// ---- kernels -------------------------------------------------------------------------

void check_reduction(Gpu& gpu) {
  std::vector<uint32_t> sizes;
  for (uint32_t gs = 32; gs <= 1024; gs += 32) sizes.push_back(gs);
  for (uint32_t gs : {1u, 7u, 33u, 100u}) sizes.push_back(gs);
  for (uint32_t gs : sizes) {
    const uint32_t groups = 3;
    const int64_t n = int64_t(groups) * gs - (gs > 5 ? 5 : 0);  // a partial last group
    const auto src = small_ints(n);
    auto in = gpu.buffer_of(src);
    auto out = gpu.buffer(groups * sizeof(float));
    for (const char* k : {"emutest_tg_sum_f32", "emutest_simd_tg_sum_f32"}) {
      if (std::string(k) == "emutest_simd_tg_sum_f32" && gs % 32 != 0) continue;
      const std::string err =
          gpu.run(k, {in.get(), out.get()}, params(n), {groups, 1, 1}, {gs, 1, 1});
      CHECK(err.empty(), "%s gs=%u: %s", k, gs, err.c_str());
      const auto got = read<float>(*out);
      for (uint32_t g = 0; g < groups; ++g) {
        float want = 0;
        for (int64_t i = int64_t(g) * gs; i < std::min<int64_t>(n, int64_t(g + 1) * gs); ++i)
          want += src[i];
        CHECK(got[g] == want, "%s gs=%u group %u: %g, want %g", k, gs, g, got[g], want);
      }
    }
  }
}

// Without the barriers between tree steps the lanes' interleaving shows: a wrong sum,
// the same wrong sum every time (the lane order is fixed per kernel and group).
void check_missing_barrier(Gpu& gpu) {
  const uint32_t gs = 256, groups = 4;
  const int64_t n = int64_t(gs) * groups;
  std::vector<float> src(n, 1.0f);
  auto in = gpu.buffer_of(src);
  auto out = gpu.buffer(groups * sizeof(float));
  std::vector<float> first;
  for (int run = 0; run < 3; ++run) {
    const std::string err = gpu.run("emutest_tg_sum_nobarrier_f32", {in.get(), out.get()},
                                    params(n), {groups, 1, 1}, {gs, 1, 1});
    CHECK(err.empty(), "%s", err.c_str());
    const auto got = read<float>(*out);
    int wrong = 0;
    for (float v : got) wrong += v != float(gs);
    CHECK(wrong == int(groups), "only %d of %u groups wrong without barriers", wrong, groups);
    if (run == 0) first = got;
    CHECK(got == first, "run %d differs: not deterministic", run);
  }
  std::printf("  without barriers: group sums %g %g %g %g (want %u)\n", first[0], first[1],
              first[2], first[3], gs);
}

void check_kernel_errors(Gpu& gpu) {
  auto in = gpu.buffer_of(small_ints(64));
  auto out = gpu.buffer(64 * sizeof(float));
  std::string err = gpu.run("emutest_early_return_f32", {in.get(), out.get()}, params(64, 0, 1, 5),
                            {1, 1, 1}, {64, 1, 1});
  CHECK(contains(err, "emutest_early_return_f32") && contains(err, "lane 5") &&
            contains(err, "returned") && contains(err, "threadgroup_barrier #1") &&
            contains(err, "63 of 64"),
        "early return: '%s'", err.c_str());
  std::printf("  early return: %s\n", err.c_str());

  err = gpu.run("emutest_extra_barrier_f32", {out.get()}, params(64, 0, 1, 16), {1, 1, 1},
                {64, 1, 1});
  CHECK(contains(err, "emutest_extra_barrier_f32") && contains(err, "#2") &&
            contains(err, "reached by 16 of 64"),
        "extra barrier: '%s'", err.c_str());

  err = gpu.run("emutest_barrier_plain_f32", {out.get()}, params(64), {1, 1, 1}, {64, 1, 1});
  CHECK(contains(err, "emutest_barrier_plain_f32") && contains(err, "EMBER_KERNEL_GROUPED"),
        "barrier in a plain kernel: '%s'", err.c_str());

  err = gpu.run("emutest_simd_divergent_f32", {out.get()}, params(64), {1, 1, 1}, {64, 1, 1});
  CHECK(
      contains(err, "emutest_simd_divergent_f32") && contains(err, "simd_sum reached by 16 of 32"),
      "divergent simd: '%s'", err.c_str());

  // The queue still works after failed command buffers.
  err = gpu.run("emutest_copy_f32", {in.get(), out.get()}, params(64), {1, 1, 1}, {64, 1, 1});
  CHECK(err.empty() && read<float>(*out) == read<float>(*in), "copy after errors: %s", err.c_str());
}

void check_simd(Gpu& gpu) {
  for (uint32_t gs : {64u, 48u, 1024u}) {
    const uint32_t groups = 2;
    const int64_t n = int64_t(gs) * groups;
    std::vector<float> src(n);
    for (int64_t i = 0; i < n; ++i) src[i] = float((i * 13) % 31) - 10.0f;
    auto in = gpu.buffer_of(src);
    auto sum = gpu.buffer(n * 4), mx = gpu.buffer(n * 4), mn = gpu.buffer(n * 4),
         down = gpu.buffer(n * 4), info = gpu.buffer(n * 4);
    const std::string err = gpu.run(
        "emutest_simd_f32", {in.get(), sum.get(), mx.get(), mn.get(), down.get(), info.get()},
        params(n), {groups, 1, 1}, {gs, 1, 1});
    CHECK(err.empty(), "simd gs=%u: %s", gs, err.c_str());
    const auto s = read<float>(*sum), a = read<float>(*mx), b = read<float>(*mn),
               d = read<float>(*down);
    const auto lane_info = read<uint32_t>(*info);
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t in_group = i % gs, first = i - in_group % 32;
      const int64_t end = std::min<int64_t>(first + 32, i - in_group + gs);
      float ws = 0, wa = -INFINITY, wb = INFINITY;
      for (int64_t j = first; j < end; ++j) {
        ws += src[j];
        wa = std::fmax(wa, src[j]);
        wb = std::fmin(wb, src[j]);
      }
      const float wd = i + 3 < end ? src[i + 3] : src[i];
      bad += s[i] != ws || a[i] != wa || b[i] != wb || d[i] != wd || lane_info[i] != in_group;
    }
    CHECK(bad == 0, "simd gs=%u: %d lanes wrong", gs, bad);
  }
}

void check_thread_args(Gpu& gpu) {
  const uint32_t gx = 8, gy = 4, gz = 2;  // 64 lanes: two simdgroups
  const uint32_t total = gx * 2 * gy * 3 * gz * 2;
  auto out = gpu.buffer(size_t(total) * 8 * 4);
  const std::string err =
      gpu.run("emutest_thread_args_u32", {out.get()}, params(total), {2, 3, 2}, {gx, gy, gz});
  CHECK(err.empty(), "%s", err.c_str());
  const auto o = read<uint32_t>(*out);
  int bad = 0;
  for (uint32_t z = 0; z < gz * 2; ++z)
    for (uint32_t y = 0; y < gy * 3; ++y)
      for (uint32_t x = 0; x < gx * 2; ++x) {
        const uint32_t i = (z * gy * 3 + y) * gx * 2 + x;
        const uint32_t lx = x % gx, ly = y % gy, lz = z % gz;
        const uint32_t linear = lx + gx * (ly + gy * lz);
        const uint32_t* v = &o[size_t(i) * 8];
        bad += v[0] != lx + 100 * ly + 10000 * lz;
        bad += v[1] != x / gx + 100 * (y / gy) + 10000 * (z / gz);
        bad += v[2] != gx + 100 * gy + 10000 * gz;
        bad += v[3] != linear % 32 || v[4] != linear / 32;
        bad += v[5] != x || v[6] != y || v[7] != z;
      }
  CHECK(bad == 0, "%d wrong thread arguments", bad);
}

bool same_float(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0;
}

uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

void check_math(Gpu& gpu) {
  const std::vector<float> xs = {0.0f,      -0.0f, 0.5f,     1.0f,       2.75f, -3.5f,
                                 1e-3f,     88.0f, 1e30f,    -2.5f,      3.5f,  INFINITY,
                                 -INFINITY, NAN,   65519.0f, 1.00390625f};
  const int cols = 24;
  const int64_t n = int64_t(xs.size());
  auto in = gpu.buffer_of(xs);
  auto out = gpu.buffer(xs.size() * cols * 4), hout = gpu.buffer(xs.size() * 2),
       bout = gpu.buffer(xs.size() * 2);
  const std::string err = gpu.run("emutest_math_f32", {in.get(), out.get(), hout.get(), bout.get()},
                                  params(n), {1, 1, 1}, {32, 1, 1});
  CHECK(err.empty(), "%s", err.c_str());
  const auto o = read<float>(*out);
  const auto h = read<_Float16>(*hout);
  const auto b = read<uint16_t>(*bout);
  for (int64_t i = 0; i < n; ++i) {
    const float v = xs[i];
    const float want[cols] = {std::exp(v),
                              std::log(v),
                              std::sqrt(v),
                              1.0f / std::sqrt(v),
                              std::sin(v),
                              std::cos(v),
                              std::tanh(v),
                              std::fabs(v),
                              std::fabs(v),
                              std::fmax(v, 0.5f),
                              std::fmin(v, 0.5f),
                              std::fmax(v, 0.5f),
                              std::fmin(v, 0.5f),
                              std::fmin(std::fmax(v, -1.0f), 1.0f),
                              std::pow(v, 1.5f),
                              v < 0 ? NAN : std::pow(v, 1.5f),
                              std::floor(v),
                              std::ceil(v),
                              std::rint(v),
                              std::trunc(v),
                              std::fma(v, 3.0f, 1.0f),
                              (std::isnan(v) ? 1.0f : 0.0f) + (std::isinf(v) ? 2.0f : 0.0f),
                              -v,
                              0.0f};
    for (int c = 0; c < cols - 1; ++c)
      CHECK(same_float(o[i * cols + c], want[c]), "math col %d of %g: %g, want %g", c, v,
            o[i * cols + c], want[c]);
    if (std::isfinite(v) && std::fabs(v) < 1e6f) {
      const float w = float(std::max<int64_t>(int64_t(v), -2)) + float(std::abs(int(v))) * 1000.0f;
      CHECK(o[i * cols + 23] == w, "integer max/abs of %g: %g, want %g", v, o[i * cols + 23], w);
    }
    CHECK(same_float(float(h[i]), float(_Float16(v))), "half(%g)", v);
    CHECK(b[i] == bf16_bits(v), "bf16(%g): %x, want %x", v, b[i], bf16_bits(v));
  }
}

// ---- queues ---------------------------------------------------------------------------

void check_queue_order(Gpu& gpu) {
  const int64_t n = 1000;
  auto x = gpu.buffer_of(std::vector<float>(n, 0.0f));
  std::vector<std::unique_ptr<rt::CommandBuffer>> cbs;
  float want = 0;
  for (int k = 1; k <= 20; ++k) {  // x = 2x + k: only the commit order gives `want`
    cbs.push_back(gpu.encode("emutest_affine_f32", {x.get()}, params(n, float(k), 2.0f), {4, 1, 1},
                             {256, 1, 1}));
    cbs.back()->commit();
    want = want * 2 + float(k);
  }
  cbs.back()->wait();
  for (auto& cb : cbs) CHECK(cb->completed() && cb->error().empty(), "earlier buffer not done");
  auto got = read<float>(*x);
  CHECK(got[0] == want && got[n - 1] == want, "commit order: %g, want %g", got[0], want);

  // Dispatches within one command buffer run in encoding order too.
  auto cb = gpu.queue->command_buffer();
  const auto pipe = gpu.library->pipeline("emutest_affine_f32");
  for (int k = 1; k <= 5; ++k) {
    const EmuTestParams p = params(n, float(k), 3.0f);
    cb->dispatch(*pipe, {rt::BufferArg{x.get(), 0}}, &p, sizeof p, {4, 1, 1}, {256, 1, 1});
    want = want * 3 + float(k);
  }
  cb->commit();
  cb->wait();
  got = read<float>(*x);
  CHECK(got[0] == want, "encoding order: %g, want %g", got[0], want);
}

void check_queues_unordered(Gpu& gpu) {
  const int64_t n = 4096;
  auto queue_b = gpu.device->new_queue();
  auto x = gpu.buffer_of(std::vector<float>(n, 1.0f));
  auto y = gpu.buffer_of(std::vector<float>(n, -1.0f));
  emu::set_queue_gate(*gpu.queue, false);
  auto write =
      gpu.encode("emutest_affine_f32", {x.get()}, params(n, 7.0f, 0.0f), {16, 1, 1}, {256, 1, 1});
  write->commit();
  auto copy = gpu.encode("emutest_copy_f32", {x.get(), y.get()}, params(n), {16, 1, 1}, {256, 1, 1},
                         queue_b.get());
  copy->commit();
  copy->wait();
  CHECK(read<float>(*y)[0] == 1.0f && read<float>(*y)[n - 1] == 1.0f,
        "queue B saw %g: queues of different instances must not be ordered", read<float>(*y)[0]);
  CHECK(!write->completed(), "queue A ran through a closed gate");
  emu::set_queue_gate(*gpu.queue, true);
  write->wait();
  CHECK(read<float>(*x)[0] == 7.0f && write->error().empty(), "queue A after the gate: %g",
        read<float>(*x)[0]);
}

void check_missing_wait(Gpu& gpu) {
  const int64_t n = 4096;
  auto x = gpu.buffer_of(std::vector<float>(n, 1.0f));
  emu::set_queue_gate(*gpu.queue, false);
  auto write =
      gpu.encode("emutest_affine_f32", {x.get()}, params(n, 5.0f, 0.0f), {16, 1, 1}, {256, 1, 1});
  write->commit();
  CHECK(read<float>(*x)[0] == 1.0f, "without wait() the host must still see the old data");
  emu::set_queue_gate(*gpu.queue, true);
  write->wait();
  CHECK(read<float>(*x)[0] == 5.0f && read<float>(*x)[n - 1] == 5.0f, "after wait(): %g",
        read<float>(*x)[0]);

  // Asynchronous for real: commit returns before a long command buffer is done.
  auto big = gpu.buffer_of(std::vector<float>(1 << 20, 0.0f));
  auto cb = gpu.queue->command_buffer();
  const auto pipe = gpu.library->pipeline("emutest_affine_f32");
  const EmuTestParams p = params(1 << 20, 1.0f, 1.0f);
  for (int k = 0; k < 8; ++k)
    cb->dispatch(*pipe, {rt::BufferArg{big.get(), 0}}, &p, sizeof p, {4096, 1, 1}, {256, 1, 1});
  cb->commit();
  const bool done_at_commit = cb->completed();
  cb->wait();
  CHECK(!done_at_commit && read<float>(*big)[12345] == 8.0f, "commit must not run the work");
}

// EMBER_METAL_EMULATOR_OUT_OF_ORDER=1: a later command buffer that binds none of an
// earlier one's buffers completes first; one that shares a buffer still waits its turn;
// handlers run on another thread, after wait() may have returned.
void check_out_of_order(Gpu& gpu) {
  setenv("EMBER_METAL_EMULATOR_OUT_OF_ORDER", "1", 1);
  auto queue = gpu.device->new_queue();
  unsetenv("EMBER_METAL_EMULATOR_OUT_OF_ORDER");
  const int64_t big_n = 1 << 20, n = 4096;
  auto big = gpu.buffer_of(std::vector<float>(big_n, 0.0f));
  auto x = gpu.buffer_of(std::vector<float>(n, 1.0f));
  auto slow = gpu.encode("emutest_affine_f32", {big.get()}, params(big_n, 1.0f, 1.0f), {4096, 1, 1},
                         {256, 1, 1}, queue.get());
  auto quick = gpu.encode("emutest_affine_f32", {x.get()}, params(n, 1.0f, 2.0f), {16, 1, 1},
                          {256, 1, 1}, queue.get());
  auto after = gpu.encode("emutest_affine_f32", {x.get()}, params(n, 0.0f, 10.0f), {16, 1, 1},
                          {256, 1, 1}, queue.get());  // shares x with quick: stays behind it
  std::atomic<bool> handled{false};
  std::thread::id handler_thread;
  quick->on_completed([&] {
    handler_thread = std::this_thread::get_id();
    handled = true;
  });
  slow->commit();
  quick->commit();
  after->commit();
  quick->wait();
  CHECK(!slow->completed(), "the independent later buffer must complete first");
  after->wait();
  CHECK(read<float>(*x)[0] == 30.0f, "dependent buffers out of order: %g, want 30",
        read<float>(*x)[0]);
  slow->wait();
  CHECK(read<float>(*big)[big_n - 1] == 1.0f, "the overtaken buffer: %g", read<float>(*big)[0]);
  for (int i = 0; i < 1000 && !handled; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(handled && handler_thread != std::this_thread::get_id(), "the handler ran late, elsewhere");
}

// EMBER_METAL_EMULATOR_MAX_THREADS=N: pipelines report N, and a bigger group is refused.
void check_max_threads(Gpu& gpu) {
  setenv("EMBER_METAL_EMULATOR_MAX_THREADS", "128", 1);
  auto library = gpu.device->compile_library("emutest", "(any)");
  auto pipe = library->pipeline("emutest_affine_f32");
  unsetenv("EMBER_METAL_EMULATOR_MAX_THREADS");
  CHECK(pipe->max_threads_per_group() == 128, "max %u", pipe->max_threads_per_group());
  auto x = gpu.buffer_of(std::vector<float>(256, 1.0f));
  auto cb = gpu.queue->command_buffer();
  const EmuTestParams p = params(256, 1.0f, 1.0f);
  std::string error;
  try {
    cb->dispatch(*pipe, {rt::BufferArg{x.get(), 0}}, &p, sizeof p, {1, 1, 1}, {256, 1, 1});
  } catch (const rt::RuntimeError& e) {
    error = e.what();
  }
  CHECK(contains(error, "256 threads") && contains(error, "1..128"), "error: %s", error.c_str());
  cb->dispatch(*pipe, {rt::BufferArg{x.get(), 0}}, &p, sizeof p, {2, 1, 1}, {128, 1, 1});
  cb->commit();
  cb->wait();
  CHECK(cb->error().empty() && read<float>(*x)[255] == 2.0f, "128-lane groups: %g",
        read<float>(*x)[255]);
  setenv("EMBER_METAL_EMULATOR_MAX_THREADS", "2048", 1);
  CHECK(contains(rt::system_runtime().unavailable_reason(), "'2048'"), "reason: %s",
        rt::system_runtime().unavailable_reason().c_str());
  unsetenv("EMBER_METAL_EMULATOR_MAX_THREADS");
}

void check_command_buffer_errors(Gpu& gpu) {
  auto in = gpu.buffer_of(small_ints(64));
  auto out = gpu.buffer(64 * sizeof(float));
  auto cb = gpu.encode("emutest_early_return_f32", {in.get(), out.get()}, params(64, 0, 1, 9),
                       {1, 1, 1}, {64, 1, 1});
  std::string seen_by_handler = "(handler not run)";
  rt::CommandBuffer* raw = cb.get();
  cb->on_completed([&seen_by_handler, raw] { seen_by_handler = raw->error(); });
  cb->commit();
  cb->wait();
  CHECK(cb->completed() && contains(cb->error(), "emutest_early_return_f32"), "error(): '%s'",
        cb->error().c_str());
  CHECK(seen_by_handler == cb->error(), "handler saw '%s'", seen_by_handler.c_str());

  // Misuse is reported at once, naming the kernel.
  auto expect_throw = [](const char* what, const std::string& part,
                         const std::function<void()>& f) {
    std::string msg = "(no exception)";
    try {
      f();
    } catch (const rt::RuntimeError& e) {
      msg = e.what();
    }
    CHECK(contains(msg, part), "%s: '%s'", what, msg.c_str());
  };
  expect_throw("unknown function", "function emutest_nope not found in library emutest",
               [&] { gpu.library->pipeline("emutest_nope"); });
  expect_throw("unknown family", "nofamily", [&] { gpu.device->compile_library("nofamily", "x"); });
  expect_throw("a grid of 2^32 threads", "2^32", [&] {
    gpu.encode("emutest_copy_f32", {in.get(), out.get()}, params(64), {1u << 24, 1, 1},
               {256, 1, 1});
  });
  expect_throw("params size", "emutest_copy_f32", [&] {
    auto c = gpu.queue->command_buffer();
    const int wrong = 0;
    c->dispatch(*gpu.library->pipeline("emutest_copy_f32"), {{in.get(), 0}, {out.get(), 0}}, &wrong,
                sizeof wrong, {1, 1, 1}, {64, 1, 1});
  });
  expect_throw("buffer count", "takes 2 buffers", [&] {
    auto c = gpu.queue->command_buffer();
    const EmuTestParams p = params(64);
    c->dispatch(*gpu.library->pipeline("emutest_copy_f32"), {{in.get(), 0}}, &p, sizeof p,
                {1, 1, 1}, {64, 1, 1});
  });
  expect_throw("group too large", "threads per threadgroup", [&] {
    auto c = gpu.queue->command_buffer();
    const EmuTestParams p = params(64);
    c->dispatch(*gpu.library->pipeline("emutest_affine_f32"), {{out.get(), 0}}, &p, sizeof p,
                {1, 1, 1}, {2048, 1, 1});
  });
  expect_throw("wait before commit", "never committed",
               [&] { gpu.queue->command_buffer()->wait(); });
}

// ---- AddressSanitizer, in child processes ----------------------------------------------

int run_case(const std::string& name) {
  Gpu gpu;
  if (name == "read-past-end") {
    auto in = gpu.buffer_of(small_ints(100));
    auto out = gpu.buffer(100 * 4);
    return gpu.run("emutest_read_past_end_f32", {in.get(), out.get()}, params(100), {1, 1, 1},
                   {128, 1, 1})
                   .empty()
               ? 0
               : 3;
  }
  if (name == "tg-overrun") {
    auto out = gpu.buffer(33 * 4);
    return gpu.run("emutest_tg_overrun_f32", {out.get()}, params(33), {1, 1, 1}, {33, 1, 1}).empty()
               ? 0
               : 3;
  }
  std::fprintf(stderr, "unknown case %s\n", name.c_str());
  return 2;
}

void check_asan_case(const std::string& name) {
  const std::string cmd = "/proc/" + std::to_string(getpid()) + "/exe --case " + name + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t got;
  while (f && (got = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  const int status = f ? pclose(f) : -1;
  const bool failed = status != 0;
  CHECK(failed && contains(out, "AddressSanitizer") && contains(out, "heap-buffer-overflow"),
        "case %s: status %d, output:\n%s", name.c_str(), status, out.c_str());
  const size_t at = out.find("ERROR: AddressSanitizer");
  if (at != std::string::npos)
    std::printf("  %s: %s\n", name.c_str(), out.substr(at, out.find('\n', at) - at).c_str());
}

// ---- the registered families -----------------------------------------------------------

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The rule of backend/pipeline.cpp: a kernel with an i64 or b64 name token is in its
// family's <family>_i64 library, every other kernel in <family>.
bool int64_kernel(const std::string& name) {
  const std::string padded = "_" + name + "_";
  return contains(padded, "_i64_") || contains(padded, "_b64_");
}

void check_int64_libraries() {
  for (const std::string& family : emu::registered_families()) {
    const bool i64_library = ends_with(family, "_i64");
    CHECK(i64_library || emu::has_family(family + "_i64"), "%s has no _i64 library",
          family.c_str());
    for (const emu::KernelInfo* k : emu::registered_kernels(family))
      CHECK(int64_kernel(k->name) == i64_library, "kernel %s in library %s", k->name,
            family.c_str());
  }
}

#ifdef EMBER_CHECK_EMBEDDED
// EMBER_METAL_EMULATOR_FAIL_I64=1: the _i64 sources fail to compile, the others build.
void check_fail_i64(Gpu& gpu) {
  setenv("EMBER_METAL_EMULATOR_FAIL_I64", "1", 1);
  std::string error;
  try {
    gpu.device->compile_library("emutest_i64", ember::metal::kernel_source("emutest_i64"));
  } catch (const rt::RuntimeError& e) {
    error = e.what();
  }
  bool others = false;
  try {
    others =
        gpu.device->compile_library("emutest", ember::metal::kernel_source("emutest")) != nullptr;
  } catch (const rt::RuntimeError&) {
  }
  unsetenv("EMBER_METAL_EMULATOR_FAIL_I64");
  CHECK(contains(error, "emutest_i64") && contains(error, "64-bit"), "error: %s", error.c_str());
  CHECK(others, "the other library of the family must still build");
}

// The MSL a Mac would compile (embed_kernels.py) has every family and kernel the
// emulator runs, with all quoted includes inlined.
void check_embedded() {
  const auto families = emu::registered_families();
  CHECK(ember::metal::kernel_families() == families, "embedded families differ from compiled");
  CHECK(ember::metal::kernel_source("no_such_family").empty(), "unknown family");
  for (const std::string& family : families) {
    const std::string& src = ember::metal::kernel_source(family);
    CHECK(!src.empty(), "family %s: no embedded source", family.c_str());
    CHECK(!contains(src, "#include \""), "family %s: a quoted include was left", family.c_str());
    const bool pasted = contains(src, "##");  // names made by token pasting: cannot tell
    for (const emu::KernelInfo* k : emu::registered_kernels(family))
      CHECK(pasted || contains(src, k->name), "kernel %s not in the embedded source of %s", k->name,
            family.c_str());
  }
}
#endif

int list_kernels(bool print) {
  int empty = 0;
  for (const std::string& family : emu::registered_families()) {
    const auto kernels = emu::registered_kernels(family);
    if (print) std::printf("%s: %zu kernels\n", family.c_str(), kernels.size());
    if (kernels.empty() && !ends_with(family, "_i64")) {  // an _i64 library may be empty
      std::fprintf(stderr, "FAIL: family %s registers no kernels\n", family.c_str());
      ++empty;
    }
    if (print)
      for (const emu::KernelInfo* k : kernels)
        std::printf("  %-40s %-7s %zu buffers, params %zu bytes\n", k->name,
                    k->grouped ? "grouped" : "plain", k->num_buffers, k->params_size);
  }
  return empty;
}

}  // namespace

// Completions may arrive out of commit order (Metal orders only the starts): the
// watermark covers only the contiguous completed prefix and never goes back.
void check_completed_prefix() {
  ember::metal::CompletedPrefix done;
  done.complete(2);
  done.complete(3);
  CHECK(done.load() == 0, "2 and 3 done, 1 not: watermark %llu, want 0",
        static_cast<unsigned long long>(done.load()));
  done.complete(1);
  CHECK(done.load() == 3, "1..3 done: watermark %llu, want 3",
        static_cast<unsigned long long>(done.load()));
  done.complete(5);
  done.complete(2);  // a late duplicate must not lower it
  CHECK(done.load() == 3, "5 done past a gap: watermark %llu, want 3",
        static_cast<unsigned long long>(done.load()));
  done.complete(4);
  CHECK(done.load() == 5, "1..5 done: watermark %llu, want 5",
        static_cast<unsigned long long>(done.load()));
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--case") {
    setenv("EMBER_METAL_EMULATOR", "1", 1);
    return run_case(argv[2]);
  }
  if (argc == 2 && std::string(argv[1]) == "--list") return list_kernels(true) ? 1 : 0;
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--list | --case NAME]\n", argv[0]);
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::pair<const char*, std::function<void(Gpu&)>>> checks = {
      {"reduction at group sizes 1..1024", check_reduction},
      {"a missing barrier gives a (deterministic) wrong answer", check_missing_barrier},
      {"barrier and simd misuse are errors naming the kernel", check_kernel_errors},
      {"simd_sum / max / min / shuffle_down", check_simd},
      {"thread arguments of a 3-D dispatch", check_thread_args},
      {"the shim's math", check_math},
      {"one queue runs in commit order", check_queue_order},
      {"queues are not ordered with each other (gate)", check_queues_unordered},
      {"a missing wait shows stale data", check_missing_wait},
      {"command buffer errors", check_command_buffer_errors},
      {"out-of-order mode: an independent later buffer completes first", check_out_of_order},
      {"EMBER_METAL_EMULATOR_MAX_THREADS lowers every pipeline's maximum", check_max_threads},
#ifdef EMBER_CHECK_EMBEDDED
      {"EMBER_METAL_EMULATOR_FAIL_I64 fails the _i64 libraries only", check_fail_i64},
#endif
  };
  check_runtime_identity();
  std::printf("out-of-order completions advance only the completed prefix\n");
  check_completed_prefix();
  std::printf("an empty device list still offers the default device\n");
  check_empty_device_list();
  {
    Gpu gpu;
    for (const auto& c : checks) {
      const int before = g_failures;
      std::printf("%s\n", c.first);
      c.second(gpu);
      std::printf("  %s\n", g_failures == before ? "ok" : "FAILED");
    }
  }
  for (const char* name : {"read-past-end", "tg-overrun"}) {
    std::printf("AddressSanitizer catches %s\n", name);
    check_asan_case(name);
  }
  std::printf("every kernel family registers kernels\n");
  g_failures += list_kernels(false);
  std::printf("64-bit integer kernels are in the _i64 libraries, and only they\n");
  check_int64_libraries();
#ifdef EMBER_CHECK_EMBEDDED
  std::printf("the embedded MSL sources match the compiled families\n");
  check_embedded();
#endif
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d checks, %d failed, %.1f s\n", g_checks, g_failures, s);
  return g_failures ? 1 : 0;
}
