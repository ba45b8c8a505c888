#include "error.h"

#include "backend.h"
#include "device.h"
#include "tracking.h"

namespace ember {

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

void throw_invalid(const std::string& op, const std::string& what) {
  throw Error(ErrorKind::InvalidArgument, op + ": " + what).with("op", op);
}

void throw_invalid_type(const std::string& op, const std::string& what,
                        const std::string& got_type) {
  throw Error(ErrorKind::InvalidType, op + ": " + what + ", got an object of type " + got_type)
      .with("op", op);
}

void throw_dim_out_of_range(const std::string& op, int64_t dim, int64_t ndim) {
  std::string range = ndim == 0 ? "a 0-d tensor has no dims"
                                : "expected a dim in [" + std::to_string(-ndim) + ", " +
                                      std::to_string(ndim - 1) + "]";
  throw Error(ErrorKind::IndexOutOfRange, "dim " + std::to_string(dim) + " is out of range in " +
                                              op + " for a tensor of " + std::to_string(ndim) +
                                              " dims: " + range)
      .with("op", op)
      .with("dim", dim)
      .with("ndim", ndim);
}

void throw_shape_mismatch(const std::string& op, const Shape& lhs, const Shape& rhs,
                          const std::string& why) {
  throw Error(ErrorKind::ShapeMismatch, "shape mismatch in " + op + ": lhs has shape " +
                                            shape_str(lhs) + ", rhs has shape " + shape_str(rhs) +
                                            ": " + why)
      .with("op", op)
      .with("lhs", lhs)
      .with("rhs", rhs);
}

void throw_dtype_mismatch(const std::string& op, DType lhs, DType rhs) {
  throw Error(ErrorKind::DTypeMismatch, std::string("dtype mismatch in ") + op + ": lhs is " +
                                            dtype_name(lhs) + ", rhs is " + dtype_name(rhs) +
                                            ". Convert one side with .to_dtype(ember." +
                                            dtype_name(lhs) + ") first")
      .with("op", op)
      .with("lhs", lhs)
      .with("rhs", rhs);
}

void throw_unsupported_dtype(const std::string& op, DType dtype, const DevicePtr& device,
                             const std::string& why) {
  throw Error(ErrorKind::UnsupportedDType, std::string(op) + " does not support " +
                                               dtype_name(dtype) + " on " + device->describe() +
                                               (why.empty() ? "" : ": " + why))
      .with("op", op)
      .with("dtype", dtype)
      .with("device", device);
}

namespace {

// "the lhs tensor was created at a.py:3 in f; the rhs ..." or the hint to turn tracking on.
std::string sites_sentence(const std::string* lhs, const std::string* rhs) {
  if (!tracking::enabled() && !lhs && !rhs)
    return " To see where each tensor was created, call ember.set_tracking(True) (or set "
           "EMBER_TRACK_TENSORS=1) before creating them.";
  auto where = [](const char* side, const std::string* site) {
    return std::string("the ") + side + " tensor " +
           (site ? "was created at " + *site
                 : "has no recorded origin (made before tracking was on, or inside ember)");
  };
  return " " + where("lhs", lhs) + "; " + where("rhs", rhs) + ".";
}

}  // namespace

void throw_device_mismatch(const std::string& op, const DevicePtr& lhs, const DevicePtr& rhs,
                           const std::string* lhs_site, const std::string* rhs_site) {
  std::string msg = "device mismatch in " + op + ": lhs is on " + lhs->describe() + ", rhs is on " +
                    rhs->describe() + ". ";
  if (lhs->kind() == rhs->kind() && lhs->ordinal() == rhs->ordinal()) {
    msg += "These are two Device instances of the same " +
           std::string(kind_of(*lhs).host ? "host" : "GPU") +
           ", each with its own command queue, and work on one is not ordered with work on "
           "the other. Create the device once and pass it along (or use ember.device(\"" +
           lhs->spec() + "\")).";
  } else {
    msg += "ember never moves data implicitly: move one side first, e.g. rhs.to_device(" +
           std::string("lhs.device)") + ".";
  }
  msg += sites_sentence(lhs_site, rhs_site);
  Error e(ErrorKind::DeviceMismatch, msg);
  e.with("op", op).with("lhs", lhs).with("rhs", rhs);
  if (lhs_site) e.with("lhs_site", *lhs_site);
  if (rhs_site) e.with("rhs_site", *rhs_site);
  throw e;
}

void throw_zero_division(const std::string& op, DType dtype) {
  throw Error(ErrorKind::ZeroDivision,
              op + ": integer division by zero (dtype " + dtype_name(dtype) +
                  "); an integer has no inf or nan for x // 0 or x % 0. Make sure the divisor "
                  "has no zeros (e.g. ember.where(b == 0, 1, b)), or divide in floating point "
                  "(a.to_dtype(ember.float32))")
      .with("op", op)
      .with("dtype", dtype);
}

void throw_out_of_memory(const DevicePtr& device, int64_t bytes) {
  throw Error(ErrorKind::OutOfMemory, "out of memory on " + device->describe() +
                                          ": could not allocate " + std::to_string(bytes) +
                                          " bytes. Free tensors you no longer need, call "
                                          "device.empty_cache(), or use smaller batches")
      .with("device", device)
      .with("bytes", bytes);
}

}  // namespace ember
