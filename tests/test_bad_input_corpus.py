"""A corpus of bad and unusual calls: each must raise exactly the expected ember error
class (so also an EmberError), and none may crash the interpreter.

The calls run in a few child interpreters, each call inside its own try/except with a
start marker, so that a crash is attributed to the call that caused it; the calls after
it run again in a new child.
"""

from __future__ import annotations

import pytest
from conftest import DEVICE_SPECS
from helpers import CALL_CHILD, run_isolated

TYPE, VALUE, RANGE, INDEX = (
    "InvalidTypeError",
    "InvalidArgumentError",
    "IndexOutOfRangeError",
    "InvalidIndexError",
)
SHAPE, DTYPE, UNSUPPORTED = "ShapeMismatchError", "DTypeMismatchError", "UnsupportedDTypeError"

CREATORS = ["zeros", "ones", "rand", "randn"]
FLOAT_UNARY = ["exp", "log", "sqrt", "recip", "sin", "cos", "tanh", "gelu", "silu", "sigmoid"]
UNARY = FLOAT_UNARY + ["neg", "abs", "sqr", "relu"]
BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum", "minimum"]
CMP = ["eq", "ne", "lt", "le", "gt", "ge"]
REDUCE = ["sum", "amax", "amin", "mean"]
MAKERS = {  # a creation call with a place for one more keyword argument
    "zeros": "ember.zeros(2, {})",
    "ones": "ember.ones(2, {})",
    "rand": "ember.rand(2, {})",
    "randn": "ember.randn(2, {})",
    "full": "ember.full(2, 1.0, {})",
    "arange": "ember.arange(3, {})",
    "eye": "ember.eye(2, {})",
    "tensor": "ember.tensor([1.0], {})",
}


