"""``python -m ember``: a report of what this ember can use on this machine."""

from __future__ import annotations

import ember

_KINDS = ("cpu", "metal", "cuda")


def _count(kind: str) -> int:
    if kind == "cpu":
        return 1
    return int(getattr(ember, f"{kind}_device_count")())


def _why_unavailable(kind: str) -> str:
    # Opening the device raises the error that explains itself.
    try:
        ember.device(kind)
    except ember.EmberError as e:
        return str(e)
    return "no devices found"


def _backend_lines(kind: str, compiled: list[str]) -> list[str]:
    if kind not in compiled:
        return [f"{kind}: not built in"]
    count = _count(kind)
    if count == 0:
        return [f"{kind}: built in, not available: {_why_unavailable(kind)}"]
    lines = [f"{kind}: available, {count} device{'s' if count != 1 else ''}"]
    for ordinal in range(count):
        try:
            d = ember.device(f"{kind}:{ordinal}")
        except ember.EmberError as e:
            lines.append(f"  {kind}:{ordinal}: cannot be opened: {e}")
            continue
        lines.append(f"  {kind}:{ordinal}  id={d.id}  location={d.location}  name={d.name}")
    return lines


def report() -> str:
    """The device report as text."""
    compiled = ember.compiled_backends()
    lines = [f"ember {ember.__version__}", "backends built in: " + ", ".join(compiled)]
    for kind in _KINDS:
        lines.extend(_backend_lines(kind, compiled))
    info = ember.Device.cpu().info()
    lines.append("cpu info:")
    lines.extend(f"  {key}: {value}" for key, value in sorted(info.items()))
    return "\n".join(lines)


def main() -> None:
    print(report())


if __name__ == "__main__":
    main()
