// rand / randn / randint: the counter-based stream of core/random.h, with 64-bit integer math for
// the bits and float math for the values, where the CPU uses double:
// - uniform: u is exact (a grid of the dtype's significand) and a + (b - a) * u is
//   evaluated in two-float arithmetic (~48 bits) and rounded once, so values equal the
//   CPU's except when that sum lies within ~2^-48 of a rounding boundary;
// - normal: z is float math accurate to a few ulps (the CPU's is double rounded to the
//   dtype), so float32 values may differ from the CPU's in the last bits (a few ulps;
//   float16/bfloat16 values almost always round to the same value).
// (Metal's safe math mode keeps the exact-error steps below exact.)
#include "common.h"
#include "random.h"
#include "reduce.h"  // ember_k::Num

namespace ember_k {

inline ulong splitmix64(ulong x) {
  x += ulong(0x9e3779b97f4a7c15ul);
  x = (x ^ (x >> 30)) * ulong(0xbf58476d1ce4e5b9ul);
  x = (x ^ (x >> 27)) * ulong(0x94d049bb133111ebul);
  return x ^ (x >> 31);
}

// -2 log(u1) for the CPU's u1 = (x + 1) / (2^53 + 1), x = bits >> 11, in (0, 1]. Near 1
// a float u1 would lose the small log: there log(1 - t) = -2 atanh(t / (2 - t)) with
// t = 1 - u1 taken from the integer, which stays accurate to a few ulps.
inline float neg2_log_u1(ulong bits) {
  const ulong x = bits >> 11;
  const float k2m53 = 1.1102230246251565e-16f;  // 2^-53
  if (x >= (ulong(1) << 52)) {
    const float t = float((ulong(1) << 53) - x) * k2m53;  // in (0, 1/2]
    const float s = t / (2.0f - t);                       // in (0, 1/3]
    const float s2 = s * s;
    float poly = 1.0f / 15;  // atanh(s) / s = sum s2^j / (2j + 1), to s2^7
    poly = poly * s2 + 1.0f / 13;
    poly = poly * s2 + 1.0f / 11;
    poly = poly * s2 + 1.0f / 9;
    poly = poly * s2 + 1.0f / 7;
    poly = poly * s2 + 1.0f / 5;
    poly = poly * s2 + 1.0f / 3;
    poly = poly * s2 + 1.0f;
    return 4.0f * s * poly;
  }
  return -2.0f * log(float(x + 1) * k2m53);
}

// cos(2 pi u2) for the CPU's u2 = (bits >> 11) / 2^53, reduced to an angle within
// pi/4 of a multiple of pi/2 with integer math, so no argument rounding grows with u2.
inline float cos_2pi(ulong bits) {
  const ulong k = bits >> 11;
  const uint quarter = uint(k >> 51);
  const ulong half_q = ulong(1) << 50, full_q = ulong(1) << 51;
  const ulong rem = k & (full_q - 1);
  const bool flip = rem > half_q;  // use the complement angle: cos and sin swap
  const float phi = float(flip ? full_q - rem : rem) * 6.975736996017264e-16f;  // pi/2^52
  const float c = cos(phi), s = sin(phi);
  const float cos_psi = flip ? s : c, sin_psi = flip ? c : s;
  if (quarter == 0) return cos_psi;
  if (quarter == 1) return -sin_psi;
  if (quarter == 2) return -cos_psi;
  return sin_psi;
}

// a + scale * x for a and scale given as hi + lo float pairs: the product's and the sum's
// rounding errors are recovered exactly (fma, two-sum) and added back before the one
// final rounding.
inline float affine_2f(float a_hi, float a_lo, float s_hi, float s_lo, float x) {
  const float p = s_hi * x;
  const float p_err = fma(s_hi, x, -p);
  const float sum = a_hi + p;
  if (isinf(sum)) return sum;  // the error terms would be inf - inf
  const float b = sum - a_hi;
  const float sum_err = (a_hi - (sum - b)) + (p - b);
  return sum + (((sum_err + p_err) + a_lo) + s_lo * x);
}

// Box-Muller on two independent draws of the same counter, as random_normal.
inline float normal_from_bits(ulong bits1, ulong bits2) {
  return sqrt(neg2_log_u1(bits1)) * cos_2pi(bits2);
}

}  // namespace ember_k

template <typename T>
kernel void random_uniform(device T* dst [[buffer(0)]], constant RandomKParams& p [[buffer(1)]],
                           EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x);
  const ulong bits = splitmix64(p.key ^ (p.counter + ulong(i)));
  // u on the dtype's grid, exact in float: (bits >> (64 - b)) * 2^-b
  const float u = float(bits >> (64 - p.bits)) / float(ulong(1) << p.bits);
  T v = Num<T>::store(affine_2f(p.a_hi, p.a_lo, p.scale_hi, p.scale_lo, u));
  // [a, b) must hold after rounding to T too: a value rounded up to b becomes a.
  if (p.check != 0 && !(Num<T>::load(v) <= p.below)) v = Num<T>::store(p.a_hi);
  dst[i] = v;
}

template <typename T>
kernel void random_normal(device T* dst [[buffer(0)]], constant RandomKParams& p [[buffer(1)]],
                          EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x);
  const ulong c = p.counter + ulong(i);
  const float z = normal_from_bits(splitmix64(p.key ^ c), splitmix64(p.key2 ^ c));
  dst[i] = Num<T>::store(affine_2f(p.a_hi, p.a_lo, p.scale_hi, p.scale_lo, z));
}

template <typename T>
kernel void random_int(device T* dst [[buffer(0)]], constant RandintKParams& p [[buffer(1)]],
                       EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x);
  const ulong bits = splitmix64(p.key ^ (p.counter + ulong(i)));
  dst[i] = T(p.low + (p.range == 0 ? bits : bits % p.range));
}

EMBER_IF_I64(EMBER_KERNEL(random_int_i64, random_int<int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(random_uniform_f32, random_uniform<float>))
EMBER_IF_NOT_I64(EMBER_KERNEL(random_uniform_f16, random_uniform<half>))
EMBER_IF_NOT_I64(EMBER_KERNEL(random_uniform_bf16, random_uniform<bf16_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(random_normal_f32, random_normal<float>))
EMBER_IF_NOT_I64(EMBER_KERNEL(random_normal_f16, random_normal<half>))
EMBER_IF_NOT_I64(EMBER_KERNEL(random_normal_bf16, random_normal<bf16_t>))
