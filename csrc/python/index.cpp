// t[key] and t[key] = value: ints, slices with steps, None, Ellipsis and tuples of
// them become views; one 1-D integer index array (negatives count from the end) becomes
// an index_select (a copy), and on the left of = a write through where(); a bool mask
// as the whole key selects the true positions of t's leading dims (t[t > 0]).
#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "bindings.h"

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
  if (PyBool_Check(p))
    invalid_key("a bool is not an index (boolean masks are not supported; use ember.where)");
  if (is_tensor(o) || PyList_Check(p) || py::isinstance<py::array>(o)) return Kind::Array;
  if (PyLong_Check(p) || (!PyFloat_Check(p) && PyIndex_Check(p))) return Kind::Int;
  invalid_key(std::string("only integers, slices, None, ..., and 1-D integer tensors or lists are "
                          "valid indices, not ") +
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

// An index array of t[key]: a 1-D integer tensor (a 0-d one acts as an int).
Tensor array_ids(const Tensor& t, py::handle obj) {
  Tensor ids = index_arg(obj, t);
  if (ids.dtype() == DType::U8)
    bad_index(
        "a uint8 tensor is not an index here: a mask must be bool (mask.to(ember.bool)); for "
        "uint8 indices use index_select");
  if (ids.dtype() == DType::Bool)
    bad_index("a boolean mask must be the whole index (t[mask]), not one item of a tuple");
  if (dtype_is_float(ids.dtype()))
    invalid_key(std::string("an index array must hold integers, not ") + dtype_name(ids.dtype()));
  if (ids.ndim() > 1) bad_index("an index array must be 1-D, got shape " + shape_str(ids.shape()));
  return ids;
}

int64_t host_scalar(const Tensor& t) {  // a 0-d int64 or int32 tensor
  if (t.dtype() == DType::I32) {
    int32_t v = 0;
    to_host(t, &v);
    return v;
  }
  int64_t v = 0;
  to_host(t, &v);
  return v;
}

// Negative ids count from the end, as in numpy and PyTorch (index_select itself takes
// [0, size) only); an id outside [-size, size) names the user's dim.
Tensor wrapped_ids(const Tensor& ids, int64_t size, int64_t source_dim) {
  const bool is_signed = ids.dtype() == DType::I64 || ids.dtype() == DType::I32;
  if (!is_signed || ids.numel() == 0) return ids;  // unsigned: no negatives
  const int64_t lo = host_scalar(reduce(ReduceOp::Min, ids, {}, false));
  const int64_t hi = host_scalar(reduce(ReduceOp::Max, ids, {}, false));
  if (lo < -size) id_out_of_range(lo, size, source_dim);
  if (hi >= size) id_out_of_range(hi, size, source_dim);
  if (lo >= 0) return ids;
  Tensor zero = full_int({}, 0, ids.dtype(), ids.device());
  Tensor shifted = binary(BinaryOp::Add, ids, full_int({}, size, ids.dtype(), ids.device()));
  return where(cmp(CmpOp::Lt, ids, zero), shifted, ids);
}

Tensor apply_array(const Tensor& t, int64_t dim, py::handle obj, int64_t source_dim) {
  Tensor ids = array_ids(t, obj);
  if (ids.ndim() == 0) return select_int(t, dim, scalar_index(ids), source_dim);
  bool big = t.numel() >= kReleaseGilNumel;
  const int64_t size = t.shape()[size_t(dim)];
  return gil_free_if(big, [&] { return index_select(t, dim, wrapped_ids(ids, size, source_dim)); });
}

struct ParsedKey {
  std::vector<py::handle> items;
  std::vector<Kind> kinds;
  int64_t consumed = 0;  // dims of the tensor that the key indexes explicitly
};

ParsedKey parse(const Tensor& t, py::handle key) {
  ParsedKey k;
  if (PyTuple_Check(key.ptr()))
    for (py::handle item : py::reinterpret_borrow<py::tuple>(key)) k.items.push_back(item);
  else
    k.items.push_back(key);
  int ellipses = 0, arrays = 0;
  for (py::handle item : k.items) {
    Kind kind = classify(item);
    k.kinds.push_back(kind);
    ellipses += kind == Kind::Ellipsis;
    arrays += kind == Kind::Array;
    k.consumed += kind == Kind::Int || kind == Kind::Slice || kind == Kind::Array;
  }
  if (ellipses > 1) invalid_key("an index can only have a single ellipsis ('...')");
  if (arrays > 1) bad_index("only one index array per index is supported");
  if (k.consumed > t.ndim())
    throw Error(ErrorKind::IndexOutOfRange,
                "too many indices: the tensor has " + std::to_string(t.ndim()) +
                    " dims but the index has " + std::to_string(k.consumed))
        .with("op", std::string("index"));
  return k;
}

// numpy counts ints as advanced indices too once an index array is present; when
// those are not side by side in the key, the array's dim moves to the front.
bool array_dim_leads(const ParsedKey& k) {
  int64_t first = -1, last = -1, count = 0;
  for (size_t i = 0; i < k.kinds.size(); ++i)
    if (k.kinds[i] == Kind::Int || k.kinds[i] == Kind::Array) {
      if (first < 0) first = int64_t(i);
      last = int64_t(i);
      ++count;
    }
  return last - first + 1 != count;
}

Tensor move_dim_to_front(const Tensor& t, int64_t dim) {
  Dims order{dim};
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (d != dim) order.push_back(d);
  return permute(t, order);
}

// The view a key makes. For a write (keep_array), an index array's dim is kept whole and
// the array returned beside it: the write then goes through where() (set_through_array).
struct Walked {
  Tensor view;
  int64_t array_dim = -1;  // the dim of `view` the array indexes
  int64_t array_source_dim = -1;
  std::optional<Tensor> ids;
};

// Walks the key left to right; `dim` is the next dim of the result to index.
Walked walk(const Tensor& t, const ParsedKey& k, bool keep_array) {
  Walked w{t};
  Tensor& r = w.view;
  int64_t dim = 0;
  int64_t source_dim = 0;  // the dim of t this item indexes: what the user's error must name
  for (size_t i = 0; i < k.items.size(); ++i) {
    switch (k.kinds[i]) {
      case Kind::NewAxis: r = unsqueeze(r, dim++); break;
      case Kind::Ellipsis:
        dim += t.ndim() - k.consumed;
        source_dim += t.ndim() - k.consumed;
        break;
      case Kind::Int:
        r = select_int(r, dim, int_key(k.items[i], source_dim), source_dim);
        ++source_dim;
        break;
      case Kind::Slice:
        r = apply_slice(r, dim++, k.items[i]);
        ++source_dim;
        break;
      case Kind::Array:
        if (keep_array) {
          Tensor ids = array_ids(r, k.items[i]);
          if (ids.ndim() == 0) {  // a 0-d index array acts as an int
            r = select_int(r, dim, scalar_index(ids), source_dim);
          } else {
            w.ids = wrapped_ids(ids, r.shape()[size_t(dim)], source_dim);
            w.array_source_dim = source_dim;
            w.array_dim = dim++;
          }
        } else {
          int64_t before = r.ndim();
          r = apply_array(r, dim, k.items[i], source_dim);
          if (r.ndim() == before) w.array_dim = dim++;
        }
        ++source_dim;
        break;
    }
  }
  return w;
}

// ---- boolean masks: t[mask] and t[mask] = value, the mask covering t's leading dims

Tensor assigned_value(const Tensor& view, py::handle value);

// The mask of a key that is one bool tensor (or a list/array of bools), else nullopt.
std::optional<Tensor> mask_key(const Tensor& t, py::handle key) {
  PyObject* p = key.ptr();
  if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 1) return mask_key(t, PyTuple_GET_ITEM(p, 0));
  if (!(is_tensor(key) || PyList_Check(p) || py::isinstance<py::array>(key))) return std::nullopt;
  // Only bools make a mask: an int list or array is not converted twice (array_ids does it).
  if (PyList_Check(p) && PyList_GET_SIZE(p) > 0 && !PyBool_Check(PyList_GET_ITEM(p, 0)) &&
      !PyList_Check(PyList_GET_ITEM(p, 0)))
    return std::nullopt;
  if (py::isinstance<py::array>(key) && key.cast<py::array>().dtype().kind() != 'b')
    return std::nullopt;
  Tensor m = index_arg(key, t);
  if (m.dtype() != DType::Bool) return std::nullopt;
  const int64_t k = m.ndim();
  bool fits = k <= t.ndim();
  for (int64_t d = 0; fits && d < k; ++d) fits = m.shape()[size_t(d)] == t.shape()[size_t(d)];
  if (!fits)
    invalid_key("the mask's shape " + shape_str(m.shape()) +
                " must match the leading dims of the tensor's shape " + shape_str(t.shape()));
  Storage::check_same_device("index", *t.storage(), *m.storage());
  return m;
}

