"""A second corpus of bad calls, over the ops added after the first one
(test_bad_input_corpus.py): promotion into in-place results and out=, bool and int32,
masks on both sides of `=`, the scatter family, sort/topk, scans, var/std/prod/norm,
pad, interpolate, randint, round/gelu, DLPack and pin_memory. Each call must raise
exactly the expected ember error class (so also an EmberError, and the built-in class it
derives from), and none may kill the interpreter: the calls run in child interpreters,
as the first corpus's do.

In scope for each call: `ember`, `np`, `dev` (the device under test), `t` (a 2x3
float32 tensor), and whatever the call itself defines.
"""

from __future__ import annotations

import pytest
from conftest import DEVICE_SPECS
from helpers import CALL_CHILD, run_isolated, run_python

from test_bad_input_corpus import DTYPE, INDEX, RANGE, SHAPE, TYPE, UNSUPPORTED, VALUE

DLPACK = "DLPackError"

I = "i = ember.arange(6, device=dev).reshape(2, 3); "  # an int64 tensor
B = "b = ember.tensor([[True, False, True], [False, True, False]], device=dev); "
M = "m = t > 0; "  # a bool mask of t's shape
IDS = "ids = ember.zeros(2, 3, dtype=ember.int64, device=dev); "


def build_cases() -> list[tuple[str, str, str | dict | None]]:
    cases = []

    def add(code, expected):
        cases.append((f"{len(cases):03d} {code}"[:90], code, expected))

    # ---- promotion: a result that does not fit the tensor written (in place, out=)
    for op in ["add", "sub", "mul", "maximum", "minimum", "pow", "remainder", "floor_divide"]:
        add(I + f"ember.{op}(i, 1.5, out=i)", DTYPE)
        add(I + f"ember.{op}(i, t, out=i)", DTYPE)
        add(B + f"ember.{op}(b, 2, out=b)", DTYPE)  # the result is int64
    add(I + "ember.div(i, 2, out=i)", DTYPE)
    add(I + "ember.true_divide(i, i, out=i)", DTYPE)
    add(I + "ember.atan2(i, i, out=i)", DTYPE)
    for op in ["+=", "-=", "*=", "/=", "//=", "%=", "**="]:
        add(I + f"i {op} 1.5", DTYPE)
        add(I + f"i {op} t", DTYPE)
    add(I + "i /= 2", DTYPE)
    add(B + "b += 1", DTYPE)
    add(B + "b *= 2", DTYPE)
    add("h = ember.ones(3, dtype=ember.float16, device=dev); "
        "ember.add(h, h, out=ember.zeros(3, dtype=ember.int32, device=dev))", DTYPE)  # fmt: skip
    add(I + "i.sum(dtype=ember.bool, out=i[0, 0])", None)  # bool goes into int64
    add(I + "ember.sum(t, out=i[0, 0])", DTYPE)
    add(I + "ember.mean(t, 1, out=i[0, :2])", DTYPE)
    add(I + "ember.exp(t, out=i)", DTYPE)
    add(I + "ember.sqrt(t, out=ember.zeros(2, 3, dtype=ember.bool, device=dev))", DTYPE)
    add(I + "ember.isnan(t, out=t)", DTYPE)
    add(I + "ember.round(t, decimals=1, out=i)", DTYPE)

    # ---- bool and integer tensors where PyTorch refuses them
    for op in ["neg", "abs", "relu", "floor", "ceil", "round", "trunc"]:
        add(B + f"b.{op}()", UNSUPPORTED)
    for op in ["sub", "floor_divide", "remainder", "trunc_divide", "pow"]:
        add(B + f"ember.{op}(b, b)", UNSUPPORTED)
    add(B + "b.clamp(0, 1)", UNSUPPORTED)
    add(B + "-b", UNSUPPORTED)
    for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        add(f"ember.{op}(t, t)", UNSUPPORTED)
        add(I + f"ember.{op}(i, t)", UNSUPPORTED)
    add("~t", UNSUPPORTED)
    add("t & 1", UNSUPPORTED)
    add("t | True", UNSUPPORTED)
    add("t ^ t", UNSUPPORTED)
    add("ember.bitwise_not(t)", UNSUPPORTED)
    for op in ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "silu", "erf", "rsqrt",
               "expm1", "log1p", "tan", "recip"]:  # fmt: skip
        add(I + f"i.{op}()", UNSUPPORTED)
        add(B + f"b.{op}()", UNSUPPORTED)
    add("ember.arange(3, dtype=ember.int32, device=dev).softmax(0)", UNSUPPORTED)
    add("ember.arange(3, dtype=ember.int32, device=dev).gelu(approximate='tanh')", UNSUPPORTED)

    # ---- masks and index arrays on both sides of =
    add("t[ember.ones(3, dtype=ember.bool, device=dev)]", INDEX)
    add("t[ember.ones(2, 3, 4, dtype=ember.bool, device=dev)]", INDEX)
    add("t[ember.ones(3, 2, dtype=ember.bool, device=dev)]", INDEX)
    add("t[ember.ones(3, dtype=ember.bool, device=dev)] = 1.0", INDEX)
    add(M + "t[m] = ember.zeros(5, device=dev)", SHAPE)
    add(M + "t[m] = 'a'", VALUE)
    add(M + "t[m] = [1.0, 2.0]", SHAPE)
    add(M + "t[m] = None", VALUE)
    add(I + M + "i[m] = float('nan')", VALUE)
    add(I + M + "i[m] = float('inf')", VALUE)
    add(I + "i[[0, 1]] = float('nan')", VALUE)
    add(I + "i[:, 0] = float('-inf')", VALUE)
    add(I + "i[...] = 1e300", VALUE)
    add(I + "i[0, 0] = 2**70", VALUE)
    add("u = ember.zeros(3, dtype=ember.uint8, device=dev); u[0] = float('nan')", VALUE)
    add(M + "t[m, 0]", RANGE)  # too many indices, as t[0, 0, 0]
    add(M + "t[0, m]", RANGE)
    add("t[[True, False, True]]", INDEX)
    add("t[[True, False]] = ember.zeros(4, device=dev)", SHAPE)
    add("t[[[0, 1], [0, 1]], [0, 1, 2]]", INDEX)
    add("t[[0, 1], [0, 1, 2]] = 1.0", INDEX)
    add("t[[2]]", RANGE)
    add("t[[-3]] = 0.0", RANGE)
    add("t[:, [3]]", RANGE)
    add("t[:, [3]] = 0.0", RANGE)
    add("t[[2**63]] = 0.0", RANGE)
    add("t[ember.tensor([0.5], device=dev)]", INDEX)
    add("t[ember.tensor([0.5], device=dev)] = 1.0", INDEX)
    add("t[ember.tensor([1, 0], dtype=ember.uint8, device=dev)] = 1.0", VALUE)
    add("t[[0, 'a']]", INDEX)
    add("t[[0, None]]", INDEX)
    add("t[[[0], [1, 2]]]", INDEX)
    add(M + "t.masked_fill(t, 0.0)", DTYPE)
    add(M + "t.masked_fill(m, 'a')", TYPE)
    add(M + "t.masked_fill(m, ember.zeros(2, device=dev))", VALUE)
    add(M + "t.masked_fill(ember.ones(4, dtype=ember.bool, device=dev), 0.0)", SHAPE)
    add(M + "t.masked_fill(m, None)", TYPE)
    add(I + M + "i.masked_fill(m, 0.5)", None)  # PyTorch casts the value: no error
    add(I + M + "i.masked_fill(m, float('nan'))", VALUE)
    add(M + "t.expand(2, 2, 3).masked_fill_(m, 0.0)", VALUE)
    add(M + "ember.where(m, t, 'a')", TYPE)
    add(M + "ember.where(m, t, ember.zeros(4, device=dev))", SHAPE)
    add("ember.where(t, t, t)", None)  # any dtype is a condition (non-zero), as numpy's
    add(M + "ember.where(m, t)", TYPE)

    # ---- the scatter family
    for op in ["scatter", "scatter_add"]:
        add(IDS + f"t.{op}(1, ids.to_dtype(ember.float32), t)", UNSUPPORTED)
        add(IDS + f"t.{op}(1, ids + 3, t)", RANGE)
        add(IDS + f"t.{op}(1, ids - 4, t)", RANGE)
        add(IDS + f"t.{op}(1, ids[0], t)", SHAPE)
        add(IDS + f"t.{op}(1, ids, t.to_dtype(ember.float64 if dev.kind != 'metal' "
            "else ember.float16))", DTYPE)  # fmt: skip
        add(IDS + f"t.{op}(2, ids, t)", RANGE)
        add(IDS + f"t.{op}('a', ids, t)", TYPE)
        add(IDS + f"t.{op}(1, ids, t[:1])", SHAPE)
        add(IDS + f"t.{op}(1, ids, 'a')", TYPE)
        add(IDS + f"t.{op}(1, [[0, 0, 0], [0, 0, 0]], t)", None)  # a list of ids: taken
        add(IDS + f"t.{op}(1, ember.zeros(3, 3, dtype=ember.int64, device=dev), t)", SHAPE)
        add(IDS + f"t.expand(2, 2, 3).{op}_(2, ids.expand(2, 2, 3), t.expand(2, 2, 3))", VALUE)
    add(IDS + "t.scatter(1, ids, 2**70)", None)  # 1.2e21 is a float32
    add(IDS + "ember.arange(6, device=dev).reshape(2, 3).scatter(1, ids, 0.5)", None)
    add(IDS + "ember.arange(6, device=dev).reshape(2, 3).scatter(1, ids, float('nan'))", VALUE)
    add(IDS + "ember.arange(6, device=dev).reshape(2, 3).scatter(1, ids, 1e30)", VALUE)
    for op in ["index_add", "index_add_"]:
        add(f"t.{op}(0, ember.tensor([0, 1], device=dev), ember.ones(3, 3, device=dev))", SHAPE)
        add(f"t.{op}(0, ember.tensor([0, 2], device=dev), t)", RANGE)
        add(f"t.{op}(0, ember.tensor([[0, 1]], device=dev), t)", SHAPE)
        add(f"t.{op}(0, ember.tensor([0., 1.], device=dev), t)", UNSUPPORTED)
        add(f"t.{op}(0, ember.tensor([0, 1], device=dev), t, alpha='a')", TYPE)
        add(f"t.{op}(2, ember.tensor([0, 1], device=dev), t)", RANGE)
        add(f"t.{op}(0, ember.tensor([0, 1], device=dev), ember.arange(6, device=dev)"
            ".reshape(2, 3))", DTYPE)  # fmt: skip
    add("t.slice_scatter(t[:1], 0, 0, 2, 0)", VALUE)
    add("t.slice_scatter(t[:1], 0, 0, 2, -1)", VALUE)
    add("t.slice_scatter(t, 0, 0, 1)", SHAPE)
    add("t.slice_scatter(t[:1], 5)", RANGE)
    add("t.slice_scatter(t[:1], 0, 'a')", TYPE)
    add("t.slice_scatter('a')", TYPE)
    add("t.slice_scatter(ember.arange(3, device=dev).reshape(1, 3), 0, 0, 1)", None)  # cast
    add("ember.embedding(ember.tensor([0.5], device=dev), t)", UNSUPPORTED)
    add("ember.embedding(ember.tensor([2], device=dev), t)", RANGE)
    add("ember.embedding(ember.tensor([-1], device=dev), t)", RANGE)
    add("ember.embedding(ember.tensor([0], device=dev), t[0])", SHAPE)
    add("ember.embedding([0, 'a'], t)", VALUE)  # as ember.tensor([0, 'a'])
    add("ember.embedding(ember.tensor([0], device=dev), 'a')", TYPE)
    add(IDS + "t.gather(1, ids.to_dtype(ember.float32))", UNSUPPORTED)
    add(IDS + "t.gather(1, ids + 3)", RANGE)
    add(IDS + "t.gather(1, ids[0])", SHAPE)
    add(IDS + "t.gather(1, ember.zeros(3, 3, dtype=ember.int64, device=dev))", SHAPE)
    add(IDS + "t.gather(5, ids)", RANGE)
    add(IDS + "t.gather(0.5, ids)", TYPE)
    add(IDS + "t.index_select(0, ids)", SHAPE)
    add(IDS + "t.index_select(0, ids[0] + 2)", RANGE)
    add(IDS + "t.index_select(0, ids[0].to_dtype(ember.float16))", UNSUPPORTED)
    add("t.index_select(0, ember.tensor([True, False], device=dev))", UNSUPPORTED)
    add("t.index_select(3, ember.tensor([0], device=dev))", RANGE)

    # ---- sort, argsort, topk
    for op in ["sort", "argsort"]:
        add(f"t.{op}(2)", RANGE)
        add(f"t.{op}(-3)", RANGE)
        add(f"t.{op}('a')", TYPE)
        add(f"t.{op}(1.5)", TYPE)
        add(f"t.{op}(descending=None)", TYPE)
        add(f"t.{op}(descending='yes')", TYPE)
        add(f"t.{op}(stable=1)", TYPE)
        add(f"t.{op}(0, axis=1)", VALUE)
    add("t.topk(4)", VALUE)
    add("t.topk(-1)", VALUE)
    add("t.topk('a')", TYPE)
    add("t.topk(1.5)", TYPE)
    add("t.topk(1, 2)", RANGE)
    add("t.topk(1, largest=None)", TYPE)
    add("t.topk(1, sorted='yes')", TYPE)
    add("t.topk(1, dim='a')", TYPE)
    add("ember.tensor(1.0, device=dev).topk(2)", VALUE)
    add("ember.sort(3)", TYPE)

    # ---- scans
    for op in ["cumsum", "cumprod"]:
        add(f"t.{op}(2)", RANGE)
        add(f"t.{op}(-3)", RANGE)
        add(f"t.{op}('a')", TYPE)
        add(f"t.{op}((0, 1))", TYPE)
        add(f"t.{op}(0, dtype='foo')", TYPE)
        add(f"t.{op}(0, dtype=3)", TYPE)
        add(f"t.{op}(0, axis=1)", VALUE)
        add(f"ember.{op}('a', 0)", TYPE)
        add(f"t.{op}(0, dtype=ember.int64)", None)  # PyTorch casts first: no error
    add("ember.tensor(1.0, device=dev).cumsum(1)", RANGE)

    # ---- var, std, prod, norm, logsumexp
    for op in ["var", "std"]:
        add(f"t.{op}(correction='a')", TYPE)
        add(f"t.{op}(dim=2)", RANGE)
        add(f"t.{op}(dim='a')", TYPE)
        add(f"t.{op}(dim=(0, 0))", VALUE)
        add(f"t.{op}(keepdim='x')", TYPE)
        add(f"t.{op}(unbiased='x')", TYPE)
        add(f"t.{op}(1, True, correction=0)", VALUE)
        add(I + f"i.{op}()", UNSUPPORTED)
        add(B + f"b.{op}()", UNSUPPORTED)
        add(f"t.{op}(dim=0, axis=1)", VALUE)
    for op in ["prod", "logsumexp"]:
        add(f"t.{op}(dim=2)", RANGE)
        add(f"t.{op}(dim='a')", TYPE)
        add(f"t.{op}(keepdim=None)", TYPE)
    add(I + "i.logsumexp()", None)  # integers give float32, as PyTorch's
    add("t.norm(p='foo')", VALUE)
    add("t.norm(p=None, dim='a')", TYPE)
    add("t.norm(dim=5)", RANGE)
    add("t.norm(p=[1])", TYPE)
    add(I + "i.norm()", UNSUPPORTED)
    add("t.norm(keepdim='x')", TYPE)
    add("t.mean(dtype=ember.int64)", UNSUPPORTED)

    # ---- pad
    add("ember.pad(t, (1,))", VALUE)
    add("ember.pad(t, (1, 1, 1))", VALUE)
    add("ember.pad(t, (1, 1), mode='foo')", VALUE)
    add("ember.pad(t, (1, 1), mode='reflect', value=1.0)", VALUE)
    add("ember.pad(t, (3, 3), mode='reflect')", VALUE)
    add("ember.pad(t, (1, 1, 1, 1, 1, 1))", VALUE)
    add("ember.pad(t, ('a', 1))", TYPE)
    add("ember.pad(t, 1)", VALUE)  # one int is a pad tuple of length 1
    add("ember.pad(t, (1, 1), value='a')", TYPE)
    add("ember.pad(t, (-4, 0))", VALUE)
    add("ember.pad(t, (1, 1), mode=3)", TYPE)
    add("ember.pad(ember.ones(0, device=dev), (1, 1), mode='replicate')", VALUE)

    # ---- interpolate
    x4 = "x = ember.ones(1, 1, 2, 2, device=dev); "
    add(x4 + "ember.interpolate(x, size=(4, 4), mode='foo')", VALUE)
    add(x4 + "ember.interpolate(x, size=(4, 4), scale_factor=2)", VALUE)
    add(x4 + "ember.interpolate(x)", VALUE)
    add(x4 + "ember.interpolate(x, size=(-1, 4))", VALUE)
    add(x4 + "ember.interpolate(x, size=(4, 4, 4))", VALUE)
    add(x4 + "ember.interpolate(x, size='a')", TYPE)
    add(x4 + "ember.interpolate(x, scale_factor='a')", TYPE)
    add(x4 + "ember.interpolate(x, scale_factor=-2.0)", VALUE)
    add(x4 + "ember.interpolate(x, size=(4, 4), mode='nearest', align_corners=True)", VALUE)
    add(x4 + "ember.interpolate(x, size=(4, 4), mode=3)", TYPE)
    add("ember.interpolate(ember.ones(2, device=dev), size=4)", VALUE)
    add("ember.interpolate(ember.ones(1, 1, 2, 2, dtype=ember.int64, device=dev), size=(4, 4), "
        "mode='bilinear')", UNSUPPORTED)  # fmt: skip
    add(x4 + "ember.interpolate(x, size=(4, 4), mode='linear')", VALUE)
    add(x4 + "ember.interpolate('x', size=4)", TYPE)

    # ---- randint and random creation
    add("ember.randint(5, 5, (3,), device=dev)", VALUE)
    add("ember.randint(5, 2, (3,), device=dev)", VALUE)
    add("ember.randint(10, device=dev)", TYPE)
    add("ember.randint(10, (3,), dtype=ember.float32, device=dev)", None)  # as PyTorch
    add("ember.randint(2**70, (3,), device=dev)", VALUE)
    add("ember.randint(10, 'a', device=dev)", TYPE)
    add("ember.randint(10, (-1,), device=dev)", VALUE)
    add("ember.randint(300, (3,), dtype=ember.uint8, device=dev)", VALUE)
    add("ember.randint(1.5, (3,), device=dev)", TYPE)
    add("ember.randint_like(t, 10)", None)  # whole numbers in t's dtype, as PyTorch
    add(I + "ember.randint_like(i, 0)", VALUE)
    add("ember.manual_seed('a')", TYPE)
    add("ember.manual_seed(-1)", None)  # PyTorch takes it (two's complement)
    add("ember.randint(high=10)", TYPE)
    add("ember.randint(low=1, high=10)", TYPE)
    add("ember.rand(3, dtype=ember.bool, device=dev)", UNSUPPORTED)

    # ---- round(decimals=) and gelu(approximate=)
    add("t.round(decimals='a')", TYPE)
    add("t.round(decimals=1.5)", TYPE)
    add(I + "i.round(decimals=1)", UNSUPPORTED)
    add("t.round(1)", TYPE)  # decimals is keyword-only, as PyTorch's
    add("t.gelu(approximate='fast')", VALUE)
    add("t.gelu(approximate=None)", TYPE)
    add("ember.gelu(t, approximate='TANH')", VALUE)
    add(I + "i.gelu()", UNSUPPORTED)

    # ---- shape ops added with the misc set
    add("t.repeat_interleave(-1)", VALUE)
    add("t.repeat_interleave('a')", TYPE)
    add("t.repeat_interleave(2, dim=5)", RANGE)
    add("t.chunk(0)", VALUE)
    add("t.chunk('a')", TYPE)
    add("t.split([1, 1], dim=1)", VALUE)
    add("t.split(0)", VALUE)
    add("t.split('a')", TYPE)
    add("t.roll((1, 1), (0,))", VALUE)
    add("t.roll(1, 5)", RANGE)
    add("t.flip((0, 0))", VALUE)
    add("t.flip(3)", RANGE)
    add("t.tile('a')", TYPE)
    add("t.repeat(2)", VALUE)
    add("t.repeat(-1, 1)", VALUE)
    add("ember.cat([])", VALUE)
    add("ember.cat([t, 'a'])", TYPE)
    add("ember.cat([t, t], dim=2)", RANGE)
    add("ember.stack([])", VALUE)
    add("ember.stack([t, t], dim=4)", RANGE)
    add("ember.meshgrid(t[0], t[0], indexing='foo')", VALUE)
    add("ember.dot(t, t)", SHAPE)
    add("ember.dot(t[0], t[1, :2])", SHAPE)
    add("ember.dot(t[0], ember.arange(3, device=dev))", DTYPE)
    add("ember.mv(t, t)", SHAPE)
    add("ember.mv(t[0], t[0])", SHAPE)
    add("ember.isclose(t, t, rtol=-1.0)", VALUE)
    add("ember.isclose(t, t, atol=-1.0)", VALUE)
    add("ember.allclose(t, ember.zeros(4, device=dev))", SHAPE)
    add("ember.isclose(t, 'a')", TYPE)
    add("ember.linspace(0, 1, -1, device=dev)", VALUE)
    add("ember.linspace(0, 1, 'a', device=dev)", TYPE)
    add("ember.arange(0, 1, 0, device=dev)", VALUE)
    add("ember.arange(0, 10, -1, device=dev)", None)  # empty, as numpy's (test_creation)
    add("ember.eye(-1, device=dev)", VALUE)
    add("ember.eye(2, 'a', device=dev)", TYPE)
    add("ember.full((2,), 'a', device=dev)", TYPE)
    add("ember.full((2,), 2**70, dtype=ember.int64, device=dev)", VALUE)
    add("ember.full((2,), float('nan'), dtype=ember.int32, device=dev)", VALUE)
    add("ember.tril(t, 'a')", TYPE)
    add("ember.triu(t[0, 0])", VALUE)
    add("t.clamp(min=1.0, max=0.0)", VALUE)
    add("ember.arange(3, device=dev).clamp(min=float('nan'))", VALUE)
    add("t.clamp(min=[1.0])", TYPE)
    add("ember.atan2(t, 'a')", TYPE)

    # ---- DLPack and pinned memory
    # arguments on a CPU tensor (a Metal tensor refuses any export first)
    c = "c = ember.zeros(2); "
    add("t.__dlpack__(stream='x')", {"*": DLPACK, "cuda": TYPE})  # CPU, Metal: no stream
    add(c + "c.__dlpack__(copy='x')", TYPE)
    add(c + "c.__dlpack__(max_version='x')", TYPE)
    add(c + "c.__dlpack__(max_version=(1,))", TYPE)
    add(c + "c.__dlpack__(dl_device='cpu')", TYPE)
    add(c + "c.__dlpack__(dl_device=(1, 'a'))", TYPE)
    add(c + "c.__dlpack__(dl_device=(99, 0))", DLPACK)
    add(c + "ember.arange(4.0)[::-1].__dlpack__(copy=False)", DLPACK)
    add(c + "ember.ones(1).expand(3).__dlpack__(copy=False)", DLPACK)
    add("t.__dlpack__()", {"*": None, "metal": DLPACK})
    add("t.__dlpack__(dl_device=(99, 0))", DLPACK)
    add("ember.from_dlpack('x')", TYPE)
    add("ember.from_dlpack(object())", TYPE)
    add("ember.from_dlpack(ember.zeros(2), device='x')", VALUE)  # a bad spec
    add("t.pin_memory(3)", TYPE)
    add("t.to(3)", TYPE)
    add("t.to(dtype='foo')", TYPE)
    add("t.to_device('gpu')", VALUE)
    add("t.copy_('a')", TYPE)
    add("t.copy_(ember.zeros(4, device=dev))", SHAPE)
    add(I + "i.copy_(t)", None)  # copy_ casts, as PyTorch's
    add("t.expand(2, 2, 3).copy_(t)", VALUE)
    return cases


