// flip, roll, repeat, tile, chunk, split, pad and repeat_interleave, composed from views and
// strided copies.
#include <algorithm>

#include "tensor.h"
#include "autograd.h"
#include "derivatives.h"

namespace ember {

namespace {

// Wraps each dim of `dims` for t; a dim given twice raises InvalidArgument naming `op`.
Dims unique_dims(const char* op, const Tensor& t, const Dims& dims) {
  Dims out;
  std::vector<bool> seen(size_t(t.ndim()), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(op, d, t.ndim());
    if (seen[size_t(w)]) throw_invalid(op, "dim " + std::to_string(d) + " appears twice");
    seen[size_t(w)] = true;
    out.push_back(w);
  }
  return out;
}

// `t` with dim d reversed: a view with a negative stride.
Tensor reversed(const Tensor& t, int64_t d) {
  int64_t n = t.shape()[size_t(d)];
  return t.view_as(t.layout().slice(d, n - 1, n, -1));
}

// Elements [start, start + len) of dim d in reverse order (a view; through slice, so
// that it is in the graph when t is).
Tensor reversed_range(const Tensor& t, int64_t d, int64_t start, int64_t len) {
  return slice(t, d, start + len - 1, start - 1, -1);
}

}  // namespace

Tensor flip(const Tensor& t, const Dims& dims) {
  if (autograd::wants_grad({&t})) return autograd::d::flip(t, dims);
  Tensor v = t;
  for (int64_t d : unique_dims("flip", t, dims)) v = reversed(v, d);
  return clone(v);  // PyTorch's flip copies
}

Tensor roll(const Tensor& t, const Dims& shifts, const Dims& dims) {
  if (dims.empty()) {
    if (shifts.size() != 1)
      throw_invalid("roll", "without dims, shifts must be one int (got " +
                                std::to_string(shifts.size()) + "); the tensor is rolled flat");
    return reshape(roll(reshape(t, {t.numel()}), shifts, {0}), t.shape());
  }
  if (shifts.size() != dims.size())
    throw_invalid("roll", "shifts and dims must have the same length (got " +
                              std::to_string(shifts.size()) + " and " +
                              std::to_string(dims.size()) + ")");
  Tensor out = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim("roll", dims[i], t.ndim());
    int64_t n = t.shape()[size_t(d)];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;  // Python's modulo: a negative shift rolls left
    if (s == 0) continue;
    out = cat({narrow(out, d, n - s, s), narrow(out, d, 0, n - s)}, d);
  }
  return out.storage() == t.storage() ? clone(out) : out;  // always a new tensor
}

Tensor repeat(const Tensor& t, const Shape& sizes) {
  if (int64_t(sizes.size()) < t.ndim())
    throw_invalid("repeat", "got " + std::to_string(sizes.size()) + " repeat counts for a " +
                                std::to_string(t.ndim()) +
                                "-dim tensor; give at least one count per dim");
  for (int64_t r : sizes)
    if (r < 0) throw_invalid("repeat", "repeat counts must be >= 0, got " + shape_str(sizes));
  // Leading dims of size 1, then a broadcast dim of each count before each dim.
  Tensor v = t;
  while (v.ndim() < int64_t(sizes.size())) v = unsqueeze(v, 0);
  Shape wide, result;
  for (size_t i = 0; i < sizes.size(); ++i) {
    v = unsqueeze(v, int64_t(2 * i));
    wide.push_back(sizes[i]);
    wide.push_back(v.shape()[2 * i + 1]);
    result.push_back(sizes[i] * v.shape()[2 * i + 1]);
  }
  check_shape("repeat", result);
  return reshape(contiguous(broadcast_to(v, wide)), result);
}

Tensor tile(const Tensor& t, const Shape& reps) {
  Shape sizes = reps;  // fewer counts than dims: the leading dims are repeated once
  if (int64_t(sizes.size()) < t.ndim())
    sizes.insert(sizes.begin(), size_t(t.ndim()) - reps.size(), 1);
  for (int64_t r : sizes)
    if (r < 0) throw_invalid("tile", "repeat counts must be >= 0, got " + shape_str(reps));
  return repeat(t, sizes);
}

