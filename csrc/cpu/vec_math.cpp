#include "vec_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "cpu_level.h"
#include "vec_fn.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_F16C 1
#endif

namespace ember::cpu {

namespace {

#ifdef EMBER_F16C
#define EMBER_EXP16 1
// P of e^r = 1 + r + r^2 P(r) for |r| <= ln2 / 2: vf::exp's minimax polynomial.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 exp_poly16(__m512 r) {
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  return p;
}

// vf::exp on 16 lanes with AVX-512: the same reduction and polynomial, n rounded by
// vrndscaleps and 2^n applied by vscalefps, which also gives the subnormal results and
// the overflow to inf; x is clamped to [-104, 89] first (past either end the result is 0
// or inf, as libm's; a NaN passes the clamp, which returns its second operand then), and
// results below exp(-103.97) are 0 by mask.
// About 17 instructions where the auto-vectorised vf::exp takes about 30.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 exp16(__m512 x) {
  // Lanes whose result is 0 stay out of the scalef: an underflow to 0 there would cost a
  // microcode assist per vector (the -inf of masked attention scores, say).
  const __mmask16 live =
      _mm512_cmp_ps_mask(x, _mm512_set1_ps(-103.972084045410f), _CMP_NLT_UQ);  // NaN: live
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  const __m512 p = _mm512_add_ps(_mm512_fmadd_ps(exp_poly16(r), _mm512_mul_ps(r, r), r),
                                 _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(live, p, n);
}

// y[i] = exp(x[i] - shift) over n values, whole vectors then a masked tail.
EMBER_CPU_V4 __attribute__((always_inline)) inline void exp16_run(const float* x, float shift,
                                                                  float* y, int64_t n) {
  const __m512 s = _mm512_set1_ps(shift);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), s)));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s)));
  }
}

// 1 / d to within an ulp or two: the 14-bit estimate and one Newton step (vdivps takes
// most of a kernel's time on some CPUs). d is finite and >= 1 where it is used.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 recip16(__m512 d) {
  const __m512 r = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(1.0f)), r);
}

// n = x rounded to an integer, as a float, for |x| < 2^22: x + 1.5 2^23 rounds away the
// fraction (one fused multiply-add with the scale before it, where vrndscaleps is two uops).
constexpr float kRoundMagic = 12582912.0f;

// tanh on 16 lanes: a = min(|x|, 9.1) (tanh rounds to 1 from 9.01), tanh(a) = w / (1 + v)
// with v = exp(-2a) and w = 1 - v = -expm1(-2a), both from one reduction
// -2a = n ln2 - 2h, |h| <= ln2 / 4: q = e^{-2h} - 1 = -2h + h^2 P(h) (-2h exact, so q keeps
// its relative accuracy near 0), v = 2^n (q + 1) and w = -(2^n q + 2^n - 1) without
// cancellation. One quotient (14-bit reciprocal, a Newton step, one correction of the
// quotient) for the whole range, no blend; the sign put back by a bitwise select. About
// 25 instructions; within 1.9 ulp over [-12, 12]. A NaN passes the clamp and stays NaN.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f), magic = _mm512_set1_ps(kRoundMagic);
  const __m512 a = _mm512_min_ps(_mm512_set1_ps(9.1f), _mm512_abs_ps(x));  // NaN: |x|
  const __m512 n =
      _mm512_sub_ps(_mm512_fmadd_ps(a, _mm512_set1_ps(-2.88539008177792682f), magic), magic);
  __m512 h = _mm512_fmadd_ps(n, _mm512_set1_ps(0.3466796875f), a);  // a + n ln2/2, two parts
  h = _mm512_fmadd_ps(n, _mm512_set1_ps(-1.06097220e-4f), h);
  __m512 p = _mm512_set1_ps(0.08896823227405548f);  // (e^{-2h} - 1 + 2h) / h^2, minimax
  p = _mm512_fmadd_ps(p, h, _mm512_set1_ps(-0.26762062311172485f));
  p = _mm512_fmadd_ps(p, h, _mm512_set1_ps(0.6666696667671204f));
  p = _mm512_fmadd_ps(p, h, _mm512_set1_ps(-1.3333262205123901f));
  p = _mm512_fmadd_ps(p, h, _mm512_set1_ps(2.0f));
  const __m512 q = _mm512_fmadd_ps(p, _mm512_mul_ps(h, h), _mm512_mul_ps(h, _mm512_set1_ps(-2.0f)));
  const __m512 e = _mm512_scalef_ps(one, n);                          // 2^n, n in [-27, 0]
  const __m512 w = _mm512_fnmsub_ps(q, e, _mm512_sub_ps(e, one));     // 1 - v
  const __m512 d = _mm512_fmadd_ps(q, e, _mm512_add_ps(e, one));      // 1 + v, in (1, 2]
  const __m512 inv = recip16(d);
  const __m512 t0 = _mm512_mul_ps(w, inv);
  const __m512 t = _mm512_fmadd_ps(_mm512_fnmadd_ps(t0, d, w), inv, t0);
  // (x & sign) | t: tanh(-0) is -0
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
      _mm512_castps_si512(x), _mm512_set1_epi32(int(0x80000000u)), _mm512_castps_si512(t), 0xEA));
}

// log on 16 lanes, vf::log's polynomial: x = m 2^e with m in [sqrt(1/2), sqrt(2)) by
// vgetmantps / vgetexpps (subnormals included), log(m) = f - f^2/2 + f^3 P(f), f = m - 1.
// Zeros, negatives, infinities and NaN (rare) are set by masks after.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 log16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);  // [1, 2)
  __m512 e = _mm512_getexp_ps(x);
  const __mmask16 high = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356237309505f), _CMP_GE_OQ);
  m = _mm512_mask_mul_ps(m, high, m, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_ps(e, high, e, one);
  const __m512 f = _mm512_sub_ps(m, one), z = _mm512_mul_ps(f, f);
  __m512 p = _mm512_set1_ps(0.09539980441f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-0.1032113880f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.1020336822f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-0.1253745407f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.1441953629f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-0.1666569710f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.1999504864f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-0.2500000011f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.3333336071f));
  __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(f, z), p, _mm512_mul_ps(e, _mm512_set1_ps(-2.12194440e-4f)));
  y = _mm512_fnmadd_ps(_mm512_set1_ps(0.5f), z, y);
  y = _mm512_fmadd_ps(e, _mm512_set1_ps(0.693359375f), _mm512_add_ps(f, y));
  // QNaN, +-0, +-inf, negative finite, SNaN: every class but positive normal / subnormal
  const __mmask16 special = _mm512_fpclass_ps_mask(x, 0xDF);
  if (__builtin_expect(special != 0, 0)) {
    const __mmask16 zero = _mm512_fpclass_ps_mask(x, 0x06);
    const __mmask16 below = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    const __mmask16 inf = _mm512_fpclass_ps_mask(x, 0x08);
    const __mmask16 nan = _mm512_fpclass_ps_mask(x, 0x81);
    y = _mm512_mask_mov_ps(y, below, _mm512_set1_ps(NAN));
    y = _mm512_mask_mov_ps(y, zero, _mm512_set1_ps(-INFINITY));
    y = _mm512_mask_mov_ps(y, inf, x);
    y = _mm512_mask_mov_ps(y, nan, x);
  }
  return y;
}

