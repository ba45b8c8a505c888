// Reductions over the trailing dims (kernels/reduce.metal): one threadgroup holds one or
// more outputs, the lanes of an output stride over its elements, then a tree combines.
// Reductions across rows (the kept dims end in a dense run of outputs and the reduced
// dims step over it, e.g. a sum over dim 0) put neighbouring outputs on neighbouring
// lanes, so that every load of a SIMD group reads one run of memory. When the outputs
// alone leave most of the GPU idle (one long row, a few columns), each output's elements
// split over several threadgroups that write partials, and a second pass merges them.
#include <algorithm>
#include <memory>
#include <string>

#include "../kernels/reduce.h"
#include "core/layout_plan.h"
#include "launch.h"

namespace ember::metal {

namespace {

// Threadgroups a dispatch should have for the GPU to be busy: several per core on the
// largest Apple GPUs (a smaller GPU runs the extra ones in turn, at the cost of a few
// more partials).
constexpr int64_t kWantGroups = 256;
// Elements a lane should reduce at least before a split is worth its partials.
constexpr int64_t kMinPerLane = 64;

// The layout, lane shape and split of a reduction of the trailing `reduced_dims` dims of
// src by `kernel` (ReduceKParams); 0 outputs leave p.nout 0. Returns the threadgroups
// of the first pass (groups * chunks) and the group's size.
struct ReducePlanned {
  ReduceKParams p{};
  rt::Size3 grid{1, 1, 1}, lanes{1, 1, 1};
};

ReducePlanned plan(MetalDevice& metal, const char* name, const std::string& kernel,
                   const Layout& src, int64_t reduced_dims) {
  ReducePlanned out;
  ReduceKParams& p = out.p;
  const size_t nk = size_t(src.ndim() - reduced_dims);
  const Shape& sh = src.shape();
  const Strides& st = src.strides();
  const Shape kept_shape(sh.begin(), sh.begin() + nk), red_shape(sh.begin() + nk, sh.end());
  const Layout kept(kept_shape, Strides(st.begin(), st.begin() + nk), src.offset());
  const Layout red(red_shape, Strides(st.begin() + nk, st.end()), 0);
  p.nout = shape_numel(kept_shape);
  p.count = shape_numel(red_shape);
  if (p.nout == 0) return out;
  p.kept = kernel_layout(name, kept);
  p.red = kernel_layout(name, red);
  const uint32_t group = power_of_two_group(metal, "reduce", kernel, EMBER_REDUCE_GROUP);
  // core's plan (core/layout_plan.h): columns when the kept dims end in a dense run of
  // outputs that the reduced dims step over
  if (plan_reduce(src, reduced_dims).columns) {
    p.rows = ember_column_outputs(p.nout, group);
    p.lanes = group / p.rows;
    p.out_minor = 1;
  } else {
    p.lanes = ember_reduce_lanes(p.count, group);
    p.rows = group / p.lanes;
  }
  const int64_t groups = (p.nout + p.rows - 1) / p.rows;
  p.chunks = 1;
  p.per_chunk = p.count;
  const int64_t min_chunk = int64_t(p.lanes) * kMinPerLane;
  if (groups < kWantGroups && p.count >= 2 * min_chunk) {
    const int64_t want = std::min((kWantGroups + groups - 1) / groups, p.count / min_chunk);
    p.per_chunk = (p.count + want - 1) / want;
    p.chunks = uint32_t((p.count + p.per_chunk - 1) / p.per_chunk);
  }
  out.grid = rt::Size3{uint32_t(groups * p.chunks), 1, 1};
  out.lanes = rt::Size3{group, 1, 1};
  return out;
}

// Runs a planned reduction: `kernel` straight into dst, or, split, into partials of
// `partial_bytes` each that `finish` merges into dst. P is ReduceKParams or a struct
// that starts with one (the kernels' parameters).
template <typename P>
void run(MetalDevice& metal, const MetalStorage& src, const ReducePlanned& r, const P& params,
         const std::string& kernel, const std::string& finish, int64_t partial_bytes,
         BackendStorage& dst) {
  const ReduceKParams& p = r.p;
  if (p.nout == 0) return;
  if (p.chunks == 1) {
    metal.dispatch("reduce", kernel, {&src, &as_metal(dst)}, params, r.grid, r.lanes);
    return;
  }
  const int64_t words = (p.nout * p.chunks * partial_bytes + 7) / 8;
  std::unique_ptr<BackendStorage> partials = metal.alloc_uninit(words, DType::I64);
  const MetalStorage& part = as_metal(*partials);
  metal.dispatch("reduce", kernel, {&src, &part}, params, r.grid, r.lanes);
  metal.dispatch_1d("reduce", finish, {&part, &as_metal(dst)}, params, p.nout);
}

}  // namespace

void MetalStorage::reduce(ReduceOp op, const Layout& src, int64_t reduced_dims,
                          BackendStorage& dst) const {
  const char* name = reduce_name(op);
  const std::string suffix = std::string("_") + dtype_suffix(dtype_);
  const std::string kernel = std::string("reduce_") + name + suffix;
  const ReducePlanned r = plan(metal(), name, kernel, src, reduced_dims);
  run(metal(), *this, r, r.p, kernel, std::string("reduce_") + name + "_finish" + suffix,
      EMBER_REDUCE_PARTIAL_BYTES, dst);
}

bool MetalStorage::reduce_sum_squares(const Layout& src, int64_t reduced_dims,
                                      BackendStorage& dst) const {
  // float32 only: core widens half inputs first, to take the root before their rounding
  if (dtype_ != DType::F32) return false;
  const ReducePlanned r = plan(metal(), "norm", "reduce_sumsq_f32", src, reduced_dims);
  // the partials are sums: the sum's merge
  run(metal(), *this, r, r.p, "reduce_sumsq_f32", "reduce_sum_finish_f32",
      EMBER_REDUCE_PARTIAL_BYTES, dst);
  return true;
}

bool MetalStorage::reduce_prod(const Layout& src, int64_t reduced_dims, BackendStorage& dst) const {
  if (dtype_ != DType::F32 && dtype_ != DType::I64) return false;
  const std::string suffix = std::string("_") + dtype_suffix(dtype_);
  const ReducePlanned r = plan(metal(), "prod", "reduce_prod" + suffix, src, reduced_dims);
  run(metal(), *this, r, r.p, "reduce_prod" + suffix, "reduce_prod_finish" + suffix,
      EMBER_ACC_PARTIAL_BYTES, dst);
  return true;
}

bool MetalStorage::reduce_logsumexp(const Layout& src, int64_t reduced_dims,
                                    BackendStorage& dst) const {
  if (dtype_ != DType::F32) return false;
  const ReducePlanned r = plan(metal(), "logsumexp", "reduce_lse_f32", src, reduced_dims);
  run(metal(), *this, r, r.p, "reduce_lse_f32", "reduce_lse_finish_f32",
      EMBER_ACC_PARTIAL_BYTES, dst);
  return true;
}

bool MetalStorage::reduce_var(const Layout& src, int64_t reduced_dims, double correction,
                              bool root, BackendStorage& dst) const {
  if (dtype_ != DType::F32 && dtype_ != DType::F16 && dtype_ != DType::BF16) return false;
  const std::string suffix = std::string("_") + dtype_suffix(dtype_);
  const ReducePlanned r = plan(metal(), root ? "std" : "var", "reduce_var" + suffix, src,
                               reduced_dims);
  VarKParams p{};
  p.r = r.p;
  p.correction = float(correction);
  p.root = root ? 1 : 0;
  run(metal(), *this, r, p, "reduce_var" + suffix, "reduce_var_finish" + suffix,
      EMBER_ACC_PARTIAL_BYTES, dst);
  return true;
}

}  // namespace ember::metal
