"""Shared by the examples: on Linux they run on ember's Metal emulator."""

from __future__ import annotations

import os
import sys


def use_emulator_off_mac(devices: int = 1) -> None:
    """Off macOS, switch on the emulator before ember is imported (it asks at import)."""
    if sys.platform != "darwin":
        os.environ.setdefault("EMBER_METAL_EMULATOR", str(devices))


def show(title: str, error: BaseException) -> None:
    print(f"--- {title}: {type(error).__name__}")
    print(error)
    print()
