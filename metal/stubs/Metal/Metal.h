// Syntax-check stub of Metal: ONLY the declarations metal/runtime/mtl_runtime.mm uses.
// Written for ember from Apple's public documentation (URL per declaration; the Objective-C
// form of each page, reached with ?language=objc); this is not Apple's header and is never
// used to build for macOS. See metal/stubs/README.md.
#pragma once

#include <Foundation/Foundation.h>

NS_ASSUME_NONNULL_BEGIN

@protocol MTLDevice;
@protocol MTLCommandBuffer;
@protocol MTLFunction;

// ---- Types and enums --------------------------------------------------------------------

// https://developer.apple.com/documentation/metal/mtlsize
typedef struct {
  NSUInteger width, height, depth;
} MTLSize;

// https://developer.apple.com/documentation/metal/mtlsizemake(_:_:_:)
static inline MTLSize MTLSizeMake(NSUInteger width, NSUInteger height, NSUInteger depth) {
  MTLSize size = {width, height, depth};
  return size;
}

// https://developer.apple.com/documentation/metal/mtlresourceoptions
// https://developer.apple.com/documentation/metal/mtlresourceoptions/storagemodeshared
// (MTLStorageModeShared = 0 shifted by MTLResourceStorageModeShift = 4)
NS_OPTIONS(NSUInteger, MTLResourceOptions){
    MTLResourceStorageModeShared = 0UL << 4,
};

// https://developer.apple.com/documentation/metal/mtlcommandbufferstatus
NS_ENUM(NSUInteger, MTLCommandBufferStatus){
    MTLCommandBufferStatusNotEnqueued = 0, MTLCommandBufferStatusEnqueued = 1,
    MTLCommandBufferStatusCommitted = 2,   MTLCommandBufferStatusScheduled = 3,
    MTLCommandBufferStatusCompleted = 4,   MTLCommandBufferStatusError = 5,
};

// https://developer.apple.com/documentation/metal/mtllanguageversion
// (major << 16) + minor; version 2.4 is macOS 12+.
NS_ENUM(NSUInteger, MTLLanguageVersion){
    MTLLanguageVersion2_4 API_AVAILABLE_MACOS(12.0) = (2 << 16) + 4,
};

#if __MAC_OS_X_VERSION_MAX_ALLOWED >= 150000
// https://developer.apple.com/documentation/metal/mtlmathmode (macOS 15 SDK)
NS_ENUM(NSInteger, MTLMathMode){
    MTLMathModeSafe = 0,
    MTLMathModeRelaxed = 1,
    MTLMathModeFast = 2,
};

// https://developer.apple.com/documentation/metal/mtlmathfloatingpointfunctions (macOS 15 SDK)
NS_ENUM(NSInteger, MTLMathFloatingPointFunctions){
    MTLMathFloatingPointFunctionsFast = 0,
    MTLMathFloatingPointFunctionsPrecise = 1,
};
#endif

// https://developer.apple.com/documentation/metal/mtlcommandbufferhandler
typedef void (^MTLCommandBufferHandler)(id<MTLCommandBuffer>);

// ---- Functions ----------------------------------------------------------------------------

// https://developer.apple.com/documentation/metal/mtlcopyalldevices()
// The caller owns the returned array ("Copy" rule; Apple marks it NS_RETURNS_RETAINED).
extern "C" NSArray<id<MTLDevice>>* MTLCopyAllDevices(void) NS_RETURNS_RETAINED;

// https://developer.apple.com/documentation/metal/mtlcreatesystemdefaultdevice()
// nil when there is none; the caller owns the result ("Create" rule). On macOS the process
// must link CoreGraphics for a default device, explicitly in command-line tools (the page).
extern "C" id<MTLDevice> _Nullable MTLCreateSystemDefaultDevice(void) NS_RETURNS_RETAINED;

// ---- Protocols ------------------------------------------------------------------------------

// https://developer.apple.com/documentation/metal/mtlresource
@protocol MTLResource <NSObject>
@end

// https://developer.apple.com/documentation/metal/mtlbuffer
@protocol MTLBuffer <MTLResource>
// https://developer.apple.com/documentation/metal/mtlbuffer/contents()
- (void*)contents NS_RETURNS_INNER_POINTER;
// https://developer.apple.com/documentation/metal/mtlbuffer/length
@property(readonly) NSUInteger length;
@end

// https://developer.apple.com/documentation/metal/mtlfunction (only passed along)
@protocol MTLFunction <NSObject>
@end

// https://developer.apple.com/documentation/metal/mtllibrary
@protocol MTLLibrary <NSObject>
// https://developer.apple.com/documentation/metal/mtllibrary/makefunction(name:)
- (nullable id<MTLFunction>)newFunctionWithName:(NSString*)functionName;
@end

// https://developer.apple.com/documentation/metal/mtlcomputepipelinestate
@protocol MTLComputePipelineState <NSObject>
// https://developer.apple.com/documentation/metal/mtlcomputepipelinestate/maxtotalthreadsperthreadgroup
@property(readonly) NSUInteger maxTotalThreadsPerThreadgroup;
// https://developer.apple.com/documentation/metal/mtlcomputepipelinestate/threadexecutionwidth
@property(readonly) NSUInteger threadExecutionWidth;
@end

