#include "layout_plan.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace ember {

DimPlan plan_dims(const Shape& shape, const std::vector<const Layout*>& views, WalkOrder order) {
  const size_t k = views.size();
  DimPlan p;
  p.strides.resize(k);
  p.offsets.resize(k);
  for (size_t j = 0; j < k; ++j) p.offsets[j] = views[j]->offset();

  // The dims in walk order: as they are, or outermost-first by the written view's strides
  // (stable, so ties keep the logical order).
  std::vector<size_t> dims;
  dims.reserve(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) dims.push_back(d);
  if (order == WalkOrder::Memory && k > 0 && dims.size() > 1) {
    const Strides& lead = views.back()->strides();
    std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
      return std::abs(lead[a]) > std::abs(lead[b]);
    });
  }
  for (size_t d : dims) {
    bool merge = !p.shape.empty();
    for (size_t j = 0; j < k && merge; ++j)
      merge = p.strides[j].back() == views[j]->strides()[d] * shape[d];
    if (merge) {
      p.shape.back() *= shape[d];
      for (size_t j = 0; j < k; ++j) p.strides[j].back() = views[j]->strides()[d];
    } else {
      p.shape.push_back(shape[d]);
      for (size_t j = 0; j < k; ++j) p.strides[j].push_back(views[j]->strides()[d]);
    }
  }
  if (p.shape.empty()) {  // a single element (or none: a 0 dim merges into nothing else)
    p.shape.push_back(shape_numel(shape));
    for (size_t j = 0; j < k; ++j) p.strides[j].push_back(1);
  }

  return p;
}

Strides result_strides(const Shape& shape, const std::vector<const Layout*>& inputs) {
  const size_t nd = shape.size();
  bool contiguous = true;
  for (const Layout* l : inputs) contiguous = contiguous && l->is_contiguous();
  if (contiguous || nd < 2) return contiguous_strides(shape);

  // PyTorch's order (TensorIterator's reorder_dimensions): perm lists the dims innermost
  // first; an insertion sort asks the inputs in turn, and the first with both dims
  // unbroadcast and unequal strides decides (equal strides: the larger dim goes out).
  // Ambiguous pairs keep the logical order.
  auto should_swap = [&](size_t d0, size_t d1) {
    for (const Layout* l : inputs) {
      const int64_t s0 = shape[d0] == 1 ? 0 : l->strides()[d0];
      const int64_t s1 = shape[d1] == 1 ? 0 : l->strides()[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (std::abs(s0) < std::abs(s1)) return -1;
      if (std::abs(s0) > std::abs(s1)) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  std::vector<size_t> perm(nd);
  std::iota(perm.rbegin(), perm.rend(), size_t(0));  // nd-1, ..., 0: innermost first
  for (size_t i = 1; i < nd; ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Strides s(nd);
  int64_t acc = 1;
  for (size_t d : perm) {
    s[d] = acc;
    acc *= std::max<int64_t>(shape[d], 1);
  }
  return s;
}

ReducePlan plan_reduce(const Layout& src, int64_t reduced_dims) {
  const size_t nk = size_t(src.ndim() - reduced_dims);
  ReducePlan p;
  p.offset = src.offset();
  const Shape ks(src.shape().begin(), src.shape().begin() + nk);
  const Shape rs(src.shape().begin() + nk, src.shape().end());
  const Layout kept(ks, Strides(src.strides().begin(), src.strides().begin() + nk), 0);
  const Layout red(rs, Strides(src.strides().begin() + nk, src.strides().end()), 0);
  DimPlan k = plan_dims(ks, {&kept});
  DimPlan r = plan_dims(rs, {&red});
  p.red = r.shape;
  p.red_strides = r.strides[0];
  p.count = shape_numel(rs);
  const int64_t nout = shape_numel(ks);
  // columns: the kept dims end in a dense run and no reduced dim is that dense run
  bool columns = nk > 0 && nout > 1 && p.count > 1 && k.strides[0].back() == 1 && k.inner() > 1;
  for (int64_t s : p.red_strides) columns = columns && std::abs(s) > 1;
  p.columns = columns;
  if (columns) {
    p.inner = k.inner();
    p.outer.assign(k.shape.begin(), k.shape.end() - 1);
    p.outer_strides.assign(k.strides[0].begin(), k.strides[0].end() - 1);
  } else {
    p.outer = nout == 1 ? Shape{} : k.shape;
    p.outer_strides = nout == 1 ? Strides{} : k.strides[0];
  }
  return p;
}

}  // namespace ember