CASES = build_cases()


def run_corpus(spec: str) -> dict[str, tuple[str, bool, str]]:
    results, _ = run_isolated(CALL_CHILD, spec, [(label, code) for label, code, _ in CASES])
    return results


@pytest.fixture(scope="module", params=DEVICE_SPECS, ids=DEVICE_SPECS)
def outcomes(request):
    return request.param, run_corpus(request.param)


def test_corpus_is_large_and_labels_unique():
    assert len(CASES) >= 300
    assert len({label for label, _, _ in CASES}) == len(CASES)


def test_every_call_raises_its_exact_class_and_survives(outcomes):
    spec, results = outcomes
    wrong = []
    for label, code, expected in CASES:
        name, is_ember, message = results.get(label, ("did not run", False, ""))
        if isinstance(expected, dict):  # by device kind, "*" for the others
            expected = expected.get(spec, expected["*"])
        if expected is None:  # valid calls: they must simply work
            ok = name == "None"
        else:
            ok = name == expected and is_ember
        if not ok:
            wrong.append(f"{code!r}: got {name} (EmberError: {is_ember}) {message[:150]}, "
                         f"expected {expected}")  # fmt: skip
    assert not wrong, f"{spec}: {len(wrong)} of {len(CASES)} calls:\n" + "\n".join(wrong)


