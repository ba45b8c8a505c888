// Matmul: f32/f64 through BLAS (transposed views become transpose flags, not copies),
// f16/bf16 through f32 BLAS, integers with a plain loop.
#include <vector>

#include "blas.h"
#include "core/blas_view.h"
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

std::string blas_name() {
#if defined(EMBER_BLAS_ACCELERATE)
  return "Accelerate";
#else
  return std::string(scipy_openblas_get_config());
#endif
}

int blas_threads() {
#if defined(EMBER_BLAS_ACCELERATE)
  return 0;  // Accelerate manages its own threads
#else
  return scipy_openblas_get_num_threads();
#endif
}

namespace {

// BLAS takes int leading dimensions
BlasView blas_view(int64_t rows, int64_t cols, int64_t srow, int64_t scol) {
  return ember::blas_view(rows, cols, srow, scol, int64_t(1) << 30);
}

// Batch b of a [batch..., r, c] layout: the offset of its matrix.
int64_t batch_offset(const Layout& l, int64_t b) {
  int64_t off = l.offset();
  for (int64_t d = l.ndim() - 2; d-- > 0; b /= l.dim(d))
    off += (b % l.dim(d)) * l.strides()[size_t(d)];
  return off;
}

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c) {
  auto tr = [](bool t) { return t ? CblasTrans : CblasNoTrans; };
  if constexpr (std::is_same_v<T, float>)
    EMBER_SGEMM(CblasRowMajor, tr(ta), tr(tb), int(m), int(n), int(k), 1.0f, a, int(lda), b,
                int(ldb), 0.0f, c, int(n));
  else
    EMBER_DGEMM(CblasRowMajor, tr(ta), tr(tb), int(m), int(n), int(k), 1.0, a, int(lda), b,
                int(ldb), 0.0, c, int(n));
}

// A dense copy of one matrix in type D (for views BLAS cannot read, or 16-bit floats).
template <typename D, typename S>
std::vector<D> dense(const S* src, int64_t off, int64_t rows, int64_t cols, int64_t srow,
                     int64_t scol) {
  std::vector<D> out(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[size_t(i * cols + j)] = D(compute_t<S>(src[off + i * srow + j * scol]));
  return out;
}

template <typename T>
void matmul_float(const T* a, const Layout& la, const T* b, const Layout& lb, T* c) {
  int64_t nd = la.ndim(), m = la.dim(nd - 2), k = la.dim(nd - 1), n = lb.dim(nd - 1);
  int64_t batches = shape_numel(Shape(la.shape().begin(), la.shape().end() - 2));
  int64_t sam = la.strides()[size_t(nd - 2)], sak = la.strides()[size_t(nd - 1)];
  int64_t sbk = lb.strides()[size_t(nd - 2)], sbn = lb.strides()[size_t(nd - 1)];
  for (int64_t bi = 0; bi < batches; ++bi) {
    T* cb = c + bi * m * n;
    if (m == 0 || n == 0) continue;
    if (k == 0) {
      std::fill(cb, cb + m * n, T(0));
      continue;
    }
    int64_t oa = batch_offset(la, bi), ob = batch_offset(lb, bi);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      BlasView va = blas_view(m, k, sam, sak), vb = blas_view(k, n, sbk, sbn);
      std::vector<T> ca, cbuf;
      const T* pa = a + oa;
      const T* pb = b + ob;
      if (!va.ok) {
        ca = dense<T>(a, oa, m, k, sam, sak);
        pa = ca.data();
        va = {true, false, k};
      }
      if (!vb.ok) {
        cbuf = dense<T>(b, ob, k, n, sbk, sbn);
        pb = cbuf.data();
        vb = {true, false, n};
      }
      gemm<T>(va.trans, vb.trans, m, n, k, pa, va.ld, pb, vb.ld, cb);
    } else {  // f16 / bf16: widen to float, multiply, round once
      std::vector<float> fa = dense<float>(a, oa, m, k, sam, sak);
      std::vector<float> fb = dense<float>(b, ob, k, n, sbk, sbn);
      std::vector<float> fc(size_t(m * n));
      gemm<float>(false, false, m, n, k, fa.data(), k, fb.data(), n, fc.data());
      for (int64_t i = 0; i < m * n; ++i) cb[i] = T(fc[size_t(i)]);
    }
  }
}

template <typename T>
void matmul_int(const T* a, const Layout& la, const T* b, const Layout& lb, T* c) {
  int64_t nd = la.ndim(), m = la.dim(nd - 2), k = la.dim(nd - 1), n = lb.dim(nd - 1);
  int64_t batches = shape_numel(Shape(la.shape().begin(), la.shape().end() - 2));
  int64_t sam = la.strides()[size_t(nd - 2)], sak = la.strides()[size_t(nd - 1)];
  int64_t sbk = lb.strides()[size_t(nd - 2)], sbn = lb.strides()[size_t(nd - 1)];
  parallel_for(batches * m, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n * k)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   int64_t bi = r / m, i = r % m;
                   int64_t oa = batch_offset(la, bi) + i * sam, ob = batch_offset(lb, bi);
                   T* row = c + r * n;
                   std::fill(row, row + n, T(0));
                   for (int64_t p = 0; p < k; ++p) {
                     T av = a[oa + p * sak];
                     for (int64_t j = 0; j < n; ++j)
                       row[j] = wrap_add(row[j], wrap_mul(av, b[ob + p * sbk + j * sbn]));
                   }
                 }
               });
}

}  // namespace

void CpuStorage::matmul(const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
                        BackendStorage& dst) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* a = ptr<T>();
    const T* b = as_cpu(rhs).ptr<T>();
    T* c = as_cpu(dst).ptr<T>();
    if constexpr (is_float_v<T>)
      matmul_float(a, lhs, b, rhs_layout, c);
    else
      matmul_int(a, lhs, b, rhs_layout, c);
  });
}

}  // namespace ember::cpu
