#include "dtype.h"

namespace ember {

size_t dtype_size(DType d) {
  static const size_t sizes[] = {4, 2, 2, 8, 8, 4, 1};
  return sizes[int(d)];
}

const char* dtype_name(DType d) {
  static const char* names[] = {"float32", "float16", "bfloat16", "float64",
                                "int64",   "uint32",  "uint8"};
  return names[int(d)];
}

bool dtype_is_float(DType d) {
  return d == DType::F32 || d == DType::F16 || d == DType::BF16 || d == DType::F64;
}

}  // namespace ember
