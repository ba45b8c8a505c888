// Unary math, clamp and affine (kernels/unary.metal): one lane per element; clamp's
// bounds and affine's factors are prepared here so that the kernels reproduce the CPU's
// double-precision compares and arithmetic exactly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "../kernels/unary.h"
#include "core/host_cast.h"
#include "launch.h"

namespace ember::metal {

namespace {

// Smallest float >= v and largest float <= v (v not NaN): x < v exactly when
// x < float_at_least(v), for every float x, and likewise for >.
float float_at_least(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (v > kMax) return INFINITY;
  if (v < -kMax) return v == -INFINITY ? -INFINITY : -float(kMax);
  float f = float(v);
  return double(f) < v ? std::nextafter(f, INFINITY) : f;
}
float float_at_most(double v) {
  return -float_at_least(-v);
}

// The smallest x in [lo, hi] with pred(x), for pred false on a prefix and true after
// it; false when pred holds nowhere.
template <typename Pred>
bool first_true(int64_t lo, int64_t hi, Pred pred, int64_t* out) {
  if (!pred(hi)) return false;
  while (lo != hi) {  // pred(hi) holds, the answer is in [lo, hi]
    const int64_t mid = int64_t(uint64_t(lo) + (uint64_t(hi) - uint64_t(lo)) / 2);
    if (pred(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  *out = lo;
  return true;
}

// Clamp's thresholds for dtype T: the CPU compares double(x) with lo, then with hi, and
// gives saturate_cast<T>(lo) or saturate_cast<T>(hi).
template <typename T>
void clamp_params(double lo, double hi, UnaryKParams& p) {
  if constexpr (std::is_integral_v<T>) {
    const int64_t tmin = int64_t(std::numeric_limits<T>::min());
    const int64_t tmax = int64_t(std::numeric_limits<T>::max());
    // double(x) is monotonic in x: "below lo" is a prefix of T's range, "above hi" a suffix
    int64_t first_not_below = 0, first_above = 0;
    const bool all_below = !first_true(
        tmin, tmax, [&](int64_t x) { return !(double(x) < lo); }, &first_not_below);
    p.has_lo = all_below || first_not_below > tmin;
    // (unused without has_lo; tmin - 1 would overflow)
    p.lo_cut_i = all_below ? tmax : p.has_lo ? first_not_below - 1 : tmin;
    p.has_hi = first_true(
        tmin, tmax, [&](int64_t x) { return double(x) > hi; }, &first_above);
    p.hi_cut_i = first_above;
    p.lo_i = int64_t(saturate_cast<T>(lo));
    p.hi_i = int64_t(saturate_cast<T>(hi));
  } else {
    p.lo_cut_f = std::isnan(lo) ? -INFINITY : float_at_least(lo);
    p.hi_cut_f = std::isnan(hi) ? INFINITY : float_at_most(hi);
    p.lo_f = float(saturate_cast<T>(lo));
    p.hi_f = float(saturate_cast<T>(hi));
  }
}

}  // namespace

void MetalStorage::unary(UnaryOp op, const UnaryParams& up, const Layout& src, BackendStorage& dst,
                         const Layout& dst_layout) const {
  const char* name = unary_name(op);  // core checked the dtype against the op's class
  const int64_t n = dst_layout.numel();
  if (n == 0) return;
  UnaryKParams p{};
  const std::vector<StridedLayout> kl = kernel_layouts(name, {src, dst_layout}, WalkOrder::Memory);
  p.l[0] = kl[0];
  p.l[1] = kl[1];
  if (op == UnaryOp::Clamp) {
    dispatch_dtype(dtype_, [&](auto tag) { clamp_params<decltype(tag)>(up.lo, up.hi, p); });
  }
  const bool dense = kl[0].contiguous && kl[1].contiguous;
  launch_elementwise(metal(), "unary", kernel_name("unary", name, dense, dtype_),
                     {this, &as_metal(dst)}, p, n);
}

void MetalStorage::affine(const Layout& src, double mul, double add, BackendStorage& dst,
                          const Layout& dst_layout) const {
  const int64_t n = dst_layout.numel();
  if (n == 0) return;
  UnaryKParams p{};
  const std::vector<StridedLayout> kl = kernel_layouts("affine", {src, dst_layout}, WalkOrder::Memory);
  p.l[0] = kl[0];
  p.l[1] = kl[1];
  // floats compute in float as the CPU; integers in (software) double as the CPU
  p.mul_f = float(mul);
  p.add_f = float(add);
  std::memcpy(&p.mul_bits, &mul, sizeof(double));
  std::memcpy(&p.add_bits, &add, sizeof(double));
  const bool dense = kl[0].contiguous && kl[1].contiguous;
  launch_elementwise(metal(), "unary", kernel_name("unary", "affine", dense, dtype_),
                     {this, &as_metal(dst)}, p, n);
}

}  // namespace ember::metal
