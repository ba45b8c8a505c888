// float32 math written to auto-vectorise: no calls and no branches (selects instead), so
// that a loop over a run compiles to SIMD in each ISA level of EMBER_CPU_LEVELS (each1)
// where libm's functions are one scalar call per element. Each is within a few ulp of
// libm over the whole float range, with libm's infinities, zeros and NaNs (the tests
// check both against numpy). The polynomials are minimax fits made for these ranges.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember::cpu::vf {

#define EMBER_VF inline __attribute__((always_inline))

EMBER_VF float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

EMBER_VF uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Cody-Waite range reduction x = n ln2 + r, |r| <= ln2/2, then a degree-7 polynomial
// form. No clamp and no float-to-int conversion: n is rounded by the 1.5 * 2^23 trick
// and read back from t's low mantissa bits; out of range (|n| past 2^22 for huge |x|) the
// lanes compute garbage that the last three selects replace, so the loop is ~30
// instructions and vectorises without masks.
EMBER_VF float exp(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  const float t = x * 1.44269504088896341f + kMagic;
  const float n = t - kMagic;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n as two factors so that n = -150..128 keeps each factor a normal float
  const int32_t ni = int32_t(to_bits(t) - to_bits(kMagic));
  const int32_t half = ni >> 1;  // floor: the factors' exponents add up to n either way
  const float s1 = from_bits(uint32_t(half + 127) << 23);
  const float s2 = from_bits(uint32_t(ni - half + 127) << 23);
  float y = p * s1 * s2;
  y = x > 88.72283935546875f ? INFINITY : y;
  y = x < -103.972084045410f ? 0.0f : y;
  return x != x ? x : y;
}

