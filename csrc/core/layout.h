// Shape, strides (in elements) and offset: how a tensor views its storage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "error.h"

namespace ember {

using Strides = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
Strides contiguous_strides(const Shape& shape);
// Wraps a possibly negative dim into [0, ndim); raises IndexOutOfRange naming `op`.
int64_t wrap_dim(const std::string& op, int64_t dim, int64_t ndim);
// numpy broadcasting of two shapes; raises ShapeMismatch naming `op`.
Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b);

class Layout {
 public:
  Layout() = default;
  explicit Layout(Shape shape, int64_t offset = 0);
  Layout(Shape shape, Strides strides, int64_t offset);

  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t ndim() const { return int64_t(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[size_t(i)]; }
  int64_t numel() const { return shape_numel(shape_); }
  bool is_contiguous() const;  // row-major dense, any offset
  // Smallest and one-past-largest element index the view touches (empty -> [offset, offset)).
  std::pair<int64_t, int64_t> extent() const;
  // True when two elements share one memory location (a broadcast dim, or strides that
  // interleave): such a view can be read but not written.
  bool has_internal_overlap() const;

  // Views: these never copy, they only re-describe the same elements.
  Layout broadcast_to(const std::string& op, const Shape& target) const;
  Layout transpose(int64_t d0, int64_t d1) const;  // dims already wrapped
  Layout permute(const std::vector<int64_t>& order) const;
  Layout narrow(int64_t dim, int64_t start, int64_t len) const;
  Layout slice(int64_t dim, int64_t start, int64_t len, int64_t step) const;
  Layout select(int64_t dim, int64_t index) const;  // removes `dim`
  Layout unsqueeze(int64_t dim) const;
  Layout squeeze(int64_t dim) const;
  // A reshape that needs no copy, or false when the strides do not allow one.
  bool try_reshape(const Shape& shape, Layout* out) const;

 private:
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
};

}  // namespace ember
