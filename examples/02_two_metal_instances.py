"""candle's failure 2: two code paths each "open the GPU".

In candle, `Device::new_metal(0)` twice gives two instances, each with its own command
queue; mixing them fails with two identical lines (`lhs: Metal { gpu_id: N }, rhs:
Metal { gpu_id: N }`) and `to_device` between them says only "not implemented yet".
ember's message tells the instances apart by id and creation site, explains why they
must not mix, and gives both fixes.

    python examples/02_two_metal_instances.py
"""

from _common import show, use_emulator_off_mac

use_emulator_off_mac()
import ember  # noqa: E402


def load_model():
    gpu = ember.Device.metal(0)  # a new instance: its own queue
    return ember.ones(3, device=gpu)


def make_batch():
    gpu = ember.Device.metal(0)  # another new instance of the same GPU
    return ember.arange(3, dtype=ember.float32, device=gpu)


weights, batch = load_model(), make_batch()
try:
    weights + batch
except ember.DeviceMismatchError as e:
    show("mixing two instances", e)

try:
    batch.to_device(weights.device)
except ember.MoveNotImplementedError as e:
    show("moving between instances", e)

# Fix 1: the route the message gives, through the CPU (ordered: it waits for the source).
print("via cpu:", (weights + batch.to_device("cpu").to_device(weights.device)).numpy().tolist())

# Fix 2: create the device once; ember.device() shares one instance process-wide.
a = ember.ones(3, device=ember.device("metal:0"))
b = ember.arange(3, dtype=ember.float32, device=ember.device("metal:0"))
print("shared device:", (a + b).numpy().tolist())
