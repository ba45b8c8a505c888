#include "dtype.h"

namespace ember {

size_t dtype_size(DType d) {
  static const size_t sizes[] = {4, 2, 2, 8, 8, 4, 1, 1, 4};
  return sizes[int(d)];
}

const char* dtype_name(DType d) {
  static const char* names[] = {"float32", "float16", "bfloat16", "float64", "int64",
                                "uint32",  "uint8",   "bool",     "int32"};
  return names[int(d)];
}

bool dtype_is_float(DType d) {
  return d == DType::F32 || d == DType::F16 || d == DType::BF16 || d == DType::F64;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const bool fa = dtype_is_float(a), fb = dtype_is_float(b);
  if (fa != fb) return fa ? a : b;  // the float side
  if (fa) {
    if (a == DType::F64 || b == DType::F64) return DType::F64;
    return DType::F32;  // f32 with a 16-bit float, or float16 with bfloat16
  }
  // Integers: bool gives way to any; int64 holds every other; two unsigned give uint32;
  // uint32 with int32 needs int64, uint8 with int32 fits int32.
  if (a == DType::Bool || b == DType::Bool) return a == DType::Bool ? b : a;
  if (a == DType::I64 || b == DType::I64) return DType::I64;
  const bool ua = a == DType::U32 || a == DType::U8, ub = b == DType::U32 || b == DType::U8;
  if (ua && ub) return DType::U32;
  if (a == DType::U32 || b == DType::U32) return DType::I64;
  return DType::I32;
}

bool can_write_into(DType from, DType to) {
  if (to == DType::Bool) return from == DType::Bool;
  return dtype_is_float(to) || !dtype_is_float(from);
}

}  // namespace ember
