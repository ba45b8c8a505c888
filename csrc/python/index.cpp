// t[key] and t[key] = value: ints, slices with steps, None, Ellipsis and tuples of
// them become views; integer index arrays of any shape (negatives count from the end,
// several broadcast together, numpy's placement of the result dims) become one
// index_select (a copy), and on the left of = a write through where(); a bool mask as the
// whole key (t[t > 0]) is core's mask_read / mask_write; inside a tuple it stands for the
// integer arrays of its true positions (core's nonzero).
#include <pybind11/numpy.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/index_checks.h"

namespace ember::python {

namespace {

enum class Kind { Int, Slice, NewAxis, Ellipsis, Array };

// An index form ember does not support (it may be valid numpy).
[[noreturn]] void bad_index(const std::string& why) {
  throw_invalid("index", why);
}

// A key that is no index at all: IndexError-class, as in numpy and PyTorch.
[[noreturn]] void invalid_key(const std::string& why) {
  throw Error(ErrorKind::InvalidIndex, "index: " + why).with("op", std::string("index"));
}

// An index array from a key item: a list that holds no numbers (t[[0, 'a']]) is a key
// that cannot index, as in numpy and PyTorch, not a bad tensor value.
Tensor key_array(py::handle obj, const Tensor& t) {
  try {
    return index_arg(obj, t);
  } catch (py::error_already_set& e) {
    py::module_ ember = py::module_::import("ember");
    if (!e.matches(ember.attr("InvalidArgumentError")) && !e.matches(ember.attr("InvalidTypeError")))
      throw;
    invalid_key("index arrays hold integers or bools; " + py::str(e.value()).cast<std::string>());
  }
}

// An int key; one past int64 is out of range (numpy: IndexError), not a bad value.
int64_t int_key(py::handle key, int64_t source_dim) {
  auto index = py::reinterpret_steal<py::object>(PyNumber_Index(key.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow)
    throw Error(ErrorKind::IndexOutOfRange, "index " + py::repr(key).cast<std::string>() +
                                                " is out of range for dim " +
                                                std::to_string(source_dim))
        .with("op", std::string("index"))
        .with("dim", source_dim);
  return v;
}

Kind classify(py::handle o) {
  PyObject* p = o.ptr();
  if (p == Py_None) return Kind::NewAxis;
  if (p == Py_Ellipsis) return Kind::Ellipsis;
  if (PySlice_Check(p)) return Kind::Slice;
  if (PyBool_Check(p)) return Kind::Array;  // a 0-d mask (lift_scalar_masks)
  if (is_tensor(o) || PyList_Check(p) || py::isinstance<py::array>(o)) return Kind::Array;
  if (PyLong_Check(p) || (!PyFloat_Check(p) && PyIndex_Check(p))) return Kind::Int;
  invalid_key(std::string("only integers, slices, None, ..., and integer or bool tensors or lists "
                          "are valid indices, not ") +
              Py_TYPE(p)->tp_name);
}

Tensor apply_slice(const Tensor& t, int64_t dim, py::handle s) {
  Py_ssize_t start = 0, stop = 0, step = 0;
  if (PySlice_Unpack(s.ptr(), &start, &stop, &step) < 0) {
    bool wrong_type = PyErr_ExceptionMatches(PyExc_TypeError);  // 1:2.5; else a bad value
    std::string why = py::error_already_set().what();           // fetches and clears the error
    throw Error(wrong_type ? ErrorKind::InvalidType : ErrorKind::InvalidArgument,
                "index: bad slice: " + why)
        .with("op", std::string("index"));
  }
  PySlice_AdjustIndices(Py_ssize_t(t.shape()[size_t(dim)]), &start, &stop, step);
  return slice(t, dim, start, stop, step);
}

int64_t scalar_index(const Tensor& ids) {
  int64_t v = 0;
  to_host(to_dtype(ids, DType::I64), &v);
  return v;
}

// t[..., i, ...] on the result's dim `dim`, with errors naming the user's dim.
Tensor select_int(const Tensor& r, int64_t dim, int64_t index, int64_t source_dim) {
  int64_t size = r.shape()[size_t(dim)];
  if (index < -size || index >= size)
    throw Error(ErrorKind::IndexOutOfRange,
                "index " + std::to_string(index) + " is out of range for dim " +
                    std::to_string(source_dim) + " of size " + std::to_string(size))
        .with("op", std::string("index"))
        .with("dim", source_dim)
        .with("index", index)
        .with("size", size);
  return select(r, dim, index);
}

[[noreturn]] void id_out_of_range(int64_t id, int64_t size, int64_t source_dim) {
  throw Error(ErrorKind::IndexOutOfRange,
              "index " + std::to_string(id) + " is out of range for dim " +
                  std::to_string(source_dim) + " of size " + std::to_string(size))
      .with("op", std::string("index"))
      .with("dim", source_dim)
      .with("index", id)
      .with("size", size);
}

// An index array of t[key]: integers of any shape (a 0-d one acts as an int).
Tensor checked_ids(Tensor ids) {
  if (ids.dtype() == DType::U8)
    bad_index(
        "a uint8 tensor is not an index here: a mask must be bool (mask.to(ember.bool)); for "
        "uint8 indices use index_select");
  if (dtype_is_float(ids.dtype()))
    invalid_key(std::string("an index array must hold integers, not ") + dtype_name(ids.dtype()));
  return ids;
}

// Negative ids count from the end, as in numpy and PyTorch (index_select itself takes
// [0, size) only); an id outside [-size, size) names the user's dim.
Tensor wrapped_ids(const Tensor& ids, int64_t size, int64_t source_dim) {
  const bool is_signed = ids.dtype() == DType::I64 || ids.dtype() == DType::I32;
  if (!is_signed || ids.numel() == 0) return ids;  // unsigned: no negatives
  // min and max read back together: one wait for the device, not two; a broadcast view
  // of ids is read once per distinct element
  const Tensor distinct = index_checks::distinct_elements(ids);
  Tensor range = to_dtype(stack({reduce(ReduceOp::Min, distinct, {}, false),
                                 reduce(ReduceOp::Max, distinct, {}, false)},
                                0),
                          DType::I64);
  int64_t bounds[2] = {0, 0};
  to_host(range, bounds);
  const int64_t lo = bounds[0], hi = bounds[1];
  if (lo < -size) id_out_of_range(lo, size, source_dim);
  if (hi >= size) id_out_of_range(hi, size, source_dim);
  if (lo >= 0) return ids;
  Tensor zero = full_int({}, 0, ids.dtype(), ids.device());
  Tensor shifted = binary(BinaryOp::Add, ids, full_int({}, size, ids.dtype(), ids.device()));
  return where(cmp(CmpOp::Lt, ids, zero), shifted, ids);
}

// One item of a key; an index array's ids are converted once, while parsing.
struct Item {
  Kind kind;
  py::handle obj;
  std::optional<Tensor> ids;  // Kind::Array
  bool in_range = false;      // ids known to lie in [0, size): a mask's true positions
};

struct ParsedKey {
  std::vector<Item> items;
  int64_t consumed = 0;  // dims of the tensor that the key indexes explicitly
};

// A bool mask inside a tuple key stands for the integer arrays of its true positions, one
// per dim it covers (numpy's rule); `first` is the first dim of t that it covers.
void expand_mask(const Tensor& t, const Tensor& mask, int64_t first, ParsedKey& k) {
  const Shape& ms = mask.shape();
  if (mask.ndim() == 0) bad_index("a 0-d mask reached expand_mask unlifted");  // never: lifted
  bool fits = first + mask.ndim() <= t.ndim();
  for (int64_t d = 0; fits && d < mask.ndim(); ++d)
    fits = ms[size_t(d)] == t.shape()[size_t(first + d)];
  if (!fits)
    invalid_key("the mask's shape " + shape_str(ms) + " must match the dims " +
                std::to_string(first) + ".. of the tensor's shape " + shape_str(t.shape()));
  for (Tensor& c : nonzero_tuple(mask)) k.items.push_back({Kind::Array, py::handle(), c, true});
}

ParsedKey parse(const Tensor& t, py::handle key) {
  std::vector<py::handle> objs;
  if (PyTuple_Check(key.ptr()))
    for (py::handle item : py::reinterpret_borrow<py::tuple>(key)) objs.push_back(item);
  else
    objs.push_back(key);
  std::vector<Item> first_pass;
  int ellipses = 0;
  int64_t consumed = 0;
  for (py::handle obj : objs) {
    Item item{classify(obj), obj, std::nullopt};
    if (item.kind == Kind::Array) {  // every index array, read or write, before it is read
      Tensor ids = key_array(obj, t);
      Storage::check_same_device("index", *t.storage(), *ids.storage());
      item.ids = checked_ids(ids);
    }
    const bool mask = item.ids && item.ids->dtype() == DType::Bool;
    ellipses += item.kind == Kind::Ellipsis;
    consumed += mask ? item.ids->ndim()
                     : int64_t(item.kind == Kind::Int || item.kind == Kind::Slice ||
                               item.kind == Kind::Array);
    first_pass.push_back(std::move(item));
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
  for (Item& item : first_pass) {
    if (item.ids && item.ids->dtype() == DType::Bool) {
      expand_mask(t, *item.ids, source_dim, k);
      source_dim += item.ids->ndim();
      continue;
    }
    source_dim +=
        item.kind == Kind::Ellipsis ? t.ndim() - consumed : int64_t(item.kind != Kind::NewAxis);
    k.items.push_back(std::move(item));
  }
  return k;
}

bool advanced(const Item& item) {
  return item.kind == Kind::Int || item.kind == Kind::Array;
}

// numpy counts ints as advanced indices too once an index array is present; when
// those are not side by side in the key, the broadcast dims move to the front.
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

// The view a key makes, with each index array's dim kept whole and its ids (wrapped into
// [0, size)) beside it: a read then gathers (gather_arrays), a write goes through where().
struct Walked {
  Tensor view;
  std::vector<int64_t> array_dims;  // dims of `view`, increasing
  std::vector<Tensor> ids;
};

// Walks the key left to right; `dim` is the next dim of the result to index.
Walked walk(const Tensor& t, const ParsedKey& k) {
  Walked w{t};
  Tensor& r = w.view;
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
        r = select_int(r, dim, int_key(item.obj, source_dim), source_dim);
        ++source_dim;
        break;
      case Kind::Slice:
        r = apply_slice(r, dim++, item.obj);
        ++source_dim;
        break;
      case Kind::Array:
        if (item.ids->ndim() == 0) {  // a 0-d index array acts as an int
          r = select_int(r, dim, scalar_index(*item.ids), source_dim);
        } else {
          w.ids.push_back(item.in_range ? *item.ids
                                        : wrapped_ids(*item.ids, r.shape()[size_t(dim)], source_dim));
          w.array_dims.push_back(dim++);
        }
        ++source_dim;
        break;
    }
  }
  return w;
}

// The shape the index arrays broadcast to (IndexError-class when they do not).
Shape ids_shape(const Walked& w) {
  Shape b;
  for (const Tensor& ids : w.ids) {
    const Shape& s = ids.shape();
    Shape out(std::max(b.size(), s.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t x = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
      int64_t y = i < out.size() - s.size() ? 1 : s[i - (out.size() - s.size())];
      if (x != y && x != 1 && y != 1) {
        std::string shapes;
        for (const Tensor& each : w.ids)
          shapes += (shapes.empty() ? "" : ", ") + shape_str(each.shape());
        invalid_key("shape mismatch: the index arrays could not be broadcast together, shapes " +
                    shapes);
      }
      out[i] = x == 1 ? y : x;
    }
    b = std::move(out);
  }
  return b;
}

// Where the broadcast dims go in the result, and the order of the view's dims that puts
// the array dims there side by side.
struct Placement {
  int64_t at;
  Dims order;
  Shape rest;  // the view's other dims, in order
};

Placement placement(const ParsedKey& k, const Walked& w) {
  Placement p{arrays_lead(k) ? 0 : w.array_dims[0], {}, {}};
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

Shape array_sizes(const Walked& w) {
  Shape s;
  for (int64_t d : w.array_dims) s.push_back(w.view.shape()[size_t(d)]);
  return s;
}

// t[i, j] for index arrays i, j: the array dims become one dim of their sizes' product,
// gathered at the linear ids ((i * size_j) + j), which then unfolds to the broadcast shape.
// The ids of the array dims merged into one, flat over their broadcast shape `b`: on the
// device, every id already wrapped into its dim's range by wrapped_ids.
Tensor linear_ids(const Walked& w, const Shape& b, const Shape& sizes) {
  const DevicePtr& dev = w.view.device();
  Tensor lin = to_dtype(w.ids[0], DType::I64);
  for (size_t j = 1; j < w.ids.size(); ++j)
    lin = binary(BinaryOp::Add, binary(BinaryOp::Mul, lin, full_int({}, sizes[j], DType::I64, dev)),
                 to_dtype(w.ids[j], DType::I64));
  return reshape(broadcast_to(lin, b), {shape_numel(b)});
}

Tensor gather_arrays(const ParsedKey& k, const Walked& w) {
  Shape b = ids_shape(w), sizes = array_sizes(w);
  Placement p = placement(k, w);
  return gil_free_if(w.view.numel() >= kReleaseGilNumel, [&] {
    const Tensor lin = linear_ids(w, b, sizes);
    Tensor x = reshape(permute(w.view, p.order), spliced(p.rest, p.at, {shape_numel(sizes)}));
    // every id was range-checked by wrapped_ids, so lin lies in [0, product of sizes)
    return reshape(index_checks::select_checked(x, p.at, lin), spliced(p.rest, p.at, b));
  });
}

// ---- boolean masks: t[mask] and t[mask] = value, the mask covering t's leading dims

Tensor assigned_value(const Tensor& view, py::handle value);

// The mask of a key that is one bool tensor (or a list/array of bools), else nullopt.
std::optional<Tensor> mask_key(const Tensor& t, py::handle key) {
  PyObject* p = key.ptr();
  if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 1) return mask_key(t, PyTuple_GET_ITEM(p, 0));
  // A Python bool is a 0-d mask, as in numpy: t[True] adds a dim of 1, t[False] one of 0.
  if (!(is_tensor(key) || PyList_Check(p) || PyBool_Check(p) || py::isinstance<py::array>(key)))
    return std::nullopt;
  // Only bools make a mask: an int list or array is converted once, by parse.
  if (PyList_Check(p) && PyList_GET_SIZE(p) > 0 && !PyBool_Check(PyList_GET_ITEM(p, 0)) &&
      !PyList_Check(PyList_GET_ITEM(p, 0)))
    return std::nullopt;
  if (py::isinstance<py::array>(key) && key.cast<py::array>().dtype().kind() != 'b')
    return std::nullopt;
  Tensor m = key_array(key, t);
  if (m.dtype() != DType::Bool) return std::nullopt;
  return m;  // its shape and device: core's mask_read / mask_write check them
}

Tensor masked_read(const Tensor& t, const Tensor& mask) {
  return gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return mask_read(t, mask); });
}

void masked_write(const Tensor& t, const Tensor& mask, py::handle value) {
  check_writable("setitem", t);
  Tensor src = assigned_value(t, value);
  gil_free_if(t.numel() >= kReleaseGilNumel, [&] { mask_write(t, mask, src); });
}

// ---- 0-d masks inside a tuple key: t[0, True], t[..., False], t[ids, ember.tensor(True)]

bool scalar_mask(py::handle o) {
  if (PyBool_Check(o.ptr())) return true;
  if (!is_tensor(o)) return false;
  const Tensor& m = o.cast<const Tensor&>();
  return m.ndim() == 0 && m.dtype() == DType::Bool;
}

bool scalar_mask_value(py::handle o, const Tensor& t) {
  if (PyBool_Check(o.ptr())) return o.ptr() == Py_True;
  const Tensor& m = o.cast<const Tensor&>();
  Storage::check_same_device("index", *t.storage(), *m.storage());
  bool v = false;
  to_host(m, &v);
  return v;
}

// Dims of t an item of a tuple key consumes (an ellipsis: none here, counted apart).
int64_t dims_consumed(py::handle o, const Tensor& t) {
  Kind kind = classify(o);
  if (kind == Kind::Int || kind == Kind::Slice) return 1;
  if (kind != Kind::Array) return 0;
  const Tensor ids = is_tensor(o) ? o.cast<Tensor>() : key_array(o, t);
  return ids.dtype() == DType::Bool ? ids.ndim() : 1;
}

// A 0-d mask is numpy's: an advanced index over a new dim of size 1, holding that one
// position (True) or none (False). The key is rewritten to index a view with that dim.
std::pair<Tensor, py::object> lift_scalar_masks(const Tensor& t, py::handle key) {
  if (!PyTuple_Check(key.ptr()) || PyTuple_GET_SIZE(key.ptr()) < 2)
    return {t, py::reinterpret_borrow<py::object>(key)};
  py::list items;
  for (py::handle o : py::reinterpret_borrow<py::tuple>(key)) items.append(o);
  Tensor view = t;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!scalar_mask(items[i])) continue;
    // its dim of the view: after the dims the items before it consume, or, past an
    // ellipsis, before the dims the items after it consume
    int64_t before = 0, after = 0;
    bool past_ellipsis = false;
    for (size_t j = 0; j < items.size(); ++j) {
      if (items[j].ptr() == Py_Ellipsis) {
        past_ellipsis = past_ellipsis || j < i;
        continue;
      }
      if (j == i) continue;
      (j < i ? before : after) += dims_consumed(items[j], view);
    }
    const int64_t at = past_ellipsis ? view.ndim() - after : before;
    if (at < 0 || at > view.ndim()) break;  // too many indices: parse says so
    const int64_t n = scalar_mask_value(items[i], t) ? 1 : 0;
    const int64_t zero = 0;
    items[i] = py::cast(from_host(&zero, {n}, DType::I64, t.device()));
    view = unsqueeze(view, at);
  }
  return {view, py::tuple(items)};
}

