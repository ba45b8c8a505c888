"""candle's failure 3: asking for a GPU the machine does not have.

candle's `Device::new_metal(1)` on a one-GPU Mac panics (`swap_remove index (is 1)
should be < len (is 1)`), and `metal_is_available()` only says the feature was
compiled in. ember asks the machine, and a bad ordinal is a typed error.

    python examples/03_gpu_that_is_not_there.py
"""

from _common import show, use_emulator_off_mac

use_emulator_off_mac(devices=1)
import ember  # noqa: E402

print("metal_is_available():", ember.metal_is_available())
print("metal_device_count():", ember.metal_device_count())
print()

count = ember.metal_device_count()
for ordinal in (count, -1):
    try:
        ember.Device.metal(ordinal)
    except ember.DeviceNotFoundError as e:
        show(f"Device.metal({ordinal})", e)

# The fix: pick an ordinal from the count, or fall back to the CPU.
device = ember.device("metal:0") if ember.metal_is_available() else ember.device("cpu")
print("using", device, "at", device.location)
