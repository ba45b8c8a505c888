// The facts of each op, generated from ops.def, and the one dtype rule of the table.
#include "op_table.h"

#include <string>

#include "error.h"

namespace ember {

namespace {

template <typename Op, size_t N>
const OpInfo& row(const OpInfo (&rows)[N], Op op) {
  return rows[size_t(op)];
}

const OpInfo kUnary[] = {
#define EMBER_UNARY(Enum, name, cls) {#name, OpClass::cls},
#include "ops.def"
};
const OpInfo kBinary[] = {
#define EMBER_BINARY(Enum, name, cls) {#name, OpClass::cls},
#include "ops.def"
};
const OpInfo kCmp[] = {
#define EMBER_CMP(Enum, name, cls) {#name, OpClass::cls},
#include "ops.def"
};
const OpInfo kReduce[] = {
#define EMBER_REDUCE(Enum, name, cls) {#name, OpClass::cls},
#include "ops.def"
};

}  // namespace

const OpInfo& op_info(UnaryOp op) {
  return row(kUnary, op);
}
const OpInfo& op_info(BinaryOp op) {
  return row(kBinary, op);
}
const OpInfo& op_info(CmpOp op) {
  return row(kCmp, op);
}
const OpInfo& op_info(ReduceOp op) {
  return row(kReduce, op);
}

bool op_accepts(OpClass cls, DType dtype) {
  switch (cls) {
    case OpClass::Float: return dtype_is_float(dtype);
    case OpClass::Integer: return !dtype_is_float(dtype);
    case OpClass::All:
    case OpClass::Predicate:
    case OpClass::ToFloat: break;
  }
  return true;
}

DType op_result_dtype(OpClass cls, DType input) {
  if (cls == OpClass::ToFloat && !dtype_is_float(input)) return DType::F32;  // PyTorch's default
  return cls == OpClass::Predicate ? DType::Bool : input;
}

void check_op_dtype(const char* op, OpClass cls, DType dtype,
                    const std::shared_ptr<BackendDevice>& device) {
  if (op_accepts(cls, dtype)) return;
  const char* target = cls == OpClass::Float ? "ember.float32" : "ember.int64";
  throw_unsupported_dtype(op, dtype, device,
                          std::string("it needs a") +
                              (cls == OpClass::Float ? " float" : "n integer or bool") +
                              " dtype; use t.to_dtype(" + target + ")." + op + "()");
}

const std::vector<OpRow>& op_table() {
  static const std::vector<OpRow> rows = {
#define EMBER_UNARY(Enum, name, cls) {"unary", #name, OpClass::cls, false},
#define EMBER_UNARY_PARAMS(Enum, name, cls) {"unary", #name, OpClass::cls, true},
#define EMBER_BINARY(Enum, name, cls) {"binary", #name, OpClass::cls, false},
#define EMBER_CMP(Enum, name, cls) {"cmp", #name, OpClass::cls, false},
#define EMBER_REDUCE(Enum, name, cls) {"reduce", #name, OpClass::cls, false},
#include "ops.def"
  };
  return rows;
}

const char* op_class_name(OpClass cls) {
  switch (cls) {
    case OpClass::Float: return "float";
    case OpClass::Integer: return "integer";
    case OpClass::Predicate: return "predicate";
    case OpClass::ToFloat: return "to_float";
    case OpClass::All: break;
  }
  return "all";
}

}  // namespace ember
