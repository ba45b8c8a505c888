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

// Where row `row` of `src` starts, in elements, on the host: for the few rows that take
// device-wide passes one after another.
inline int64_t host_row_start(const Layout& src, int64_t row) {
  int64_t off = src.offset();
  for (int64_t d = src.ndim() - 2; d >= 0; --d) {
    const int64_t size = src.dim(d);
    off += (row % size) * src.strides()[size_t(d)];
    row /= size;
  }
  return off;
}

// The one choice between the two shapes of a scan, sort or topk along rows. A block per
// row runs a row on one SM: fine while the rows fill the GPU, but one row of 2^26 then
// scanned at one SM's speed (63 ms on an H100) and one of 2^22 sorted at about 10^8 keys
// a second. Few long rows instead take a device-wide pass each (CUB's decoupled
// look-back scan, its onesweep radix sort), one after another: some 10 us of launches a
// row for a scan and 30 us for a sort, against a block per row's n / (a block's rate).
// So count rows of n take the device-wide passes while count <= n / L (L = 2^15 for a
// scan, 2^12 for a sort: the launches stay below the block's time) and count <= 64.
// topk leaves those rows to core's sort.
enum class RowPass { PerBlock, DeviceWide };
inline RowPass row_pass(const RowView& r, bool sort) {
  const int64_t per_row = sort ? int64_t(1) << 12 : int64_t(1) << 15;
  return r.count <= std::min<int64_t>(64, r.n / per_row) ? RowPass::DeviceWide : RowPass::PerBlock;
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