std::vector<Tensor> split_sizes(const Tensor& t, const Shape& sizes, int64_t dim) {
  if (t.ndim() == 0) throw_invalid("split", "expects a tensor of at least 1 dim");
  int64_t d = wrap_dim("split", dim, t.ndim());
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw_invalid("split", "section sizes must be >= 0, got " + shape_str(sizes));
    total += s;
  }
  if (total != t.shape()[size_t(d)])
    throw_invalid("split", "section sizes " + shape_str(sizes) + " sum to " +
                               std::to_string(total) + ", not to the size " +
                               std::to_string(t.shape()[size_t(d)]) + " of dim " +
                               std::to_string(dim));
  std::vector<Tensor> parts;
  int64_t at = 0;
  for (int64_t s : sizes) {
    parts.push_back(narrow(t, d, at, s));
    at += s;
  }
  return parts;
}

std::vector<Tensor> split(const Tensor& t, int64_t size, int64_t dim) {
  if (t.ndim() == 0) throw_invalid("split", "expects a tensor of at least 1 dim");
  int64_t n = t.shape()[size_t(wrap_dim("split", dim, t.ndim()))];
  if (size < 0 || (size == 0 && n > 0))
    throw_invalid("split", "split_size must be positive (0 only for a dim of size 0), got " +
                               std::to_string(size));
  // PyTorch's rule: parts of `size`, the last one shorter; always at least one part.
  int64_t count = size == 0 ? 1 : std::max<int64_t>((n + size - 1) / size, 1);
  Shape sizes(size_t(count), size);
  sizes.back() = n - size * (count - 1);
  return split_sizes(t, sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  if (t.ndim() == 0) throw_invalid("chunk", "expects a tensor of at least 1 dim");
  if (chunks <= 0) throw_invalid("chunk", "chunks must be > 0, got " + std::to_string(chunks));
  int64_t n = t.shape()[size_t(wrap_dim("chunk", dim, t.ndim()))];
  if (n == 0) return split_sizes(t, Shape(size_t(chunks), 0), dim);  // `chunks` empty parts
  return split(t, (n + chunks - 1) / chunks, dim);
}

namespace {

// Pads dim d by (lo, hi) >= 0 with copies of the edge (replicate), its mirror image
// without the edge (reflect) or the other end (circular).
Tensor pad_dim(const Tensor& t, int64_t d, int64_t lo, int64_t hi, PadMode mode) {
  if (lo == 0 && hi == 0) return t;
  int64_t n = t.shape()[size_t(d)];
  std::vector<Tensor> parts;
  if (mode == PadMode::Reflect) {
    if (lo >= n || hi >= n)
      throw_invalid("pad", "reflect padding (" + std::to_string(lo) + ", " + std::to_string(hi) +
                               ") must be less than the size " + std::to_string(n) + " of dim " +
                               std::to_string(d));
    parts = {reversed_range(t, d, 1, lo), t, reversed_range(t, d, n - 1 - hi, hi)};
  } else if (mode == PadMode::Circular) {
    if (lo > n || hi > n)
      throw_invalid("pad", "circular padding (" + std::to_string(lo) + ", " + std::to_string(hi) +
                               ") must be at most the size " + std::to_string(n) + " of dim " +
                               std::to_string(d));
    parts = {narrow(t, d, n - lo, lo), t, narrow(t, d, 0, hi)};
  } else {
    if (n == 0)
      throw_invalid("pad", "replicate padding of dim " + std::to_string(d) +
                               " needs at least one element there");
    Shape lo_shape = t.shape(), hi_shape = t.shape();
    lo_shape[size_t(d)] = lo, hi_shape[size_t(d)] = hi;
    parts = {broadcast_to(narrow(t, d, 0, 1), lo_shape), t,
             broadcast_to(narrow(t, d, n - 1, 1), hi_shape)};
  }
  std::vector<Tensor> nonempty;  // a zero-length side adds nothing
  for (Tensor& p : parts)
    if (p.numel() > 0 || p.storage() == t.storage()) nonempty.push_back(p);
  return cat(nonempty, d);
}

// The constant mode: a filled tensor with the (cropped) input copied into its middle.
Tensor pad_constant(const Tensor& t, const Shape& pads, double value) {
  Shape shape = t.shape();
  Tensor src = t;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    int64_t d = t.ndim() - 1 - int64_t(i), lo = pads[2 * i], hi = pads[2 * i + 1];
    int64_t n = shape[size_t(d)];
    if (n + lo + hi < 0)
      throw_invalid("pad", "padding (" + std::to_string(lo) + ", " + std::to_string(hi) +
                               ") leaves dim " + std::to_string(d) + " of size " +
                               std::to_string(n) + " with a negative size");
    // Negative padding crops: keep [max(-lo, 0), n - max(-hi, 0)) of the input.
    int64_t start = std::min(std::max(-lo, int64_t(0)), n);
    int64_t len = std::max(n - start - std::max(-hi, int64_t(0)), int64_t(0));
    src = narrow(src, d, start, len);
    shape[size_t(d)] = n + lo + hi;
  }
  check_fill_value("pad", value, t.dtype());
  Tensor out = full(shape, value, t.dtype(), t.device());
  Tensor middle = out;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    int64_t d = t.ndim() - 1 - int64_t(i);
    middle = narrow(middle, d, std::max(pads[2 * i], int64_t(0)), src.shape()[size_t(d)]);
  }
  copy_into(src, middle, "pad");
  return out;
}

}  // namespace