// vf::erfc_large on 16 lanes: erfc(a) = exp(-a^2) Q(1 / (1 + a/2)) for a >= kErfSmall,
// given a^2 = h + l exactly (exp(-h) (1 - l), as vf::exp_neg_sq). a = inf gives NaN: the
// callers select past its range.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 erfc_large16(__m512 a, __m512 h,
                                                                       __m512 l) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = _mm512_mul_ps(exp16(_mm512_sub_ps(_mm512_setzero_ps(), h)), _mm512_sub_ps(one, l));
  const __m512 t = recip16(_mm512_fmadd_ps(a, _mm512_set1_ps(0.5f), one));
  __m512 q = _mm512_set1_ps(0.1194400191f);
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-0.4715690916f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.5638850656f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-0.1041644785f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.3480910813f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.2596001122f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.2849268844f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-0.0001551656509f));
  return _mm512_mul_ps(e, q);
}

// vf::erf_small_ratio on 16 lanes: erf(a) / a below kErfSmall, P(z) at z = a^2.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 erf_ratio16(__m512 z) {
  __m512 p = _mm512_set1_ps(-0.0005990993507f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(0.004993213106f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-0.02676664437f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(0.1128181722f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-0.3761249385f));
  return _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.128379150f));
}

EMBER_CPU_V4 __attribute__((always_inline)) inline __mmask16 below_erf_small(__m512 a) {
  return _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.921875f), _CMP_LT_OQ);  // vf::kErfSmall
}

// gelu on 16 lanes: vf::gelu (vec_fn.h), x erfc(a)/2 for x < 0 and x - x erfc(a)/2 for
// x > 0, a = |x| / sqrt 2, so that the negative tail keeps its relative accuracy (no
// 1 + erf cancellation). About 33 instructions, 25 of them multiplies or multiply-adds
// (on Zen 4 these bound it); within 7.1 ulp over [-13.2, 20].
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 gelu16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f), magic = _mm512_set1_ps(kRoundMagic);
  const __m512 xm = _mm512_max_ps(_mm512_set1_ps(-14.5f), x);  // NaN: its second operand, x
  const __m512 v = _mm512_min_ps(_mm512_set1_ps(14.5f), xm);
  const __m512 nh = _mm512_fnmadd_ps(v, v, _mm512_setzero_ps());  // -v^2 = nh + nl exactly
  const __m512 nl = _mm512_fnmsub_ps(v, v, nh);
  // exp((nh + nl) / 2) = 2^n e^{s/2}, s = nh - n 2ln2 + nl, |s| <= ln2
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(nh, _mm512_set1_ps(vf::kGeluLog2e), magic), magic);
  __m512 s = _mm512_fnmadd_ps(n, _mm512_set1_ps(vf::kGeluLn2Hi), nh);
  s = _mm512_fnmadd_ps(n, _mm512_set1_ps(vf::kGeluLn2Lo), s);
  s = _mm512_add_ps(s, nl);
  __m512 p = _mm512_set1_ps(vf::kGeluExp[0]);  // e^{s/2}
  for (int k = 1; k < 7; ++k) p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(vf::kGeluExp[k]));
  const __m512 ex = _mm512_scalef_ps(p, n);  // exp(-a^2)
  // (a division: its unit runs beside the multiply-adds, which bound this kernel, and it
  // is exact, the same on every CPU, where vrcp14ps's estimate is the vendor's own)
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_abs_ps(v), _mm512_set1_ps(0.3f), one));
  __m512 q = _mm512_set1_ps(vf::kGeluQ[0]);
  for (int k = 1; k < 9; ++k) q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(vf::kGeluQ[k]));
  const __m512 m = _mm512_mul_ps(_mm512_mul_ps(v, q), ex);  // x erfc(a) / 2 (subnormal once)
  const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_mask_sub_ps(m, pos, xm, m);
}

// vf::erf on 16 lanes: a = |x|; a P(a^2) below kErfSmall, else 1 - erfc(a), 1 past 4; the
// sign put back by a bitwise or.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 erf16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
  const __m512 a = _mm512_andnot_ps(sign, x), s = _mm512_and_ps(sign, x);
  const __m512 h = _mm512_mul_ps(a, a);
  const __m512 l = _mm512_fmsub_ps(a, a, h);
  const __m512 big = _mm512_sub_ps(one, erfc_large16(a, h, l));
  const __m512 small = _mm512_mul_ps(a, erf_ratio16(h));
  __m512 r = _mm512_mask_blend_ps(below_erf_small(a), big, small);
  r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(4.0f), _CMP_GT_OQ), r, one);
  return _mm512_or_ps(s, r);  // NaN: a NaN r (the NaN's sign bit or-ed in is still NaN)
}

// softmax of a row in three passes over it (it stays in L1 for the short rows this is
// for): max, exp(x - max) stored and summed (32 float lanes per block of 1024, blocks in
// double), scale.
EMBER_CPU_V4 void softmax_row_v4(const float* x, float* y, int64_t n) {
  __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // max(v, acc): a NaN v leaves acc (NaN ignored)
    m0 = _mm512_max_ps(_mm512_loadu_ps(x + i), m0);
    m1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), m1);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    m0 = _mm512_mask_max_ps(m0, k, _mm512_maskz_loadu_ps(k, x + i), m0);
  }
  float mx = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
  if (mx == -INFINITY) mx = 0;  // all -inf (or NaN): keep exp() finite
  const __m512 shift = _mm512_set1_ps(mx);
  double total = 0;
  for (int64_t b = 0; b < n; b += 1024) {  // kBlock's blocks
    const int64_t end = std::min<int64_t>(n, b + 1024);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    int64_t j = b;
    for (; j + 32 <= end; j += 32) {
      const __m512 e0 = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + j), shift));
      const __m512 e1 = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + j + 16), shift));
      _mm512_storeu_ps(y + j, e0);
      _mm512_storeu_ps(y + j + 16, e1);
      s0 = _mm512_add_ps(s0, e0);
      s1 = _mm512_add_ps(s1, e1);
    }
    for (; j < end; j += 16) {
      const __mmask16 k = end - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (end - j)) - 1);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), shift));
      _mm512_mask_storeu_ps(y + j, k, e);
      s0 = _mm512_add_ps(s0, _mm512_maskz_mov_ps(k, e));
    }
    total += double(_mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
  }
  const __m512 inv = _mm512_set1_ps(float(1.0 / total));
  for (i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + i), inv));
  }
}

