"""ember and PyTorch in one process, in either import order (a user's script imports
both). Run in fresh interpreters: an import that crashes must fail this test, not the
suite. Where torch is not installed there is nothing to check."""

from __future__ import annotations

import helpers
import pytest


@pytest.mark.parametrize(
    "code",
    [
        "import ember; import torch",
        "import torch; import ember",
        "import ember._core; import torch",
    ],
)
def test_ember_and_torch_import_in_either_order(code):
    pytest.importorskip("torch")
    r = helpers.run_python(code + "; print('ok')")
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])
