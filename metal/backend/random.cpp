// MetalDevice::fill_random (kernels/random.metal): core/random.h's counter-based stream.
// The per-seed keys are hashed here; each lane hashes its own counter.
#include <cmath>
#include <string>

#include "../kernels/random.h"
#include "core/error.h"
#include "core/random.h"
#include "launch.h"

namespace ember::metal {

namespace {

// The largest float strictly below b: for float x, x < b exactly when x <= it.
float float_below(double b) {
  float f = float(b);
  if (double(f) >= b) f = std::nextafter(f, -INFINITY);
  return f;
}

// A double as hi + lo floats (48 significant bits), for the kernel's two-float math.
void split(double v, float* hi, float* lo) {
  *hi = float(v);
  *lo = std::isfinite(*hi) ? float(v - double(*hi)) : 0.0f;
}

}  // namespace

void MetalDevice::fill_random(BackendStorage& dst, RandomDist dist, uint64_t seed, uint64_t counter,
                              double a, double b) {
  const DType dt = dst.dtype();
  if (!dtype_is_float(dt))  // core only asks for float dtypes
    throw_unsupported_dtype(dist == RandomDist::Normal ? "randn" : "rand", dt, shared_from_this(),
                            "random values need a float dtype");
  RandomKParams p{};
  p.key = splitmix64(seed);
  p.key2 = splitmix64(seed ^ 0x5851f42d4c957f2dULL);
  p.counter = counter;
  split(a, &p.a_hi, &p.a_lo);
  if (dist == RandomDist::Normal) {
    split(b, &p.scale_hi, &p.scale_lo);
  } else {
    split(b - a, &p.scale_hi, &p.scale_lo);
    p.below = float_below(b);
    p.bits = uint32_t(uniform_bits(dt));
    p.check = b > a ? 1 : 0;
  }
  const std::string kernel =
      std::string(dist == RandomDist::Normal ? "random_normal_" : "random_uniform_") +
      dtype_suffix(dt);
  launch_elementwise(*this, "random", kernel, {&as_metal(dst)}, p, dst.numel());
}

void MetalDevice::fill_randint(BackendStorage& dst, uint64_t seed, uint64_t counter, int64_t low,
                               uint64_t range) {
  RandintKParams p{};
  p.key = splitmix64(seed);
  p.counter = counter;
  p.low = uint64_t(low);
  p.range = range;
  launch_elementwise(*this, "random", "random_int_i64", {&as_metal(dst)}, p, dst.numel());
}

}  // namespace ember::metal