template <typename F>
EMBER_CPU_V4 __attribute__((always_inline)) inline void run16(const float* x, float* y, int64_t n,
                                                              F f) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

// 16 bfloat16 (bits) widened to float32: the top halves.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 bf16_load16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
// 16 float32 rounded to bfloat16 as bf16::from_float: to nearest even, a NaN made quiet.
EMBER_CPU_V4 __attribute__((always_inline)) inline __m256i bf16_round16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

// A 16 x 16 block of 32-bit lanes transposed in registers: r[i] holds row i on entry and
// column i on return, through pairs of 32-bit, 64-bit and two rounds of 128-bit
// interleaves (64 shuffles).
EMBER_CPU_V4 __attribute__((always_inline)) inline void transpose16x16_regs(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // per 128-bit lane k: rows i, i+1 at columns 4k..4k+3
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // lane k of r[i + m]: column 4k + m of rows i..i+3
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int h = 0; h < 16; h += 8)  // columns m and m + 8 (0x88), m + 4 and m + 12 (0xDD)
    for (int m = 0; m < 4; ++m) {
      t[h + m] = _mm512_shuffle_f32x4(r[h + m], r[h + 4 + m], 0x88);
      t[h + 4 + m] = _mm512_shuffle_f32x4(r[h + m], r[h + 4 + m], 0xDD);
    }
  for (int m = 0; m < 8; ++m) {  // columns m and m + 8, each from t[m] (rows 0-7), t[8 + m]
    r[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
    r[m + 8] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xDD);
  }
}

// dst[j * ld + i] = src[i * ls + j] for a 16 x 16 block of 32-bit elements, and of 16-bit
// ones, widened to 32-bit lanes on the way in and narrowed on the way out.
EMBER_CPU_V4 __attribute__((always_inline)) inline void transpose16x16(const uint32_t* src,
                                                                       int64_t ls, uint32_t* dst,
                                                                       int64_t ld) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ls);
  transpose16x16_regs(r);
  for (int j = 0; j < 16; ++j) _mm512_storeu_ps(dst + j * ld, r[j]);
}
EMBER_CPU_V4 __attribute__((always_inline)) inline void transpose16x16(const uint16_t* src,
                                                                       int64_t ls, uint16_t* dst,
                                                                       int64_t ld) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_castsi512_ps(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * ls))));
  transpose16x16_regs(r);
  for (int j = 0; j < 16; ++j)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * ld),
                        _mm512_cvtepi32_epi16(_mm512_castps_si512(r[j])));
}

template <typename B>
EMBER_CPU_V4 void transpose_v4(const B* src, int64_t ls, B* dst, int64_t ld, int64_t rows,
                               int64_t cols) {
  const int64_t rb = rows / 16 * 16, cb = cols / 16 * 16;
  for (int64_t r0 = 0; r0 < rb; r0 += 16)
    for (int64_t c0 = 0; c0 < cb; c0 += 16)
      transpose16x16(src + r0 + c0 * ls, ls, dst + r0 * ld + c0, ld);
  // the edges: columns past cb for every row, rows past rb for the rest
  if (cb < cols) transpose_blocks(src + cb * ls, ls, dst + cb, ld, rows, cols - cb);
  if (rb < rows) transpose_blocks(src + rb, ls, dst + rb * ld, ld, rows - rb, cb);
}

// CPUs with AVX512-BF16 round 16 floats in one instruction, vcvtneps2bf16: to nearest
// even, a NaN made quiet as bf16::from_float does, but subnormal inputs flushed to zero
// whatever MXCSR says. Lanes holding a subnormal (rare) take bf16_round16's rounding.
#define EMBER_CPU_V4BF16 __attribute__((target("arch=x86-64-v4,avx512bf16")))
inline bool has_bf16_insn() {
  static const bool yes = __builtin_cpu_supports("avx512bf16") && cpu_level_cap() == 2;
  return yes;
}
EMBER_CPU_V4BF16 __attribute__((always_inline)) inline __m256i bf16_round16_insn(__m512 v) {
  __m256i r = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
  const __mmask16 sub = _mm512_fpclass_ps_mask(v, 0x20);  // subnormal
  if (__builtin_expect(sub != 0, 0)) r = _mm256_mask_mov_epi16(r, sub, bf16_round16(v));
  return r;
}

// run16_bf16(x, y, n, f): y = f(x) over n bfloat16, converted in registers; the _insn
// twin rounds with vcvtneps2bf16 (one body, two targets: a function cannot inline code
// built for more features than its own).
#define EMBER_RUN16_BF16(attr, name, round)                                                     \
  template <typename F>                                                                        \
  attr __attribute__((always_inline)) inline void name(const uint16_t* x, uint16_t* y,         \
                                                       int64_t n, F f) {                       \
    int64_t i = 0;                                                                             \
    for (; i + 16 <= n; i += 16)                                                               \
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),                                   \
                          round(f(bf16_load16(                                                 \
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))))));  \
    if (i < n) {                                                                               \
      const __mmask16 m = __mmask16((1u << (n - i)) - 1);                                      \
      _mm256_mask_storeu_epi16(y + i, m, round(f(bf16_load16(_mm256_maskz_loadu_epi16(m, x + i))))); \
    }                                                                                          \
  }
EMBER_RUN16_BF16(EMBER_CPU_V4, run16_bf16, bf16_round16)
EMBER_RUN16_BF16(EMBER_CPU_V4BF16, run16_bf16_insn, bf16_round16_insn)
#undef EMBER_RUN16_BF16

// ---- AVX2 (x86-64-v3) twins of the kernels above, for CPUs without AVX-512: 8 lanes,
// the tails by masked loads and stores, 2^n built from exponent bits (no vscalefps).

