// Syntax-check stub of Foundation: ONLY the declarations metal/runtime/mtl_runtime.mm uses.
// Written for ember from Apple's public documentation (URL per declaration); this is not
// Apple's header and is never used to build for macOS. See metal/stubs/README.md.
#pragma once

#include <stddef.h>
#include <stdint.h>

// Nullability audit, as Apple's headers do with NS_ASSUME_NONNULL_BEGIN/END.
#define NS_ASSUME_NONNULL_BEGIN _Pragma("clang assume_nonnull begin")
#define NS_ASSUME_NONNULL_END _Pragma("clang assume_nonnull end")

// https://developer.apple.com/documentation/objectivec/nsinteger
typedef long NSInteger;
// https://developer.apple.com/documentation/objectivec/nsuinteger
typedef unsigned long NSUInteger;

// https://developer.apple.com/documentation/objectivec/bool (bool on arm64 macOS)
typedef bool BOOL;
#define YES ((BOOL)1)
#define NO ((BOOL)0)

// https://developer.apple.com/documentation/objectivec/nil
#ifndef nil
#define nil nullptr
#endif

// NS_ENUM: an enum with the fixed underlying type Apple documents (this stub is only read
// as C++, where the enum's name is already a type name). NS_OPTIONS: the options type is
// the integer itself and the flags an unnamed enum, so `a | b` has the options type.
#define NS_ENUM(_type, _name) enum _name : _type
#define NS_OPTIONS(_type, _name) \
  typedef _type _name;           \
  enum : _type

// Marks a returned C pointer as owned by the receiver (e.g. -[NSString UTF8String]).
#define NS_RETURNS_INNER_POINTER __attribute__((objc_returns_inner_pointer))
// A returned object that the caller owns (+1), e.g. MTLCopyAllDevices.
#define NS_RETURNS_RETAINED __attribute__((ns_returns_retained))

// The SDK's version, as the real SDK's <Availability.h> defines it: 150000 is the macOS 15
// SDK. check_objc.sh also compiles with -D__MAC_OS_X_VERSION_MAX_ALLOWED=140000, and the
// stubs then leave out what only the macOS 15 SDK declares.
#ifndef __MAC_OS_X_VERSION_MAX_ALLOWED
#define __MAC_OS_X_VERSION_MAX_ALLOWED 150000
#endif

// Availability is documented per symbol; on this Linux target clang ignores macOS
// availability, so it is written out only for the symbols whose use is guarded.
#define API_AVAILABLE_MACOS(_v) __attribute__((availability(macos, introduced = _v)))
#define API_DEPRECATED_MACOS(_msg, _from, _to) \
  __attribute__((availability(macos, introduced = _from, deprecated = _to, message = _msg)))

NS_ASSUME_NONNULL_BEGIN

@class NSString;

// https://developer.apple.com/documentation/objectivec/nsobjectprotocol
@protocol NSObject
@end

// https://developer.apple.com/documentation/foundation/nscopying
@protocol NSCopying
@end

// https://developer.apple.com/documentation/objectivec/nsobject
__attribute__((objc_root_class))
@interface NSObject<NSObject>
// https://developer.apple.com/documentation/objectivec/nsobject/alloc()
+ (instancetype)alloc;
// https://developer.apple.com/documentation/objectivec/nsobject/init()
- (instancetype)init;
@end

// https://developer.apple.com/documentation/foundation/nsstringencoding
typedef NSUInteger NSStringEncoding;
// https://developer.apple.com/documentation/foundation/nsutf8stringencoding
static const NSStringEncoding NSUTF8StringEncoding = 4;

// https://developer.apple.com/documentation/foundation/nsstring
@interface NSString : NSObject <NSCopying>
// https://developer.apple.com/documentation/foundation/nsstring/init(bytes:length:encoding:)
- (nullable instancetype)initWithBytes:(const void*)bytes
                                length:(NSUInteger)len
                              encoding:(NSStringEncoding)encoding;
// https://developer.apple.com/documentation/foundation/nsstring/utf8string
@property(nullable, readonly) const char* UTF8String NS_RETURNS_INNER_POINTER;
@end

// https://developer.apple.com/documentation/foundation/nserror
@interface NSError : NSObject <NSCopying>
// https://developer.apple.com/documentation/foundation/nserror/localizeddescription
@property(readonly, copy) NSString* localizedDescription;
@end

// https://developer.apple.com/documentation/foundation/nsarray
@interface NSArray<__covariant ObjectType> : NSObject <NSCopying>
// https://developer.apple.com/documentation/foundation/nsarray/count
@property(readonly) NSUInteger count;
// https://developer.apple.com/documentation/foundation/nsarray/objectatindexedsubscript(_:)
- (ObjectType)objectAtIndexedSubscript:(NSUInteger)idx;
@end

NS_ASSUME_NONNULL_END
