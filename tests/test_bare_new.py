"""Cls.__new__(Cls) without __init__ gives no half-made object: it raises InvalidTypeError.

Such an object would have no C++ value behind it, so each use runs in a fresh interpreter:
a crash there fails the test instead of ending the suite.
"""

from __future__ import annotations

import ember
import pytest
from ember import _core
from helpers import run_python

# Every class the compiled module binds (the exceptions live in pure Python).
BOUND_CLASSES = sorted(
    name
    for name, obj in vars(_core).items()
    if isinstance(obj, type) and not issubclass(obj, BaseException)
)

USES = {
    "Tensor": ["x.numpy()", "repr(x)", "ember.zeros(2) + x", "x.shape", "x[0]", "x.sum()"],
    "Device": ["x.id", "repr(x)", "x.kind", "ember.zeros(2, device=x)"],
    "DType": ["x.name", "repr(x)", "ember.zeros(2, dtype=x)", "x == ember.float32"],
    "Event": ["x.query()", "x.synchronize()", "x.elapsed_time(x)"],
    "_SafetensorsFile": ["x.keys()", "x.metadata()", "x.get_tensor('a')", "x.path"],
    "_GradFn": ["x.name()", "repr(x)"],
}


def qualified(name: str) -> str:
    """Where the class is reached: ember.Tensor, or ember._core._SafetensorsFile."""
    return f"ember._core.{name}" if name.startswith("_") else f"ember.{name}"


def test_every_bound_class_is_covered():
    assert BOUND_CLASSES == sorted(USES)


@pytest.mark.parametrize("name", BOUND_CLASSES)
def test_bare_new_raises_a_typed_error(name):
    cls = getattr(_core if name.startswith("_") else ember, name)
    for make in (lambda: cls.__new__(cls), lambda: cls()):
        with pytest.raises(ember.InvalidTypeError) as info:
            make()
        assert isinstance(info.value, TypeError)
        assert f"ember.{name}" in str(info.value) and "use " in str(info.value)


@pytest.mark.parametrize("name", BOUND_CLASSES)
def test_bare_new_then_use_does_not_crash(name):
    uses = "\n".join(
        f"""
try:
    {use}
except NameError:
    print("NO-OBJECT")
except BaseException as e:
    print("RAISED", type(e).__name__)
else:
    print("NO-EXCEPTION")"""
        for use in USES[name]
    )
    code = f"""
import ember
try:
    x = {qualified(name)}.__new__({qualified(name)})
except ember.InvalidTypeError:
    pass
{uses}
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:-1] == ["NO-OBJECT"] * len(USES[name]), proc.stdout


def test_subclass_cannot_skip_construction_either():
    class Sub(ember.Tensor):
        pass

    with pytest.raises(ember.InvalidTypeError):
        Sub.__new__(Sub)

    # nor can a tensor become one, so every tensor is exactly ember.Tensor (the number
    # slots rely on it)
    class Slotted(ember.Tensor):
        __slots__ = ()

    t = ember.zeros(1)
    with pytest.raises(TypeError, match="__class__ assignment"):
        t.__class__ = Slotted
    assert type(t) is ember.Tensor


def test_made_objects_still_work():
    t = ember.zeros(2, dtype=ember.float16, device=ember.device("cpu"))
    assert repr(t).startswith("tensor(") and t.dtype.name == "float16" and t.device.id == 0