// The lanes of 8 below m (all for m >= 8).
EMBER_CPU_V3 __attribute__((always_inline)) inline __m256i live8(int64_t m) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::min<int64_t>(m, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// gelu16 on 8 lanes, the same polynomials and steps; exp(-a^2) = e^{s/2} 2^n with 2^n
// (n in [-152, 0]) as two normal factors, as vf::gelu takes it.
EMBER_CPU_V3 __attribute__((always_inline)) inline __m256 gelu8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f), magic = _mm256_set1_ps(kRoundMagic);
  const __m256 xm = _mm256_max_ps(_mm256_set1_ps(-14.5f), x);  // NaN: its second operand, x
  const __m256 v = _mm256_min_ps(_mm256_set1_ps(14.5f), xm);
  const __m256 nh = _mm256_fnmadd_ps(v, v, _mm256_setzero_ps());  // -v^2 = nh + nl exactly
  const __m256 nl = _mm256_fnmsub_ps(v, v, nh);
  const __m256 tn = _mm256_fmadd_ps(nh, _mm256_set1_ps(vf::kGeluLog2e), magic);
  const __m256 n = _mm256_sub_ps(tn, magic);
  __m256 s = _mm256_fnmadd_ps(n, _mm256_set1_ps(vf::kGeluLn2Hi), nh);
  s = _mm256_fnmadd_ps(n, _mm256_set1_ps(vf::kGeluLn2Lo), s);
  s = _mm256_add_ps(s, nl);
  __m256 p = _mm256_set1_ps(vf::kGeluExp[0]);  // e^{s/2}
  for (int k = 1; k < 7; ++k) p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(vf::kGeluExp[k]));
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(tn), _mm256_castps_si256(magic));
  const __m256i half = _mm256_srai_epi32(ni, 1), bias = _mm256_set1_epi32(127);
  const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  const __m256 f2 = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), bias), 23));
  const __m256 ex = _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);  // exp(-a^2)
  const __m256 av = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(av, _mm256_set1_ps(0.3f), one));
  __m256 q = _mm256_set1_ps(vf::kGeluQ[0]);
  for (int k = 1; k < 9; ++k) q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(vf::kGeluQ[k]));
  const __m256 m = _mm256_mul_ps(_mm256_mul_ps(v, q), ex);  // x erfc(a) / 2
  const __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ);
  return _mm256_blendv_ps(m, _mm256_sub_ps(xm, m), pos);
}

template <typename F>
EMBER_CPU_V3 __attribute__((always_inline)) inline void run8(const float* x, float* y, int64_t n,
                                                             F f) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {  // two vectors at a time: the kernels are long chains
    const __m256 a = f(_mm256_loadu_ps(x + i)), b = f(_mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(y + i, a);
    _mm256_storeu_ps(y + i + 8, b);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = live8(n - i);
    _mm256_maskstore_ps(y + i, m, f(_mm256_maskload_ps(x + i, m)));
  }
}

// 8 bfloat16 (bits) widened to float32, and 8 float32 rounded as bf16_round16 rounds.
EMBER_CPU_V3 __attribute__((always_inline)) inline __m256 bf16_load8(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
EMBER_CPU_V3 __attribute__((always_inline)) inline __m128i bf16_round8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  r = _mm256_blendv_epi8(r, quiet, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  // 32-bit lanes of at most 0xffff to 16 bits: pack the halves (unsigned saturation keeps them)
  return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

template <typename F>
EMBER_CPU_V3 __attribute__((always_inline)) inline void run8_bf16(const uint16_t* x, uint16_t* y,
                                                                  int64_t n, F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     bf16_round8(f(bf16_load8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))))));
  if (i < n) {  // the tail through a buffer of 8 (no 16-bit masked moves in AVX2)
    alignas(16) uint16_t in[8] = {}, out[8];
    std::memcpy(in, x + i, size_t(n - i) * 2);
    _mm_store_si128(reinterpret_cast<__m128i*>(out),
                    bf16_round8(f(bf16_load8(_mm_load_si128(reinterpret_cast<const __m128i*>(in))))));
    std::memcpy(y + i, out, size_t(n - i) * 2);
  }
}

EMBER_CPU_V3 void gelu_f32_v3(const float* x, float* y, int64_t n) {
  run8(x, y, n, [](__m256 v) EMBER_CPU_V3 { return gelu8(v); });
}
EMBER_CPU_V3 void gelu_bf16_v3(const uint16_t* x, uint16_t* y, int64_t n) {
  run8_bf16(x, y, n, [](__m256 v) EMBER_CPU_V3 { return gelu8(v); });
}

EMBER_CPU_V4BF16 void f32_to_bf16_insn(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), bf16_round16_insn(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(y + i, m, bf16_round16_insn(_mm512_maskz_loadu_ps(m, x + i)));
  }
}
#endif

constexpr int kLanes = 32;        // 4 AVX registers: independent chains hide the add latency
constexpr int64_t kBlock = 1024;  // values per float block sum
constexpr int64_t kStreamMin = 64 * kBlock;  // below this the run is in cache: one stream

// Eight floats: one AVX register in the x86-64-v3 clone, two SSE registers in the other.
typedef float V8 __attribute__((vector_size(32)));

// (By reference: a V8 passed by value would change the ABI of the baseline clone.)
__attribute__((always_inline)) inline void load8(V8& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}
__attribute__((always_inline)) inline void add8(V8& acc, const float* p) {
  V8 v;
  load8(v, p);
  acc += v;
}

// Folds four V8 accumulators into one float, pairwise.
__attribute__((always_inline)) inline float fold(const V8& a0, const V8& a1, const V8& a2,
                                                 const V8& a3) {
  const V8 s = (a0 + a2) + (a1 + a3);
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

// The sums of S whole blocks, S = 1 or 4, at x + k * gap: the lanes stay in registers
// (the generic loop below spills them, which costs a third of the speed when the data
// streams from memory). Four blocks far apart are read together because one stream keeps
// too few cache-line fetches in flight to use the memory bandwidth.
// Each block's sum is the same as block_sum's, whatever S.
template <int S>
__attribute__((always_inline)) inline void full_block_sums(const float* x, int64_t gap,
                                                           float* out) {
  static_assert(kLanes == 32, "four V8 accumulators per block");
  V8 a[S][4];
  for (int k = 0; k < S; ++k)
    for (int l = 0; l < 4; ++l) load8(a[k][l], x + k * gap + 8 * l);
  for (int64_t j = kLanes; j < kBlock; j += kLanes)
    for (int k = 0; k < S; ++k)
      for (int l = 0; l < 4; ++l) add8(a[k][l], x + k * gap + j + 8 * l);
  for (int k = 0; k < S; ++k) out[k] = fold(a[k][0], a[k][1], a[k][2], a[k][3]);
}

// The sum of m <= kBlock values: kLanes float lanes, then the lanes pairwise.
__attribute__((always_inline)) inline float block_sum(const float* x, int64_t m) {
  if (m == kBlock) {
    float r;
    full_block_sums<1>(x, 0, &r);
    return r;
  }
  float acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= m; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += x[j + k];
  for (int k = 0; j < m; ++j, ++k) acc[k] += x[j];
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
  return acc[0];
}

}  // namespace

