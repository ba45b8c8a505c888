// where(cond, a, b): cond of any dtype (nonzero is true, -0.0 is not, NaN is), every
// layout broadcast to dst's shape. Values move as bits: one kernel per width pair.
#include "elementwise.cuh"

namespace ember::cuda {

namespace {

// `mask` drops a float's sign bit, so that -0.0 counts as zero.
template <typename CondBits, typename B>
struct Select {
  CondBits mask;
  __device__ B operator()(CondBits c, B t, B f) const { return (c & mask) ? t : f; }
};

}  // namespace

void CudaStorage::where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
                        const BackendStorage& on_false, const Layout& f_layout, BackendStorage& dst,
                        const Layout& dst_layout) const {
  const size_t cond_bytes = dtype_size(dtype_);
  dispatch_width(cond_bytes, [&](auto ctag) {
    using CB = decltype(ctag);
    CB mask = CB(~CB(0));
    if (dtype_is_float(dtype_)) mask = CB(mask >> 1);  // all but the sign bit
    dispatch_width(dtype_size(dst.dtype()), [&](auto vtag) {
      using B = decltype(vtag);
      launch_map3("where", cuda(), ptr<CB>(), cond, as_cuda(on_true).ptr<B>(), t_layout,
                  as_cuda(on_false).ptr<B>(), f_layout, as_cuda(dst).ptr<B>(), dst_layout,
                  Select<CB, B>{mask});
    });
  });
}

}  // namespace ember::cuda
