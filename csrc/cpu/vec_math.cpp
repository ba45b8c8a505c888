#include "vec_math.h"

#include <cmath>
#include <cstring>

// Built twice on x86-64 (x86-64-v3, i.e. AVX2+FMA, and baseline); the loader picks one.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define EMBER_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define EMBER_TARGET_CLONES
#endif

namespace ember::cpu {

namespace {

__attribute__((always_inline)) inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Cody-Waite range reduction x = n ln2 + r, |r| <= ln2/2, then a degree-6 polynomial.
__attribute__((always_inline)) inline float exp_one(float x) {
  const float xc = x < -104.0f ? -104.0f : (x > 88.8f ? 88.8f : x);
  // round to nearest by the 1.5 * 2^23 trick: plain adds, so it vectorises
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n as two factors so that n = -150..128 keeps each factor a normal float
  const int32_t ni = int32_t(n);
  const int32_t half = ni / 2;
  const float s1 = bits_to_float(uint32_t(half + 127) << 23);
  const float s2 = bits_to_float(uint32_t(ni - half + 127) << 23);
  float y = p * s1 * s2;
  y = x > 88.72283935546875f ? INFINITY : y;
  y = x < -103.972084045410f ? 0.0f : y;
  return x != x ? x : y;
}

}  // namespace

EMBER_TARGET_CLONES void exp_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = exp_one(x[i]);
}

}  // namespace ember::cpu