// The mask's true positions, flattened, on the host (as PyTorch's, this waits for it).
std::vector<int64_t> true_positions(const Tensor& mask) {
  std::vector<uint8_t> bytes(size_t(mask.numel()));
  to_host(mask, bytes.data());
  std::vector<int64_t> at;
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i]) at.push_back(int64_t(i));
  return at;
}

// t viewed as (mask.numel(), the dims after the mask's).
Tensor rows_of(const Tensor& t, const Tensor& mask) {
  Shape rows{mask.numel()};
  rows.insert(rows.end(), t.shape().begin() + mask.ndim(), t.shape().end());
  return reshape(t, rows);
}

Tensor masked_read(const Tensor& t, const Tensor& mask) {
  std::vector<int64_t> at = true_positions(mask);
  Tensor ids = from_host(at.data(), {int64_t(at.size())}, DType::I64, t.device());
  return gil_free_if(t.numel() >= kReleaseGilNumel,
                     [&] { return index_select(rows_of(t, mask), 0, ids); });
}

// The value broadcasts to t[mask]'s shape (count, rest); each true position takes its
// row through where(), as set_through_array does.
void masked_write(const Tensor& t, const Tensor& mask, py::handle value) {
  check_writable("setitem", t);
  std::vector<int64_t> at = true_positions(mask);
  Shape target = rows_of(t, mask).shape();
  target[0] = int64_t(at.size());
  Tensor src = assigned_value(t, value);
  if (broadcast_shapes("setitem", src.shape(), target) != target)
    throw_shape_mismatch("setitem", src.shape(), target,
                         "the value must broadcast to the masked shape (count of True, ...)");
  if (at.empty()) return;
  std::vector<int64_t> rank(size_t(mask.numel()), 0);
  for (size_t i = 0; i < at.size(); ++i) rank[size_t(at[i])] = int64_t(i);
  Tensor rank_t = from_host(rank.data(), {mask.numel()}, DType::I64, t.device());
  Shape hit_shape = mask.shape();
  hit_shape.resize(size_t(t.ndim()), 1);
  gil_free_if(t.numel() >= kReleaseGilNumel, [&] {
    Tensor rows = index_select(broadcast_to(src, target), 0, rank_t);
    if (rows.dtype() != t.dtype()) rows = to_dtype(rows, t.dtype());
    copy_into(where(reshape(mask, hit_shape), reshape(rows, t.shape()), t), t, "setitem");
  });
}

