#include <cmath>
#include <limits>

#include "host_cast.h"
#include "layout_plan.h"
#include "random.h"
#include "tensor.h"

namespace ember {

namespace {
// Past this many bytes an allocation is certainly a mistake (and numel*size may overflow).
constexpr int64_t kMaxBytes = int64_t(1) << 48;

void check_device_dtype(const char* op, DType dtype, const DevicePtr& device) {
  if (!device->supports_dtype(dtype))
    throw_unsupported_dtype(op, dtype, device, "this backend has no kernels for it");
}
// A request beyond any machine's memory fails here, before size arithmetic can overflow.
void check_bytes(int64_t numel, DType dtype, const DevicePtr& device) {
  int64_t size = int64_t(dtype_size(dtype));
  if (numel > kMaxBytes / size) throw_out_of_memory(device, numel * size);
}
}  // namespace

void check_shape(const char* op, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw_invalid(op,
                    "negative dimension " + std::to_string(d) + " in shape " + shape_str(shape));
    if (d != 0 && n > kMaxBytes / d)
      throw_invalid(op, "shape " + shape_str(shape) + " has too many elements");
    n *= d;
  }
}

Tensor empty(const Shape& shape, DType dtype, const DevicePtr& device, const char* op) {
  check_shape(op, shape);
  check_device_dtype(op, dtype, device);
  int64_t n = shape_numel(shape);
  check_bytes(n, dtype, device);
  return Tensor(std::make_shared<Storage>(device->alloc_uninit(n, dtype)), Layout(shape));
}

Tensor empty_for(const Shape& shape, DType dtype, const DevicePtr& device, const char* op,
                 const std::vector<const Layout*>& inputs) {
  Tensor t = empty(shape, dtype, device, op);
  bool contiguous = true;
  for (const Layout* l : inputs) contiguous = contiguous && l->is_contiguous();
  if (contiguous) return t;
  return t.view_as(Layout(shape, result_strides(shape, inputs), 0));
}

Tensor full(const Shape& shape, double value, DType dtype, const DevicePtr& device) {
  Tensor t = empty(shape, dtype, device, "full");
  if (dtype == DType::Bool) value = value != 0 ? 1.0 : 0.0;  // NaN is true, as bool(nan)
  t.storage()->impl().fill(t.layout(), value);
  return t;
}

void check_fill_value(const char* op, double value, DType dtype) {
  if (!double_fits(value, dtype))
    throw_invalid(op, "the fill value " + std::to_string(value) + " cannot be converted to " +
                          dtype_name(dtype) + " without overflow");
}

Tensor full_int(const Shape& shape, int64_t value, DType dtype, const DevicePtr& device) {
  // A wrapped value (300 -> 44 in uint8) is never what was meant.
  if (!int_fits(value, dtype))
    throw_invalid("full", "the fill value " + std::to_string(value) +
                              " is out of range for dtype " + dtype_name(dtype));
  Tensor t = empty(shape, dtype, device, "full");
  copy_into(from_host(&value, {}, DType::I64, device), t, "full");  // a broadcast cast
  return t;
}

Tensor zeros(const Shape& shape, DType dtype, const DevicePtr& device) {
  check_shape("zeros", shape);
  check_device_dtype("zeros", dtype, device);
  int64_t n = shape_numel(shape);
  check_bytes(n, dtype, device);
  return Tensor(std::make_shared<Storage>(device->zeros(n, dtype)), Layout(shape));
}

Tensor ones(const Shape& shape, DType dtype, const DevicePtr& device) {
  return full(shape, 1.0, dtype, device);
}

Tensor from_host(const void* data, const Shape& shape, DType dtype, const DevicePtr& device) {
  check_shape("tensor", shape);
  check_device_dtype("tensor", dtype, device);
  return Tensor(std::make_shared<Storage>(device->from_host(data, shape_numel(shape), dtype)),
                Layout(shape));
}

Tensor wrap_host(const char* op, void* data, int64_t numel, const Layout& layout, DType dtype,
                 std::shared_ptr<void> owner, const DevicePtr& device) {
  check_device_dtype(op, dtype, device);
  auto impl = device->wrap_host(data, numel, dtype, std::move(owner));
  if (!impl) throw_invalid(op, device->describe() + " cannot use host memory another library owns");
  return Tensor(std::make_shared<Storage>(std::move(impl)), layout);
}

Tensor wrap_device(const char* op, void* data, int64_t numel, const Layout& layout, DType dtype,
                   std::shared_ptr<void> owner, const DevicePtr& device) {
  check_device_dtype(op, dtype, device);
  auto impl = device->wrap_device(data, numel, dtype, std::move(owner));
  if (!impl)
    throw_invalid(op, device->describe() + " cannot use device memory another library owns");
  return Tensor(std::make_shared<Storage>(std::move(impl)), layout);
}