Tensor index_tensor(const Tensor& t_in, py::handle key_in) {
  auto [t, key] = lift_scalar_masks(t_in, key_in);
  if (std::optional<Tensor> mask = mask_key(t, key)) return masked_read(t, *mask);
  ParsedKey k = parse(t, key);
  Walked w = walk(t, k);
  return w.ids.empty() ? w.view : gather_arrays(k, w);
}

// The value of t[key] = value as a tensor on the view's device.
Tensor assigned_value(const Tensor& view, py::handle value) {
  if (is_tensor(value)) return value.cast<Tensor>();
  Number n = read_number(value);
  if (n.kind != Number::None) {
    bool promote = n.kind == Number::Float && !dtype_is_float(view.dtype());
    // NaN, inf or a float out of range has no integer value (numpy and PyTorch refuse it).
    if (promote) check_fill_value("setitem", n.f, view.dtype());
    return number_tensor(n, promote ? DType::F32 : view.dtype(), view.device(), "setitem");
  }
  py::object made = py::module_::import("ember").attr("tensor")(
      value, py::arg("dtype") = dtype_object(view.dtype()), py::arg("device") = view.device());
  return made.cast<Tensor>();
}

// t[..., i, j, ...] = value: the view with its array dims side by side (placement's
// order) and merged into one, then the backends' scatter along it at the linear ids; the
// last of repeated ids wins, as in numpy. Dims that cannot merge in place (a transposed
// view) are written through a copy.
void set_through_arrays(const ParsedKey& k, const Walked& w, py::handle value) {
  const Tensor& base = w.view;
  const Shape b = ids_shape(w), sizes = array_sizes(w);
  const int64_t count = shape_numel(b), span = shape_numel(sizes);
  Placement p = placement(k, w);
  const Shape target = spliced(p.rest, p.at, b);  // t[key]'s shape: the value broadcasts to it
  Tensor src = assigned_value(base, value);
  if (broadcast_shapes("setitem", src.shape(), target) != target)
    throw_shape_mismatch("setitem", src.shape(), target,
                         "the value must broadcast to the indexed shape");
  check_writable("setitem", base);
  if (count == 0) return;
  gil_free_if(base.numel() >= kReleaseGilNumel, [&] {
    // One id per write, held on the device: a broadcast key of 2**36 ids fails here, at
    // its allocation, before 2**36 writes start.
    const Tensor lin = contiguous(linear_ids(w, b, sizes));
    const Tensor values = reshape(broadcast_to(src, target), spliced(p.rest, p.at, {count}));
    const Tensor arranged = permute(base, p.order);
    const Shape merged_shape = spliced(p.rest, p.at, {span});
    Layout merged;
    if (arranged.layout().try_reshape(merged_shape, &merged)) {
      index_checks::put_checked("setitem", arranged.view_as(merged), p.at, lin, values);
      return;
    }
    const Tensor copy = contiguous(arranged);
    index_checks::put_checked("setitem", reshape(copy, merged_shape), p.at, lin, values);
    copy_into(copy, arranged, "setitem");
  });
}

void set_item(const Tensor& t_in, py::handle key_in, py::handle value) {
  auto [t, key] = lift_scalar_masks(t_in, key_in);
  if (std::optional<Tensor> mask = mask_key(t, key)) return masked_write(t, *mask, value);
  ParsedKey k = parse(t, key);
  Walked w = walk(t, k);
  if (!w.ids.empty()) return set_through_arrays(k, w, value);
  Tensor src = assigned_value(w.view, value);
  gil_free_if(w.view.numel() >= kReleaseGilNumel, [&] { copy_into(src, w.view, "setitem"); });
}

}  // namespace

void bind_index(py::class_<Tensor>& cls) {
  cls.def("__getitem__", [](const Tensor& t, py::handle key) { return index_tensor(t, key); });
  cls.def("__setitem__", &set_item);
}

}  // namespace ember::python
