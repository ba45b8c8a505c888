// Unary math, clamp and affine, with the CPU backend's semantics per dtype: one functor
// per row of the op table (core/ops.def), instantiated for its dtype class in one line.
//   unary_<op>[_strided]_<dtype>
// The _strided variants walk views; the others take dense views (no index math).
// f16 and bf16 compute in float, as the CPU. Predicates (isnan ...) write uint8.
#include "common.h"
#include "copy.h"
#include "unary.h"

// erf in float, within 1 ulp of the true value (measured against mpmath and libm):
// x + x*P(x^2) below 0.84375, erx + P(|x| - 1) up to 1.25, 1 - exp(-x^2) Q(1/|x|)
// up to 4, where erf(x) rounds to 1. Coefficients fitted for this file.
inline float ew_erf(float x) {
  const float a = fabs(x);
  if (isnan(x)) return x;
  if (a < 0.84375f) {
    const float z = x * x;
    const float p = 1.283791661e-01f +
                    z * (-3.761263788e-01f +
                         z * (1.128378958e-01f +
                              z * (-2.686598152e-02f +
                                   z * (5.223013926e-03f +
                                        z * (-8.520770934e-04f +
                                             z * (1.160354514e-04f + z * -1.089205489e-05f))))));
    return x + x * p;
  }
  float r;
  if (a < 1.25f) {
    const float s = a - 1.0f;
    r = 0.845062911510467529297f +
        (-2.362118568e-03f +
         s * (4.151074886e-01f +
              s * (-4.151074886e-01f +
                   s * (1.383691728e-01f +
                        s * (6.918405741e-02f +
                             s * (-6.918479502e-02f +
                                  s * (4.642477259e-03f +
                                       s * (1.509991847e-02f + s * -5.310826004e-03f))))))));
  } else if (a < 4.0f) {
    const float t = 1.0f / a - 0.5f;
    const float q =
        2.553956807e-01f +
        t * (4.271858335e-01f +
             t * (-1.855276525e-01f +
                  t * (2.284803241e-02f +
                       t * (6.458542496e-02f +
                            t * (-8.750367165e-02f +
                                 t * (6.281451136e-02f +
                                      t * (-1.168715116e-02f +
                                           t * (-4.384007677e-02f +
                                                t * (8.231296390e-02f +
                                                     t * (-7.946655899e-02f +
                                                          t * 3.339270502e-02f))))))))));
    // exp(-a^2) as exp(-h^2) exp((h - a)(h + a)): h keeps 12 bits, so h^2 is exact
    const float h = as_type<float>(as_type<uint>(a) & 0xfffff000u);
    r = 1.0f - exp(-h * h) * exp((h - a) * (h + a)) * q;
  } else {
    r = 1.0f;
  }
  return x < 0.0f ? -r : r;
}

// ---- software double precision, only for affine on integers: the CPU computes
// double(x) * mul + add and saturates, which float cannot reproduce for int64.
// Doubles are their IEEE bits; finite nonzero values unpack to sig * 2^(e - 62) with
// sig's leading 1 at bit 62, and the bits below the result's 53 are kept (bit 0 sticky)
// for round-to-nearest-even.

#define SD_ABS uint64_t(0x7fffffffffffffff)
#define SD_INF uint64_t(0x7ff0000000000000)
#define SD_NAN uint64_t(0x7ff8000000000000)
#define SD_FRAC uint64_t(0x000fffffffffffff)

inline int sd_clz64(uint64_t x) {  // x != 0
  int n = 0;
  if ((x >> 32) == 0) n += 32, x <<= 32;
  if ((x >> 48) == 0) n += 16, x <<= 16;
  if ((x >> 56) == 0) n += 8, x <<= 8;
  if ((x >> 60) == 0) n += 4, x <<= 4;
  if ((x >> 62) == 0) n += 2, x <<= 2;
  if ((x >> 63) == 0) n += 1;
  return n;
}

// x >> n with the shifted-out bits or'ed into bit 0.
inline uint64_t sd_shift_jam(uint64_t x, int n) {
  if (n <= 0) return x;
  if (n >= 63) return uint64_t(x != 0);
  return (x >> n) | uint64_t((x << (64 - n)) != 0);
}