namespace {
Tensor from_doubles(const char* op, const std::vector<double>& values, const Shape& shape,
                    DType dtype, const DevicePtr& device) {
  check_device_dtype(op, dtype, device);
  std::vector<unsigned char> host(values.size() * dtype_size(dtype));
  cast_doubles(values.data(), int64_t(values.size()), dtype, host.data());
  return from_host(host.data(), shape, dtype, device);
}
}  // namespace

Tensor arange(double start, double stop, double step, DType dtype, const DevicePtr& device) {
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(stop))
    throw_invalid("arange", "start, stop and step must be finite and step non-zero");
  double count = std::ceil((stop - start) / step);
  if (count > double(kMaxBytes)) throw_invalid("arange", "too many elements");
  int64_t n = count > 0 ? int64_t(count) : 0;
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = start + double(i) * step;
  return from_doubles("arange", values, {n}, dtype, device);
}

// PyTorch's formula: from both ends towards the middle, so that the last value is `end`.
Tensor linspace(double start, double end, int64_t steps, DType dtype, const DevicePtr& device) {
  if (steps < 0) throw_invalid("linspace", "steps must be >= 0, got " + std::to_string(steps));
  check_shape("linspace", {steps});
  std::vector<double> values(static_cast<size_t>(steps));
  const double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  for (int64_t i = 0; i < steps; ++i)
    values[size_t(i)] =
        i < steps / 2 ? start + step * double(i) : end - step * double(steps - 1 - i);
  if (steps == 1) values[0] = start;
  return from_doubles("linspace", values, {steps}, dtype, device);
}

Tensor eye(int64_t n, int64_t m, DType dtype, const DevicePtr& device) {
  Shape shape{n, m};
  check_shape("eye", shape);
  std::vector<double> values(size_t(n * m), 0.0);
  for (int64_t i = 0; i < std::min(n, m); ++i) values[size_t(i * m + i)] = 1.0;
  return from_doubles("eye", values, shape, dtype, device);
}

namespace {
Tensor random(const char* op, RandomDist dist, const Shape& shape, double a, double b, DType dtype,
              const DevicePtr& device) {
  if (!dtype_is_float(dtype))
    throw_unsupported_dtype(op, dtype, device, "random values need a float dtype");
  Tensor t = empty(shape, dtype, device, op);
  auto [seed, counter] = device->take_random(uint64_t(t.numel()));
  device->fill_random(t.storage()->impl(), dist, seed, counter, a, b);
  return t;
}
}  // namespace

Tensor rand(const Shape& shape, double lo, double hi, DType dtype, const DevicePtr& device) {
  return random("rand", RandomDist::Uniform, shape, lo, hi, dtype, device);
}

Tensor randn(const Shape& shape, double mean, double std, DType dtype, const DevicePtr& device) {
  return random("randn", RandomDist::Normal, shape, mean, std, dtype, device);
}

namespace {
// PyTorch's bounds: low and high - 1 in dtype (bool: 0 and 1); a float dtype takes the
// integers its significand holds exactly, [-2^digits, 2^digits].
void check_randint_range(int64_t low, int64_t high, DType dtype) {
  const std::string got = "low=" + std::to_string(low) + ", high=" + std::to_string(high);
  if (low >= high) throw_invalid("randint", "expects low < high, got " + got);
  bool fits = int_fits(low, dtype) && int_fits(high - 1, dtype);
  if (dtype == DType::Bool) fits = low >= 0 && high <= 2;
  if (dtype_is_float(dtype)) {
    const int64_t limit = int64_t(1) << uniform_bits(dtype);
    fits = low >= -limit && high <= limit + 1;
  }
  if (!fits)
    throw_invalid("randint", "the range [" + std::to_string(low) + ", " + std::to_string(high) +
                                 ") does not fit dtype " + dtype_name(dtype) +
                                 "; pass a wider dtype= or a smaller range");
}
}  // namespace

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype,
               const DevicePtr& device) {
  check_shape("randint", shape);
  check_randint_range(low, high, dtype);
  check_device_dtype("randint", dtype, device);
  Tensor t = empty(shape, DType::I64, device, "randint");
  auto [seed, counter] = device->take_random(uint64_t(t.numel()));
  // The unsigned difference is exact for every int64 pair with low < high.
  if (t.numel() > 0)
    device->fill_randint(t.storage()->impl(), seed, counter, low, uint64_t(high) - uint64_t(low));
  return dtype == DType::I64 ? t : to_dtype(t, dtype);
}

}  // namespace ember
