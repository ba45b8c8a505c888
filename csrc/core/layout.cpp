#include "layout.h"

#include <algorithm>

namespace ember {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return s;
}

int64_t wrap_dim(const std::string& op, int64_t dim, int64_t ndim) {
  if (dim < -ndim || dim >= ndim) throw_dim_out_of_range(op, dim, ndim);
  return dim < 0 ? dim + ndim : dim;
}

Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw_shape_mismatch(op, a, b,
                           "dim " + std::to_string(i) + " of the broadcast shape is " +
                               std::to_string(da) + " on the left and " + std::to_string(db) +
                               " on the right; sizes must match or one must be 1");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Layout::Layout(Shape shape, int64_t offset)
    : shape_(std::move(shape)), strides_(contiguous_strides(shape_)), offset_(offset) {}

Layout::Layout(Shape shape, Strides strides, int64_t offset)
    : shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset) {}

bool Layout::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (shape_[i] == 0) return true;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

std::pair<int64_t, int64_t> Layout::extent() const {
  int64_t lo = offset_, hi = offset_;
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (shape_[i] == 0) return {offset_, offset_};
    int64_t span = (shape_[i] - 1) * strides_[i];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi + 1};
}

bool Layout::has_internal_overlap() const {
  if (numel() == 0) return false;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, size) of the dims that count
  for (size_t i = 0; i < shape_.size(); ++i)
    if (shape_[i] > 1) dims.emplace_back(strides_[i] < 0 ? -strides_[i] : strides_[i], shape_[i]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;  // the furthest element the inner dims reach from their first one
  for (auto [stride, size] : dims) {
    if (stride <= span) return true;
    span += stride * (size - 1);
  }
  return false;
}

Layout Layout::broadcast_to(const std::string& op, const Shape& target) const {
  if (target.size() < shape_.size())
    throw_shape_mismatch(op, shape_, target, "cannot broadcast to fewer dims");
  size_t lead = target.size() - shape_.size();
  Strides s(target.size(), 0);
  for (size_t i = 0; i < shape_.size(); ++i) {
    int64_t have = shape_[i], want = target[lead + i];
    if (have == want) {
      s[lead + i] = strides_[i];
    } else if (have != 1) {
      throw_shape_mismatch(op, shape_, target,
                           "dim " + std::to_string(i) + " has size " + std::to_string(have) +
                               ", which cannot broadcast to " + std::to_string(want));
    }
  }
  return Layout(target, std::move(s), offset_);
}

Layout Layout::transpose(int64_t d0, int64_t d1) const {
  Layout l = *this;
  std::swap(l.shape_[size_t(d0)], l.shape_[size_t(d1)]);
  std::swap(l.strides_[size_t(d0)], l.strides_[size_t(d1)]);
  return l;
}

Layout Layout::permute(const std::vector<int64_t>& order) const {
  Layout l;
  l.offset_ = offset_;
  for (int64_t d : order) {
    l.shape_.push_back(shape_[size_t(d)]);
    l.strides_.push_back(strides_[size_t(d)]);
  }
  return l;
}

Layout Layout::narrow(int64_t dim, int64_t start, int64_t len) const {
  return slice(dim, start, len, 1);
}

Layout Layout::slice(int64_t dim, int64_t start, int64_t len, int64_t step) const {
  Layout l = *this;
  if (len > 0) l.offset_ += start * strides_[size_t(dim)];
  l.shape_[size_t(dim)] = len;
  if (len > 1) l.strides_[size_t(dim)] *= step;  // a size-1 dim's stride is never used
  return l;
}

Layout Layout::select(int64_t dim, int64_t index) const {
  Layout l = *this;
  l.offset_ += index * strides_[size_t(dim)];
  l.shape_.erase(l.shape_.begin() + dim);
  l.strides_.erase(l.strides_.begin() + dim);
  return l;
}

Layout Layout::unsqueeze(int64_t dim) const {
  Layout l = *this;
  int64_t stride = dim < ndim() ? strides_[size_t(dim)] * shape_[size_t(dim)] : 1;
  l.shape_.insert(l.shape_.begin() + dim, 1);
  l.strides_.insert(l.strides_.begin() + dim, stride);
  return l;
}

Layout Layout::squeeze(int64_t dim) const {
  Layout l = *this;
  l.shape_.erase(l.shape_.begin() + dim);
  l.strides_.erase(l.strides_.begin() + dim);
  return l;
}

bool Layout::try_reshape(const Shape& shape, Layout* out) const {
  if (is_contiguous()) {
    *out = Layout(shape, offset_);
    return true;
  }
  // Group old dims into runs that are contiguous with each other, then map new dims
  // onto those runs (the rule numpy and PyTorch use for views).
  Strides new_strides(shape.size());
  size_t oi = 0, ni = 0;
  const size_t on = shape_.size(), nn = shape.size();
  while (oi < on || ni < nn) {
    // skip size-1 dims on both sides
    if (ni < nn && shape[ni] == 1) {
      new_strides[ni] = 1;
      ++ni;
      continue;
    }
    if (oi < on && shape_[oi] == 1) {
      ++oi;
      continue;
    }
    if (oi >= on || ni >= nn) return false;
    // take a run of old dims that is contiguous
    size_t run_end = oi;
    int64_t run_size = shape_[oi];
    int64_t want = 1;
    size_t nstart = ni;
    want = shape[ni];
    ++ni;
    while (want != run_size) {
      if (want < run_size) {
        if (ni >= nn) return false;
        want *= shape[ni++];
      } else {
        size_t next = run_end + 1;
        while (next < on && shape_[next] == 1) ++next;
        if (next >= on) return false;
        if (strides_[run_end] != strides_[next] * shape_[next]) return false;
        run_end = next;
        run_size *= shape_[next];
      }
    }
    // new dims [nstart, ni) cover old run [oi, run_end]; innermost stride is old's last
    int64_t stride = strides_[run_end];
    for (size_t k = ni; k-- > nstart;) {
      new_strides[k] = stride;
      stride *= shape[k];
    }
    oi = run_end + 1;
  }
  *out = Layout(shape, std::move(new_strides), offset_);
  return true;
}

}  // namespace ember