void softmax_dense_f32(const float* x, float* y, int64_t n) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2) return softmax_row_v4(x, y, n);
#endif
  float mx = max_f32(x, n);
  if (mx == -INFINITY) mx = 0;  // all -inf: keep exp() finite
  const double sum = exp_shift_sum_f32(x, mx, y, n);
  scale_f32(y, float(1.0 / sum), y, n);
}

// name(x, y, n): y = fn(x) over a dense run, the AVX-512 kernel k16 on CPUs that have it,
// else vf::fn's loop built per ISA level (EMBER_CPU_CLONES).
// name_f32 and name_bf16 (vec_math.h) of vf::fn, the AVX-512 kernel k16 on CPUs that have
// it, else vf::fn's loop built per ISA level (EMBER_CPU_CLONES); bfloat16 runs elsewhere go
// through a float buffer in chunks.
#ifdef EMBER_EXP16
#define EMBER_V4_RUN(name, k16)                                                       \
  EMBER_CPU_V4 void name##_f32_v4(const float* x, float* y, int64_t n) {               \
    run16(x, y, n, [](__m512 v) EMBER_CPU_V4 { return k16(v); });                     \
  }                                                                                   \
  EMBER_CPU_V4 void name##_bf16_v4(const uint16_t* x, uint16_t* y, int64_t n) {        \
    run16_bf16(x, y, n, [](__m512 v) EMBER_CPU_V4 { return k16(v); });                \
  }                                                                                   \
  EMBER_CPU_V4BF16 void name##_bf16_v4bf(const uint16_t* x, uint16_t* y, int64_t n) {  \
    run16_bf16_insn(x, y, n, [](__m512 v) EMBER_CPU_V4 { return k16(v); });           \
  }
#define EMBER_V4_PICK(name, kind) \
  if (cpu_level() == 2) return name##_##kind##_v4(x, y, n);
// the AVX2 kernels of those that have one (gelu)
#define EMBER_V3_PICK(name, kind) \
  if (cpu_level() == 1) return name##_##kind##_v3(x, y, n);
#define EMBER_V4_PICK_BF16(name)                                                      \
  if (cpu_level() == 2 && has_bf16_insn()) return name##_bf16_v4bf(x, y, n);          \
  EMBER_V4_PICK(name, bf16)
#else
#define EMBER_V3_PICK(name, kind)
#define EMBER_V4_RUN(name, k16)
#define EMBER_V4_PICK(name, kind)
#define EMBER_V4_PICK_BF16(name)
#endif
#define EMBER_NO_PICK(name, kind)
#define EMBER_RUN_F32(name, k16, v3)                                                       \
  namespace {                                                                              \
  EMBER_CPU_CLONES(void, name##_clones, (const float* x, float* y, int64_t n), (x, y, n), {  \
    for (int64_t i = 0; i < n; ++i) y[i] = vf::name(x[i]);                                 \
  })                                                                                       \
  EMBER_V4_RUN(name, k16)                                                                  \
  }                                                                                        \
  void name##_f32(const float* x, float* y, int64_t n) {                                   \
    EMBER_V4_PICK(name, f32)                                                               \
    v3(name, f32)                                                                          \
    name##_clones(x, y, n);                                                                \
  }                                                                                        \
  void name##_bf16(const uint16_t* x, uint16_t* y, int64_t n) {                            \
    EMBER_V4_PICK_BF16(name)                                                               \
    v3(name, bf16)                                                                         \
    float buf[512];                                                                        \
    for (int64_t i = 0; i < n; i += 512) {                                                 \
      const int64_t m = std::min<int64_t>(512, n - i);                                     \
      bf16_to_f32(x + i, buf, m);                                                          \
      name##_clones(buf, buf, m);                                                          \
      f32_to_bf16(buf, y + i, m);                                                          \
    }                                                                                      \
  }

EMBER_RUN_F32(exp, exp16, EMBER_NO_PICK)
EMBER_RUN_F32(gelu, gelu16, EMBER_V3_PICK)
EMBER_RUN_F32(tanh, tanh16, EMBER_NO_PICK)
EMBER_RUN_F32(erf, erf16, EMBER_NO_PICK)
EMBER_RUN_F32(log, log16, EMBER_NO_PICK)
#undef EMBER_RUN_F32
#undef EMBER_NO_PICK
#undef EMBER_V3_PICK
#undef EMBER_V4_RUN
#undef EMBER_V4_PICK
#undef EMBER_V4_PICK_BF16

EMBER_CPU_CLONES(double, sum_f32, (const float* x, int64_t n), (x, n), {
  // Whole blocks of four quarters of the run side by side (see full_block_sums), then the rest.
  const int64_t quarter = n >= kStreamMin ? n / 4 / kBlock * kBlock : 0;
  double t[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < quarter; i += kBlock) {
    float b[4];
    full_block_sums<4>(x + i, quarter, b);
    for (int k = 0; k < 4; ++k) t[k] += b[k];
  }
  double total = (t[0] + t[1]) + (t[2] + t[3]);
  for (int64_t i = 4 * quarter; i < n; i += kBlock)
    total += block_sum(x + i, std::min(kBlock, n - i));
  return total;
})

// The sum of value(i) over i < n: float lanes per block of kBlock, blocks in double.
template <typename Value>
__attribute__((always_inline)) inline double lane_block_sum(int64_t n, Value value) {
  double total = 0;
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    float acc[kLanes] = {};
    int64_t j = 0;
    for (; j + kLanes <= m; j += kLanes)
      for (int k = 0; k < kLanes; ++k) acc[k] += value(i + j + k);
    for (int k = 0; j < m; ++j, ++k) acc[k] += value(i + j);
    for (int w = kLanes / 2; w >= 1; w /= 2)
      for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
    total += acc[0];
  }
  return total;
}