HUGE_IDS = [
    "ember.ones(2, device=dev).gather(0, z.expand(2**36))",
    "ember.ones(2, device=dev)[z.expand(2**36)]",
    "ember.ones(2, device=dev)[z.expand(2**36)] = 1.0",
    "ember.ones(2, device=dev).index_select(0, z.expand(2**36))",
    "ember.embedding(z.expand(2**40), ember.ones(4, 3, device=dev))",
    "ember.ones(2, device=dev)[z.expand(2**20, 2**20)]",
    "ember.ones(2, device=dev).repeat_interleave(2**40)",
    "ember.ones(2, device=dev).repeat_interleave(2**62)",
    "ember.interpolate(ember.ones(1, 1, 2, 2, device=dev), size=(2**31, 2**31))",
    "ember.interpolate(ember.ones(1, 1, 2, device=dev), size=2**40, mode='linear')",
    "ember.interpolate(ember.ones(1, 1, 2, 2, device=dev), scale_factor=1e30)",
]


@pytest.mark.parametrize("spec", DEVICE_SPECS)
def test_huge_broadcast_ids_fail_before_reading_them(spec):
    # Each result (or write) is far past any device's memory: the size is checked before a
    # pass over the ids, which would take minutes over 2**36 elements. A hang fails by
    # run_python's timeout; no time is asserted (the figures are in the closing notes).
    code = f"""
        import ember
        dev = ember.device({spec!r})
        z = ember.zeros(1, dtype=ember.int64, device=dev)
        for call in {HUGE_IDS!r}:
            try:
                exec(call)
                print("NO ERROR", call)
            except ember.EmberError as e:
                print(type(e).__name__, call)
    """
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(HUGE_IDS), proc.stdout
    for line in lines:
        assert line.split(" ", 1)[0] in ("OutOfMemoryError", "InvalidArgumentError"), line
