// Batched matmul: a tiled kernel over threadgroup memory. Inputs are read through their
// strides (transposed views need no copy); batch dims may broadcast (stride 0). Floats
// accumulate in float with fma; integers in their own width with wrap-around, as the CPU.
#include "common.h"
#include "matmul.h"

namespace ember_k {

// A: the type the tiles hold and the sums run in.
template <typename T>
struct Mac {
  typedef T A;
  static A load(T v) { return v; }
  static T store(A v) { return v; }
  static A mac(A acc, A x, A y) { return acc + x * y; }
};

template <>
struct Mac<float> {
  typedef float A;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
  static float mac(float acc, float x, float y) { return fma(x, y, acc); }
};

template <>
struct Mac<half> {
  typedef float A;
  static float load(half v) { return float(v); }
  static half store(float v) { return half(v); }
  static float mac(float acc, float x, float y) { return fma(x, y, acc); }
};

template <>
struct Mac<bf16_t> {
  typedef float A;
  static float load(bf16_t v) { return bf16_to_float(v); }
  static bf16_t store(float v) { return float_to_bf16(v); }
  static float mac(float acc, float x, float y) { return fma(x, y, acc); }
};

// Signed overflow is undefined: int64 products and sums wrap in ulong.
template <>
struct Mac<int64_t> {
  typedef ulong A;
  static ulong load(int64_t v) { return ulong(v); }
  static int64_t store(ulong v) { return int64_t(v); }
  static ulong mac(ulong acc, ulong x, ulong y) { return acc + x * y; }
};

// int sums wrap mod 2^32 in uint (signed overflow is undefined).
template <>
struct Mac<int> {
  typedef uint A;
  static uint load(int v) { return uint(v); }
  static int store(uint v) { return int(v); }
  static uint mac(uint acc, uint x, uint y) { return acc + x * y; }
};

// uint8 sums wrap mod 256: summing mod 2^32 and truncating once gives the same bits.
template <>
struct Mac<uchar> {
  typedef uint A;
  static uint load(uchar v) { return uint(v); }
  static uchar store(uint v) { return uchar(v & 0xffu); }
  static uint mac(uint acc, uint x, uint y) { return acc + x * y; }
};

}  // namespace ember_k

// kL x kL lanes per tile, each owning a kR x kR block of it (rows ty + i * kL, columns
// tx + j * kL). Every output sums over k in the same order whatever kL is.
template <typename T, int kL>
[[max_total_threads_per_threadgroup(kL * kL)]]
kernel void matmul_tiled(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]],
                         device T* c [[buffer(2)]], constant MatmulKParams& p [[buffer(3)]],
                         EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(typename ember_k::Mac<T>::A, ta, EMBER_MM_TILE * EMBER_MM_TILE);
  EMBER_THREADGROUP(typename ember_k::Mac<T>::A, tb, EMBER_MM_TILE * EMBER_MM_TILE);
  typedef ember_k::Mac<T> Ops;
  typedef typename Ops::A A;
  const int kT = EMBER_MM_TILE, kR = EMBER_MM_TILE / kL;
  const int64_t batch = p.batch0 + int64_t(tgid.z);
  const int64_t a0 = strided_offset(p.a_batch, batch), b0 = strided_offset(p.b_batch, batch);
  const int64_t row0 = int64_t(tgid.y) * kT, col0 = int64_t(tgid.x) * kT;
  const int tx = int(lid.x), ty = int(lid.y), flat = ty * kL + tx;

  A acc[kR][kR];
  for (int i = 0; i < kR; ++i)
    for (int j = 0; j < kR; ++j) acc[i][j] = A(0);
  for (int64_t k0 = 0; k0 < p.k; k0 += kT) {
    // Each lane loads kR * kR elements of each tile; consecutive lanes take consecutive
    // columns, so a row-major input is read in runs.
    for (int q = 0; q < kR * kR; ++q) {
      const int e = flat + q * kL * kL, r = e / kT, col = e % kT;
      const int64_t am = row0 + r, ak = k0 + col;
      ta[e] = (am < p.m && ak < p.k) ? Ops::load(a[a0 + am * p.sam + ak * p.sak]) : A(0);
      const int64_t bk = k0 + r, bn = col0 + col;
      tb[e] = (bk < p.k && bn < p.n) ? Ops::load(b[b0 + bk * p.sbk + bn * p.sbn]) : A(0);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int kk = 0; kk < kT; ++kk) {
      A x[kR], y[kR];
      for (int i = 0; i < kR; ++i) x[i] = ta[(ty + i * kL) * kT + kk];
      for (int j = 0; j < kR; ++j) y[j] = tb[kk * kT + tx + j * kL];
      for (int i = 0; i < kR; ++i)
        for (int j = 0; j < kR; ++j) acc[i][j] = Ops::mac(acc[i][j], x[i], y[j]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }

  device T* out = c + batch * p.m * p.n;
  for (int i = 0; i < kR; ++i)
    for (int j = 0; j < kR; ++j) {
      const int64_t row = row0 + ty + i * kL, col = col0 + tx + j * kL;
      if (row < p.m && col < p.n) out[row * p.n + col] = Ops::store(acc[i][j]);
    }
}

// matmul_tiled_<dtype>: 16 x 16 lanes; matmul_small_<dtype>: 8 x 8, for a pipeline that
// allows fewer than 256 threads per group.
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_tiled_f32, matmul_tiled<float, EMBER_MM_LANES>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_tiled_f16, matmul_tiled<half, EMBER_MM_LANES>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_tiled_bf16, matmul_tiled<bf16_t, EMBER_MM_LANES>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(matmul_tiled_i64, matmul_tiled<int64_t, EMBER_MM_LANES>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_tiled_i32, matmul_tiled<int, EMBER_MM_LANES>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_tiled_u32, matmul_tiled<uint, EMBER_MM_LANES>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_tiled_u8, matmul_tiled<uchar, EMBER_MM_LANES>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_small_f32, matmul_tiled<float, EMBER_MM_LANES_SMALL>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_small_f16, matmul_tiled<half, EMBER_MM_LANES_SMALL>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_small_bf16, matmul_tiled<bf16_t, EMBER_MM_LANES_SMALL>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(matmul_small_i64, matmul_tiled<int64_t, EMBER_MM_LANES_SMALL>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_small_i32, matmul_tiled<int, EMBER_MM_LANES_SMALL>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_small_u32, matmul_tiled<uint, EMBER_MM_LANES_SMALL>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(matmul_small_u8, matmul_tiled<uchar, EMBER_MM_LANES_SMALL>))