// a bfloat16 is a float32's top half, widened by a shift
EMBER_CPU_CLONES(double, sum_bf16, (const uint16_t* x, int64_t n), (x, n), {
  return lane_block_sum(n, [x](int64_t i) { return bf16::to_float(x[i]); });
})

EMBER_CPU_CLONES(double, sumsq_f32, (const float* x, int64_t n), (x, n), {
  return lane_block_sum(n, [x](int64_t i) { return x[i] * x[i]; });
})

EMBER_CPU_CLONES(float, max_f32, (const float* x, int64_t n), (x, n), {
  float acc[kLanes];
  for (int k = 0; k < kLanes; ++k) acc[k] = -INFINITY;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] = x[i + k] > acc[k] ? x[i + k] : acc[k];
  for (int k = 0; i < n; ++i, ++k) acc[k] = x[i] > acc[k] ? x[i] : acc[k];
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = acc[k + w] > acc[k] ? acc[k + w] : acc[k];
  return acc[0];
})

namespace {
// Lanes that keep a NaN once they hold one: x wins when it is better or is NaN.
// (Written as a max/min, then the NaN: vmaxps and a blend, where the or of two compares
// takes one instruction more.)
template <bool kMax>
__attribute__((always_inline)) inline float pick(float acc, float x) {
  const float m = kMax ? (x > acc ? x : acc) : (x < acc ? x : acc);
  return x != x ? x : m;
}
}  // namespace

// The scan of both; inlined into each clone below, so it is compiled for each ISA.
template <bool kMax>
__attribute__((always_inline)) inline float extreme_nan(const float* x, int64_t n) {
  // 64 lanes: four AVX-512 registers (eight AVX), enough independent chains to hide the
  // two-instruction latency of each pick
  constexpr int kPickLanes = 64;
  float acc[kPickLanes];
  for (int k = 0; k < kPickLanes; ++k) acc[k] = x[0];
  int64_t i = 0;
  for (; i + kPickLanes <= n; i += kPickLanes)
    for (int k = 0; k < kPickLanes; ++k) acc[k] = pick<kMax>(acc[k], x[i + k]);
  for (int k = 0; i < n; ++i, ++k) acc[k] = pick<kMax>(acc[k], x[i]);
  for (int w = kPickLanes / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = pick<kMax>(acc[k], acc[k + w]);
  return acc[0];
}

#ifdef EMBER_EXP16
namespace {
// extreme_nan in AVX-512 registers: four accumulators of 16 lanes (a row under 16 one
// masked load), merged in registers and reduced by a shuffle tree, NaN found by one
// compare of the merged lanes. The generic form's finish went through the stack lane by
// lane: a fifth of a 2048-float row's time, most of a short row's.
template <bool kMax>
EMBER_CPU_V4 __attribute__((always_inline)) inline __m512 pick16(__m512 acc, __m512 x) {
  const __m512 m = kMax ? _mm512_max_ps(x, acc) : _mm512_min_ps(x, acc);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x);
}

template <bool kMax>
EMBER_CPU_V4 float extreme_nan_v4(const float* x, int64_t n) {
  __m512 a;
  if (n < 16) {  // a short row: one masked load, the missing lanes holding its first value
    a = _mm512_mask_loadu_ps(_mm512_set1_ps(x[0]), __mmask16((1u << n) - 1), x);
  } else {
    __m512 a0 = _mm512_loadu_ps(x), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 16;
    for (; i + 64 <= n; i += 64) {
      a0 = pick16<kMax>(a0, _mm512_loadu_ps(x + i));
      a1 = pick16<kMax>(a1, _mm512_loadu_ps(x + i + 16));
      a2 = pick16<kMax>(a2, _mm512_loadu_ps(x + i + 32));
      a3 = pick16<kMax>(a3, _mm512_loadu_ps(x + i + 48));
    }
    for (; i + 16 <= n; i += 16) a0 = pick16<kMax>(a0, _mm512_loadu_ps(x + i));
    if (i < n)  // the last 16, overlapping: taking a value twice changes no max
      a1 = pick16<kMax>(a1, _mm512_loadu_ps(x + n - 16));
    a = pick16<kMax>(pick16<kMax>(a0, a1), pick16<kMax>(a2, a3));
  }
  const __mmask16 nan = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
  if (nan) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, a);
    return lanes[__builtin_ctz(nan)];
  }
  return kMax ? _mm512_reduce_max_ps(a) : _mm512_reduce_min_ps(a);
}