inline uint64_t sd_round_pack(uint64_t sign, int e, uint64_t sig) {
  int biased = e + 1023;
  if (biased >= 2047) return (sign << 63) | SD_INF;
  if (biased <= 0) {  // subnormal: align to the smallest exponent
    sig = sd_shift_jam(sig, 1 - biased);
    biased = 0;
  }
  uint64_t mant = sig >> 10;
  const uint64_t rem = sig & 0x3ffu;
  if (rem > 0x200u || (rem == 0x200u && (mant & 1u))) ++mant;
  // a normal mant carries its leading 1 into the exponent field; a rounding carry
  // (subnormal to normal, or to the next binade) lands there too
  uint64_t bits = biased == 0 ? mant : (uint64_t(biased - 1) << 52) + mant;
  if ((bits >> 52) >= 2047) bits = SD_INF;
  return (sign << 63) | bits;
}

inline void sd_unpack(uint64_t m, thread int& e, thread uint64_t& sig) {
  const int biased = int(m >> 52);
  const uint64_t frac = m & SD_FRAC;
  if (biased != 0) {
    e = biased - 1023;
    sig = (frac | (uint64_t(1) << 52)) << 10;
  } else {
    const int s = sd_clz64(frac) - 1;
    sig = frac << s;
    e = -1012 - s;
  }
}

inline uint64_t sd_from_i64(int64_t v) {
  if (v == 0) return 0;
  const uint64_t sign = v < 0 ? 1u : 0u;
  const uint64_t mag = sign ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  const int lz = sd_clz64(mag);
  if (lz == 0) return sd_round_pack(sign, 63, sd_shift_jam(mag, 1));
  return sd_round_pack(sign, 63 - lz, mag << (lz - 1));
}

inline uint64_t sd_mul(uint64_t a, uint64_t b) {
  const uint64_t sign = (a ^ b) >> 63;
  const uint64_t ma = a & SD_ABS, mb = b & SD_ABS;
  if (ma > SD_INF || mb > SD_INF) return SD_NAN;
  if (ma == SD_INF || mb == SD_INF) return (ma == 0 || mb == 0) ? SD_NAN : ((sign << 63) | SD_INF);
  if (ma == 0 || mb == 0) return sign << 63;
  int ea, eb;
  uint64_t sa, sb;
  sd_unpack(ma, ea, sa);
  sd_unpack(mb, eb, sb);
  // the 128-bit product from 32-bit halves; it lies in [2^124, 2^126)
  const uint64_t a0 = sa & 0xffffffffu, a1 = sa >> 32, b0 = sb & 0xffffffffu, b1 = sb >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  const uint64_t lo = (mid << 32) | (p00 & 0xffffffffu);
  const uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  if (hi >> 61)
    return sd_round_pack(sign, ea + eb + 1, (hi << 1) | (lo >> 63) | uint64_t((lo << 1) != 0));
  return sd_round_pack(sign, ea + eb, (hi << 2) | (lo >> 62) | uint64_t((lo << 2) != 0));
}

inline uint64_t sd_add(uint64_t a, uint64_t b) {
  uint64_t ma = a & SD_ABS, mb = b & SD_ABS;
  if (ma > SD_INF || mb > SD_INF) return SD_NAN;
  if (ma == SD_INF) return (mb == SD_INF && ((a ^ b) >> 63)) ? SD_NAN : a;
  if (mb == SD_INF) return b;
  if (ma == 0) return mb == 0 ? (a & b) : b;  // -0 + -0 = -0, else +0
  if (mb == 0) return a;
  if (mb > ma) {  // |a| >= |b| from here on
    const uint64_t t = a;
    a = b;
    b = t;
    ma = a & SD_ABS;
    mb = b & SD_ABS;
  }
  int ea, eb;
  uint64_t sa, sb;
  sd_unpack(ma, ea, sa);
  sd_unpack(mb, eb, sb);
  sb = sd_shift_jam(sb, ea - eb);
  const uint64_t sign = a >> 63;
  if (((a ^ b) >> 63) == 0) {
    const uint64_t s = sa + sb;
    if (s >> 63) return sd_round_pack(sign, ea + 1, (s >> 1) | (s & 1u));
    return sd_round_pack(sign, ea, s);
  }
  const uint64_t diff = sa - sb;
  if (diff == 0) return 0;  // x - x is +0 when rounding to nearest
  const int s = sd_clz64(diff) - 1;
  return sd_round_pack(sign, ea - s, diff << s);
}