def build_cases() -> list[tuple[str, str, str]]:
    cases = []

    def add(code, expected):
        cases.append((f"{len(cases):03d} {code}"[:90], code, expected))

    for fn in CREATORS:
        for bad in ["'3'", "2.5", "None", "[2, 'a']", "(2, 1.5)", "object()", "{'a': 1}", "b'x'"]:
            add(f"ember.{fn}({bad}, device=dev)", TYPE)
        for bad in ["-1", "(2, -3)", "2**64", "-(2**63) - 1"]:
            add(f"ember.{fn}({bad}, device=dev)", VALUE)
    for call in MAKERS.values():
        for bad in ["'foo'", "3", "object()", "'complex64'", "[1]", "'int8'"]:
            add(call.format(f"dtype={bad}, device=dev"), TYPE)
        for bad in ["3", "1.5", "['cpu']", "b'cpu'"]:
            add(call.format(f"device={bad}"), TYPE)
        for bad in ["'gpu'", "'cuda:x'", "''", "'cpu:-'"]:
            add(call.format(f"device={bad}"), VALUE)
    for op in REDUCE:
        for bad in ["'a'", "2.5", "[0, 'a']", "object()"]:
            add(f"t.{op}(dim={bad})", TYPE)
        for bad in ["5", "-3", "(0, 2)"]:
            add(f"t.{op}(dim={bad})", RANGE)
        add(f"t.{op}(dim=(0, 0))", VALUE)
        add(f"t.{op}(dim=0, keepdim='x')", TYPE)
    for op in ["max", "min"]:  # one dim: a tuple is for amax/amin
        for bad in ["'a'", "2.5", "(0, 1)", "True"]:
            add(f"t.{op}(dim={bad})", TYPE)
        for bad in ["5", "-3"]:
            add(f"t.{op}(dim={bad})", RANGE)
    for op in ["argmax", "argmin"]:
        for bad in ["'a'", "2.5", "(0, 1)"]:
            add(f"t.{op}(dim={bad})", TYPE)
        add(f"t.{op}(dim=2)", RANGE)
        add(f"ember.zeros(0, device=dev).{op}()", VALUE)
    for op in ["softmax", "log_softmax"]:
        add(f"t.{op}('x')", TYPE)
        add(f"t.{op}(2)", RANGE)
        add(f"ember.arange(3, device=dev).{op}(0)", UNSUPPORTED)
    for op in UNARY:
        for bad in ["3", "'a'", "None", "[1.0]"]:
            add(f"ember.{op}({bad})", TYPE)
        add(f"ember.{op}(t, out=3)", TYPE)
        add(f"ember.{op}(t, out=ember.zeros(3, device=dev))", SHAPE)
        add(f"ember.{op}(t, out=t.expand(2, 2, 3))", SHAPE)
    for op in FLOAT_UNARY:
        add(f"ember.{op}(ember.arange(3, device=dev))", UNSUPPORTED)
    for op in BINARY:
        add(f"ember.{op}(t, 'a')", TYPE)
        add(f"ember.{op}(1, 2)", TYPE)
        add(f"ember.{op}(t, ember.zeros(4, device=dev))", SHAPE)
        add(f"ember.{op}(t, t, out=t[:1].expand(2, 3))", VALUE)
        add(f"ember.{op}(t, t, out=ember.zeros(2, 3, dtype=ember.int64, device=dev))", DTYPE)
    for op in CMP:
        add(f"ember.{op}(t, 'a')", TYPE)
        add(f"ember.{op}(1, 2)", TYPE)
        add(f"ember.{op}(t, ember.zeros(4, device=dev))", SHAPE)
    shape_calls = {
        "t.transpose('a', 0)": TYPE,
        "t.transpose(0, 1.5)": TYPE,
        "t.transpose(0, 5)": RANGE,
        "t.permute('a')": TYPE,
        "t.permute(0, 0)": VALUE,
        "t.permute(0)": VALUE,
        "t.permute(0, 5)": RANGE,
        "t.unsqueeze('a')": TYPE,
        "t.unsqueeze(5)": RANGE,
        "t.squeeze('a')": TYPE,
        "t.squeeze(5)": RANGE,
        "t.squeeze((0, 0))": VALUE,
        "t.squeeze((0, -2))": VALUE,
        "t.narrow('a', 0, 1)": TYPE,
        "t.narrow(0, 0.5, 1)": TYPE,
        "t.narrow(2, 0, 1)": RANGE,
        "t.narrow(1, 2, 5)": RANGE,
        "t.narrow(1, 0, -1)": RANGE,
        "t.reshape('a')": TYPE,
        "t.reshape(2.0, 3)": TYPE,
        "t.reshape(4, 2)": SHAPE,
        "t.reshape(-1, -1)": VALUE,
        "t.view('a')": TYPE,
        "t.view(7)": SHAPE,
        "t.t().view(6)": VALUE,
        "t.flatten('a')": TYPE,
        "ember.zeros(2, 3, 4, device=dev).flatten(2, 1)": VALUE,
        "t.expand('a')": TYPE,
        "t.expand(2, 5)": SHAPE,
        "t.expand(-1, 2, 3)": VALUE,
        "t.broadcast_to((4, 3, 2))": SHAPE,
        "t.broadcast_to('a')": TYPE,
        "ember.cat(t)": TYPE,
        "ember.cat([t, 5])": TYPE,
        "ember.cat([])": VALUE,
        "ember.cat([t, t], dim=2)": RANGE,
        "ember.cat([t, t], dim='a')": TYPE,
        "ember.cat([t, ember.zeros(2, 2, device=dev)])": SHAPE,
        "ember.stack([t, None])": TYPE,
        "ember.stack([])": VALUE,
        "ember.stack([t, t.t()])": SHAPE,
        "t.t().t().t().t().reshape(3, 2).t().view(6)": VALUE,
        "ember.zeros(2, 3, 4, device=dev).t()": VALUE,
        "t.matmul('a')": TYPE,
        "t @ ember.zeros(2, 3, device=dev)": SHAPE,
        "ember.matmul(t, [1, 2])": TYPE,
    }
    for code, expected in shape_calls.items():
        add(code, expected)
    index_calls = {
        "t['a']": INDEX,
        "t[1.5]": INDEX,
        "t[b'x']": INDEX,
        "t[object()]": INDEX,
        "t[True]": None,  # a 0-d mask, as numpy's: test_index_arrays
        "t[..., ...]": INDEX,
        "t[0, 'a']": INDEX,
        "t[{}]": INDEX,
        "t[2]": RANGE,
        "t[-3]": RANGE,
        "t[0, 3]": RANGE,
        "t[0, 0, 0]": RANGE,
        "t[2**63]": RANGE,
        "t[-(2**63) - 1]": RANGE,
        "t[2**100]": RANGE,
        "t[::0]": VALUE,
        "t[1:2.5]": TYPE,
        "t['a':]": TYPE,
        "t[::1.0]": TYPE,
        "t[[0, 1], [0, 1, 2]]": INDEX,  # index arrays that do not broadcast
        "t[[[0]], [3]]": RANGE,
        "t[[5]]": RANGE,
        "t[[2**63]]": RANGE,
        "t[[0, -(2**63) - 1]]": RANGE,
        "t[[0.5]]": INDEX,  # IndexError, as numpy's and PyTorch's
        "t[[-3]]": RANGE,
        "t[ember.zeros(2, dtype=ember.uint8, device=dev)]": VALUE,
        "t['a'] = 1": INDEX,
        "t[1.5] = 1": INDEX,
        "t[5] = 1": RANGE,
        "t[[0, 1], [0, 1, 2]] = 1": INDEX,
        "t[[5]] = 1": RANGE,
        "t[[0, 1]] = ember.zeros(4, device=dev)": SHAPE,
        "t[0] = 'a'": VALUE,
        "i = ember.arange(3, device=dev); i[0] = float('nan')": VALUE,
        "i = ember.arange(3, device=dev); i[1:] = float('-inf')": VALUE,
        "i = ember.arange(3, device=dev); i[[0]] = 1e30": VALUE,
        "i = ember.arange(3, dtype=ember.uint8, device=dev); i[0] = 256.0": VALUE,
        "t[0] = ember.zeros(4, device=dev)": SHAPE,
        "t[0] = [1.0, 2.0]": SHAPE,
        "t[1:2.5] = 0": TYPE,
        "t.expand(2, 2, 3)[...] = 0": VALUE,
        "t[:1].expand(2, 3)[0, 0] = 1": None,  # one element of a broadcast view: allowed
        "t[:1].expand(4, 3)[:, 0] = 1": VALUE,
        "t.index_select(0, 'a')": VALUE,
        "t.index_select('a', ember.tensor([0], device=dev))": TYPE,
        "t.index_select(0, ember.tensor([-1], device=dev))": RANGE,
        "t.index_select(0, ember.tensor([2], device=dev))": RANGE,
        "t.index_select(3, ember.tensor([0], device=dev))": RANGE,
        "t.index_select(0, ember.tensor([0.0], device=dev))": UNSUPPORTED,
        "t.index_select(0, ember.zeros(1, 1, dtype=ember.int64, device=dev))": SHAPE,
        "t.gather(1, ember.tensor([[0], [7]], device=dev))": RANGE,
        "t.gather(1, ember.tensor([[0], [-1]], device=dev))": RANGE,
        "t.gather(0, ember.zeros(1, 3, device=dev))": UNSUPPORTED,
        "t.gather(1, ember.zeros(2, dtype=ember.int64, device=dev))": SHAPE,
    }
    for code, expected in index_calls.items():
        add(code, expected)
    fills = [("300", "uint8"), ("-1", "uint8"), ("-1", "uint32"), ("2**32", "uint32"),
             ("2**63", "int64"), ("2**70", "int64"), ("float('nan')", "int64"),
             ("1e5", "float16"), ("1e39", "float32"), ("256.0", "uint8"),
             ("2**31", "int32"), ("-(2**31) - 1", "int32"), ("3e9", "int32")]  # fmt: skip
    for value, dtype in fills:
        add(f"ember.full(3, {value}, dtype=ember.{dtype}, device=dev)", VALUE)
        add(f"ember.full_like(t, {value}, dtype=ember.{dtype})", VALUE)
    for data, dtype in [("[300]", "uint8"), ("[-1]", "uint32"), ("[1e30]", "int64"),
                        ("[2**31]", "int32")]:  # fmt: skip
        add(f"ember.tensor({data}, dtype=ember.{dtype}, device=dev)", VALUE)
    other_calls = {
        "ember.Tensor.__new__(ember.Tensor)": TYPE,
        "ember.Tensor()": TYPE,
        "ember.Device.__new__(ember.Device)": TYPE,
        "ember.Device()": TYPE,
        "ember.DType.__new__(ember.DType)": TYPE,
        "ember.DType()": TYPE,
        "ember.tensor([[1, 2], [3]], device=dev)": VALUE,
        "ember.tensor('abc', device=dev)": VALUE,
        "ember.tensor(None, device=dev)": VALUE,
        "ember.tensor({'a': 1}, device=dev)": VALUE,
        "ember.tensor([1, 'a'], device=dev)": VALUE,
        "ember.tensor([2**70], device=dev)": VALUE,
        "ember.tensor([1j], device=dev)": VALUE,
        "t.item()": VALUE,
        "ember.zeros(0, device=dev).item()": VALUE,
        "bool(t)": VALUE,
        "int(ember.tensor(float('nan'), device=dev))": VALUE,
        "int(ember.tensor(float('inf'), device=dev))": VALUE,
        "len(ember.zeros((), device=dev))": TYPE,
        "iter(ember.zeros((), device=dev))": TYPE,
        "t.__array__(copy=False)": VALUE,
        "t.to('cpu', 'float32', 'x')": TYPE,
        "t.to_dtype('foo')": TYPE,
        "t.to_dtype(None)": TYPE,
        "t.to_device(3)": TYPE,
        "t.to_device('gpu')": VALUE,
        "ember.manual_seed('x')": TYPE,
        "ember.manual_seed(None)": TYPE,
        "dev.manual_seed(1.5)": TYPE,
        "ember.device(3)": TYPE,
        "ember.device(None)": TYPE,
        "ember.device('gpu')": VALUE,
        "ember.Device.metal('x')": TYPE,
        "ember.Device.cuda(0.5)": TYPE,
        "dev.same_device(3)": TYPE,
        "ember.arange('a', device=dev)": TYPE,
        "ember.arange(0, 10, 0, device=dev)": VALUE,
        "ember.arange(float('inf'), device=dev)": VALUE,
        "ember.eye('a', device=dev)": TYPE,
        "ember.eye(-1, device=dev)": VALUE,
        "ember.full(3, 'x', device=dev)": TYPE,
        "ember.full('a', 1.0, device=dev)": TYPE,
        "ember.full(3, None, device=dev)": TYPE,
        "t.clamp(min=2.0, max=1.0)": VALUE,
        "t.clamp(min='a')": TYPE,
        "ember.arange(3, device=dev).clamp(min=float('nan'))": VALUE,
        "t.sum(1, keepdim=None)": TYPE,
        "t.sort(descending=None)": TYPE,
        "t.sort(stable=1)": TYPE,
        "t.topk(1, largest=None)": TYPE,
        "t.topk(1, sorted='yes')": TYPE,
        "ember.allclose(t, t, equal_nan=None)": TYPE,
        "ember.max(t, 1, out=(t[:, 0], t[:, 0]))": DTYPE,
        "ember.argmax(t, 1, out=t[:, 0])": DTYPE,
        "ember.where(t, t, 'a')": TYPE,
        "ember.where(t > 0, t, ember.zeros(4, device=dev))": SHAPE,
        "ember.where('a', t, t)": TYPE,
        "ember.zeros(3, dtype=ember.uint8, device=dev) + 300": VALUE,
        "ember.zeros(3, dtype=ember.int64, device=dev).__iadd__(1.5)": DTYPE,
        "i = ember.arange(3, device=dev); i /= 2": DTYPE,
        "i = ember.arange(3, device=dev); i //= 1.5": DTYPE,
        "ember.div(t, t, rounding_mode='round')": VALUE,
        "ember.div(t, t, rounding_mode=1)": TYPE,
        "t.div(t, rounding_mode=b'floor')": TYPE,
        "ember.arange(3, device=dev) // 0": None,  # CPU raises, GPUs give 0: test_division
        "ember.arange(3, device=dev) % ember.zeros(3, dtype=ember.int64, device=dev)": None,
        "u = ember.zeros(3, device=dev); u += t": SHAPE,
        "e = ember.arange(5, device=dev).expand(3, 5); e += 1": VALUE,
        "e = ember.arange(5, device=dev).expand(3, 5); e *= e": VALUE,
        "ember.zeros(2**45, device=dev)": "OutOfMemoryError",
        # a broadcast index whose result cannot fit fails before any pass over its ids
        "ember.ones(2, device=dev).gather(0, ember.zeros(1, dtype=ember.int64, "
        "device=dev).expand(2**40))": "OutOfMemoryError",
        "ember.ones(2, device=dev)[ember.zeros(1, dtype=ember.int64, device=dev)"
        ".expand(2**40)]": "OutOfMemoryError",
        "ember.ones(2, device=dev).index_select(0, ember.zeros(1, dtype=ember.int64, "
        "device=dev).expand(2**40))": "OutOfMemoryError",
        "ember.embedding(ember.zeros(1, dtype=ember.int64, device=dev).expand(2**40), "
        "ember.ones(2, 3, device=dev))": "OutOfMemoryError",
        "ember.ones(2**40, 2**40, device=dev)": VALUE,
        "ember.from_dlpack(3)": None,  # checked in test_dlpack; here: no crash
        "ember.zeros_like(3)": TYPE,
        "ember.ones_like(t, dtype='foo')": TYPE,
        "ember.rand_like(t, device=3)": TYPE,
        "ember.randn_like(ember.arange(3, device=dev))": UNSUPPORTED,
        "ember.rand(3, dtype=ember.int64, device=dev)": UNSUPPORTED,
        "ember.arange(3, device=dev).mean()": UNSUPPORTED,
    }
    for code, expected in other_calls.items():
        add(code, expected)
    return cases