// https://developer.apple.com/documentation/metal/mtlcommandencoder
@protocol MTLCommandEncoder <NSObject>
// https://developer.apple.com/documentation/metal/mtlcommandencoder/endencoding()
- (void)endEncoding;
@end

// https://developer.apple.com/documentation/metal/mtlcomputecommandencoder
@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
// https://developer.apple.com/documentation/metal/mtlcomputecommandencoder/setcomputepipelinestate(_:)
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
// https://developer.apple.com/documentation/metal/mtlcomputecommandencoder/setbuffer(_:offset:index:)
- (void)setBuffer:(nullable id<MTLBuffer>)buffer
           offset:(NSUInteger)offset
          atIndex:(NSUInteger)index;
// https://developer.apple.com/documentation/metal/mtlcomputecommandencoder/setbytes(_:length:index:)
// (documented for data smaller than 4 KB)
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
// https://developer.apple.com/documentation/metal/mtlcomputecommandencoder/dispatchthreadgroups(_:threadsperthreadgroup:)
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid
       threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
@end

// https://developer.apple.com/documentation/metal/mtlcommandbuffer
@protocol MTLCommandBuffer <NSObject>
// https://developer.apple.com/documentation/metal/mtlcommandbuffer/makecomputecommandencoder()
// (serial dispatch: commands run in encoding order)
- (nullable id<MTLComputeCommandEncoder>)computeCommandEncoder;
// https://developer.apple.com/documentation/metal/mtlcommandbuffer/addcompletedhandler(_:)
// (only before commit)
- (void)addCompletedHandler:(MTLCommandBufferHandler)block;
// https://developer.apple.com/documentation/metal/mtlcommandbuffer/commit()
- (void)commit;
// https://developer.apple.com/documentation/metal/mtlcommandbuffer/waituntilcompleted()
- (void)waitUntilCompleted;
// https://developer.apple.com/documentation/metal/mtlcommandbuffer/status
@property(readonly) MTLCommandBufferStatus status;
// https://developer.apple.com/documentation/metal/mtlcommandbuffer/error
@property(nullable, readonly) NSError* error;
@end

// https://developer.apple.com/documentation/metal/mtlcommandqueue
@protocol MTLCommandQueue <NSObject>
// https://developer.apple.com/documentation/metal/mtlcommandqueue/makecommandbuffer()
- (nullable id<MTLCommandBuffer>)commandBuffer;
@end

// https://developer.apple.com/documentation/metal/mtlcompileoptions
@interface MTLCompileOptions : NSObject <NSCopying>
// https://developer.apple.com/documentation/metal/mtlcompileoptions/languageversion
@property(readwrite, nonatomic) MTLLanguageVersion languageVersion;
#if __MAC_OS_X_VERSION_MAX_ALLOWED >= 150000
// https://developer.apple.com/documentation/metal/mtlcompileoptions/fastmathenabled
// (deprecated in the macOS 15 SDK in favour of mathMode)
@property(readwrite, nonatomic)
    BOOL fastMathEnabled API_DEPRECATED_MACOS("Use mathMode instead", 10.11, 15.0);
// https://developer.apple.com/documentation/metal/mtlcompileoptions/mathmode
@property(readwrite, nonatomic) MTLMathMode mathMode API_AVAILABLE_MACOS(15.0);
// https://developer.apple.com/documentation/metal/mtlcompileoptions/mathfloatingpointfunctions
@property(readwrite, nonatomic)
    MTLMathFloatingPointFunctions mathFloatingPointFunctions API_AVAILABLE_MACOS(15.0);
#else
@property(readwrite, nonatomic) BOOL fastMathEnabled;
#endif
@end

// https://developer.apple.com/documentation/metal/mtldevice
@protocol MTLDevice <NSObject>
// https://developer.apple.com/documentation/metal/mtldevice/name
@property(nonnull, readonly) NSString* name;
// https://developer.apple.com/documentation/metal/mtldevice/registryid (macOS 10.13+)
@property(readonly) uint64_t registryID;
// https://developer.apple.com/documentation/metal/mtldevice/maxbufferlength (macOS 10.14+)
@property(readonly) NSUInteger maxBufferLength;
// https://developer.apple.com/documentation/metal/mtldevice/recommendedmaxworkingsetsize
@property(readonly) uint64_t recommendedMaxWorkingSetSize;
// https://developer.apple.com/documentation/metal/mtldevice/makecommandqueue()
- (nullable id<MTLCommandQueue>)newCommandQueue;
// https://developer.apple.com/documentation/metal/mtldevice/makebuffer(length:options:)
- (nullable id<MTLBuffer>)newBufferWithLength:(NSUInteger)length
                                      options:(MTLResourceOptions)options;
// https://developer.apple.com/documentation/metal/mtldevice/makelibrary(source:options:)
// (nil and *error set on failure; *error may also hold warnings when it succeeds)
- (nullable id<MTLLibrary>)newLibraryWithSource:(NSString*)source
                                        options:(nullable MTLCompileOptions*)options
                                          error:
                                              (NSError* _Nullable __autoreleasing* _Nullable)error;
// https://developer.apple.com/documentation/metal/mtldevice/makecomputepipelinestate(function:)
- (nullable id<MTLComputePipelineState>)
    newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                  error:(NSError* _Nullable __autoreleasing* _Nullable)error;
@end

NS_ASSUME_NONNULL_END