// extreme_nan_v4 in AVX2 registers: four accumulators of 8 lanes (a row under 8 one
// masked load, the missing lanes holding its first value), merged and reduced in
// registers, so a short row never finishes through memory.
template <bool kMax, typename V>
EMBER_CPU_V3 __attribute__((always_inline)) inline V pick8(V acc, V x) {
  if constexpr (sizeof(V) == 32) {
    const __m256 m = kMax ? _mm256_max_ps(x, acc) : _mm256_min_ps(x, acc);
    return _mm256_blendv_ps(m, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  } else {
    const __m128 m = kMax ? _mm_max_ps(x, acc) : _mm_min_ps(x, acc);
    return _mm_blendv_ps(m, x, _mm_cmpunord_ps(x, x));
  }
}

template <bool kMax>
EMBER_CPU_V3 float extreme_nan_v3(const float* x, int64_t n) {
  __m256 a;
  if (n < 8) {
    const __m256i live = live8(n);
    a = _mm256_blendv_ps(_mm256_set1_ps(x[0]), _mm256_maskload_ps(x, live),
                         _mm256_castsi256_ps(live));
  } else {
    __m256 a0 = _mm256_loadu_ps(x), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 8;
    if (n >= 32) {  // the first 32 start the four chains
      a1 = _mm256_loadu_ps(x + 8), a2 = _mm256_loadu_ps(x + 16), a3 = _mm256_loadu_ps(x + 24);
      i = 32;
    }
    for (; i + 32 <= n; i += 32) {
      a0 = pick8<kMax>(a0, _mm256_loadu_ps(x + i));
      a1 = pick8<kMax>(a1, _mm256_loadu_ps(x + i + 8));
      a2 = pick8<kMax>(a2, _mm256_loadu_ps(x + i + 16));
      a3 = pick8<kMax>(a3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8) a0 = pick8<kMax>(a0, _mm256_loadu_ps(x + i));
    if (i < n)  // the last 8, overlapping: taking a value twice changes no max
      a1 = pick8<kMax>(a1, _mm256_loadu_ps(x + n - 8));
    a = pick8<kMax>(pick8<kMax>(a0, a1), pick8<kMax>(a2, a3));
  }
  // a NaN in any lane survives each pick
  __m128 r = pick8<kMax>(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  r = pick8<kMax>(r, _mm_movehl_ps(r, r));
  r = pick8<kMax>(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}
}  // namespace
#endif

namespace {
template <bool kSquares>
__attribute__((always_inline)) inline double sum_short_generic(const float* x, int64_t n) {
  float s[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) s[k] += kSquares ? x[i + k] * x[i + k] : x[i + k];
  for (int k = 0; i < n; ++i, ++k) s[k] += kSquares ? x[i] * x[i] : x[i];
  for (int w = 8; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) s[k] += s[k + w];
  return double(s[0]);
}

#ifdef EMBER_EXP16
template <bool kSquares>
EMBER_CPU_V4 double sum_short_v4(const float* x, int64_t n) {
  __m512 s = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    s = kSquares ? _mm512_fmadd_ps(v, v, s) : _mm512_add_ps(s, v);
  }
  if (i < n) {
    const __m512 v = _mm512_maskz_loadu_ps(__mmask16((1u << (n - i)) - 1), x + i);
    s = kSquares ? _mm512_fmadd_ps(v, v, s) : _mm512_add_ps(s, v);
  }
  return double(_mm512_reduce_add_ps(s));
}

// sum_short_generic in AVX2 registers: its 16 lanes as two of 8 (the tail by masked
// loads), joined in its order (lanes k and k + 8, then halves), so the same sums.
template <bool kSquares>
EMBER_CPU_V3 __attribute__((always_inline)) inline __m256 add8(__m256 s, __m256 v) {
  return kSquares ? _mm256_fmadd_ps(v, v, s) : _mm256_add_ps(s, v);
}

template <bool kSquares>
EMBER_CPU_V3 double sum_short_v3(const float* x, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  constexpr auto add = add8<kSquares>;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = add(s0, _mm256_loadu_ps(x + i));
    s1 = add(s1, _mm256_loadu_ps(x + i + 8));
  }
  if (i < n) {
    s0 = add(s0, _mm256_maskload_ps(x + i, live8(n - i)));
    if (n - i > 8) s1 = add(s1, _mm256_maskload_ps(x + i + 8, live8(n - i - 8)));
  }
  const __m256 s = _mm256_add_ps(s0, s1);
  __m128 r = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return double(_mm_cvtss_f32(r));
}
#endif
}  // namespace

EMBER_CPU_CLONES(double, sum_short_clones, (const float* x, int64_t n), (x, n), {
  return sum_short_generic<false>(x, n);
})
EMBER_CPU_CLONES(double, sumsq_short_clones, (const float* x, int64_t n), (x, n), {
  return sum_short_generic<true>(x, n);
})

template <bool kSquares>
double sum_short_f32(const float* x, int64_t n) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2) return sum_short_v4<kSquares>(x, n);
  if (cpu_level() == 1) return sum_short_v3<kSquares>(x, n);
#endif
  return kSquares ? sumsq_short_clones(x, n) : sum_short_clones(x, n);
}
template double sum_short_f32<false>(const float* x, int64_t n);
template double sum_short_f32<true>(const float* x, int64_t n);

EMBER_CPU_CLONES(float, max_nan_f32_clones, (const float* x, int64_t n), (x, n), {
  return extreme_nan<true>(x, n);
})

EMBER_CPU_CLONES(float, min_nan_f32_clones, (const float* x, int64_t n), (x, n), {
  return extreme_nan<false>(x, n);
})

float max_nan_f32(const float* x, int64_t n) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2) return extreme_nan_v4<true>(x, n);
  if (cpu_level() == 1) return extreme_nan_v3<true>(x, n);
#endif
  return max_nan_f32_clones(x, n);
}

float min_nan_f32(const float* x, int64_t n) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2) return extreme_nan_v4<false>(x, n);
  if (cpu_level() == 1) return extreme_nan_v3<false>(x, n);
#endif
  return min_nan_f32_clones(x, n);
}

template <>
float extreme_f32<true>(const float* x, int64_t n) {
  return max_nan_f32(x, n);
}
template <>
float extreme_f32<false>(const float* x, int64_t n) {
  return min_nan_f32(x, n);
}

namespace {

EMBER_CPU_CLONES(double, exp_shift_sum_clones, (const float* x, float shift, float* y, int64_t n), (x, shift, y, n), {
  double total = 0;
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    for (int64_t j = 0; j < m; ++j) y[i + j] = vf::exp(x[i + j] - shift);
    total += block_sum(y + i, m);  // the block is still in L1
  }
  return total;
})

#ifdef EMBER_EXP16
EMBER_CPU_V4 double exp_shift_sum_v4(const float* x, float shift, float* y, int64_t n) {
  double total = 0;
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    exp16_run(x + i, shift, y + i, m);
    total += block_sum(y + i, m);
  }
  return total;
}
#endif

}  // namespace

double exp_shift_sum_f32(const float* x, float shift, float* y, int64_t n) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2) return exp_shift_sum_v4(x, shift, y, n);
#endif
  return exp_shift_sum_clones(x, shift, y, n);
}

EMBER_CPU_CLONES(void, softmax_cols_f32, (const float* x, int64_t n, int64_t stride, int64_t m, bool log, float* y), (x, n, stride, m, log, y), {
  float mx[kSoftCols], r[kSoftCols], part[kSoftCols];
  double total[kSoftCols];
  for (int64_t j = 0; j < kSoftCols; ++j) mx[j] = -INFINITY, total[j] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = x + i * stride;
    for (int64_t j = 0; j < kSoftCols; ++j)
      if (j < m) mx[j] = row[j] > mx[j] ? row[j] : mx[j];  // NaN ignored: the sum carries it
  }
  for (int64_t j = 0; j < kSoftCols; ++j) mx[j] = mx[j] == -INFINITY ? 0.0f : mx[j];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {  // float sums per block of rows, then double
    for (int64_t j = 0; j < kSoftCols; ++j) part[j] = 0;
    const int64_t i1 = std::min(n, i0 + kBlock);
    for (int64_t i = i0; i < i1; ++i) {
      const float* row = x + i * stride;
      float* out = y + i * stride;
      if (log) {
        for (int64_t j = 0; j < kSoftCols; ++j)
          if (j < m) part[j] += vf::exp(row[j] - mx[j]);
      } else {
        for (int64_t j = 0; j < kSoftCols; ++j)
          if (j < m) {
            const float e = vf::exp(row[j] - mx[j]);
            part[j] += e;
            out[j] = e;
          }
      }
    }
    for (int64_t j = 0; j < kSoftCols; ++j) total[j] += part[j];
  }
  // (x - max) - log(sum), not x - (max + log(sum)): that would round away small terms
  for (int64_t j = 0; j < kSoftCols; ++j)
    r[j] = log ? float(std::log(total[j])) : float(1.0 / total[j]);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = x + i * stride;
    float* out = y + i * stride;
    if (log) {
      for (int64_t j = 0; j < kSoftCols; ++j)
        if (j < m) out[j] = (row[j] - mx[j]) - r[j];
    } else {
      for (int64_t j = 0; j < kSoftCols; ++j)
        if (j < m) out[j] *= r[j];
    }
  }
})

