// Element types and the 16-bit float formats, portable across compilers.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace ember {

// Bool is one byte of 0 or 1: kernels see it as uint8 (dispatch_dtype), and core picks
// the ops whose uint8 result is the bool one (see ops_bool.cpp).
enum class DType : uint8_t { F32, F16, BF16, F64, I64, U32, U8, Bool, I32 };
constexpr int kNumDTypes = 9;

size_t dtype_size(DType d);
const char* dtype_name(DType d);  // numpy spelling: "float32", "int64", ...
bool dtype_is_float(DType d);
// PyTorch's promotion of two tensors' dtypes: the higher category (bool < integers <
// floats), then the wider type; float16 with bfloat16 gives float32, uint8 with uint32
// uint32, uint32 with int32 int64.
DType promote_types(DType a, DType b);
// Whether a result of dtype `from` may be written into a tensor of dtype `to` (out=, in
// place): anything but a float into an integer or bool, or an integer into bool, as
// PyTorch's can_cast.
bool can_write_into(DType from, DType to);

// IEEE half stored as bits; arithmetic goes through float.
struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mant = x & 0x7fffffu;
    int32_t exp = int32_t((x >> 23) & 0xffu);
    if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));
    int32_t e = exp - 127 + 15;
    if (e >= 0x1f) return uint16_t(sign | 0x7c00u);  // overflow -> inf
    if (e <= 0) {                                    // subnormal or zero
      if (e < -10) return uint16_t(sign);
      mant |= 0x800000u;
      uint32_t shift = uint32_t(14 - e);
      uint32_t h = mant >> shift;
      uint32_t rem = mant & ((1u << shift) - 1u);
      uint32_t half = 1u << (shift - 1);
      if (rem > half || (rem == half && (h & 1u))) ++h;
      return uint16_t(sign | h);
    }
    uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into inf: correct
    return uint16_t(sign | h);
  }
  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1f) {
      x = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
      if (mant == 0) {
        x = sign;
      } else {  // normalise the subnormal
        int e = -1;
        do {
          ++e;
          mant <<= 1;
        } while (!(mant & 0x400u));
        x = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
      }
    } else {
      x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

// bfloat16: the top half of a float32, rounded to nearest even.
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }

  // Branch-free (a select), so that loops of it vectorise.
  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;  // to nearest even
    const uint32_t quiet = (x >> 16) | 0x40u;                          // NaN stays NaN
    return uint16_t((x & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
  }
  static float to_float(uint16_t b) {
    uint32_t x = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

template <typename T>
struct DTypeOf;
#define EMBER_DTYPE_OF(T, D)                 \
  template <>                                \
  struct DTypeOf<T> {                        \
    static constexpr DType value = DType::D; \
  };
EMBER_DTYPE_OF(float, F32)
EMBER_DTYPE_OF(f16, F16)
EMBER_DTYPE_OF(bf16, BF16)
EMBER_DTYPE_OF(double, F64)
EMBER_DTYPE_OF(int64_t, I64)
EMBER_DTYPE_OF(uint32_t, U32)
EMBER_DTYPE_OF(uint8_t, U8)
EMBER_DTYPE_OF(int32_t, I32)
#undef EMBER_DTYPE_OF

// Calls fn(T{}) with T the C++ type of `d`; backends use it to instantiate kernels.
// Bool runs uint8's kernels: core only sends it ops whose uint8 result is right.
template <typename Fn>
decltype(auto) dispatch_dtype(DType d, Fn&& fn) {
  switch (d) {
    case DType::F32: return fn(float{});
    case DType::F16: return fn(f16{});
    case DType::BF16: return fn(bf16{});
    case DType::F64: return fn(double{});
    case DType::I64: return fn(int64_t{});
    case DType::U32: return fn(uint32_t{});
    case DType::I32: return fn(int32_t{});
    case DType::U8:
    case DType::Bool: break;
  }
  return fn(uint8_t{});
}

}  // namespace ember
