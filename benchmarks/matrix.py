"""python -m benchmarks --matrix: op families x the layout classes users meet.

Each row is one op at one layout and dtype, timed for ember, PyTorch and (on the CPU)
numpy in one run, interleaved, medians (the harness of the main benchmark). A row shows
each library's time, ember's speed against PyTorch (torch's time over ember's: below 1
ember is slower, and below 0.9 the row is marked `<<`), and for memory-bound rows the
bytes moved per second as a share of the device's copy bandwidth (a clone of a large
float32 tensor, the fastest library's). Where ember lacks the op the row says so.

Layout classes: one long 1-D tensor; an operand broadcast as a row, a column or a 0-d
tensor; transposed and sliced inputs; reductions over the first, a middle and the last
dim; many short rows and few long rows. Families: elementwise (add, exp, where, casts,
copies, cat), reductions (sum, max, argmax, var, softmax), masks (reads, writes,
masked_fill, nonzero), advanced indexing (reads and writes), index_select, gather and
scatter_add.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from .libs import Lib
from .timing import Impl, Settings, calibrate, interleave, summarize

SLOW = 0.9  # rows below this share of PyTorch's speed are marked


@dataclasses.dataclass
class Row:
    family: str
    layout: str
    dtype: str
    inputs: dict  # name -> (shape, kind): kind "normal", "mask", "ids:<high>",
    # "perm:<n>" (each row along the last dim a permutation of range(n)), "positive"
    stmts: dict  # library -> statement ("*" for any library not named); None: not there
    moved: float  # bytes read + written per call, in elements of `dtype` (0: not memory-bound)
    exact: bool = False  # integer results: compared exactly

    @property
    def name(self) -> str:
        return f"{self.family} | {self.layout} | {self.dtype}"

    def stmt(self, lib: str) -> str | None:
        return self.stmts.get(lib, self.stmts.get("*"))


def rows(n: int) -> list[Row]:
    """The matrix for an n x n working size (n*n elements per large operand)."""
    nn = n * n
    sq, vec, col, zero = (n, n), (n,), (n, 1), ()
    f32, bf16, i64 = "float32", "bfloat16", "int64"
    out: list[Row] = []

    def add(*args, **kw):
        out.append(Row(*args, **kw))

    # ---- elementwise
    for dt in (f32, bf16, i64):
        add("add", "1-D", dt, {"a": ((nn,), "normal"), "b": ((nn,), "normal")}, {"*": "a + b"}, 3 * nn)
        add("add", "row broadcast", dt, {"a": (sq, "normal"), "b": (vec, "normal")}, {"*": "a + b"},
            2 * nn + n)  # fmt: skip
    add("add", "column broadcast", f32, {"a": (sq, "normal"), "b": (col, "normal")},
        {"*": "a + b"}, 2 * nn)  # fmt: skip
    add("add", "0-d tensor", f32, {"a": (sq, "normal"), "b": (zero, "normal")}, {"*": "a + b"}, 2 * nn)
    add("add", "Python number", f32, {"a": (sq, "normal")}, {"*": "a + 1.5"}, 2 * nn)
    add("add", "transposed", f32, {"a": (sq, "normal"), "b": (sq, "normal")}, {"*": "a.T + b"}, 3 * nn)
    add("add", "both transposed", f32, {"a": (sq, "normal"), "b": (sq, "normal")},
        {"*": "a.T + b.T"}, 3 * nn)  # fmt: skip
    add("mul", "row broadcast, transposed", f32, {"a": (sq, "normal"), "b": (vec, "normal")},
        {"*": "a.T * b"}, 2 * nn + n)  # fmt: skip
    add("gt", "column broadcast", f32, {"a": (sq, "normal"), "b": (col, "normal")},
        {"*": "a > b"}, 1.25 * nn)  # fmt: skip
    add("add", "sliced [:, ::2]", f32, {"a": (sq, "normal"), "b": (sq, "normal")},
        {"*": "a[:, ::2] + b[:, ::2]"}, 1.5 * nn)  # fmt: skip
    for dt in (f32, bf16):
        add("exp", "1-D", dt, {"a": ((nn,), "normal")}, {"*": "a.exp()", "numpy": "np.exp(a)"}, 2 * nn)
    add("exp", "transposed", f32, {"a": (sq, "normal")}, {"*": "a.T.exp()", "numpy": "np.exp(a.T)"},
        2 * nn)  # fmt: skip
    # the transcendental class: each a separate kernel (or polynomial) on every backend
    add("log", "1-D", f32, {"a": ((nn,), "positive")}, {"*": "a.log()", "numpy": "np.log(a)"}, 2 * nn)
    for op in ("tanh", "sin"):
        add(op, "1-D", f32, {"a": ((nn,), "normal")}, {"*": f"a.{op}()", "numpy": f"np.{op}(a)"},
            2 * nn)  # fmt: skip
    for op in ("sigmoid", "erf"):
        add(op, "1-D", f32, {"a": ((nn,), "normal")}, {"*": f"a.{op}()", "numpy": None}, 2 * nn)
    for dt in (f32, bf16):
        add("gelu", "1-D", dt, {"a": ((nn,), "normal")},
            {"ember": "ember.gelu(a)", "torch": "torch.nn.functional.gelu(a)", "numpy": None}, 2 * nn)  # fmt: skip
    add("where", "1-D", f32, {"a": ((nn,), "normal"), "b": ((nn,), "normal")},
        {"ember": "ember.where(a > 0, a, b)", "torch": "torch.where(a > 0, a, b)",
         "numpy": "np.where(a > 0, a, b)"}, 3.25 * nn)  # fmt: skip
    add("cast", "f32 -> bf16, 1-D", f32, {"a": ((nn,), "normal")},
        {"ember": "a.to_dtype(ember.bfloat16)", "torch": "a.to(torch.bfloat16)", "numpy": None},
        1.5 * nn)  # fmt: skip
    add("cast", "bf16 -> f32, 1-D", bf16, {"a": ((nn,), "normal")},
        {"ember": "a.to_dtype(ember.float32)", "torch": "a.to(torch.float32)", "numpy": None},
        3 * nn)  # fmt: skip
    add("cast", "f32 -> f16, 1-D", f32, {"a": ((nn,), "normal")},
        {"ember": "a.to_dtype(ember.float16)", "torch": "a.to(torch.float16)",
         "numpy": "a.astype(np.float16)"}, 1.5 * nn)  # fmt: skip
    add("cast", "i64 -> f32, 1-D", i64, {"a": ((nn,), "normal")},
        {"ember": "a.to_dtype(ember.float32)", "torch": "a.to(torch.float32)",
         "numpy": "a.astype(np.float32)"}, 1.5 * nn)  # fmt: skip
    add("cast", "f32 -> bf16, transposed", f32, {"a": (sq, "normal")},
        {"ember": "a.T.to_dtype(ember.bfloat16)", "torch": "a.T.to(torch.bfloat16)", "numpy": None},
        1.5 * nn)  # fmt: skip
    add("copy", "transposed .contiguous()", f32, {"a": (sq, "normal")},
        {"*": "a.T.contiguous()", "numpy": "np.ascontiguousarray(a.T)"}, 2 * nn)  # fmt: skip
    add("copy", "sliced [:, ::2].contiguous()", f32, {"a": (sq, "normal")},
        {"*": "a[:, ::2].contiguous()", "numpy": "np.ascontiguousarray(a[:, ::2])"}, nn)  # fmt: skip
    add("cat", "dim=1", f32, {"a": (sq, "normal"), "b": (sq, "normal")},
        {"ember": "ember.cat([a, b], dim=1)", "torch": "torch.cat([a, b], dim=1)",
         "numpy": "np.concatenate([a, b], axis=1)"}, 4 * nn)  # fmt: skip
    add("cat", "dim=0", f32, {"a": (sq, "normal"), "b": (sq, "normal")},
        {"ember": "ember.cat([a, b], dim=0)", "torch": "torch.cat([a, b], dim=0)",
         "numpy": "np.concatenate([a, b], axis=0)"}, 4 * nn)  # fmt: skip
    add("stack", "dim=1", f32, {"a": (sq, "normal"), "b": (sq, "normal")},
        {"ember": "ember.stack([a, b], dim=1)", "torch": "torch.stack([a, b], dim=1)",
         "numpy": "np.stack([a, b], axis=1)"}, 4 * nn)  # fmt: skip
    # float16: its conversions are arithmetic, not bfloat16's shift, so every layout class
    # has its own cost
    f16 = "float16"
    add("add", "column broadcast", f16, {"a": (sq, "normal"), "b": (col, "normal")},
        {"*": "a + b"}, 2 * nn)  # fmt: skip
    add("add", "Python number", f16, {"a": (sq, "normal")}, {"*": "a + 1.5"}, 2 * nn)
    add("add", "sliced [:, ::2]", f16, {"a": (sq, "normal"), "b": (sq, "normal")},
        {"*": "a[:, ::2] + b[:, ::2]"}, 1.5 * nn)  # fmt: skip
    add("add", "transposed", f16, {"a": (sq, "normal"), "b": (sq, "normal")}, {"*": "a.T + b"}, 3 * nn)
    add("where", "1-D", f16, {"a": ((nn,), "normal"), "b": ((nn,), "normal")},
        {"ember": "ember.where(a > 0, a, b)", "torch": "torch.where(a > 0, a, b)",
         "numpy": "np.where(a > 0, a, b)"}, 3.25 * nn)  # fmt: skip
    add("copy", "transposed .contiguous()", bf16, {"a": (sq, "normal")},
        {"*": "a.T.contiguous()", "numpy": None}, 2 * nn)  # fmt: skip
    add("where", "row broadcast", f32, {"a": (sq, "normal"), "b": (vec, "normal")},
        {"ember": "ember.where(a > 0, a, b)", "torch": "torch.where(a > 0, a, b)",
         "numpy": "np.where(a > 0, a, b)"}, 2.25 * nn)  # fmt: skip

    # ---- reductions
    sum_dim = {"*": "a.sum({d})", "numpy": "a.sum(axis={d})"}

    def fmt(stmts, **kw):
        return {k: (v.format(**kw) if v else v) for k, v in stmts.items()}

    add("sum", "1-D (all)", f32, {"a": ((nn,), "normal")}, {"*": "a.sum()"}, nn)
    add("sum", "dim 0 (first)", f32, {"a": (sq, "normal")}, fmt(sum_dim, d=0), nn)
    add("sum", "dim 1 (last)", f32, {"a": (sq, "normal")}, fmt(sum_dim, d=1), nn)
    add("sum", "dim 1 (last)", i64, {"a": (sq, "normal")}, fmt(sum_dim, d=1), nn)
    mid = (64, max(1, nn // 4096), 64)
    add("sum", f"middle dim of {mid}", f32, {"a": (mid, "normal")}, fmt(sum_dim, d=1), nn)
    add("sum", "many short rows (x16)", f32, {"a": ((nn // 16, 16), "normal")}, fmt(sum_dim, d=1), nn)
    add("sum", "few long rows (4x)", f32, {"a": ((4, nn // 4), "normal")}, fmt(sum_dim, d=1), nn)
    add("max", "dim 1, values and indices", f32, {"a": (sq, "normal")},
        {"*": "a.max(1)", "numpy": "(a.max(axis=1), a.argmax(axis=1))"}, nn)  # fmt: skip
    add("argmax", "dim 1", f32, {"a": (sq, "normal")}, {"*": "a.argmax(1)", "numpy": "a.argmax(axis=1)"}, nn)
    add("amax", "dim 0 (first)", f32, {"a": (sq, "normal")},
        {"*": "a.amax(0)", "numpy": "a.max(axis=0)"}, nn)  # fmt: skip
    add("var", "dim 1 (last)", f32, {"a": (sq, "normal")},
        {"*": "a.var(1)", "numpy": "a.var(axis=1, ddof=1)"}, nn)  # fmt: skip
    add("sum", "dim 1 (last)", bf16, {"a": (sq, "normal")}, {"*": "a.sum(1)", "numpy": None}, nn)
    add("mean", "dim 0 (first)", f32, {"a": (sq, "normal")}, {"*": "a.mean(0)"}, nn)
    add("mean", "dim 1 (last)", f32, {"a": (sq, "normal")}, {"*": "a.mean(1)"}, nn)
    add("prod", "dim 1 (last)", f32, {"a": (sq, "normal")},
        {"*": "(a * 0.001 + 1).prod(1)", "numpy": "(a * np.float32(0.001) + 1).prod(axis=1)"},
        2 * nn)  # fmt: skip
    add("amax", "dim 1 (last)", f32, {"a": (sq, "normal")},
        {"*": "a.amax(1)", "numpy": "a.max(axis=1)"}, nn)  # fmt: skip
    add("amax", f"middle dim of {mid}", f32, {"a": (mid, "normal")},
        {"*": "a.amax(1)", "numpy": "a.max(axis=1)"}, nn)  # fmt: skip
    add("amax", "rows of 64", f32, {"a": ((nn // 64, 64), "normal")},
        {"*": "a.amax(1)", "numpy": "a.max(axis=1)"}, nn)  # fmt: skip
    add("sum", "rows of 128", f32, {"a": ((nn // 128, 128), "normal")}, fmt(sum_dim, d=1), nn)
    add("amin", "dim 1 (last)", i64, {"a": (sq, "normal")},
        {"*": "a.amin(1)", "numpy": "a.min(axis=1)"}, nn)  # fmt: skip
    add("argmax", "dim 0 (first)", f32, {"a": (sq, "normal")},
        {"*": "a.argmax(0)", "numpy": "a.argmax(axis=0)"}, nn)  # fmt: skip
    add("argmin", "many short rows (x16)", f32, {"a": ((nn // 16, 16), "normal")},
        {"*": "a.argmin(1)", "numpy": "a.argmin(axis=1)"}, nn)  # fmt: skip
    add("var", "dim 0 (first)", f32, {"a": (sq, "normal")},
        {"*": "a.var(0)", "numpy": "a.var(axis=0, ddof=1)"}, nn)  # fmt: skip
    add("std", "many short rows (x16)", f32, {"a": ((nn // 16, 16), "normal")},
        {"*": "a.std(1)", "numpy": "a.std(axis=1, ddof=1)"}, nn)  # fmt: skip
    add("norm", "dim 1 (last)", f32, {"a": (sq, "normal")},
        {"ember": "a.norm(dim=1)", "torch": "torch.linalg.vector_norm(a, dim=1)",
         "numpy": "np.linalg.norm(a, axis=1)"}, nn)  # fmt: skip
    add("logsumexp", "dim 1 (last)", f32, {"a": (sq, "normal")},
        {"ember": "a.logsumexp(1)", "torch": "a.logsumexp(1)", "numpy": None}, nn)  # fmt: skip
    add("any", "dim 1 (last)", f32, {"m": (sq, "mask")},
        {"*": "m.any(1)", "numpy": "m.any(axis=1)"}, 0.25 * nn)  # fmt: skip
    add("all", "dim 0 (first)", f32, {"m": (sq, "mask")},
        {"*": "m.all(0)", "numpy": "m.all(axis=0)"}, 0.25 * nn)  # fmt: skip
    add("layer norm", "composed, last dim", f32, {"a": (sq, "normal"), "w": (vec, "normal"),
        "b": (vec, "normal")},
        {"*": "(a - a.mean(-1, keepdim=True)) / (a.var(-1, keepdim=True, correction=0) + 1e-5).sqrt() * w + b",
         "numpy": None}, 0)  # fmt: skip
    short = (max(1, nn // 128), 128)
    add("softmax", "short rows (x128)", f32, {"a": (short, "normal")},
        {"ember": "a.softmax(-1)", "torch": "a.softmax(-1)", "numpy": None}, 2 * nn)  # fmt: skip
    add("softmax", "long rows", f32, {"a": (sq, "normal")},
        {"ember": "a.softmax(-1)", "torch": "a.softmax(-1)", "numpy": None}, 2 * nn)  # fmt: skip
    add("softmax", "dim 0 (first)", f32, {"a": (sq, "normal")},
        {"ember": "a.softmax(0)", "torch": "a.softmax(0)", "numpy": None}, 2 * nn)  # fmt: skip
    add("log_softmax", "short rows (x128)", f32, {"a": (short, "normal")},
        {"ember": "a.log_softmax(-1)", "torch": "a.log_softmax(-1)", "numpy": None}, 2 * nn)  # fmt: skip
    add("softmax", "long rows", bf16, {"a": (sq, "normal")},
        {"ember": "a.softmax(-1)", "torch": "a.softmax(-1)", "numpy": None}, 1 * nn)  # fmt: skip

    # ---- masks
    add("mask", "read a[a > 0]", f32, {"a": (sq, "normal")}, {"*": "a[a > 0]"}, 2.75 * nn)
    add("mask", "write a[m] = 0", f32, {"a": (sq, "normal"), "m": (sq, "mask")},
        {"*": "a.__setitem__(m, 0.0)"}, 1.75 * nn)  # fmt: skip
    add("mask", "masked_fill", f32, {"a": (sq, "normal"), "m": (sq, "mask")},
        {"*": "a.masked_fill(m, 0.0)", "numpy": "np.where(m, np.float32(0), a)"}, 2.25 * nn)  # fmt: skip
    add("mask", "read rows a[m] (m over dim 0)", f32, {"a": (sq, "normal"), "m": (vec, "mask")},
        {"*": "a[m]"}, nn)  # fmt: skip
    add("mask", "read in a tuple a[:, m]", f32, {"a": (sq, "normal"), "m": (vec, "mask")},
        {"*": "a[:, m]"}, nn)  # fmt: skip
    add("mask", "write values a[m] = b[m]", f32, {"a": (sq, "normal"), "b": (sq, "normal"),
        "m": (sq, "mask")}, {"*": "a.__setitem__(m, b[m])"}, 3.5 * nn)  # fmt: skip
    add("mask", "read a[a > 0]", bf16, {"a": (sq, "normal")}, {"*": "a[a > 0]", "numpy": None},
        1.75 * nn)  # fmt: skip
    add("mask", "read a[a > 0]", i64, {"a": (sq, "normal")}, {"*": "a[a > 0]"}, 1.25 * nn)
    add("mask", "write a[m] = 0", i64, {"a": (sq, "normal"), "m": (sq, "mask")},
        {"*": "a.__setitem__(m, 0)"}, 2.25 * nn)  # fmt: skip
    add("masked_select", "2-D", f32, {"a": (sq, "normal"), "m": (sq, "mask")},
        {"*": "a.masked_select(m)", "numpy": "a[m]"}, 1.75 * nn)  # fmt: skip
    add("nonzero", "2-D mask", f32, {"m": (sq, "mask")},
        {"ember": "m.nonzero()", "torch": "m.nonzero()", "numpy": "np.argwhere(m)"}, 0)  # fmt: skip
    add("nonzero", "1-D mask", f32, {"m": ((nn,), "mask")},
        {"ember": "m.nonzero()", "torch": "m.nonzero()", "numpy": "np.argwhere(m)"}, 0)  # fmt: skip

    # ---- advanced indexing and the index family
    half = (n // 2,)
    add("index", "read rows a[ids]", f32, {"a": (sq, "normal"), "i": (half, f"ids:{n}")},
        {"*": "a[i]"}, nn)  # fmt: skip
    add("index", "read columns a[:, ids]", f32, {"a": (sq, "normal"), "i": (half, f"ids:{n}")},
        {"*": "a[:, i]"}, nn)  # fmt: skip
    add("index", "write rows a[ids] = 1", f32, {"a": (sq, "normal"), "i": (half, f"ids:{n}")},
        {"*": "a.__setitem__(i, 1.0)"}, 0.5 * nn)  # fmt: skip
    pairs = (n // 2, n)
    add("index", "read pairs a[i, j]", f32, {"a": (sq, "normal"), "i": (pairs, f"ids:{n}"),
        "j": (pairs, f"ids:{n}")}, {"*": "a[i, j]"}, 2.5 * nn)  # fmt: skip
    add("index", "write pairs a[i, j] = 1", f32, {"a": (sq, "normal"), "i": (pairs, f"ids:{n}"),
        "j": (pairs, f"ids:{n}")}, {"*": "a.__setitem__((i, j), 1.0)"}, 2.25 * nn)  # fmt: skip
    add("index", "read rows a[ids]", i64, {"a": (sq, "normal"), "i": (half, f"ids:{n}")},
        {"*": "a[i]"}, nn)  # fmt: skip
    add("index_select", "dim 0", f32, {"a": (sq, "normal"), "i": (half, f"ids:{n}")},
        {"*": "a.index_select(0, i)", "numpy": "a.take(i, axis=0)"}, nn)  # fmt: skip
    add("index_select", "dim 1 (elements)", f32, {"a": (sq, "normal"), "i": (half, f"ids:{n}")},
        {"*": "a.index_select(1, i)", "numpy": "a.take(i, axis=1)"}, nn)  # fmt: skip
    add("embedding", "rows", f32, {"w": (sq, "normal"), "i": (half, f"ids:{n}")},
        {"ember": "ember.embedding(i, w)", "torch": "torch.nn.functional.embedding(i, w)",
         "numpy": "w[i]"}, nn)  # fmt: skip
    add("embedding", "short rows (8 wide)", f32, {"w": ((nn // 8, 8), "normal"),
        "i": ((nn // 16,), f"ids:{nn // 8}")},
        {"ember": "ember.embedding(i, w)", "torch": "torch.nn.functional.embedding(i, w)",
         "numpy": "w[i]"}, 1.125 * nn)  # fmt: skip
    add("gather", "dim 1", f32, {"a": (sq, "normal"), "i": (sq, f"ids:{n}")},
        {"*": "a.gather(1, i)", "numpy": "np.take_along_axis(a, i, axis=1)"}, 4 * nn)  # fmt: skip
    add("gather", "dim 1, short rows of ids (4)", f32, {"a": ((nn // 256, 256), "normal"),
        "i": ((nn // 256, 4), "ids:256")},
        {"*": "a.gather(1, i)", "numpy": "np.take_along_axis(a, i, axis=1)"}, nn // 16)  # fmt: skip
    add("gather", "dim 0 (rows of ids)", f32, {"a": (sq, "normal"), "i": (sq, f"ids:{n}")},
        {"*": "a.gather(0, i)", "numpy": "np.take_along_axis(a, i, axis=0)"}, 4 * nn)  # fmt: skip
    # repeated ids leave torch's CUDA scatter free to keep any of them: a permutation per row
    add("scatter", "dim 1", f32, {"a": (sq, "normal"), "i": (sq, f"perm:{n}")},
        {"*": "a.scatter(1, i, a)", "numpy": None}, 5 * nn)  # fmt: skip
    add("scatter_add", "dim 1", f32, {"a": (sq, "normal"), "i": (sq, f"ids:{n}")},
        {"*": "a.scatter_add(1, i, a)", "numpy": None}, 5 * nn)  # fmt: skip
    add("scatter_add", "dim 0", f32, {"a": (sq, "normal"), "i": (sq, f"ids:{n}")},
        {"*": "a.scatter_add(0, i, a)", "numpy": None}, 5 * nn)  # fmt: skip
    add("index_add", "dim 0 (rows)", f32, {"a": (sq, "normal"), "i": (half, f"ids:{n}"),
        "s": ((n // 2, n), "normal")}, {"*": "a.index_add(0, i, s)", "numpy": None}, 3 * nn)  # fmt: skip
    add("index_add", "dim 1 (columns)", f32, {"a": (sq, "normal"), "i": (half, f"ids:{n}"),
        "s": ((n, n // 2), "normal")}, {"*": "a.index_add(1, i, s)", "numpy": None}, 3 * nn)  # fmt: skip
    add("index_add", "middle dim of (n/8, 64, n/8)", f32, {"a": ((n // 8, 64, n // 8), "normal"),
        "i": ((128,), "ids:64"), "s": ((n // 8, 128, n // 8), "normal")},
        {"*": "a.index_add(1, i, s)", "numpy": None}, 4 * nn)  # fmt: skip
    add("slice_scatter", "dim 1, step 2", f32, {"a": (sq, "normal"), "s": ((n, n // 2), "normal")},
        {"ember": "ember.slice_scatter(a, s, 1, 0, None, 2)",
         "torch": "torch.slice_scatter(a, s, 1, 0, None, 2)", "numpy": None}, 2.5 * nn)  # fmt: skip
    # scans, sorts and top-k: one long row, rows, many short rows
    add("cumsum", "1-D", f32, {"a": ((nn,), "normal")}, {"*": "a.cumsum(0)", "numpy": "np.cumsum(a)"},
        2 * nn)  # fmt: skip
    add("cumsum", "rows (dim 1)", f32, {"a": (sq, "normal")},
        {"*": "a.cumsum(1)", "numpy": "np.cumsum(a, axis=1)"}, 2 * nn)  # fmt: skip
    add("cumsum", "dim 0", f32, {"a": (sq, "normal")},
        {"*": "a.cumsum(0)", "numpy": "np.cumsum(a, axis=0)"}, 2 * nn)  # fmt: skip
    add("sort", "1-D", f32, {"a": ((nn // 16,), "normal")}, {"*": "a.sort(-1)", "numpy": "np.sort(a)"}, 0)
    add("sort", "rows", f32, {"a": ((n // 4, n), "normal")},
        {"*": "a.sort(-1)", "numpy": "np.sort(a, axis=-1)"}, 0)  # fmt: skip
    # 64-bit keys sort as (key, position) pairs, by their own radix passes
    add("sort", "1-D", i64, {"a": ((nn // 4,), "normal")}, {"*": "a.sort(-1)", "numpy": "np.sort(a)"}, 0)
    add("sort", "1-D", "int32", {"a": ((nn // 4,), "normal")}, {"*": "a.sort(-1)", "numpy": "np.sort(a)"}, 0)
    add("sort", "rows", i64, {"a": ((n // 4, n), "normal")},
        {"*": "a.sort(-1)", "numpy": "np.sort(a, axis=-1)"}, 0)  # fmt: skip
    add("argsort", "short rows (64)", f32, {"a": ((nn // 64, 64), "normal")},
        {"*": "a.argsort(-1)", "numpy": "np.argsort(a, axis=-1)"}, 0, exact=True)  # fmt: skip
    add("topk", "rows, k = 10", f32, {"a": (sq, "normal")}, {"*": "a.topk(10, -1)", "numpy": None}, 0)
    add("topk", "1-D, k = 10", f32, {"a": ((nn,), "normal")}, {"*": "a.topk(10)", "numpy": None}, 0)
    add("topk", "rows, k = n / 4", f32, {"a": ((n // 4, n), "normal")},
        {"*": f"a.topk({n // 4}, -1)", "numpy": None}, 0)  # fmt: skip
    return out


ITEM = {"float32": 4, "bfloat16": 2, "float16": 2, "int64": 8, "int32": 4}


def make_inputs(row: Row, rng) -> dict[str, np.ndarray]:
    arrays = {}
    for name, (shape, kind) in row.inputs.items():
        if kind == "mask":
            arrays[name] = rng.random(shape) < 0.5
        elif kind.startswith("ids:"):
            arrays[name] = rng.integers(0, int(kind[4:]), shape).astype(np.int64)
        elif kind.startswith("perm:"):
            rows = np.broadcast_to(np.arange(int(kind[5:]), dtype=np.int64), shape)
            arrays[name] = rng.permuted(rows, axis=-1)
        elif kind == "positive":
            arrays[name] = (rng.random(shape) * 100 + 1e-3).astype(np.float32)
        elif row.dtype == "int64":
            arrays[name] = rng.integers(-1000, 1000, shape).astype(np.int64)
        elif row.dtype == "int32":  # the whole range: every byte of the key varies
            arrays[name] = rng.integers(-(2**31), 2**31, shape, dtype=np.int32)
        elif row.dtype == "float16":
            arrays[name] = rng.standard_normal(shape).astype(np.float16)
        else:
            arrays[name] = rng.standard_normal(shape).astype(np.float32)
    return arrays


def place(lib: Lib, row: Row, arrays: dict) -> dict:
    env = dict(lib.ns)
    for name, x in arrays.items():
        kind = row.inputs[name][1]
        convert = row.dtype if row.dtype == "bfloat16" and kind == "normal" else None
        env[name] = lib.put(x, convert) if convert else lib.put(x)
    return env


def result_array(lib: Lib, value):
    if isinstance(value, tuple):  # (values, indices): the values
        value = value[0]
    return lib.get(value)


def measure_row(row: Row, libs: list[Lib], settings: Settings, rng, pause: bool = False) -> dict:
    arrays = make_inputs(row, rng)
    impls, getters, errors = [], {}, {}
    for lib in libs:
        stmt = row.stmt(lib.name)
        if stmt is None:
            continue
        try:
            env = place(lib, row, arrays)
        except Exception as exc:  # numpy has no bfloat16
            errors[lib.name] = f"{type(exc).__name__}: {exc}"
            continue
        env.update({"ember": sys.modules.get("ember"), "np": np, "torch": sys.modules.get("torch")})
        impls.append(Impl(lib.name, stmt, env, sync=lib.sync))
        getters[lib.name] = lambda v, lib=lib: result_array(lib, v)
    # the reference: PyTorch's result where it ran, else numpy's (writes return None)
    values, ready = {}, []
    for impl in impls:
        try:
            values[impl.lib] = impl.run_once()
            ready.append(impl)
        except Exception as exc:
            errors[impl.lib] = f"{type(exc).__name__}: {str(exc)[:80]}"
    reference = None
    for name in ("torch", "numpy"):
        if values.get(name) is not None:
            reference = getters[name](values[name]).astype(np.float64)
            break
    bad = []
    tol = 0.0 if row.exact else 2e-2 if row.dtype == "bfloat16" else 1e-4
    for lib, value in values.items():
        if reference is None or value is None or not row.moved:
            continue
        got = getters[lib](value).astype(np.float64)
        scale = float(np.max(np.abs(reference))) if reference.size else 0.0
        if got.shape != reference.shape or (
            got.size and float(np.max(np.abs(got - reference))) > tol * max(scale, 1e-30)
        ):
            bad.append(lib)
    inner = {}
    for impl in list(ready):
        try:
            inner[impl.lib] = calibrate(impl, settings.min_sample)
        except Exception as exc:
            errors[impl.lib] = f"{type(exc).__name__}: {str(exc)[:80]}"
            ready.remove(impl)
    samples = interleave(ready, inner, settings, pause) if ready else {}
    medians = {lib: summarize(s, inner[lib])["median_us"] for lib, s in samples.items()}
    return {"row": row, "medians": medians, "errors": errors, "mismatch": bad}


def copy_bandwidth(libs: list[Lib], n: int, settings: Settings, pause: bool = False) -> float:
    """GB/s of the fastest library's clone of an n x n float32 tensor (read + write)."""
    x = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    best = 0.0
    for lib in libs:
        env = dict(lib.ns, a=lib.put(x))
        impl = Impl(lib.name, lib.copy_stmt(), env, sync=lib.sync)
        k = calibrate(impl, settings.min_sample)
        samples = interleave([impl], {lib.name: k}, settings, pause)[lib.name]
        best = max(best, 2 * x.nbytes / (summarize(samples, k)["median_us"] * 1e-6) / 1e9)
    return best