CASES = build_cases()


def run_corpus(spec: str) -> dict[str, tuple[str, bool, str]]:
    """{label: (exception class name or "None", is an EmberError, message)}; a call that
    kills its child is recorded as "CRASH rc=..." and the rest run in a new child."""
    results, _ = run_isolated(CALL_CHILD, spec, [(label, code) for label, code, _ in CASES])
    return results


@pytest.fixture(scope="module", params=DEVICE_SPECS, ids=DEVICE_SPECS)
def outcomes(request):
    return run_corpus(request.param)


def test_corpus_is_large_and_labels_unique():
    assert len(CASES) >= 300
    assert len({label for label, _, _ in CASES}) == len(CASES)


def test_every_call_raises_its_exact_class_and_survives(outcomes):
    wrong = []
    for label, code, expected in CASES:
        name, is_ember, message = outcomes.get(label, ("did not run", False, ""))
        if expected is None:  # only survival is asserted
            ok = not name.startswith("CRASH") and name != "did not run"
        else:
            ok = name == expected and is_ember
        if not ok:
            wrong.append(f"{code!r}: got {name} (EmberError: {is_ember}) {message[:150]}, "
                         f"expected {expected}")  # fmt: skip
    assert not wrong, f"{len(wrong)} of {len(CASES)} calls:\n" + "\n".join(wrong)
