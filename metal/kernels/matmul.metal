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

// uint8 sums wrap mod 256: summing mod 2^32 and truncating once gives the same bits.
template <>
struct Mac<uchar> {
  typedef uint A;
  static uint load(uchar v) { return uint(v); }
  static uchar store(uint v) { return uchar(v & 0xffu); }
  static uint mac(uint acc, uint x, uint y) { return acc + x * y; }
};

}  // namespace ember_k

template <typename T>
kernel void matmul_tiled(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]],
                         device T* c [[buffer(2)]], constant MatmulKParams& p [[buffer(3)]],
                         EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(typename ember_k::Mac<T>::A, ta, EMBER_MM_TILE * EMBER_MM_TILE);
  EMBER_THREADGROUP(typename ember_k::Mac<T>::A, tb, EMBER_MM_TILE * EMBER_MM_TILE);
  typedef ember_k::Mac<T> Ops;
  typedef typename Ops::A A;
  const int kT = EMBER_MM_TILE, kL = EMBER_MM_LANES;
  const int64_t batch = p.batch0 + int64_t(tgid.z);
  const int64_t a0 = strided_offset(p.a_batch, batch), b0 = strided_offset(p.b_batch, batch);
  const int64_t row0 = int64_t(tgid.y) * kT, col0 = int64_t(tgid.x) * kT;
  const int tx = int(lid.x), ty = int(lid.y), flat = ty * kL + tx;

  A acc00 = A(0), acc01 = A(0), acc10 = A(0), acc11 = A(0);
  for (int64_t k0 = 0; k0 < p.k; k0 += kT) {
    // Each lane loads 4 elements of each tile; consecutive lanes take consecutive
    // columns, so a row-major input is read in runs.
    for (int q = 0; q < kT * kT / (kL * kL); ++q) {
      const int e = flat + q * kL * kL, r = e / kT, col = e % kT;
      const int64_t am = row0 + r, ak = k0 + col;
      ta[e] = (am < p.m && ak < p.k) ? Ops::load(a[a0 + am * p.sam + ak * p.sak]) : A(0);
      const int64_t bk = k0 + r, bn = col0 + col;
      tb[e] = (bk < p.k && bn < p.n) ? Ops::load(b[b0 + bk * p.sbk + bn * p.sbn]) : A(0);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int kk = 0; kk < kT; ++kk) {
      const A x0 = ta[ty * kT + kk], x1 = ta[(ty + kL) * kT + kk];
      const A y0 = tb[kk * kT + tx], y1 = tb[kk * kT + tx + kL];
      acc00 = Ops::mac(acc00, x0, y0);
      acc01 = Ops::mac(acc01, x0, y1);
      acc10 = Ops::mac(acc10, x1, y0);
      acc11 = Ops::mac(acc11, x1, y1);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }

  device T* out = c + batch * p.m * p.n;
  const int64_t i0 = row0 + ty, i1 = row0 + ty + kL, j0 = col0 + tx, j1 = col0 + tx + kL;
  if (i0 < p.m && j0 < p.n) out[i0 * p.n + j0] = Ops::store(acc00);
  if (i0 < p.m && j1 < p.n) out[i0 * p.n + j1] = Ops::store(acc01);
  if (i1 < p.m && j0 < p.n) out[i1 * p.n + j0] = Ops::store(acc10);
  if (i1 < p.m && j1 < p.n) out[i1 * p.n + j1] = Ops::store(acc11);
}

EMBER_KERNEL_GROUPED(matmul_tiled_f32, matmul_tiled<float>)
EMBER_KERNEL_GROUPED(matmul_tiled_f16, matmul_tiled<half>)
EMBER_KERNEL_GROUPED(matmul_tiled_bf16, matmul_tiled<bf16_t>)
EMBER_KERNEL_GROUPED(matmul_tiled_i64, matmul_tiled<int64_t>)
EMBER_KERNEL_GROUPED(matmul_tiled_u32, matmul_tiled<uint>)
EMBER_KERNEL_GROUPED(matmul_tiled_u8, matmul_tiled<uchar>)
