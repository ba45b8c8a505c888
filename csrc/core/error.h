// Typed errors. Each kind maps to one Python class in ember.errors; the
// attributes travel with it so Python users can inspect the facts.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dtype.h"

namespace ember {

class BackendDevice;
using Shape = std::vector<int64_t>;

enum class ErrorKind {
  DeviceMismatch,
  MoveNotImplemented,
  DeviceNotFound,
  BackendUnavailable,
  ShapeMismatch,
  DTypeMismatch,
  UnsupportedDType,
  OutOfMemory,
  Device,
  InvalidArgument,  // a bad value: ragged list, bad spec, negative size
  IndexOutOfRange,  // a dim or an index outside its range
  InvalidType,      // an argument of the wrong type: a string where a shape goes
  InvalidIndex,     // a key that cannot index a tensor: a string, a float, two ellipses
  DLPack,           // a tensor DLPack cannot carry here: GPU memory, a dtype it lacks
  ZeroDivision,     // integer // or % by zero (raised by the CPU; GPUs give 0)
  FileFormat,       // a damaged or hostile file (safetensors, npy): what, where, which tensor
  OS,               // the OS refused a file operation: Python's OSError of that errno
  Autograd,         // a gradient rule refused: backward twice, a saved tensor changed, ...
};

using AttrValue = std::variant<int64_t, std::string, Shape, DType, std::shared_ptr<BackendDevice>>;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Error& with(std::string name, AttrValue value) {
    attrs_.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  ErrorKind kind() const { return kind_; }
  const std::vector<std::pair<std::string, AttrValue>>& attrs() const { return attrs_; }

 private:
  ErrorKind kind_;
  std::vector<std::pair<std::string, AttrValue>> attrs_;
};

std::string shape_str(const Shape& s);  // "(2, 3)"

[[noreturn]] void throw_invalid(const std::string& op, const std::string& what);
// `what` says what was expected; the message adds the type that came instead.
[[noreturn]] void throw_invalid_type(const std::string& op, const std::string& what,
                                     const std::string& got_type);
[[noreturn]] void throw_dim_out_of_range(const std::string& op, int64_t dim, int64_t ndim);
[[noreturn]] void throw_shape_mismatch(const std::string& op, const Shape& lhs, const Shape& rhs,
                                       const std::string& why);
[[noreturn]] void throw_dtype_mismatch(const std::string& op, DType lhs, DType rhs);
[[noreturn]] void throw_unsupported_dtype(const std::string& op, DType dtype,
                                          const std::shared_ptr<BackendDevice>& device,
                                          const std::string& why);
// The sites (tracking::Site, may be null) are where each side's tensor was created.
[[noreturn]] void throw_device_mismatch(const std::string& op,
                                        const std::shared_ptr<BackendDevice>& lhs,
                                        const std::shared_ptr<BackendDevice>& rhs,
                                        const std::string* lhs_site = nullptr,
                                        const std::string* rhs_site = nullptr);
// Integer `op` (floor_divide, remainder, trunc_divide) met a zero divisor.
[[noreturn]] void throw_zero_division(const std::string& op, DType dtype);
[[noreturn]] void throw_out_of_memory(const std::shared_ptr<BackendDevice>& device, int64_t bytes);

}  // namespace ember