EMBER_CPU_CLONES(void, scale_f32, (const float* x, float s, float* y, int64_t n), (x, s, y, n), {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
})

EMBER_CPU_CLONES(void, sub2_f32, (const float* x, float a, float b, float* y, int64_t n), (x, a, b, y, n), {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - a) - b;
})

EMBER_CPU_CLONES(void, bf16_to_f32, (const uint16_t* x, float* y, int64_t n), (x, y, n), {
  for (int64_t i = 0; i < n; ++i) y[i] = bf16::to_float(x[i]);
})

namespace {
EMBER_CPU_CLONES(void, f32_to_bf16_clones, (const float* x, uint16_t* y, int64_t n), (x, y, n), {
  for (int64_t i = 0; i < n; ++i) y[i] = bf16::from_float(x[i]);
})
}  // namespace

void f32_to_bf16(const float* x, uint16_t* y, int64_t n) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2 && has_bf16_insn()) return f32_to_bf16_insn(x, y, n);
#endif
  f32_to_bf16_clones(x, y, n);
}

EMBER_CPU_CLONES(void, minmax_i64, (const int64_t* x, int64_t n, int64_t* lo, int64_t* hi), (x, n, lo, hi), {
  // eight lanes each way: vpminsq/vpmaxsq (or compares and blends) in the wide clones
  constexpr int kW = 8;
  int64_t a[kW], b[kW];
  for (int k = 0; k < kW; ++k) a[k] = *lo, b[k] = *hi;
  int64_t i = 0;
  for (; i + kW <= n; i += kW)
    for (int k = 0; k < kW; ++k) {
      a[k] = x[i + k] < a[k] ? x[i + k] : a[k];
      b[k] = x[i + k] > b[k] ? x[i + k] : b[k];
    }
  for (; i < n; ++i) {
    a[0] = x[i] < a[0] ? x[i] : a[0];
    b[0] = x[i] > b[0] ? x[i] : b[0];
  }
  for (int k = 0; k < kW; ++k) {
    *lo = a[k] < *lo ? a[k] : *lo;
    *hi = b[k] > *hi ? b[k] : *hi;
  }
})

#if defined(EMBER_F16C)
namespace {

bool has_f16c() {
  static const bool yes =
      __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx") && cpu_level_cap() > 0;
  return yes;
}

// Eight at a time by the F16C conversions (rounding to nearest even, subnormals kept,
// NaN quiet), the tail as f16 converts one value.
__attribute__((target("avx,f16c"))) void f16_to_f32_f16c(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) y[i] = f16::to_float(x[i]);
}

__attribute__((target("avx,f16c"))) void f32_to_f16_f16c(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), h);
  }
  for (; i < n; ++i) y[i] = f16::from_float(x[i]);
}

// Sixteen at a time on AVX-512 CPUs, the same conversions, the tail masked.
EMBER_CPU_V4 void f16_to_f32_v4(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i)));
  }
}

EMBER_CPU_V4 void f32_to_f16_v4(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(y + i, m,
                             _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i), _MM_FROUND_TO_NEAREST_INT));
  }
}

}  // namespace
#endif

void f16_to_f32(const uint16_t* x, float* y, int64_t n) {
#if defined(EMBER_F16C)
  if (cpu_level() == 2) return f16_to_f32_v4(x, y, n);
  if (has_f16c()) return f16_to_f32_f16c(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = f16::to_float(x[i]);
}

void f32_to_f16(const float* x, uint16_t* y, int64_t n) {
#if defined(EMBER_F16C)
  if (cpu_level() == 2) return f32_to_f16_v4(x, y, n);
  if (has_f16c()) return f32_to_f16_f16c(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = f16::from_float(x[i]);
}

namespace {
EMBER_CPU_CLONES(void, transpose_u32_blocks,
                 (const uint32_t* src, int64_t ls, uint32_t* dst, int64_t ld, int64_t rows, int64_t cols),
                 (src, ls, dst, ld, rows, cols), { transpose_blocks(src, ls, dst, ld, rows, cols); })
EMBER_CPU_CLONES(void, transpose_u16_blocks,
                 (const uint16_t* src, int64_t ls, uint16_t* dst, int64_t ld, int64_t rows, int64_t cols),
                 (src, ls, dst, ld, rows, cols), { transpose_blocks(src, ls, dst, ld, rows, cols); })
}  // namespace

void transpose_u32(const uint32_t* src, int64_t ls, uint32_t* dst, int64_t ld, int64_t rows,
                   int64_t cols) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2) return transpose_v4(src, ls, dst, ld, rows, cols);
#endif
  transpose_u32_blocks(src, ls, dst, ld, rows, cols);
}

void transpose_u16(const uint16_t* src, int64_t ls, uint16_t* dst, int64_t ld, int64_t rows,
                   int64_t cols) {
#ifdef EMBER_EXP16
  if (cpu_level() == 2) return transpose_v4(src, ls, dst, ld, rows, cols);
#endif
  transpose_u16_blocks(src, ls, dst, ld, rows, cols);
}

int64_t find_f32(const float* x, int64_t n, float v) {
  // blocks of 64 tested branch-free (vectorised), the hit located within its block
  constexpr int64_t kB = 64;
  const bool nan = v != v;
  int64_t i = 0;
  for (; i + kB <= n; i += kB) {
    int hit = 0;
    if (nan)
      for (int64_t j = 0; j < kB; ++j) hit |= x[i + j] != x[i + j];
    else
      for (int64_t j = 0; j < kB; ++j) hit |= x[i + j] == v;
    if (hit) break;
  }
  for (; i < n; ++i)
    if (nan ? x[i] != x[i] : x[i] == v) return i;
  return n;
}

}  // namespace ember::cpu