// double -> int64 truncating toward zero; NaN -> 0, beyond the range saturates.
inline int64_t sd_trunc_sat(uint64_t v) {
  const uint64_t m = v & SD_ABS;
  if (m > SD_INF) return 0;
  const bool neg = (v >> 63) != 0;
  const int biased = int(m >> 52);
  if (biased < 1023) return 0;
  const int e = biased - 1023;
  if (e >= 63) return neg ? int64_t(uint64_t(1) << 63) : int64_t((uint64_t(1) << 63) - 1);
  const uint64_t sig = (m & SD_FRAC) | (uint64_t(1) << 52);
  const uint64_t mag = e >= 52 ? sig << (e - 52) : sig >> (52 - e);
  return neg ? int64_t(uint64_t(0) - mag) : int64_t(mag);
}

inline int64_t sd_affine(int64_t x, constant UnaryKParams& p) {
  const uint64_t y = sd_add(sd_mul(sd_from_i64(x), uint64_t(p.mul_bits)), uint64_t(p.add_bits));
  return sd_trunc_sat(y);
}

inline int64_t ew_clamp_i64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

// ---- the ops: overloads per compute type (float, int64_t, uint, uchar)

struct UnaryNeg {
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return ew_sub(C(0), x);  // wraps on integers, as numpy
  }
};

struct UnaryAbs {
  float operator()(float x, constant UnaryKParams& p) { return fabs(x); }
  int64_t operator()(int64_t x, constant UnaryKParams& p) {
    return x < 0 ? ew_sub(int64_t(0), x) : x;
  }
  int operator()(int x, constant UnaryKParams& p) { return x < 0 ? ew_sub(0, x) : x; }
  uint operator()(uint x, constant UnaryKParams& p) { return x; }
  uchar operator()(uchar x, constant UnaryKParams& p) { return x; }
};

struct UnarySqr {
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return ew_mul(x, x);
  }
};

struct UnaryRelu {
  float operator()(float x, constant UnaryKParams& p) { return x > 0.0f || isnan(x) ? x : 0.0f; }
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return x > C(0) ? x : C(0);
  }
};

struct UnaryClamp {
  float operator()(float x, constant UnaryKParams& p) {
    return x < p.lo_cut_f ? p.lo_f : x > p.hi_cut_f ? p.hi_f : x;  // NaN stays
  }
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    const int64_t v = int64_t(x);
    if (p.has_lo && v <= p.lo_cut_i) return C(p.lo_i);
    if (p.has_hi && v >= p.hi_cut_i) return C(p.hi_i);
    return x;
  }
};

struct UnaryAffine {
  float operator()(float x, constant UnaryKParams& p) { return x * p.mul_f + p.add_f; }
  int64_t operator()(int64_t x, constant UnaryKParams& p) { return sd_affine(x, p); }
  int operator()(int x, constant UnaryKParams& p) {
    return int(ew_clamp_i64(sd_affine(int64_t(x), p), -int64_t(0x80000000), 0x7fffffff));
  }
  uint operator()(uint x, constant UnaryKParams& p) {
    return uint(ew_clamp_i64(sd_affine(int64_t(x), p), 0, int64_t(0xffffffff)));
  }
  uchar operator()(uchar x, constant UnaryKParams& p) {
    return uchar(ew_clamp_i64(sd_affine(int64_t(x), p), 0, 255));
  }
};