Tensor pad(const Tensor& t, const Shape& pads, PadMode mode, double value) {
  if (pads.size() % 2 != 0)
    throw_invalid("pad", "the pad tuple needs an even length (pairs from the last dim), got " +
                             std::to_string(pads.size()));
  if (int64_t(pads.size()) > 2 * t.ndim())
    throw_invalid("pad", "the pad tuple has " + std::to_string(pads.size()) +
                             " values, more than two per dim of a " + std::to_string(t.ndim()) +
                             "-dim tensor");
  if (mode == PadMode::Constant)
    return autograd::wants_grad({&t}) ? autograd::d::pad_constant(t, pads, value)
                                      : pad_constant(t, pads, value);
  const char* name = mode == PadMode::Reflect    ? "reflect"
                     : mode == PadMode::Circular ? "circular"
                                                 : "replicate";
  if (value != 0) throw_invalid("pad", std::string("mode '") + name + "' takes no value");
  Tensor out = t;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0)
      throw_invalid("pad", std::string("mode '") + name +
                               "' takes no negative padding; crop with narrow() or slicing");
    out = pad_dim(out, t.ndim() - 1 - int64_t(i), pads[2 * i], pads[2 * i + 1], mode);
  }
  return out.storage() == t.storage() ? clone(out) : out;
}

Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim) {
  if (repeats < 0)
    throw_invalid("repeat_interleave", "repeats must be >= 0, got " + std::to_string(repeats));
  Tensor src = dim ? t : reshape(t, {t.numel()});  // PyTorch flattens without a dim
  const int64_t d = dim ? wrap_dim("repeat_interleave", *dim, std::max<int64_t>(t.ndim(), 1)) : 0;
  if (src.ndim() == 0) src = reshape(src, {1});  // a 0-d input acts as one element
  const int64_t n = src.shape()[size_t(d)];
  int64_t total = 0;
  if (__builtin_mul_overflow(n, repeats, &total))
    throw_invalid("repeat_interleave", "the result would have more than 2**63 elements");
  // Each element repeated in place: a new dim of `repeats` after d, broadcast, then merged
  // into d by one copy on the device (no ids built on the host). Its size is checked by
  // broadcast_to and the allocation before anything is read.
  Shape expanded = src.shape();
  expanded.insert(expanded.begin() + d + 1, repeats);
  Shape out = src.shape();
  out[size_t(d)] = total;
  return reshape(broadcast_to(unsqueeze(src, d + 1), expanded), out);
}

}  // namespace ember
