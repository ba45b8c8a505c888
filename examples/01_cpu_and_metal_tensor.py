"""candle's failure 1: a CPU tensor meets a Metal tensor.

candle says `device mismatch in add, lhs: Cpu, rhs: Metal { gpu_id: 4294968354 }` and
leaves the user to find where each came from. ember names both Devices, where each
was created, and the fix.

    python examples/01_cpu_and_metal_tensor.py
"""

from _common import show, use_emulator_off_mac

use_emulator_off_mac()
import ember  # noqa: E402


def load_weights():
    return ember.ones(4, 4, device=ember.device("metal"))


def make_input():
    return ember.arange(4, dtype=ember.float32)  # forgot device=: lands on the CPU


weights, x = load_weights(), make_input()
try:
    weights @ x
except ember.DeviceMismatchError as e:
    show("the mistake", e)

# The fix the message gives: move one side explicitly.
y = weights @ x.to_device(weights.device)
print("fixed:", y.numpy().tolist())
