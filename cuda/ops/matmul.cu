// Matmul: floats through cuBLAS (cublasGemmStridedBatchedEx; transposed views become
// transpose flags, batch dims one stride, f16/bf16 on tensor cores accumulating in f32,
// f32 without TF32 unless ember.set_float32_matmul_precision allows it); integers
// through a tiled kernel that wraps as numpy does.
#include <cublas_v2.h>

#include "common.cuh"
#include "core/blas_view.h"

namespace ember::cuda {

namespace {

// cuBLAS takes int leading dimensions
BlasView blas_view(int64_t rows, int64_t cols, int64_t srow, int64_t scol) {
  return ember::blas_view(rows, cols, srow, scol, (int64_t(1) << 31) - 1);
}

struct Operand {
  const void* data;
  Layout layout;
  std::unique_ptr<BackendStorage> copy;  // a dense copy, for views cuBLAS cannot read
};

// A dense copy of the operand.
Operand dense_copy(const CudaStorage& s, const Layout& l) {
  auto copy = s.cuda().alloc_uninit(l.numel(), s.dtype());
  Layout dense(l.shape());
  s.copy_strided(l, *copy, dense);
  const void* p = as_cuda(*copy).ptr();
  return {p, dense, std::move(copy)};
}

// The operand as cuBLAS can read it: itself, or a dense copy.
Operand readable(const CudaStorage& s, const Layout& l, int64_t rows, int64_t cols) {
  const int64_t nd = l.ndim();
  BlasView v = blas_view(rows, cols, l.strides()[size_t(nd - 2)], l.strides()[size_t(nd - 1)]);
  if (v.ok) return {s.ptr(), l, nullptr};
  return dense_copy(s, l);
}

// Whether the batch dims of `l` (all but the last two) merge into one stride.
bool batch_is_one_stride(const Layout& l) {
  const Shape batch(l.shape().begin(), l.shape().end() - 2);
  const Layout b(batch, Strides(l.strides().begin(), l.strides().end() - 2), l.offset());
  Layout merged;
  return b.try_reshape({shape_numel(batch)}, &merged);
}

cudaDataType_t blas_type(DType d) {
  switch (d) {
    case DType::F32: return CUDA_R_32F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    default: return CUDA_R_64F;
  }
}

void check_blas(cublasStatus_t st, const CudaDevice& dev) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  throw Error(ErrorKind::Device, dev.describe() +
                                     ": cuBLAS matmul failed: " + cublasGetStatusName(st) + " (" +
                                     cublasGetStatusString(st) + ")")
      .with("device", std::const_pointer_cast<BackendDevice>(dev.shared_from_this()));
}

void matmul_blas(const CudaStorage& lhs, const Layout& la0, const CudaStorage& rhs,
                 const Layout& lb0, CudaStorage& dst) {
  const int64_t nd = la0.ndim(), m = la0.dim(nd - 2), k = la0.dim(nd - 1), n = lb0.dim(nd - 1);
  constexpr int64_t kMaxInt = (int64_t(1) << 31) - 1;
  if (m > kMaxInt || n > kMaxInt || k > kMaxInt)
    throw_invalid("matmul", "cuBLAS takes matrices of fewer than 2^31 rows and columns");
  Operand a = readable(lhs, la0, m, k), b = readable(rhs, lb0, k, n);
  // The batch dims, merged where all three views allow: one cuBLAS call per outer batch.
  const Shape batch(la0.shape().begin(), la0.shape().end() - 2);
  Strides cs = contiguous_strides(batch);
  for (auto& s : cs) s *= m * n;
  const Layout bc(batch, cs, 0);
  const auto batch_walk = [&] {
    const Layout &la = a.layout, &lb = b.layout;
    const Layout ba(batch, Strides(la.strides().begin(), la.strides().end() - 2), la.offset());
    const Layout bb(batch, Strides(lb.strides().begin(), lb.strides().end() - 2), lb.offset());
    return make_walk<3>("matmul", batch, {&ba, &bb, &bc});
  };
  const auto outer_of = [&](const Walk<3>& w) {
    return shape_numel(batch) / std::max<int64_t>(w.ndim ? w.shape[w.ndim - 1] : 1, 1);
  };
  Walk<3> w = batch_walk();
  // Batch dims that do not merge into one stride cost a cuBLAS call per outer batch: four
  // calls of twelve products for attention's (batch, heads) of permuted views. A dense copy
  // of such an operand, as PyTorch's reshape makes, gives one call; it is made while it
  // costs less than the calls it saves (some 5 us each: 16 MiB of copying a call).
  if (const int64_t calls = outer_of(w); calls > 1) {
    const bool merge_a = batch_is_one_stride(a.layout), merge_b = batch_is_one_stride(b.layout);
    const int64_t copy_bytes = int64_t(dtype_size(lhs.dtype())) *
                               ((merge_a ? 0 : la0.numel()) + (merge_b ? 0 : lb0.numel()));
    if (copy_bytes > 0 && copy_bytes <= (calls - 1) * (int64_t(16) << 20)) {
      if (!merge_a) a = dense_copy(lhs, a.layout);
      if (!merge_b) b = dense_copy(rhs, b.layout);
      w = batch_walk();
    }
  }
  const Layout &la = a.layout, &lb = b.layout;
  BlasView va = blas_view(m, k, la.strides()[size_t(nd - 2)], la.strides()[size_t(nd - 1)]);
  BlasView vb = blas_view(k, n, lb.strides()[size_t(nd - 2)], lb.strides()[size_t(nd - 1)]);
  const int64_t inner = w.ndim ? w.shape[w.ndim - 1] : 1;
  const int64_t outer = outer_of(w);
  const int64_t sa = w.ndim ? w.stride[0][w.ndim - 1] : 0,
                sb = w.ndim ? w.stride[1][w.ndim - 1] : 0;
  const cudaDataType_t type = blas_type(lhs.dtype());
  const size_t es = dtype_size(lhs.dtype());
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (lhs.dtype() == DType::F64) compute = CUBLAS_COMPUTE_64F;
  if (lhs.dtype() == DType::F32 && float32_matmul_precision() != MatmulPrecision::Highest)
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* alpha = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&zero_d) : &zero_f;
  CudaDevice& dev = lhs.cuda();
  GpuScope scope(dev.gpu());
  std::unique_lock<std::mutex> lock;
  cublasHandle_t h = dev.blas(lock);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off[3] = {w.offset[0], w.offset[1], 0};
    int64_t q = o;
    for (int d = w.ndim - 2; d >= 0; --d) {  // outer batch -> offsets
      const int64_t idx = q % w.shape[d];
      q /= w.shape[d];
      for (int j = 0; j < 3; ++j) off[j] += idx * w.stride[j][d];
    }
    // Row-major C = A B is column-major C^T = B^T A^T: B comes first.
    const char* pa = static_cast<const char*>(a.data) + off[0] * es;
    const char* pb = static_cast<const char*>(b.data) + off[1] * es;
    char* pc = dst.ptr<char>() + off[2] * es;
    check_blas(cublasGemmStridedBatchedEx(
                   h, vb.trans ? CUBLAS_OP_T : CUBLAS_OP_N, va.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
                   int(n), int(m), int(k), alpha, pb, type, int(vb.ld), sb, pa, type, int(va.ld),
                   sa, beta, pc, type, int(n), w.ndim ? w.stride[2][w.ndim - 1] : m * n, int(inner),
                   compute, CUBLAS_GEMM_DEFAULT),
               dev);
  }
  // The dense copies are freed in stream order, after the products that read them.
}

