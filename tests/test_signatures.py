"""inspect.signature reads every public function and method of ember (the error wrapper
around the bound functions keeps their parameter names and defaults)."""

import inspect

import pytest

import ember
from ember import _signatures

CLASSES = (ember.Tensor, ember.Device, ember.DType, ember.Size, ember.Event, ember.safe_open)
PRIVATE = {"_pybind11_conduit_v1_"}  # pybind11's own module-interop hook


def public_callables():
    for name in sorted(dir(ember)):
        obj = getattr(ember, name)
        if not name.startswith("_") and callable(obj) and not isinstance(obj, type):
            yield f"ember.{name}", obj
    for cls in CLASSES:
        for name in sorted(vars(cls)):
            obj = getattr(cls, name)
            if name in PRIVATE or not callable(obj) or isinstance(obj, type):
                continue
            if name.startswith("__") and inspect.isbuiltin(obj) and obj.__qualname__.startswith("object."):
                continue  # object's own slot wrappers
            yield f"{cls.__name__}.{name}", obj


def test_every_public_callable_has_a_signature():
    missing = []
    count = 0
    for name, obj in public_callables():
        count += 1
        try:
            inspect.signature(obj)
        except (ValueError, TypeError) as e:
            missing.append(f"{name}: {e}")
    assert count > 350  # the functions and the classes' methods were all seen
    assert missing == []


def test_function_signature_names_and_defaults():
    sig = inspect.signature(ember.full)
    assert list(sig.parameters) == ["shape", "fill_value", "dtype", "device", "requires_grad"]
    assert sig.parameters["dtype"].default is None
    assert sig.parameters["requires_grad"].default is False
    assert sig.parameters["shape"].default is inspect.Parameter.empty
    sig = inspect.signature(ember.sum)
    assert sig.parameters["keepdim"].default is False
    assert sig.parameters["dtype"].kind is inspect.Parameter.KEYWORD_ONLY


def test_method_signature_bound_and_unbound():
    assert list(inspect.signature(ember.Tensor.sum).parameters)[:3] == ["self", "dim", "keepdim"]
    t = ember.ones(3)
    bound = inspect.signature(t.sum)
    assert list(bound.parameters)[:2] == ["dim", "keepdim"]
    assert bound.bind(0, keepdim=True).arguments == {"dim": 0, "keepdim": True}
    assert list(inspect.signature(t.reshape).parameters)  # *shape or shape: something


def test_docstring_keeps_the_annotated_signature():
    assert ember.sum.__text_signature__.startswith("(input, dim=None")
    assert "keepdim: bool = False" in ember.sum.__doc__
    assert ember.Tensor.sum.__text_signature__.startswith("(self, dim=None")


def test_wrapped_functions_still_raise_typed_errors():
    with pytest.raises(ember.InvalidTypeError, match="sum"):
        ember.sum(ember.ones(2), dim="x")


@pytest.mark.parametrize(
    "doc, want",
    [
        ("f(a: int, b: float = 1.5) -> int\n\nDoc.", "f(a, b=1.5)"),
        ("f(self: m.T, *, k: object = None) -> object", "f(self, k=None)".replace("self, ", "self, *, ")),
        ("f(x: list[tuple[int, int]] = [(1, 2), (3, 4)]) -> None", "f(x=[(1, 2), (3, 4)])"),
        ("f(s: str = 'a, b)') -> None", "f(s='a, b)')"),
        ("f(d: m.DType = <DType.float32: 5>) -> None", "f(d=...)"),
        ("f(*args, **kwargs) -> object", "f(*args, **kwargs)"),
        ("f() -> None", "f()"),
        ("Not a signature line", None),
    ],
)
def test_text_signature_parser(doc, want):
    assert _signatures.text_signature(doc) == want
