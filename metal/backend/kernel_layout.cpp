// Layouts as kernels see them: dims merged where every view allows it, at most
// EMBER_MAX_DIMS of them, and a flag for dense views (which need no index math).
#include <algorithm>
#include <climits>
#include <string>

#include "core/fast_div.h"
#include "core/layout_plan.h"
#include "metal_backend.h"

namespace ember::metal {

const char* dtype_suffix(DType d) {
  switch (d) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I64: return "i64";
    case DType::U32: return "u32";
    case DType::I32: return "i32";
    case DType::U8:
    case DType::Bool: return "u8";  // bool runs uint8's kernels (see dtype.h)
    case DType::F64: break;
  }
  throw Error(ErrorKind::UnsupportedDType, "float64 has no Metal kernels (a Metal op got it)")
      .with("dtype", d);
}

std::vector<StridedLayout> kernel_layouts(const char* op, const std::vector<Layout>& layouts,
                                          WalkOrder order) {
  const size_t k = layouts.size();
  const Shape& shape = layouts.at(0).shape();
  for (const Layout& l : layouts)
    if (l.shape() != shape)
      throw_shape_mismatch(op, shape, l.shape(), "kernel layouts must share one shape");

  // core's plan (core/layout_plan.h): size-1 dims drop out, and a dim joins the one
  // before it when, in every view, that one steps exactly over it
  std::vector<const Layout*> views;
  for (const Layout& l : layouts) views.push_back(&l);
  const DimPlan plan = plan_dims(shape, views, order);
  if (plan.ndim() > EMBER_MAX_DIMS)
    throw_invalid(op, "the Metal kernels take views of at most " + std::to_string(EMBER_MAX_DIMS) +
                          " dims after merging, this one has " + std::to_string(plan.ndim()) +
                          " (shape " + shape_str(shape) + "); call .contiguous() first");

  // below 2^31 elements, coordinates split in 32-bit math by multiply-high divisions
  const bool narrow = shape_numel(plan.shape) <= int64_t(INT32_MAX);
  std::vector<StridedLayout> out(k);
  for (size_t j = 0; j < k; ++j) {
    StridedLayout& s = out[j];
    s = StridedLayout{};
    s.offset = plan.offsets[j];
    s.ndim = uint32_t(plan.ndim());
    s.narrow = narrow ? 1 : 0;
    for (size_t d = 0; d < plan.ndim(); ++d) {
      s.shape[d] = plan.shape[d];
      s.strides[d] = plan.strides[j][d];
      if (narrow) {
        const FastDivParams f = fast_div_params(uint32_t(std::max<int64_t>(plan.shape[d], 1)));
        s.magic[d] = f.magic;
        s.shift[d] = f.shift;
      }
    }
    s.contiguous = layouts[j].is_contiguous() || (plan.ndim() == 1 && plan.strides[j][0] == 1);
  }
  return out;
}

StridedLayout kernel_layout(const char* op, const Layout& layout) {
  return kernel_layouts(op, {layout})[0];
}

}  // namespace ember::metal
