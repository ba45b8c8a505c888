#include "device.h"
#include "error.h"
#include "tensor.h"
#include "derivatives.h"

namespace ember {

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous() && t.layout().offset() == 0 && t.storage()->numel() == t.numel()) return t;
  if (autograd::wants_grad({&t})) return autograd::d::copy("CloneBackward0", t, [](const Tensor& x) { return contiguous(x); });
  return clone(t);
}

Tensor clone(const Tensor& t) {
  if (autograd::wants_grad({&t})) return autograd::d::copy("CloneBackward0", t, [](const Tensor& x) { return clone(x); });
  Tensor out = empty(t.shape(), t.dtype(), t.device(), "contiguous");
  StorageLocks locks(__func__, {t.storage().get()}, {out.storage().get()});
  t.storage()->impl().copy_strided(t.layout(), out.storage()->impl(), out.layout());
  return out;
}

namespace {

// The backend's cast of `src` viewed by `layout` into dst. Kernels see bool as uint8, so
// bool <-> uint8 is a copy of the bytes, and anything into bool is `!= 0` (a comparison,
// whose kernels write 0/1), never uint8's saturation (0.5 -> 0, 256 -> 255).
void cast_into(const Tensor& src, const Layout& layout, const Tensor& dst) {
  if (dst.dtype() == DType::Bool && src.dtype() != DType::Bool) {
    Tensor b = cmp(CmpOp::Ne, src.view_as(layout), zeros({}, src.dtype(), src.device()));
    StorageLocks locks(__func__, {b.storage().get()}, {dst.storage().get()});
    return b.storage()->impl().copy_strided(b.layout(), dst.storage()->impl(), dst.layout());
  }
  StorageLocks locks(__func__, {src.storage().get()}, {dst.storage().get()});
  if (src.dtype() == dst.dtype() || src.dtype() == DType::Bool && dst.dtype() == DType::U8)
    src.storage()->impl().copy_strided(layout, dst.storage()->impl(), dst.layout());
  else
    src.storage()->impl().cast(layout, dst.storage()->impl(), dst.layout());
}

}  // namespace

Tensor to_dtype(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  if (autograd::wants_grad({&t}))
    return autograd::d::copy("ToCopyBackward0", t, [dtype](const Tensor& x) { return to_dtype(x, dtype); });
  DevicePtr dev = t.device();
  if (!dev->supports_dtype(dtype))
    throw_unsupported_dtype("to_dtype", dtype, dev, "this backend has no kernels for it");
  Tensor out = empty_for(t.shape(), dtype, dev, "to_dtype", {&t.layout()});  // PyTorch's preserve_format
  cast_into(t, t.layout(), out);
  return out;
}

void check_writable(const char* op, const Tensor& dst) {
  if (!dst.layout().has_internal_overlap()) return;
  throw_invalid(op,
                "cannot write into a view in which several elements share one memory "
                "location (shape " +
                    shape_str(dst.shape()) + ", strides " + shape_str(dst.layout().strides()) +
                    ", e.g. from expand or broadcast_to). Write into a tensor of its own "
                    "instead: t = t.contiguous() (or t.clone()) first");
}

bool write_clobbers(const Tensor& src, const Layout& read, const Tensor& dst) {
  if (src.storage() != dst.storage()) return false;
  const Layout& w = dst.layout();
  if (read.offset() == w.offset() && read.strides() == w.strides() && read.shape() == w.shape())
    return false;  // the same view: element i is read before it is written
  auto [a0, a1] = read.extent();
  auto [b0, b1] = w.extent();
  return a0 < b1 && b0 < a1;
}

void copy_into(const Tensor& src, const Tensor& dst, const char* op) {
  autograd::check_inplace(op, dst);
  autograd::refuse_grad(op, {&src});
  Layout src_layout = src.layout().broadcast_to(op, dst.shape());
  Storage::check_same_device(op, *dst.storage(), *src.storage());
  check_writable(op, dst);
  if (write_clobbers(src, src_layout, dst)) return copy_into(clone(src), dst, op);
  cast_into(src, src_layout, dst);
}

