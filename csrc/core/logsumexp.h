// logsumexp's combine step, written once for every backend: the running max m and
// s = sum exp(x - m), s rescaled by exp(m_old - m) when the max rises. Infinities and NaN
// as core's composition: a NaN gives NaN, a +inf max +inf, all -inf (or nothing) -inf;
// -inf values add nothing. Exp is the backend's exp of a double argument <= 0.
#pragma once

#include <math.h>

#if defined(__CUDACC__)
#define EMBER_LSE_HD __host__ __device__
#else
#define EMBER_LSE_HD
#endif

namespace ember {

struct LseState {
  float m = -INFINITY;
  double s = 0;
  bool nan = false;

  template <typename Exp>
  EMBER_LSE_HD void raise_to(float x, Exp e) {  // the new max x > m (s is 0 while m is -inf)
    s = m == -INFINITY ? 0.0 : s * e(double(m) - double(x));
    m = x;
  }
  template <typename Exp>
  EMBER_LSE_HD void add(float x, Exp e) {
    if (x != x) {
      nan = true;
    } else if (x > m) {
      raise_to(x, e);
      s += 1.0;
    } else if (x != -INFINITY && m != INFINITY) {
      s += e(double(x) - double(m));
    }
  }
  template <typename Exp>
  EMBER_LSE_HD void merge(const LseState& o, Exp e) {
    nan = nan || o.nan;
    if (o.m == -INFINITY) return;
    if (o.m > m) {
      raise_to(o.m, e);
      s += o.s;
    } else if (m != INFINITY) {
      s += o.s * e(double(o.m) - double(m));
    }
  }
  EMBER_LSE_HD float result() const {
    if (nan) return NAN;
    if (m == INFINITY || m == -INFINITY) return m;
    return float(double(m) + log(s));
  }
};

}  // namespace ember
