// interpolate, PyTorch's upsample kernels composed from index_select and elementwise
// ops: the source positions depend only on the sizes, so they are computed on the host
// and each spatial dim is resampled in turn (bilinear is separable).
#include <cmath>

#include "tensor.h"
#include "autograd.h"

namespace ember {

namespace {

constexpr const char* kOp = "interpolate";

// The linear modes' taps along one dim: out[j] = in[i0[j]] * w0[j] + in[i1[j]] * w1[j].
struct Taps {
  std::vector<int64_t> i0, i1;
  std::vector<double> w0, w1;
};

// PyTorch's ratio of source to destination coordinates (area_pixel_compute_scale):
// with align_corners the corners map to corners; else 1 / scale_factor when one was
// given, in / out otherwise.
double source_ratio(int64_t in, int64_t out, double scale, bool align_corners) {
  if (align_corners) return out > 1 ? double(in - 1) / double(out - 1) : 0.0;
  return scale > 0 ? 1.0 / scale : double(in) / double(out);
}

// PyTorch's nearest rule (nearest_idx): floor(dst * ratio) in float, not numpy's
// rounding, clamped to in - 1; equal sizes copy and doubled sizes halve exactly.
std::vector<int64_t> nearest_ids(int64_t in, int64_t out, double scale) {
  const float ratio = scale > 0 ? float(1.0 / scale) : float(in) / float(out);
  std::vector<int64_t> ids(static_cast<size_t>(out));
  for (int64_t j = 0; j < out; ++j) {
    int64_t i = std::min(int64_t(std::floor(float(j) * ratio)), in - 1);
    if (out == in) i = j;
    if (out == 2 * in) i = j >> 1;
    ids[size_t(j)] = i;
  }
  return ids;
}

// PyTorch's linear source index (area_pixel_compute_source_index), negatives clamped to 0.
Taps linear_taps(int64_t in, int64_t out, double scale, bool align_corners) {
  const double ratio = source_ratio(in, out, scale, align_corners);
  Taps t;
  for (int64_t j = 0; j < out; ++j) {
    double src = align_corners ? ratio * double(j) : ratio * (double(j) + 0.5) - 0.5;
    src = std::max(src, 0.0);
    const int64_t i0 = std::min(int64_t(src), in - 1);
    const double w1 = std::min(src - double(i0), 1.0);
    t.i0.push_back(i0);
    t.i1.push_back(i0 < in - 1 ? i0 + 1 : i0);
    t.w0.push_back(1.0 - w1);
    t.w1.push_back(w1);
  }
  return t;
}

Tensor ids_tensor(const std::vector<int64_t>& ids, const DevicePtr& device) {
  return from_host(ids.data(), {int64_t(ids.size())}, DType::I64, device);
}

// Weights along `dim` of a t.ndim()-dim tensor, shaped to broadcast, in t's dtype.
Tensor weights(const std::vector<double>& w, const Tensor& t, int64_t dim) {
  Shape shape(size_t(t.ndim()), 1);
  shape[size_t(dim)] = int64_t(w.size());
  if (t.dtype() == DType::F64) return from_host(w.data(), shape, DType::F64, t.device());
  std::vector<float> f(w.begin(), w.end());
  return to_dtype(from_host(f.data(), shape, DType::F32, t.device()), t.dtype());
}

Tensor resample_dim(const Tensor& t, int64_t dim, int64_t out, double scale, bool linear,
                    bool align_corners) {
  const int64_t in = t.shape()[size_t(dim)];
  if (!linear) return index_select(t, dim, ids_tensor(nearest_ids(in, out, scale), t.device()));
  const Taps taps = linear_taps(in, out, scale, align_corners);
  Tensor a = index_select(t, dim, ids_tensor(taps.i0, t.device()));
  Tensor b = index_select(t, dim, ids_tensor(taps.i1, t.device()));
  return binary(BinaryOp::Add, binary(BinaryOp::Mul, a, weights(taps.w0, t, dim)),
                binary(BinaryOp::Mul, b, weights(taps.w1, t, dim)));
}

// The mode as (linear?), checked against the input's rank and align_corners.
bool linear_mode(const std::string& mode, int64_t ndim, std::optional<bool> align_corners) {
  if (mode == "nearest") {
    if (align_corners)
      throw_invalid(kOp,
                    "align_corners can only be set with mode='linear' or 'bilinear', not "
                    "'nearest'; leave it None");
    return false;
  }
  const char* want = ndim == 3 ? "linear" : "bilinear";
  if (mode != "linear" && mode != "bilinear")
    throw_invalid(kOp,
                  "mode must be 'nearest', 'linear' (3-D) or 'bilinear' (4-D), got '" + mode + "'");
  if (mode != want)
    throw_invalid(kOp, "mode='" + mode + "' needs a " + (mode == "linear" ? "3" : "4") +
                           "-D input, got " + std::to_string(ndim) + "-D; use mode='" + want + "'");
  return true;
}

// The output's spatial sizes: `size`, or floor(in * scale) per dim.
Shape out_sizes(const Tensor& t, const Shape& size, const std::vector<double>& scales) {
  const size_t spatial = size_t(t.ndim() - 2);
  if (size.empty() == scales.empty())
    throw_invalid(kOp, size.empty() ? "needs size= or scale_factor="
                                    : "takes size= or scale_factor=, not both");
  const size_t given = size.empty() ? scales.size() : size.size();
  if (given != spatial)
    throw_invalid(kOp, std::string(size.empty() ? "scale_factor" : "size") + " has " +
                           std::to_string(given) + " entries but the input has " +
                           std::to_string(spatial) + " spatial dims (after N and C)");
  Shape out(spatial);
  for (size_t i = 0; i < spatial; ++i) {
    const double in = double(t.shape()[i + 2]);
    if (!size.empty()) {
      out[i] = size[i];
    } else {
      if (!(scales[i] > 0) || !std::isfinite(scales[i]))
        throw_invalid(kOp,
                      "scale_factor must be positive and finite, got " + std::to_string(scales[i]));
      const double n = std::floor(in * scales[i]);
      if (n >= 9.2e18) throw_invalid(kOp, "scale_factor gives more than 2**63 elements");
      out[i] = int64_t(n);
    }
    if (out[i] <= 0)
      throw_invalid(kOp, "the output size " + std::to_string(out[i]) + " of spatial dim " +
                             std::to_string(i) + " must be positive");
  }
  return out;
}

}  // namespace

Tensor interpolate(const Tensor& t, const Shape& size, const std::vector<double>& scales,
                   const std::string& mode, std::optional<bool> align_corners) {
  if (t.ndim() != 3 && t.ndim() != 4)
    throw_invalid(kOp, "expects a 3-D (N, C, W) or 4-D (N, C, H, W) input, got " +
                           std::to_string(t.ndim()) + "-D of shape " + shape_str(t.shape()));
  const bool linear = linear_mode(mode, t.ndim(), align_corners);
  const Shape out = out_sizes(t, size, scales);
  for (int64_t i = 2; i < t.ndim(); ++i)
    if (t.shape()[size_t(i)] == 0)
      throw_invalid(kOp,
                    "the input's spatial dims must be nonzero, got shape " + shape_str(t.shape()));
  if (linear && !dtype_is_float(t.dtype()))
    throw_unsupported_dtype(kOp, t.dtype(), t.device(),
                            "mode='" + mode + "' needs a float input, e.g. t.to(ember.float32)");
  // The result's size first: one too large fails here, before any index table is built
  // on the host (a table per output position) or any pass is made.
  Shape final_shape = t.shape();
  for (size_t i = 0; i < out.size(); ++i) final_shape[i + 2] = out[i];
  check_shape(kOp, final_shape);
  empty(final_shape, t.dtype(), t.device(), kOp);
  Tensor r = t;
  for (size_t i = 0; i < out.size(); ++i)
    r = resample_dim(r, int64_t(i) + 2, out[i], scales.empty() ? 0.0 : scales[i], linear,
                     align_corners.value_or(false));
  return r;
}

}  // namespace ember
