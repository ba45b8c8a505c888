// The checks every indexing op shares (ops_index.cpp), so that each op raises the same
// errors and no kernel ever reads or writes out of bounds.
#pragma once

#include <functional>
#include <utility>

#include "tensor.h"

namespace ember::index_checks {

// Raises UnsupportedDTypeError naming `op` unless ids are int64, int32, uint32 or uint8.
void check_dtype(const char* op, const Tensor& ids);
// t without its repeats: each zero-stride dim kept at size 1 (a view), so that checks of a
// broadcast view of ids read each distinct id once.
Tensor distinct_elements(const Tensor& t);
// 0-d operands act as 1-d of one element (PyTorch takes dim 0 or -1 for them).
Tensor at_least_1d(const Tensor& t);
// Starts reading the smallest and largest of ids (an index dtype, not empty) back to the
// host and returns a callable that waits for them: start every array's, then wait, and
// the device is waited for once.
std::function<std::pair<int64_t, int64_t>()> start_bounds(const char* op, const Tensor& ids);
// Raises IndexOutOfRange naming `op`, the bad id and the range unless ids lie in [0, size).
void check_range(const char* op, const Tensor& ids, int64_t size);
// The same from ids' smallest (lo) and largest (hi) value.
void check_bounds(const char* op, int64_t lo, int64_t hi, int64_t size);
// check_range for a read of `data` through ids: where the backend's index_select and
// gather stay in bounds whatever the ids (index_reads_clamp), the bounds' read-back is
// started and the returned callable, called once the read is queued, waits and raises;
// elsewhere the check is made at once (and the callable does nothing).
std::function<void()> start_range(const char* op, const Tensor& ids, int64_t size,
                                  const Tensor& data);
// ids as the kernels take them: int32 (range-checked, so >= 0) becomes uint32.
Tensor kernel_ids(const Tensor& ids);
// t.index_select(d, ids) for ids already checked (1-D, kernel_ids of an index dtype).
Tensor select_checked(const Tensor& t, int64_t d, const Tensor& ids);
// The backends' scatter on checked operands (ids of an index dtype, in range; src read
// through ids' shape); an operand that shares dst's memory is copied first, since the
// kernel reads while it writes. unique_ids: the ids hold no repeats along d (a mask's
// positions), so the writes need no order; a src the same along d needs none either.
void scatter_checked(const Tensor& dst, int64_t d, const Tensor& ids, const Tensor& src,
                     bool accumulate, bool unique_ids = false);
// The write select_checked reads: dst[..., ids[i], ...] = src[..., i, ...] along d (+= when
// `accumulate`), in place; the last of repeated ids wins, adds sum in index order. ids
// 1-D and checked; src broadcasts to dst's shape with ids.numel() at d, any dtype (cast
// to dst's).
void put_along(const char* op, const Tensor& dst, int64_t d, const Tensor& ids,
               const Tensor& src, bool accumulate = false, bool unique_ids = false);

}  // namespace ember::index_checks