Tensor to_device(const Tensor& t, const DevicePtr& device) {
  if (t.device()->same_device(*device)) return t;
  if (autograd::wants_grad({&t})) return autograd::d::to_device(t, device);
  if (!device->supports_dtype(t.dtype()))
    throw_unsupported_dtype("to_device", t.dtype(), device,
                            "convert first, e.g. t.to_dtype(ember.float32).to_device(dst)");
  Tensor src = contiguous(t);
  std::shared_ptr<Storage> moved;
  {
    StorageLocks locks(__func__, {src.storage().get()}, {});
    moved = src.storage()->copy_to(device);
  }
  return Tensor(std::move(moved), Layout(t.shape()));
}

void to_host(const Tensor& t, void* dst) {
  Tensor src = contiguous(t);  // exactly t's elements, from offset 0
  StorageLocks locks(__func__, {src.storage().get()}, {});
  read_to_host(src.storage()->impl(), dst);
}

void copy_from(const Tensor& dst, const Tensor& src) {
  const char* op = "copy_";
  autograd::check_inplace(op, dst);
  autograd::refuse_grad(op, {&src});
  if (dst.device()->same_device(*src.device())) return copy_into(src, dst, op);
  check_writable(op, dst);
  auto* host = static_cast<char*>(dst.storage()->impl().host_memory());
  if (host && dst.layout().is_contiguous() && dst.dtype() == src.dtype() &&
      dst.shape() == src.shape()) {
    Tensor from = contiguous(src);  // one copy from the device, into dst's memory
    StorageLocks locks(StorageLocks::AcrossDevices{}, {from.storage().get()}, {dst.storage().get()});
    read_to_host(from.storage()->impl(),
                 host + dst.layout().offset() * dtype_size(dst.dtype()));
    return;
  }
  copy_into(to_device(src, dst.device()), dst, op);
}

namespace {

// The backends that can give page-locked memory, with why each cannot here.
const BackendFactory* pinning_backend(std::string& why_not) {
  for (const DeviceKind* k : device_kinds()) {
    const BackendFactory* f = find_backend(k->name);
    if (!f || !f->pinned_host_alloc) continue;
    std::string reason = f->unavailable_reason();
    if (reason.empty()) return f;
    why_not += "; " + k->name + ": " + reason;
  }
  return nullptr;
}

}  // namespace

Tensor pin_memory(const Tensor& t) {
  const char* op = "pin_memory";
  if (!kind_of(*t.device()).host)
    throw_invalid(op, "only host tensors can be pinned; this one is on " + t.device()->describe() +
                          " (pinned memory is host memory)");
  std::string why_not;
  const BackendFactory* f = pinning_backend(why_not);
  if (!f)
    throw Error(ErrorKind::BackendUnavailable,
                "pin_memory: page-locked memory comes from a GPU backend that copies from it "
                "by DMA, and none can be used here" +
                    (why_not.empty() ? std::string(" (this ember has none built in)") : why_not) +
                    "; without one, pinning would not make any copy faster")
        .with("reason", why_not.empty() ? std::string("not built in") : why_not.substr(2));
  const size_t bytes = size_t(t.numel()) * dtype_size(t.dtype());
  std::shared_ptr<void> mem = f->pinned_host_alloc(bytes);
  Tensor out = wrap_host(op, mem.get(), t.numel(), Layout(t.shape()), t.dtype(), mem, t.device());
  copy_into(t, out, op);
  return out;
}

bool is_pinned(const Tensor& t) {
  const void* p = t.storage()->impl().host_memory();
  if (!p) return false;  // device memory, as torch answers for CUDA tensors
  for (const DeviceKind* k : device_kinds()) {
    const BackendFactory* f = find_backend(k->name);
    if (f && f->is_pinned_host && f->is_pinned_host(p)) return true;
  }
  return false;
}

}  // namespace ember
