// Ops along the last dim of a view (scans, sorting): the rows' starts as a walk.
#pragma once

#include "common.cuh"

namespace ember::cuda {

struct RowView {
  Walk<1> outer;  // the row starts (the leading dims)
  int64_t n, stride, count;
};

// The rows of `src` (its last dim): n elements `stride` apart, `count` rows.
inline RowView row_view(const char* op, const Layout& src) {
  RowView r;
  const int64_t nd = src.ndim();
  r.n = src.dim(nd - 1);
  r.stride = src.strides().back();
  r.count = r.n == 0 ? 0 : src.numel() / r.n;
  const Shape lead(src.shape().begin(), src.shape().end() - 1);
  const Layout outer(lead, Strides(src.strides().begin(), src.strides().end() - 1), src.offset());
  r.outer = make_walk<1>(op, lead, {&outer});
  return r;
}

__device__ __forceinline__ int64_t row_start(const RowView& r, int64_t row) {
  int64_t base[1];
  walk_offsets(r.outer, row, base);
  return base[0];
}

// Stream-ordered scratch memory of one op, freed after the work queued on the stream.
class Scratch {
 public:
  Scratch(CudaDevice& dev, size_t bytes) : dev_(dev), bytes_(bytes), p_(dev.allocate(bytes)) {}
  ~Scratch() { dev_.free(p_, bytes_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  CudaDevice& dev_;
  size_t bytes_;
  void* p_;
};

}  // namespace ember::cuda