// x = m 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = f - f^2/2 + f^3 P(f), f = m - 1;
// subnormal x scaled by 2^23 first.
EMBER_VF float log(float x) {
  const bool tiny = x < 1.17549435e-38f;
  const uint32_t u = to_bits(tiny ? x * 8388608.0f : x);
  int32_t e = int32_t((u >> 23) & 0xff) - 126 - (tiny ? 23 : 0);
  const float m = from_bits((u & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1 : e;
  const float f = low ? m + m - 1.0f : m - 1.0f;
  const float z = f * f;
  float p = 0.09539980441f;
  p = p * f - 0.1032113880f;
  p = p * f + 0.1020336822f;
  p = p * f - 0.1253745407f;
  p = p * f + 0.1441953629f;
  p = p * f - 0.1666569710f;
  p = p * f + 0.1999504864f;
  p = p * f - 0.2500000011f;
  p = p * f + 0.3333336071f;
  const float fe = float(e);
  float y = f * z * p + fe * -2.12194440e-4f;
  y = y - 0.5f * z;
  y = (f + y) + fe * 0.693359375f;
  y = x < 0.0f ? NAN : y;
  y = x == 0.0f ? -INFINITY : y;
  y = x == INFINITY ? INFINITY : y;
  return x != x ? x : y;
}

// |x| < 0.625: x + x^3 P(x^2); else sign(x) (1 - 2 / (exp(2|x|) + 1)).
EMBER_VF float tanh(float x) {
  const float a = std::fabs(x), z = x * x;
  float p = -0.006104872096f;
  p = p * z + 0.02100434713f;
  p = p * z - 0.05385300890f;
  p = p * z + 0.1333279312f;
  p = p * z - 0.3333332837f;
  const float small = std::copysign(x + x * z * p, x);  // tanh(-0) is -0
  const float big = std::copysign(1.0f - 2.0f / (exp(a + a) + 1.0f), x);
  return a < 0.625f ? small : big;  // NaN takes `big`, which is NaN
}

EMBER_VF float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

// x sigmoid(x); at -inf -0 (PyTorch's), where the quotient would be NaN.
EMBER_VF float silu(float x) { return x == -INFINITY ? -0.0f : x / (1.0f + exp(-x)); }

constexpr float kErfSmall = 0.921875f;  // where erf's two forms meet

// exp(-x^2): x^2 = h + l exactly (l by a fused multiply-add), then exp(-h) (1 - l). exp
// of x^2 rounded would be off by x^2 ulps, and erf's tail is used up to x^2 = 16.
EMBER_VF float exp_neg_sq(float x) {
  const float h = x * x;
  const float l = std::fma(x, x, -h);
  return exp(-h) * (1.0f - l);
}

// erfc(a) for a >= kErfSmall, given e = exp(-a^2): e Q(t), t = 1 / (1 + a/2).
EMBER_VF float erfc_large(float a, float e) {
  const float t = 1.0f / (1.0f + 0.5f * a);
  float q = 0.1194400191f;
  q = q * t - 0.4715690916f;
  q = q * t + 0.5638850656f;
  q = q * t - 0.1041644785f;
  q = q * t + 0.3480910813f;
  q = q * t + 0.2596001122f;
  q = q * t + 0.2849268844f;
  q = q * t - 0.0001551656509f;
  return e * q;
}

// erf(a) / a for a < kErfSmall: P(a^2).
EMBER_VF float erf_small_ratio(float a) {
  const float z = a * a;
  float p = -0.0005990993507f;
  p = p * z + 0.004993213106f;
  p = p * z - 0.02676664437f;
  p = p * z + 0.1128181722f;
  p = p * z - 0.3761249385f;
  p = p * z + 1.128379150f;
  return p;
}

EMBER_VF float erf(float x) {
  const float a = std::fabs(x);
  float r = a < kErfSmall ? a * erf_small_ratio(a) : 1.0f - erfc_large(a, exp_neg_sq(a));
  r = a > 4.0f ? 1.0f : r;     // erfc(4) < half an ulp of 1 (and inf - inf is NaN)
  return std::copysign(r, x);  // NaN stays NaN
}

// gelu, the exact form, x/2 (1 + erf(x / sqrt 2)), in one form for every x: x erfc(a)/2
// for x < 0 (no 1 + erf cancellation: the negative tail keeps its relative accuracy) and
// x - x erfc(a)/2 for x > 0, a = |x| / sqrt 2. erfc(a)/2 = exp(-a^2) Q(t),
// t = 1 / (1 + 0.3 |x|), Q a degree-8 minimax fit over a in [0, 10.25] (relative error
// 6e-8), the 1/2 in its coefficients; -2 a^2 = -x^2 = nh + nl split exactly, nl folded
// into exp's reduced argument (exp of a^2 rounded would be off by a^2 ulps). x is clamped
// to [-14.5, 14.5] for erfc: below -14.5 the result is under the smallest subnormal (-0,
// also at -inf), above 14.5 it is x. The AVX-512 kernel (vec_math.cpp's gelu16) is this,
// instruction for instruction.
// gelu's minimax polynomials, highest degree first: e^{s/2} for |s| <= ln2 and Q(t)/2
// (above); vec_math.cpp's gelu16 evaluates the same ones.
constexpr float kGeluExp[7] = {2.162006239814218e-05f, 0.00026171313947997987f,
                               0.0026042640674859285f, 0.020833024755120277f,
                               0.12499997764825821f, 0.5f, 1.0f};
constexpr float kGeluQ[9] = {0.038407403975725174f, -0.16930751502513885f, 0.22895188629627228f,
                             -0.07683978229761124f, 0.1427653580904007f,   0.0945858284831047f,
                             0.12194526940584183f,  0.11948420852422714f,  7.371994342975086e-06f};
// exp's reduction for gelu: n = round(nh / (2 ln2)), s = nh - n 2ln2 (two parts) + nl.
constexpr float kGeluLog2e = 0.7213475204444817f;  // 1 / (2 ln2)
constexpr float kGeluLn2Hi = 1.38671875f, kGeluLn2Lo = -4.243888834025711e-4f;  // 2 ln2

EMBER_VF float gelu(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  const float xm = x < -14.5f ? -14.5f : x;  // NaN: x
  const float v = xm > 14.5f ? 14.5f : xm;
  const float nh = -(v * v);
  const float nl = std::fma(-v, v, -nh);  // -v^2 - nh, exactly
  // exp((nh + nl) / 2) = 2^n e^{s/2}, |s| <= ln2
  const float tn = nh * kGeluLog2e + kMagic;
  const float n = tn - kMagic;
  float s = nh - n * kGeluLn2Hi;
  s = s - n * kGeluLn2Lo;
  s = s + nl;
  float p = kGeluExp[0];
  for (int k = 1; k < 7; ++k) p = p * s + kGeluExp[k];
  // 2^n, n in [-152, 0], as two normal factors
  const int32_t ni = int32_t(to_bits(tn) - to_bits(kMagic));
  const int32_t half = ni >> 1;
  const float ex = p * from_bits(uint32_t(half + 127) << 23) * from_bits(uint32_t(ni - half + 127) << 23);
  const float t = 1.0f / (1.0f + 0.3f * std::fabs(v));
  float q = kGeluQ[0];
  for (int k = 1; k < 9; ++k) q = q * t + kGeluQ[k];
  const float m = (v * q) * ex;  // x erfc(a) / 2 (subnormal once)
  return x > 0.0f ? xm - m : m;
}

// gelu's tanh approximation, PyTorch's formula: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
EMBER_VF float gelu_tanh(float x) {
  const float t = tanh(0.7978845608028654f * (x + 0.044715f * x * x * x));
  return x == -INFINITY ? -0.0f : 0.5f * x * (1.0f + t);
}

// expm1: |x| < 1/2: x + x^2/2 + x^3 P(x); else exp(x) - 1 (within 3 ulp there).
EMBER_VF float expm1(float x) {
  float p = 2.484843455e-05f;
  p = p * x + 0.0001994156204f;
  p = p * x + 0.00138889656f;
  p = p * x + 0.008333246314f;
  p = p * x + 0.04166666576f;
  p = p * x + 0.1666666674f;
  const float z = x * x;
  const float small = std::copysign(x + (0.5f * z + z * x * p), x);  // expm1(-0) is -0
  return std::fabs(x) < 0.5f ? small : exp(x) - 1.0f;  // NaN takes the second: NaN
}

// log1p(x) = log(u) x / (u - 1), u = 1 + x rounded (Goldberg's correction of u's
// rounding); x itself where u rounds to 1.
EMBER_VF float log1p(float x) {
  const float u = 1.0f + x;
  float y = log(u) * (x / (u - 1.0f));
  y = u == 1.0f ? x : y;
  y = x == INFINITY ? INFINITY : y;  // inf / inf
  return x == -1.0f ? -INFINITY : y;
}

// sin and cos: x = n pi/2 + r (pi/2 in three parts, exact products for |n| < 2^16),
// |r| <= pi/4, then r + r^3 S(r^2) and 1 - r^2/2 + r^4 C(r^2); the quadrant n mod 4 picks
// and signs them. Past kTrigMax the reduction loses bits (near a zero of the result,
// where the error is measured in its own ulps): those chunks go to libm (float_runs),
// so the lanes' results there are never used.
constexpr float kTrigMax = 2048.0f;

struct Quadrant {
  float s, c;  // sin r, cos r
  uint32_t q;  // n mod 4
};

EMBER_VF Quadrant quadrant(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: rounds to an integer
  const float t = x * 0.636619772367581343f + kMagic;
  const float n = t - kMagic;
  float r = x - n * 1.5703125f;
  r = r - n * 4.837512969970703125e-4f;
  r = r - n * 7.54978995489188216e-8f;
  const float z = r * r;
  float sp = 2.724945418e-06f;
  sp = sp * z - 0.0001984008243f;
  sp = sp * z + 0.008333331865f;
  sp = sp * z - 0.1666666666f;
  float cp = -2.730072126e-07f;
  cp = cp * z + 2.480059823e-05f;
  cp = cp * z - 0.001388888767f;
  cp = cp * z + 0.04166666666f;
  Quadrant out;
  out.s = std::copysign(r + r * z * sp, r);  // sin(-0) is -0
  out.c = 1.0f - 0.5f * z + z * z * cp;
  out.q = (to_bits(t) - to_bits(kMagic)) & 3u;
  return out;
}

EMBER_VF float negate_if(float v, uint32_t neg) { return from_bits(to_bits(v) ^ (neg << 31)); }

EMBER_VF float sin(float x) {
  const Quadrant k = quadrant(x);
  return negate_if(k.q & 1u ? k.c : k.s, (k.q >> 1) & 1u);
}

EMBER_VF float cos(float x) {
  const Quadrant k = quadrant(x);
  return negate_if(k.q & 1u ? k.s : k.c, ((k.q + 1u) >> 1) & 1u);
}

EMBER_VF float tan(float x) {
  const Quadrant k = quadrant(x);
  return k.q & 1u ? -k.c / k.s : k.s / k.c;
}

#undef EMBER_VF

}  // namespace ember::cpu::vf
