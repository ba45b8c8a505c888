// Float math written so the compiler vectorises it: branch-free, no libm calls.
#pragma once

#include <cstdint>

namespace ember::cpu {

// exp over a dense run, within 2 ulp of libm; NaN, +-inf and overflow as libm.
void exp_f32(const float* x, float* y, int64_t n);

// gelu (exact form), tanh and erf over a dense run (y may be x), as vec_fn.h's vf::gelu,
// vf::tanh and vf::erf; AVX-512 CPUs take 16-lane kernels with exp16's vscalefps.
void gelu_f32(const float* x, float* y, int64_t n);
void tanh_f32(const float* x, float* y, int64_t n);
void erf_f32(const float* x, float* y, int64_t n);
// log over a dense run, as vf::log (vgetmantps / vgetexpps on AVX-512).
void log_f32(const float* x, float* y, int64_t n);

// The same five over a dense run of bfloat16 (their bits; y may be x): each value widened,
// the float32 function, rounded to nearest even (NaN stays NaN), the same results as
// bf16_to_f32, name_f32 and f32_to_bf16 in turn. AVX-512 CPUs convert in registers, 16
// values at a time; others go through a float buffer in chunks.
void exp_bf16(const uint16_t* x, uint16_t* y, int64_t n);
void gelu_bf16(const uint16_t* x, uint16_t* y, int64_t n);
void tanh_bf16(const uint16_t* x, uint16_t* y, int64_t n);
void erf_bf16(const uint16_t* x, uint16_t* y, int64_t n);
void log_bf16(const uint16_t* x, uint16_t* y, int64_t n);

// The sum of a dense run: blocks of 1024 summed in 32 float lanes (each lane adds 32
// values, the lanes then pairwise), block totals in double. The error is that of a
// 37-term float sum however long the run, below numpy's pairwise sum. Runs of 64 Ki
// values and more are read as four streams at once (quarters), for memory bandwidth.
double sum_f32(const float* x, int64_t n);

// The sum of a dense run of bfloat16 (their bits), in float blocks of 1024 as sumsq_f32.
double sum_bf16(const uint16_t* x, int64_t n);
// The sum of the squares of a dense run, in blocks as sum_f32 sums.
double sumsq_f32(const float* x, int64_t n);

// The sum (kSquares: of the squares) of a short dense run (at most 256: see kShortRow in
// reduce.cpp) in 16 float lanes, then the lanes pairwise and into double: the error class
// of a block of sum_f32. On AVX-512 one register and masked loads, no finish through
// memory, as many rows of 16-256 need.
template <bool kSquares>
double sum_short_f32(const float* x, int64_t n);

// The largest value of a dense run, NaN ignored (-inf when empty or all NaN).
float max_f32(const float* x, int64_t n);

// The largest (kMax) or smallest value of a dense run of n >= 1, NaN if any is NaN
// (numpy's and PyTorch's max/min).
template <bool kMax>
float extreme_f32(const float* x, int64_t n);

// y = exp(x - shift) over a dense run (y may be x); returns the sum of y, blocks of 1024
// summed as sum_f32 sums them (one stream: y is still in cache).
double exp_shift_sum_f32(const float* x, float shift, float* y, int64_t n);

// softmax of one dense row into y (y may be x): exp(x - max) / sum, the max ignoring NaN
// (a NaN then makes the row NaN through its sum), 0 for an all -inf row's max. Sums in
// float lanes per block of 1024, blocks in double, as exp_shift_sum_f32.
void softmax_dense_f32(const float* x, float* y, int64_t n);

// softmax (log_softmax) down m <= kSoftCols columns of n rows, x[i * stride + j] into
// y[i * stride + j]: each pass walks the rows in memory order with the columns' maxima,
// sums and scales side by side in lanes (softmax over dim 0 of a row-major tensor).
constexpr int64_t kSoftCols = 64;
void softmax_cols_f32(const float* x, int64_t n, int64_t stride, int64_t m, bool log, float* y);

// y = x * s over a dense run (y may be x).
void scale_f32(const float* x, float s, float* y, int64_t n);

// y = (x - a) - b over a dense run (y may be x): rounded in that order.
void sub2_f32(const float* x, float a, float b, float* y, int64_t n);

// bfloat16 <-> float over dense runs, bit for bit as bf16's conversions (dtype.h): the
// top half of the float, rounded to nearest even; NaN stays a quiet NaN.
void bf16_to_f32(const uint16_t* x, float* y, int64_t n);
void f32_to_bf16(const float* x, uint16_t* y, int64_t n);

// float16 <-> float over dense runs, as f16's conversions (dtype.h): F16C where the CPU
// has it (the same values; a NaN keeps its payload's top bits, quiet).
void f16_to_f32(const uint16_t* x, float* y, int64_t n);
void f32_to_f16(const float* x, uint16_t* y, int64_t n);

// The first index of v in a dense run (of a NaN when v is NaN), n when absent.
int64_t find_f32(const float* x, int64_t n, float v);

// dst[r * ld + c] = src[r + c * ls] for r < rows, c < cols: a transpose of elements of
// B's size (their bits, any dtype), walked in kTransposeBlock x kTransposeBlock blocks so
// that each cache line read or written is used whole while it is in cache (a walk along
// dst's rows reads one src element per line, and with power-of-two strides every line
// falls in one L1 set). 4-byte and 2-byte elements are transposed 16 x 16 in registers on
// AVX-512 CPUs (transpose_u32, transpose_u16).
constexpr int64_t kTransposeBlock = 16;
template <typename B>
void transpose_blocks(const B* src, int64_t ls, B* dst, int64_t ld, int64_t rows, int64_t cols) {
  for (int64_t c0 = 0; c0 < cols; c0 += kTransposeBlock) {
    const int64_t c1 = c0 + kTransposeBlock < cols ? c0 + kTransposeBlock : cols;
    for (int64_t r0 = 0; r0 < rows; r0 += kTransposeBlock) {
      const int64_t r1 = r0 + kTransposeBlock < rows ? r0 + kTransposeBlock : rows;
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[r * ld + c] = src[r + c * ls];
    }
  }
}
void transpose_u32(const uint32_t* src, int64_t ls, uint32_t* dst, int64_t ld, int64_t rows,
                   int64_t cols);
void transpose_u16(const uint16_t* src, int64_t ls, uint16_t* dst, int64_t ld, int64_t rows,
                   int64_t cols);

// Folds a dense run of int64 into *lo (the smallest so far) and *hi (the largest).
void minmax_i64(const int64_t* x, int64_t n, int64_t* lo, int64_t* hi);

}  // namespace ember::cpu
