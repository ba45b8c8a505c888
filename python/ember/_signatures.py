"""Text signatures for the functions of ember._core.

pybind11 writes a function's signature into the first line of its docstring
(``sum(self: ember._core.Tensor, dim: object = None, ...) -> object``), which
``inspect.signature`` cannot read. ember wraps every bound function (its error wrapper),
and the wrapper's docstring starts with the form CPython reads as ``__text_signature__``:
``sum(self, dim=None, ...)\\n--\\n\\n``, parameter names and defaults only (the types are
in the stubs, ``_core.pyi``). A default that is not a Python literal shows as ``...``.
"""

from __future__ import annotations

import ast

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside brackets and quotes."""
    parts, depth, quote, start, i = [], [], "", 0, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in _OPEN:
            depth.append(_OPEN[c])
        elif depth and c == depth[-1]:
            depth.pop()
        elif not depth and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _param(text: str) -> str | None:
    text = text.strip()
    if text in ("*", "/") or text.startswith("*"):
        return text.split(":", 1)[0].strip()
    name_and_type = _split_top(text, " = ")
    name = _split_top(name_and_type[0], ":")[0].strip()
    if not name.isidentifier():
        return None
    if len(name_and_type) == 1:
        return name
    default = " = ".join(name_and_type[1:]).strip()
    try:
        ast.literal_eval(default)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        default = "..."
    return f"{name}={default}"


def text_signature(doc: str) -> str | None:
    """``name(params)`` for the pybind11 docstring `doc`, or None where its first line
    is not one signature."""
    first = doc.split("\n", 1)[0]
    open_at = first.find("(")
    if open_at <= 0 or not first[:open_at].isidentifier():
        return None
    inner = _split_top(first[open_at + 1 :], ")")
    if len(inner) < 2:
        return None
    params = []
    if inner[0].strip():
        for part in _split_top(inner[0], ","):
            p = _param(part)
            if p is None:
                return None
            params.append(p)
    return f"{first[:open_at]}({', '.join(params)})"


def with_text_signature(doc: str) -> str:
    """`doc` with CPython's text-signature header in front (unchanged where none)."""
    sig = text_signature(doc)
    return doc if sig is None else f"{sig}\n--\n\n{doc}"