struct UnaryExp {
  float operator()(float x, constant UnaryKParams& p) { return exp(x); }
};
struct UnaryLog {
  float operator()(float x, constant UnaryKParams& p) { return log(x); }
};
struct UnarySqrt {
  float operator()(float x, constant UnaryKParams& p) { return sqrt(x); }
};
struct UnaryRecip {
  float operator()(float x, constant UnaryKParams& p) { return 1.0f / x; }
};
struct UnarySin {
  float operator()(float x, constant UnaryKParams& p) { return sin(x); }
};
struct UnaryCos {
  float operator()(float x, constant UnaryKParams& p) { return cos(x); }
};
struct UnaryTanh {
  // tanh(+-9) is already +-1 in float; the clamp keeps fast tanh away from exp overflow
  float operator()(float x, constant UnaryKParams& p) {
    return isnan(x) ? x : tanh(clamp(x, -20.0f, 20.0f));
  }
};
// gelu and silu tend to -0 at -inf (where -inf * 0 would be NaN), as the CPU
struct UnaryGelu {  // the exact (erf) form, as the CPU and PyTorch's default
  float operator()(float x, constant UnaryKParams& p) {
    return x == -INFINITY ? -0.0f : 0.5f * x * (1.0f + ew_erf(x * 0.7071067811865476f));
  }
};
// gelu's tanh approximation (PyTorch's formula); tanh clamped as in UnaryTanh
struct UnaryGeluTanh {
  float operator()(float x, constant UnaryKParams& p) {
    if (isnan(x)) return x;
    if (x == -INFINITY) return -0.0f;
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanh(clamp(u, -20.0f, 20.0f)));
  }
};
struct UnarySilu {
  float operator()(float x, constant UnaryKParams& p) {
    return x == -INFINITY ? -0.0f : x / (1.0f + exp(-x));
  }
};
struct UnarySigmoid {
  float operator()(float x, constant UnaryKParams& p) { return 1.0f / (1.0f + exp(-x)); }
};

// Sign: NaN stays NaN, as numpy (PyTorch gives 0); both zeros give +0.
struct UnarySign {
  float operator()(float x, constant UnaryKParams& p) {
    return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x;
  }
  int64_t operator()(int64_t x, constant UnaryKParams& p) {
    return int64_t(x > 0) - int64_t(x < 0);
  }
  int operator()(int x, constant UnaryKParams& p) { return int(x > 0) - int(x < 0); }
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return x > C(0) ? C(1) : C(0);
  }
};

// Rounding: integers are already integral and come back unchanged.
struct UnaryFloor {
  float operator()(float x, constant UnaryKParams& p) { return floor(x); }
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return x;
  }
};
struct UnaryCeil {
  float operator()(float x, constant UnaryKParams& p) { return ceil(x); }
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return x;
  }
};
struct UnaryRound {  // rint: half to even, as numpy and PyTorch (MSL round is half away)
  float operator()(float x, constant UnaryKParams& p) { return rint(x); }
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return x;
  }
};
struct UnaryTrunc {
  float operator()(float x, constant UnaryKParams& p) { return trunc(x); }
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return x;
  }
};

// MSL has no expm1 / log1p: Kahan's forms, where the rounding errors of exp / log and
// of the final division cancel (a few ulp, no fused multiply-add needed).
struct UnaryExpm1 {
  float operator()(float x, constant UnaryKParams& p) {
    const float u = exp(x);
    if (u == 1.0f) return x;  // |x| below half an ulp of 1 (keeps -0)
    const float um1 = u - 1.0f;
    if (um1 == -1.0f || isinf(u)) return um1;
    return um1 * x / log(u);
  }
};
struct UnaryLog1p {
  float operator()(float x, constant UnaryKParams& p) {
    const float u = 1.0f + x;
    if (u == 1.0f) return x;
    if (u == INFINITY) return u;  // (-inf goes on to log's NaN)
    return log(u) * (x / (u - 1.0f));
  }
};
struct UnaryRsqrt {
  float operator()(float x, constant UnaryKParams& p) { return rsqrt(x); }
};
struct UnaryTan {
  float operator()(float x, constant UnaryKParams& p) { return tan(x); }
};
struct UnaryErf {
  float operator()(float x, constant UnaryKParams& p) { return ew_erf(x); }
};

// Integers only (the Integer class): core computes ~ of bool as t == 0.
struct UnaryBitwiseNot {
  template <typename C>
  C operator()(C x, constant UnaryKParams& p) {
    return C(~x);
  }
};

// Predicates: integers are never NaN or infinite.
struct UnaryIsNan {
  bool operator()(float x, constant UnaryKParams& p) { return isnan(x); }
  template <typename C>
  bool operator()(C x, constant UnaryKParams& p) {
    return false;
  }
};
struct UnaryIsInf {
  bool operator()(float x, constant UnaryKParams& p) { return isinf(x); }
  template <typename C>
  bool operator()(C x, constant UnaryKParams& p) {
    return false;
  }
};
struct UnaryIsFinite {
  bool operator()(float x, constant UnaryKParams& p) { return isfinite(x); }
  template <typename C>
  bool operator()(C x, constant UnaryKParams& p) {
    return true;
  }
};

