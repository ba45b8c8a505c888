// t[key] and t[key] = value (indexing.h): the key's checks, the view it makes, numpy's
// placement of the arrays' dims, the gather of a read and the scatter of a write.
#include "indexing.h"

#include <algorithm>
#include <limits>

#include "index_checks.h"
#include "autograd.h"

namespace ember {

namespace {

using Kind = IndexItem::Kind;

// An index form ember does not support (it may be valid numpy).
[[noreturn]] void bad_index(const std::string& why) {
  throw_invalid("index", why);
}

// A key that is no index at all: IndexError-class, as in numpy and PyTorch.
[[noreturn]] void invalid_key(const std::string& why) {
  throw Error(ErrorKind::InvalidIndex, "index: " + why).with("op", std::string("index"));
}

[[noreturn]] void id_out_of_range(const std::string& id, int64_t size, int64_t source_dim,
                                  std::optional<int64_t> value) {
  Error e(ErrorKind::IndexOutOfRange, "index " + id + " is out of range for dim " +
                                          std::to_string(source_dim) +
                                          (size >= 0 ? " of size " + std::to_string(size) : ""));
  e.with("op", std::string("index")).with("dim", source_dim);
  if (value) e.with("index", *value);
  if (size >= 0) e.with("size", size);
  throw e;
}

// A key item after the 0-d masks are lifted and the masks in a tuple expanded.
struct Item {
  Kind kind;
  const IndexItem* src;       // Int, Slice
  std::optional<Tensor> ids;  // Array
  bool in_range = false;      // ids known to lie in [0, size): a mask's true positions
};

struct ParsedKey {
  std::vector<Item> items;
  int64_t consumed = 0;  // dims of the tensor that the key indexes explicitly
};

bool is_mask(const IndexItem& item) {
  return item.kind == Kind::Bool ||
         (item.kind == Kind::Array && item.array->dtype() == DType::Bool);
}

// An index array of t[key]: integers of any shape (a 0-d one acts as an int), on t's Device.
const Tensor& checked_ids(const Tensor& t, const Tensor& ids) {
  Storage::check_same_device("index", *t.storage(), *ids.storage());
  if (ids.dtype() == DType::U8)
    bad_index(
        "a uint8 tensor is not an index here: a mask must be bool (mask.to(ember.bool)); for "
        "uint8 indices use index_select");
  if (dtype_is_float(ids.dtype()))
    invalid_key(std::string("an index array must hold integers, not ") + dtype_name(ids.dtype()));
  return ids;
}

// Dims of t an item consumes (an ellipsis: none here, counted apart).
int64_t dims_consumed(const IndexItem& item) {
  if (item.kind == Kind::Int || item.kind == Kind::Slice) return 1;
  if (item.kind == Kind::Bool) return 0;
  if (item.kind != Kind::Array) return 0;
  return item.array->dtype() == DType::Bool ? item.array->ndim() : 1;
}

bool mask_value(const Tensor& t, const IndexItem& item) {
  if (item.kind == Kind::Bool) return item.value != 0;
  const Tensor& m = *item.array;
  Storage::check_same_device("index", *t.storage(), *m.storage());
  bool v = false;
  to_host(m, &v);
  return v;
}

// A 0-d mask in a tuple key is numpy's: an advanced index over a new dim of size 1, holding
// that one position (True) or none (False). The key is rewritten to index a view with that
// dim: the mask becomes an int64 array [0] or [].
std::pair<Tensor, IndexKey> lift_scalar_masks(const Tensor& t, const IndexKey& key) {
  IndexKey items = key;
  Tensor view = t;
  if (key.size() < 2) return {view, items};
  for (size_t i = 0; i < items.size(); ++i) {
    const bool scalar = items[i].kind == Kind::Bool ||
                        (items[i].kind == Kind::Array && items[i].array->ndim() == 0 &&
                         items[i].array->dtype() == DType::Bool);
    if (!scalar) continue;
    // its dim of the view: after the dims the items before it consume, or, past an
    // ellipsis, before the dims the items after it consume
    int64_t before = 0, after = 0;
    bool past_ellipsis = false;
    for (size_t j = 0; j < items.size(); ++j) {
      if (items[j].kind == Kind::Ellipsis) {
        past_ellipsis = past_ellipsis || j < i;
        continue;
      }
      if (j == i) continue;
      (j < i ? before : after) += dims_consumed(items[j]);
    }
    const int64_t at = past_ellipsis ? view.ndim() - after : before;
    if (at < 0 || at > view.ndim()) break;  // too many indices: parse says so
    const int64_t n = mask_value(t, items[i]) ? 1 : 0;
    const int64_t zero = 0;
    items[i].kind = Kind::Array;
    items[i].array = from_host(&zero, {n}, DType::I64, t.device());
    view = unsqueeze(view, at);
  }
  return {view, items};
}

// A bool mask inside a tuple key stands for the integer arrays of its true positions, one
// per dim it covers (numpy's rule); `first` is the first dim of t that it covers.
void expand_mask(const Tensor& t, const Tensor& mask, int64_t first, ParsedKey& k) {
  const Shape& ms = mask.shape();
  bool fits = first + mask.ndim() <= t.ndim();
  for (int64_t d = 0; fits && d < mask.ndim(); ++d)
    fits = ms[size_t(d)] == t.shape()[size_t(first + d)];
  if (!fits)
    invalid_key("the mask's shape " + shape_str(ms) + " must match the dims " +
                std::to_string(first) + ".. of the tensor's shape " + shape_str(t.shape()));
  for (Tensor& c : nonzero_tuple(mask)) k.items.push_back({Kind::Array, nullptr, c, true});
}

ParsedKey parse(const Tensor& t, const IndexKey& key) {
  int ellipses = 0;
  int64_t consumed = 0;
  for (const IndexItem& item : key) {
    if (item.kind == Kind::Array) checked_ids(t, *item.array);  // every array, before use
    ellipses += item.kind == Kind::Ellipsis;
    consumed += dims_consumed(item);
  }
  if (ellipses > 1) invalid_key("an index can only have a single ellipsis ('...')");
  if (consumed > t.ndim())
    throw Error(ErrorKind::IndexOutOfRange,
                "too many indices: the tensor has " + std::to_string(t.ndim()) +
                    " dims but the index has " + std::to_string(consumed))
        .with("op", std::string("index"));
  ParsedKey k;
  k.consumed = consumed;
  int64_t source_dim = 0;
  for (const IndexItem& item : key) {
    if (item.kind == Kind::Array && item.array->dtype() == DType::Bool) {
      if (item.array->ndim() == 0) bad_index("a 0-d mask reached expand_mask unlifted");
      expand_mask(t, *item.array, source_dim, k);
      source_dim += item.array->ndim();
      continue;
    }
    source_dim += item.kind == Kind::Ellipsis ? t.ndim() - consumed
                                              : int64_t(item.kind != Kind::NewAxis);
    k.items.push_back({item.kind, &item, item.array, false});
  }
  return k;
}

bool advanced(const Item& item) {
  return item.kind == Kind::Int || item.kind == Kind::Array;
}

// numpy counts ints as advanced indices too once an index array is present; when those
// are not side by side in the key, the broadcast dims move to the front.
bool arrays_lead(const ParsedKey& k) {
  int64_t first = -1, last = -1, count = 0;
  for (size_t i = 0; i < k.items.size(); ++i)
    if (advanced(k.items[i])) {
      if (first < 0) first = int64_t(i);
      last = int64_t(i);
      ++count;
    }
  return last - first + 1 != count;
}

// t[..., i, ...] on the result's dim `dim`, with errors naming the user's dim.
Tensor select_int(const Tensor& r, int64_t dim, int64_t index, int64_t source_dim) {
  const int64_t size = r.shape()[size_t(dim)];
  if (index < -size || index >= size)
    id_out_of_range(std::to_string(index), size, source_dim, index);
  return select(r, dim, index);
}

// Python's slice bounds clipped to a dim of `size` (CPython's PySlice_AdjustIndices).
Tensor apply_slice(const Tensor& t, int64_t dim, const IndexItem& s) {
  const int64_t size = t.shape()[size_t(dim)], step = s.step;
  const auto clip = [&](int64_t v) {
    if (v < 0) {
      v = v < -size ? -1 : v + size;  // no overflow at INT64_MIN
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= size) {
      v = step < 0 ? size - 1 : size;
    }
    return v;
  };
  return slice(t, dim, clip(s.start), clip(s.stop), step);
}

int64_t scalar_index(const Tensor& ids) {
  int64_t v = 0;
  to_host(to_dtype(ids, DType::I64), &v);
  return v;
}

// Negative ids count from the end, as in numpy and PyTorch (index_select itself takes
// [0, size) only); an id outside [-size, size) names the user's dim. The min and max of
// every array of a key are read back together: one wait for the device per key, and a
// broadcast view of ids is read once per distinct element.
using IdCheck = ResolvedIndex::Unchecked;

// Raises unless an array's bounds lie in [-size, size), naming the first one outside.
void raise_outside(const IdCheck& c, int64_t lo, int64_t hi) {
  if (lo < -c.size) id_out_of_range(std::to_string(lo), c.size, c.source_dim, lo);
  if (hi >= c.size) id_out_of_range(std::to_string(hi), c.size, c.source_dim, hi);
}

void wrap_ids(std::vector<Tensor>& ids, const std::vector<IdCheck>& checks) {
  if (checks.empty()) return;
  std::vector<std::function<std::pair<int64_t, int64_t>()>> bounds;
  for (const IdCheck& c : checks) bounds.push_back(index_checks::start_bounds("index", ids[c.at]));
  for (size_t k = 0; k < checks.size(); ++k) {
    const IdCheck& c = checks[k];
    const auto [lo, hi] = bounds[k]();
    raise_outside(c, lo, hi);
    if (lo >= 0) continue;
    Tensor& t = ids[c.at];
    const Tensor zero = full_int({}, 0, t.dtype(), t.device());
    const Tensor shifted = binary(BinaryOp::Add, t, full_int({}, c.size, t.dtype(), t.device()));
    t = where(cmp(CmpOp::Lt, t, zero), shifted, t);
  }
}

// The shape the index arrays broadcast to (IndexError-class when they do not).
Shape broadcast_ids(const std::vector<Tensor>& ids) {
  Shape b;
  for (const Tensor& each : ids) {
    const Shape& s = each.shape();
    Shape out(std::max(b.size(), s.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t x = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
      int64_t y = i < out.size() - s.size() ? 1 : s[i - (out.size() - s.size())];
      if (x != y && x != 1 && y != 1) {
        std::string shapes;
        for (const Tensor& one : ids) shapes += (shapes.empty() ? "" : ", ") + shape_str(one.shape());
        invalid_key("shape mismatch: the index arrays could not be broadcast together, shapes " +
                    shapes);
      }
      out[i] = x == 1 ? y : x;
    }
    b = std::move(out);
  }
  return b;
}

// Walks the key left to right over t; `dim` is the next dim of the view to index.
// for_read: the key is read, not written. A read through one array of a backend whose
// index reads stay in bounds whatever the ids (index_reads_clamp) starts the range check
// and leaves it to read_index, after the gather is queued; negative ids then reach that
// backend's kernel, which counts them from the end itself.
ResolvedIndex walk(const Tensor& t, const ParsedKey& k, bool for_read) {
  ResolvedIndex w{t};
  Tensor& r = w.view;
  std::vector<IdCheck> checks;  // arrays whose range is read back after the walk
  int64_t dim = 0;
  int64_t source_dim = 0;  // the dim of t this item indexes: what the user's error must name
  for (const Item& item : k.items) {
    switch (item.kind) {
      case Kind::NewAxis: r = unsqueeze(r, dim++); break;
      case Kind::Ellipsis:
        dim += t.ndim() - k.consumed;
        source_dim += t.ndim() - k.consumed;
        break;
      case Kind::Int:
        if (!item.src->too_big.empty()) id_out_of_range(item.src->too_big, -1, source_dim, {});
        r = select_int(r, dim, item.src->value, source_dim);
        ++source_dim;
        break;
      case Kind::Slice:
        r = apply_slice(r, dim++, *item.src);
        ++source_dim;
        break;
      case Kind::Array:
        if (item.ids->ndim() == 0) {  // a 0-d index array acts as an int
          r = select_int(r, dim, scalar_index(*item.ids), source_dim);
        } else {
          const Tensor& ids = *item.ids;
          // every array of any integer dtype is range-checked; a mask's positions are in range
          if (!item.in_range && ids.numel() > 0)
            checks.push_back({w.ids.size(), r.shape()[size_t(dim)], source_dim});
          w.ids.push_back(ids);
          w.array_dims.push_back(dim++);
        }
        ++source_dim;
        break;
      case Kind::Bool: break;  // lifted before parse
    }
  }
  if (for_read && checks.size() == 1 && w.ids.size() == 1 && checks[0].size > 0 &&
      t.storage()->impl().index_reads_clamp() && !autograd::wants_grad({&t})) {
    const IdCheck c = checks[0];
    w.check = [c, bounds = index_checks::start_bounds("index", w.ids[0])] {
      const auto [lo, hi] = bounds();
      raise_outside(c, lo, hi);
    };
    return w;
  }
  if (w.ids.size() >= 2 && w.ids.size() <= BackendStorage::kMaxPointIds &&
      !autograd::wants_grad({&t})) {
    // read_index and write_index check them in the pass that reads through them, or that
    // sums their linear ids, where the backend can (a read that records its gradient
    // takes the composed path: index_put's backward reads with for_read unset)
    w.unchecked = std::move(checks);
    w.deferred = true;
    return w;
  }
  wrap_ids(w.ids, checks);
  return w;
}

// Where the broadcast dims go in the result, and the order of the view's dims that puts
// the array dims there side by side.
struct Placement {
  int64_t at;
  Dims order;
  Shape rest;  // the view's other dims, in order
};

Placement placement(const ResolvedIndex& w) {
  Placement p{w.arrays_lead ? 0 : w.array_dims[0], {}, {}};
  Dims others;
  for (int64_t d = 0; d < w.view.ndim(); ++d)
    if (std::find(w.array_dims.begin(), w.array_dims.end(), d) == w.array_dims.end()) {
      others.push_back(d);
      p.rest.push_back(w.view.shape()[size_t(d)]);
    }
  p.order.assign(others.begin(), others.begin() + p.at);
  p.order.insert(p.order.end(), w.array_dims.begin(), w.array_dims.end());
  p.order.insert(p.order.end(), others.begin() + p.at, others.end());
  return p;
}

// rest with `mid` inserted at `at`
Shape spliced(const Shape& rest, int64_t at, const Shape& mid) {
  Shape s(rest.begin(), rest.begin() + at);
  s.insert(s.end(), mid.begin(), mid.end());
  s.insert(s.end(), rest.begin() + at, rest.end());
  return s;
}

Shape array_sizes(const ResolvedIndex& w) {
  Shape s;
  for (int64_t d : w.array_dims) s.push_back(w.view.shape()[size_t(d)]);
  return s;
}

// The ids of the array dims merged into one, flat over their broadcast shape: on the
// device, every id already in its dim's range.
Tensor linear_ids(const ResolvedIndex& w, const Shape& sizes) {
  const DevicePtr& dev = w.view.device();
  Tensor lin = to_dtype(w.ids[0], DType::I64);
  for (size_t j = 1; j < w.ids.size(); ++j)
    lin = binary(BinaryOp::Add, binary(BinaryOp::Mul, lin, full_int({}, sizes[j], DType::I64, dev)),
                 to_dtype(w.ids[j], DType::I64));
  return reshape(broadcast_to(lin, w.ids_shape), {shape_numel(w.ids_shape)});
}

// t[i, j] for index arrays i, j: the array dims become one dim of their sizes' product,
// gathered at the linear ids ((i * size_j) + j), which then unfolds to the broadcast shape.
Tensor gather_arrays(const ResolvedIndex& w) {
  const Shape sizes = array_sizes(w);
  const Placement p = placement(w);
  const Tensor lin = linear_ids(w, sizes);
  const Tensor x =
      reshape(permute(w.view, p.order), spliced(p.rest, p.at, {shape_numel(sizes)}));
  return reshape(index_checks::select_checked(x, p.at, lin), spliced(p.rest, p.at, w.ids_shape));
}

// r as the composed paths take it: the ids a resolve deferred, checked now and counted
// from the end.
ResolvedIndex with_checked_ids(const ResolvedIndex& r) {
  if (!r.deferred) return r;
  ResolvedIndex checked = r;
  wrap_ids(checked.ids, r.unchecked);
  checked.unchecked.clear();
  checked.deferred = false;
  return checked;
}

// One pass of the backend's gather_points over r's arrays, placed at dims [at, at +
// their ndim) of dst's shape: `src` the source over dst's shape (0 in the arrays' dims),
// `dims` each array's dim of the source (its stride and size). Raises from the bounds it
// finds; false where the backend has none. offsets: dst takes the offsets (int64).
bool points_pass(const ResolvedIndex& r, const Storage& data, const Layout& src, int64_t at,
                 const std::vector<std::pair<int64_t, int64_t>>& dims, const Tensor& dst,
                 bool offsets) {
  const Shape& shape = dst.shape();
  std::vector<Tensor> ids;  // int64, over the broadcast shape
  std::vector<BackendStorage::PointIds> points;
  for (size_t k = 0; k < r.ids.size(); ++k) {
    ids.push_back(broadcast_to(to_dtype(r.ids[k], DType::I64), r.ids_shape));
    Strides st(shape.size(), 0);
    const Strides& from = ids[k].layout().strides();
    std::copy(from.begin(), from.end(), st.begin() + at);
    points.push_back({&ids[k].storage()->impl(), Layout(shape, st, ids[k].layout().offset()),
                      dims[k].first, dims[k].second});
  }
  int64_t lo[BackendStorage::kMaxPointIds], hi[BackendStorage::kMaxPointIds];
  bool done;
  {
    static_assert(BackendStorage::kMaxPointIds == 4, "the locks below name four arrays");
    auto arr = [&](size_t k) { return k < ids.size() ? ids[k].storage().get() : nullptr; };
    StorageLocks locks(__func__, {&data, arr(0), arr(1), arr(2), arr(3)}, {dst.storage().get()});
    done = data.impl().gather_points(src, points, dst.storage()->impl(), lo, hi, offsets);
  }
  if (!done) return false;
  for (const IdCheck& c : r.unchecked) raise_outside(c, lo[c.at], hi[c.at]);
  return true;
}

// t[i, j] in one pass (points_pass), where the linear ids take two passes more and a range
// check one before them (what the caller falls back to when this returns nothing). r's
// ids as the user gave them.
std::optional<Tensor> read_points(const ResolvedIndex& r) {
  const Tensor& view = r.view;
  const Placement p = placement(r);
  const Shape out_shape = spliced(p.rest, p.at, r.ids_shape);
  const size_t nd = r.ids_shape.size();
  // an empty result still checks its ids (numpy does), and a dim of 0 has no position 0
  if (shape_numel(out_shape) == 0) return std::nullopt;
  // the view over the result's shape: the rest dims' strides, 0 in the arrays' dims
  Strides base(out_shape.size(), 0);
  for (size_t j = 0, d = 0; d < size_t(view.ndim()); ++d) {
    if (std::find(r.array_dims.begin(), r.array_dims.end(), int64_t(d)) != r.array_dims.end())
      continue;
    base[j < size_t(p.at) ? j : j + nd] = view.layout().strides()[d];
    ++j;
  }
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int64_t d : r.array_dims) {
    if (view.shape()[size_t(d)] == 0) return std::nullopt;
    dims.emplace_back(view.layout().strides()[size_t(d)], view.shape()[size_t(d)]);
  }
  Tensor out = empty(out_shape, view.dtype(), view.device());
  if (!points_pass(r, *view.storage(), Layout(out_shape, base, view.layout().offset()), p.at,
                   dims, out, /*offsets=*/false))
    return std::nullopt;
  return out;
}

// The linear ids of a write through r's arrays, (i * size_j) + j, one per element of their
// broadcast shape and flat over it, every id checked and counted from the end when
// negative: one pass where the backend has gather_points, else a range check, then two.
Tensor write_ids(const ResolvedIndex& r, const Shape& sizes) {
  const int64_t count = shape_numel(r.ids_shape);
  if (r.deferred && count > 0 &&
      std::find(sizes.begin(), sizes.end(), int64_t(0)) == sizes.end()) {
    std::vector<std::pair<int64_t, int64_t>> dims(sizes.size());
    int64_t step = 1;
    for (size_t k = sizes.size(); k-- > 0;) {
      dims[k] = {step, sizes[k]};
      step *= sizes[k];
    }
    Tensor lin = empty(r.ids_shape, DType::I64, r.view.device());
    const Layout none(r.ids_shape, Strides(r.ids_shape.size(), 0), 0);  // offsets from 0
    if (points_pass(r, *lin.storage(), none, 0, dims, lin, /*offsets=*/true))
      return reshape(lin, {count});
  }
  return contiguous(linear_ids(with_checked_ids(r), sizes));
}

// t[..., i, j, ...] = value: the view with its array dims side by side (placement's order)
// and merged into one, then the backends' scatter along it at the linear ids; the last of
// repeated ids wins, as in numpy. Dims that cannot merge in place (a transposed view) are
// written through a copy.
void set_through_arrays(const ResolvedIndex& w, const Tensor& src) {
  const Tensor& base = w.view;
  const Shape sizes = array_sizes(w);
  const int64_t count = shape_numel(w.ids_shape), span = shape_numel(sizes);
  const Placement p = placement(w);
  const Shape target = spliced(p.rest, p.at, w.ids_shape);  // the value broadcasts to it
  if (broadcast_shapes("setitem", src.shape(), target) != target)
    throw_shape_mismatch("setitem", src.shape(), target,
                         "the value must broadcast to the indexed shape");
  check_writable("setitem", base);
  // One id per write, held on the device: a broadcast key of 2**36 ids fails here, at its
  // allocation, before 2**36 writes start.
  const Tensor lin = write_ids(w, sizes);
  if (count == 0) return;
  const Tensor values = reshape(broadcast_to(src, target), spliced(p.rest, p.at, {count}));
  const Tensor arranged = permute(base, p.order);
  const Shape merged_shape = spliced(p.rest, p.at, {span});
  Layout merged;
  if (arranged.layout().try_reshape(merged_shape, &merged)) {
    index_checks::put_along("setitem", arranged.view_as(merged), p.at, lin, values);
    return;
  }
  const Tensor copy = contiguous(arranged);
  index_checks::put_along("setitem", reshape(copy, merged_shape), p.at, lin, values);
  copy_into(copy, arranged, "setitem");
}

}  // namespace

ResolvedIndex resolve_index(const Tensor& t, const IndexKey& key, bool for_read) {
  if (key.size() == 1 && is_mask(key[0])) {  // the whole key a mask: t[t > 0], t[True]
    ResolvedIndex r{t};
    r.mask = key[0].kind == Kind::Bool
                 ? full_int({}, key[0].value, DType::Bool, t.device())
                 : *key[0].array;
    Storage::check_same_device("index", *t.storage(), *r.mask->storage());
    return r;
  }
  auto [view, items] = lift_scalar_masks(t, key);
  const ParsedKey k = parse(view, items);
  ResolvedIndex r = walk(view, k, for_read);
  if (!r.ids.empty()) {
    r.ids_shape = broadcast_ids(r.ids);
    r.arrays_lead = arrays_lead(k);
  }
  return r;
}

Tensor read_index(const ResolvedIndex& r) {
  if (r.mask) return mask_read(r.view, *r.mask);
  if (r.ids.empty()) return r.view;
  if (r.deferred) {
    if (std::optional<Tensor> out = read_points(r)) return *out;
    return gather_arrays(with_checked_ids(r));
  }
  Tensor out = gather_arrays(r);
  if (r.check) r.check();
  return out;
}

void write_index(const ResolvedIndex& r, const Tensor& value) {
  autograd::check_inplace("setitem", r.view);
  autograd::refuse_grad("setitem", {&value});
  Storage::check_same_device("setitem", *r.view.storage(), *value.storage());
  if (r.mask) return mask_write(r.view, *r.mask, value);
  if (!r.ids.empty()) return set_through_arrays(r, value);
  copy_into(value, r.view, "setitem");
}

}  // namespace ember