Tensor index_tensor(const Tensor& t, py::handle key) {
  if (std::optional<Tensor> mask = mask_key(t, key)) return masked_read(t, *mask);
  ParsedKey k = parse(t, key);
  Walked w = walk(t, k, false);
  return w.array_dim > 0 && array_dim_leads(k) ? move_dim_to_front(w.view, w.array_dim) : w.view;
}

// The value of t[key] = value as a tensor on the view's device.
Tensor assigned_value(const Tensor& view, py::handle value) {
  if (is_tensor(value)) return value.cast<Tensor>();
  Number n = read_number(value);
  if (n.kind != Number::None) {
    bool promote = n.kind == Number::Float && !dtype_is_float(view.dtype());
    return number_tensor(n, promote ? DType::F32 : view.dtype(), view.device(), "setitem");
  }
  py::object made = py::module_::import("ember").attr("tensor")(
      value, py::arg("dtype") = dtype_object(view.dtype()), py::arg("device") = view.device());
  return made.cast<Tensor>();
}

// The ids of a 1-D index array, on the host as int64.
std::vector<int64_t> host_ids(const Tensor& ids) {
  std::vector<int64_t> out(size_t(ids.numel()));
  auto widen = [&](auto narrow_type) {  // widened here, needing no int64 kernels
    std::vector<decltype(narrow_type)> narrow(out.size());
    to_host(ids, narrow.data());
    std::copy(narrow.begin(), narrow.end(), out.begin());
  };
  if (ids.dtype() == DType::I64)
    to_host(ids, out.data());
  else if (ids.dtype() == DType::I32)
    widen(int32_t{});
  else
    widen(uint32_t{});
  return out;
}

