// bool, op by op as PyTorch has it: kernels see bool as uint8, so this file says which ops
// give the bool result on those bytes, which ones are something else on bool (+ is or),
// and which raise; and the logical ops and any/all, composed of comparisons and sums.
#include "tensor.h"

namespace ember {

namespace {

[[noreturn]] void throw_bool(const char* op, const DevicePtr& device, const std::string& fix) {
  throw_unsupported_dtype(op, DType::Bool, device, fix);
}

Tensor false_like(const Tensor& t) {
  return zeros({}, t.dtype(), t.device());
}

}  // namespace

void check_bool_unary(UnaryOp op, const DevicePtr& device) {
  const char* name = unary_name(op);
  switch (op) {
    case UnaryOp::Neg:
      throw_bool(name, device,
                 "negation of a bool tensor is not defined; to invert a mask use "
                 "logical_not or ~, for numbers convert first: t.to(ember.int64).neg()");
    case UnaryOp::Abs:
    case UnaryOp::Relu:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
    case UnaryOp::Clamp:
      throw_bool(name, device, std::string("convert first, e.g. t.to(ember.int64).") + name + "()");
    default: return;  // sign and the predicates give bool; Float-class ops raise in unary()
  }
}

BinaryOp bool_binary(BinaryOp op, const DevicePtr& device) {
  const char* name = binary_name(op);
  switch (op) {
    case BinaryOp::Add: return BinaryOp::Maximum;  // logical or, as PyTorch's bool +
    case BinaryOp::Sub:
      throw_bool(name, device,
                 "subtraction of two bool tensors is not defined; for a mask use "
                 "logical_xor or ^ (or logical_not / ~ to invert one), for numbers convert "
                 "first: a.to(ember.int64) - b");
    case BinaryOp::FloorDivide:
    case BinaryOp::Remainder:
    case BinaryOp::TruncDivide:
    case BinaryOp::Pow:
      throw_bool(name, device,
                 std::string("convert first, e.g. ember.") + name + "(a.to(ember.int64), b)");
    default: return op;  // mul is and; maximum, minimum and the bitwise ops are themselves
  }
}

Tensor as_bool(const Tensor& t) {
  return t.dtype() == DType::Bool ? t : to_dtype(t, DType::Bool);
}

Tensor logical_not(const Tensor& t) {
  return cmp(CmpOp::Eq, t, false_like(t));
}

Tensor logical_binary(const char* op, const Tensor& a, const Tensor& b) {
  Storage::check_same_device(op, *a.storage(), *b.storage());
  const std::string name(op);
  if (name == "logical_xor") return cmp(CmpOp::Ne, as_bool(a), as_bool(b));
  return binary(name == "logical_and" ? BinaryOp::BitwiseAnd : BinaryOp::BitwiseOr, as_bool(a),
                as_bool(b));
}

// any: some element is nonzero; all: none is zero. One pass over the truth values, their
// max (any) or min (all); an empty tensor counts instead (any of nothing is false, all of
// nothing true), where max/min would have no identity.
Tensor any_all(bool all, const Tensor& t, const Dims& dims, bool keepdim) {
  if (t.numel() > 0) return reduce(all ? ReduceOp::Min : ReduceOp::Max, as_bool(t), dims, keepdim);
  Tensor hits = all ? logical_not(t) : as_bool(t);
  Tensor count = reduce(ReduceOp::Sum, hits, dims, keepdim);
  return cmp(all ? CmpOp::Eq : CmpOp::Ne, count, zeros({}, count.dtype(), count.device()));
}

}  // namespace ember