template <typename T, typename Op, bool Strided>
kernel void unary_map(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                      constant UnaryKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[2];
  ew_offsets<2, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[1]] = Ew<T>::store(Op()(Ew<T>::load(src[off[0]]), p));
}

template <typename T, typename Op, bool Strided>
kernel void unary_predicate(device const T* src [[buffer(0)]], device uchar* dst [[buffer(1)]],
                            constant UnaryKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[2];
  ew_offsets<2, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[1]] = Op()(Ew<T>::load(src[off[0]]), p) ? uchar(1) : uchar(0);
}

#define EMBER_UNARY_KERNELS(name, sfx, T, Op)                 \
  EMBER_KERNEL(unary_##name##_##sfx, unary_map<T, Op, false>) \
  EMBER_KERNEL(unary_##name##_strided_##sfx, unary_map<T, Op, true>)
#define EMBER_UNARY_PREDICATE_KERNELS(name, sfx, T, Op)             \
  EMBER_KERNEL(unary_##name##_##sfx, unary_predicate<T, Op, false>) \
  EMBER_KERNEL(unary_##name##_strided_##sfx, unary_predicate<T, Op, true>)

// One line per op, for the dtype class of its row in core/ops.def.
#define EMBER_UNARY_ALL(name, Op) EMBER_FOR_ALL_TYPES(EMBER_UNARY_KERNELS, name, Op)
#define EMBER_UNARY_FLOAT(name, Op) EMBER_FOR_FLOAT_TYPES(EMBER_UNARY_KERNELS, name, Op)
#define EMBER_UNARY_INTEGER(name, Op) EMBER_FOR_INTEGER_TYPES(EMBER_UNARY_KERNELS, name, Op)
#define EMBER_UNARY_PREDICATE(name, Op) EMBER_FOR_ALL_TYPES(EMBER_UNARY_PREDICATE_KERNELS, name, Op)

EMBER_UNARY_ALL(neg, UnaryNeg)
EMBER_UNARY_ALL(abs, UnaryAbs)
EMBER_UNARY_ALL(sqr, UnarySqr)
EMBER_UNARY_ALL(relu, UnaryRelu)
EMBER_UNARY_ALL(sign, UnarySign)
EMBER_UNARY_ALL(floor, UnaryFloor)
EMBER_UNARY_ALL(ceil, UnaryCeil)
EMBER_UNARY_ALL(round, UnaryRound)
EMBER_UNARY_ALL(trunc, UnaryTrunc)
EMBER_UNARY_ALL(clamp, UnaryClamp)
EMBER_UNARY_ALL(affine, UnaryAffine)
EMBER_UNARY_FLOAT(exp, UnaryExp)
EMBER_UNARY_FLOAT(expm1, UnaryExpm1)
EMBER_UNARY_FLOAT(log, UnaryLog)
EMBER_UNARY_FLOAT(log1p, UnaryLog1p)
EMBER_UNARY_FLOAT(sqrt, UnarySqrt)
EMBER_UNARY_FLOAT(rsqrt, UnaryRsqrt)
EMBER_UNARY_FLOAT(recip, UnaryRecip)
EMBER_UNARY_FLOAT(sin, UnarySin)
EMBER_UNARY_FLOAT(cos, UnaryCos)
EMBER_UNARY_FLOAT(tan, UnaryTan)
EMBER_UNARY_FLOAT(tanh, UnaryTanh)
EMBER_UNARY_FLOAT(erf, UnaryErf)
EMBER_UNARY_FLOAT(gelu, UnaryGelu)
EMBER_UNARY_FLOAT(gelu_tanh, UnaryGeluTanh)
EMBER_UNARY_FLOAT(silu, UnarySilu)
EMBER_UNARY_FLOAT(sigmoid, UnarySigmoid)
EMBER_UNARY_PREDICATE(isnan, UnaryIsNan)
EMBER_UNARY_PREDICATE(isinf, UnaryIsInf)
EMBER_UNARY_PREDICATE(isfinite, UnaryIsFinite)
EMBER_UNARY_INTEGER(bitwise_not, UnaryBitwiseNot)
