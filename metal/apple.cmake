# The macOS half of the Metal backend: runtime/mtl_runtime.mm (Objective-C++ over Apple's
# Metal) joins target _core. Included by metal/metal.cmake when APPLE, at file scope of the
# top-level directory: enable_language() may not be called from a function, and must run in
# the directory that owns _core.
enable_language(OBJCXX)

target_sources(_core PRIVATE "${CMAKE_CURRENT_LIST_DIR}/runtime/mtl_runtime.mm")
# ARC for the Objective-C++ only (the file refuses to compile without it); blocks are on by
# default for Apple targets, -fblocks only says so. The C++ standard follows CXX_STANDARD
# (OBJCXX_STANDARD falls back to it); -Wall etc. on _core apply to this file too.
target_compile_options(_core PRIVATE $<$<COMPILE_LANGUAGE:OBJCXX>:-fobjc-arc -fblocks>)
# Same symbol visibility as the module's C++ (pybind11 sets the CXX preset to hidden).
get_target_property(_ember_cxx_visibility _core CXX_VISIBILITY_PRESET)
if(_ember_cxx_visibility)
  set_target_properties(_core PROPERTIES OBJCXX_VISIBILITY_PRESET "${_ember_cxx_visibility}")
endif()

# Framework paths from find_library link as "-framework Metal" etc. (as for Accelerate in
# cmake/blas.cmake); REQUIRED fails at configure time rather than at link time.
find_library(EMBER_METAL_FRAMEWORK Metal REQUIRED)
find_library(EMBER_FOUNDATION_FRAMEWORK Foundation REQUIRED)
# MTLCreateSystemDefaultDevice() finds no device in a process without CoreGraphics.
find_library(EMBER_COREGRAPHICS_FRAMEWORK CoreGraphics REQUIRED)
target_link_libraries(_core PRIVATE "${EMBER_METAL_FRAMEWORK}" "${EMBER_FOUNDATION_FRAMEWORK}"
                                    "${EMBER_COREGRAPHICS_FRAMEWORK}")