def table(results: list[dict], bandwidth: float, libs: list[str]) -> list[str]:
    head = f"{'family | layout | dtype':<52}" + "".join(f"{name + ' us':>12}" for name in libs)
    head += f"{'vs torch':>10}{'GB/s':>8}{'of copy':>9}"
    lines = [head]
    for r in results:
        row, med = r["row"], r["medians"]
        cells = []
        for name in libs:
            if name in med:
                cells.append(f"{med[name]:>12.1f}")
            else:
                cells.append(f"{('missing' if name == 'ember' and name in r['errors'] else '-'):>12}")
        ratio = ""
        if "ember" in med and "torch" in med:
            x = med["torch"] / med["ember"]
            ratio = f"{x:.2f}x" + (" <<" if x < SLOW else "")
        gbs = share = ""
        if "ember" in med and row.moved:
            g = row.moved * ITEM[row.dtype] / (med["ember"] * 1e-6) / 1e9
            gbs, share = f"{g:.1f}", f"{100 * g / bandwidth:.0f}%" if bandwidth else ""
        line = f"{row.name:<52}" + "".join(cells) + f"{ratio:>10}{gbs:>8}{share:>9}"
        if r["mismatch"]:
            line += "  MISMATCH " + ",".join(r["mismatch"])
        lines.append(line)
    return lines


