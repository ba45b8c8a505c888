// The op enums and their facts, generated from the op table (ops.def): a new op is a
// row there, never an edit here.
#pragma once

#include <memory>
#include <type_traits>
#include <vector>

#include "dtype.h"

namespace ember {

class BackendDevice;

// Which dtypes an op takes, and what it gives (see ops.def).
enum class OpClass { All, Float, Integer, Predicate, ToFloat };

enum class UnaryOp {
#define EMBER_UNARY(Enum, name, cls) Enum,
#include "ops.def"
};
enum class BinaryOp {
#define EMBER_BINARY(Enum, name, cls) Enum,
#include "ops.def"
};
enum class CmpOp {
#define EMBER_CMP(Enum, name, cls) Enum,
#include "ops.def"
};
enum class ReduceOp {
#define EMBER_REDUCE(Enum, name, cls) Enum,
#include "ops.def"
};

struct OpInfo {
  const char* name;  // the Python name, also the op's name in errors and kernel names
  OpClass cls;
};

const OpInfo& op_info(UnaryOp op);
const OpInfo& op_info(BinaryOp op);
const OpInfo& op_info(CmpOp op);
const OpInfo& op_info(ReduceOp op);

template <typename Op>
const char* op_name(Op op) {
  return op_info(op).name;
}
inline const char* unary_name(UnaryOp op) {
  return op_name(op);
}
inline const char* binary_name(BinaryOp op) {
  return op_name(op);
}
inline const char* cmp_name(CmpOp op) {
  return op_name(op);
}
inline const char* reduce_name(ReduceOp op) {
  return op_name(op);
}

// The one dtype rule of the table: whether class `cls` takes `dtype`, and what it gives.
bool op_accepts(OpClass cls, DType dtype);
DType op_result_dtype(OpClass cls, DType input);
// Raises UnsupportedDTypeError naming `op` and the fix when `cls` does not take `dtype`.
void check_op_dtype(const char* op, OpClass cls, DType dtype,
                    const std::shared_ptr<BackendDevice>& device);

// For C++ kernels: whether class `cls` takes element type T (an ember storage type).
template <OpClass cls, typename T>
constexpr bool op_takes() {
  constexpr bool is_float =
      std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
  if constexpr (cls == OpClass::Float || cls == OpClass::ToFloat) return is_float;
  if constexpr (cls == OpClass::Integer) return !is_float;
  return true;
}

// Every row, for the bindings and the test table.
struct OpRow {
  const char* family;  // "unary", "binary", "cmp", "reduce"
  const char* name;
  OpClass cls;
  bool has_params;  // bound by hand (clamp)
};
const std::vector<OpRow>& op_table();
const char* op_class_name(OpClass cls);  // "all", "float", "integer", "predicate", "to_float"

}  // namespace ember