// t[..., ids, ...] = value with no scatter kernel: each element of the view that an id
// selects is replaced through where(hit, value at the id's position, view). The last of
// repeated ids wins, as in numpy.
void set_through_array(const ParsedKey& k, const Walked& w, py::handle value) {
  const Tensor& base = w.view;
  const size_t ad = size_t(w.array_dim);
  const int64_t size = base.shape()[ad];
  std::vector<int64_t> ids = host_ids(*w.ids);
  std::vector<int64_t> pos(size_t(size), 0);
  std::vector<uint8_t> hit(size_t(size), 0);
  for (size_t i = 0; i < ids.size(); ++i) {
    pos[size_t(ids[i])] = int64_t(i);
    hit[size_t(ids[i])] = 1;
  }
  // The value broadcasts to t[key]'s shape, whose array dim leads when numpy moves it.
  Shape selected = base.shape();
  selected[ad] = int64_t(ids.size());
  const bool leads = ad > 0 && array_dim_leads(k);
  Shape target = selected;
  if (leads) {
    target.erase(target.begin() + ptrdiff_t(ad));
    target.insert(target.begin(), selected[ad]);
  }
  Tensor src = assigned_value(base, value);
  if (broadcast_shapes("setitem", src.shape(), target) != target)
    throw_shape_mismatch("setitem", src.shape(), target,
                         "the value must broadcast to the indexed shape");
  Tensor spread = broadcast_to(src, target);
  if (leads) {  // back to base's order: the leading dim returns to `ad`
    Dims order;
    for (int64_t d = 1; d <= int64_t(ad); ++d) order.push_back(d);
    order.push_back(0);
    for (int64_t d = int64_t(ad) + 1; d < spread.ndim(); ++d) order.push_back(d);
    spread = permute(spread, order);
  }
  Shape along(size_t(base.ndim()), 1);
  along[ad] = size;
  const DevicePtr& dev = base.device();
  Tensor hit_t = reshape(from_host(hit.data(), {size}, DType::U8, dev), along);
  Tensor pos_t = from_host(pos.data(), {size}, DType::I64, dev);
  gil_free_if(base.numel() >= kReleaseGilNumel, [&] {
    Tensor moved = index_select(spread, int64_t(ad), pos_t);
    if (moved.dtype() != base.dtype()) moved = to_dtype(moved, base.dtype());
    copy_into(where(hit_t, moved, base), base, "setitem");
  });
}

void set_item(const Tensor& t, py::handle key, py::handle value) {
  if (std::optional<Tensor> mask = mask_key(t, key)) return masked_write(t, *mask, value);
  ParsedKey k = parse(t, key);
  Walked w = walk(t, k, true);
  if (w.ids) return set_through_array(k, w, value);
  Tensor src = assigned_value(w.view, value);
  gil_free_if(w.view.numel() >= kReleaseGilNumel, [&] { copy_into(src, w.view, "setitem"); });
}

}  // namespace

void bind_index(py::class_<Tensor>& cls) {
  cls.def("__getitem__", [](const Tensor& t, py::handle key) { return index_tensor(t, key); });
  cls.def("__setitem__", &set_item);
}

}  // namespace ember::python