// ---- integers: 16 x 16 tiles through shared memory

constexpr int kTile = 16;

struct IntMatmul {
  Walk<3> batch;  // lhs, rhs, dst batch offsets
  int64_t m, n, k, sam, sak, sbk, sbn;
};

template <typename T>
__global__ void matmul_int(const T* a, const T* b, T* c, IntMatmul p) {
  __shared__ T ta[kTile][kTile], tb[kTile][kTile];
  int64_t off[3];
  walk_offsets(p.batch, blockIdx.z, off);
  const int64_t row = int64_t(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = int64_t(blockIdx.x) * kTile + threadIdx.x;
  T acc = 0;
  for (int64_t t = 0; t < p.k; t += kTile) {
    const int64_t ka = t + threadIdx.x, kb = t + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] =
        row < p.m && ka < p.k ? a[off[0] + row * p.sam + ka * p.sak] : T(0);
    tb[threadIdx.y][threadIdx.x] =
        kb < p.k && col < p.n ? b[off[1] + kb * p.sbk + col * p.sbn] : T(0);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kTile; ++j)
      acc = wrap_add(acc, wrap_mul(ta[threadIdx.y][j], tb[j][threadIdx.x]));
    __syncthreads();
  }
  if (row < p.m && col < p.n) c[off[2] + row * p.n + col] = acc;
}

template <typename T>
void launch_int(const CudaStorage& lhs, const Layout& la, const CudaStorage& rhs, const Layout& lb,
                CudaStorage& dst) {
  const int64_t nd = la.ndim();
  IntMatmul p;
  p.m = la.dim(nd - 2), p.k = la.dim(nd - 1), p.n = lb.dim(nd - 1);
  p.sam = la.strides()[size_t(nd - 2)], p.sak = la.strides()[size_t(nd - 1)];
  p.sbk = lb.strides()[size_t(nd - 2)], p.sbn = lb.strides()[size_t(nd - 1)];
  Shape batch(la.shape().begin(), la.shape().end() - 2);
  Layout ba(batch, Strides(la.strides().begin(), la.strides().end() - 2), la.offset());
  Layout bb(batch, Strides(lb.strides().begin(), lb.strides().end() - 2), lb.offset());
  Strides cs = contiguous_strides(batch);
  for (auto& s : cs) s *= p.m * p.n;
  Layout bc(batch, cs, 0);
  p.batch = make_walk<3>("matmul", batch, {&ba, &bb, &bc});
  const int64_t batches = shape_numel(batch);
  if (batches > 65535)
    throw_invalid("matmul", "the CUDA integer matmul takes at most 65535 batches");
  dim3 grid(unsigned((p.n + kTile - 1) / kTile), unsigned((p.m + kTile - 1) / kTile),
            unsigned(batches));
  GpuScope scope(lhs.cuda().gpu());
  matmul_int<T>
      <<<grid, dim3(kTile, kTile), 0, lhs.stream()>>>(lhs.ptr<T>(), rhs.ptr<T>(), dst.ptr<T>(), p);
  lhs.cuda().check_launch("matmul");
}

}  // namespace

void CudaStorage::matmul(const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
                         BackendStorage& dst) const {
  const int64_t nd = lhs.ndim();
  const int64_t m = lhs.dim(nd - 2), k = lhs.dim(nd - 1), n = rhs_layout.dim(nd - 1);
  auto& out = as_cuda(dst);
  if (dst.numel() == 0 || m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: zeros
    GpuScope scope(cuda().gpu());
    check(cudaMemsetAsync(out.ptr(), 0, size_t(dst.numel()) * dtype_size(dtype_), stream()),
          "cudaMemsetAsync", device_.get());
    return;
  }
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>)
      matmul_blas(*this, lhs, as_cuda(rhs), rhs_layout, out);
    else
      launch_int<T>(*this, lhs, as_cuda(rhs), rhs_layout, out);
  });
}

}  // namespace ember::cuda