def threads_line(libs: list[Lib]) -> str:
    """The thread counts each library computes with here."""
    parts = []
    for lib in libs:
        if lib.name == "ember":
            info = lib.dev.info() if hasattr(lib.dev, "info") else {}
            parts.append(f"ember {lib.ember.__version__} threads {info.get('threads', '?')}"
                         f" (BLAS {info.get('blas_threads', '?')})")  # fmt: skip
        elif lib.name == "torch":
            parts.append(f"torch threads {lib.torch.get_num_threads()}")
    return "threads: " + ", ".join(parts)


def main(args, devices: dict, notes: list[str], describe) -> int:
    """Runs the matrix on each device of `devices` (label -> libraries)."""
    settings = Settings(budget=args.budget if args.budget is not None else (0.15 if args.quick else 0.6),
                        min_rounds=args.repeat or (3 if args.quick else 5),
                        pause=args.pause)  # fmt: skip
    rng = np.random.default_rng(0)
    status = 0
    for label, libs in devices.items():
        kind = label.split(":")[0]
        n = (4096 if args.quick else 8192) if kind == "cuda" else (1024 if args.quick else 2048)
        if args.sizes:
            n = args.sizes[0]
        names = [lib.name for lib in libs]
        # On the CPU each library's turn starts after an idle pause: PyTorch's OpenMP
        # workers spin for milliseconds after each call (libgomp's default spin count),
        # and without the pause they take a core from whichever library runs next.
        pause = kind == "cpu" and settings.pause > 0
        started = time.time()
        bw = copy_bandwidth(libs, n, settings, pause)
        print(describe(label))
        print(threads_line(libs))
        for note in notes:
            print(f"note: {note}")
        print(f"matrix on {label}, n = {n} (n x n operands), copy bandwidth {bw:.1f} GB/s; "
              f"'vs torch' is torch's time over ember's, '<<' below {SLOW}")  # fmt: skip
        results = []
        chosen = [r for r in rows(n) if not args.rows or r.family in args.rows]
        for row in chosen:
            results.append(measure_row(row, libs, settings, rng, pause))
            print(table(results[-1:], bw, names)[1] if results[:-1] else "\n".join(table(results, bw, names)),
                  flush=True)  # fmt: skip
        slow = [r["row"].name for r in results if "ember" in r["medians"] and "torch" in r["medians"]
                and r["medians"]["torch"] / r["medians"]["ember"] < SLOW]  # fmt: skip
        missing = [r["row"].name for r in results if "ember" in r["errors"]]
        bad = [r["row"].name for r in results if "ember" in r["mismatch"]]
        print(f"{len(results)} rows in {time.time() - started:.0f} s; {len(slow)} below {SLOW}x "
              f"torch; ember missing: {missing or 'none'}")  # fmt: skip
        if bad:
            print(f"ember results differ: {bad}", file=sys.stderr)
            status = 1
    return status
