# The Metal backend, added to the module target _core (included by the top
# CMakeLists.txt). On macOS the runtime is Apple's Metal (metal/apple.cmake); elsewhere
# the emulator runs the same kernels compiled as C++ (see metal/emulator/README.md).
option(EMBER_METAL "Build the Metal backend (emulated on Linux)" ON)
# The kind's description, built or not: asking for Metal then says how to get it.
target_sources(_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/kind.cpp)
if(NOT EMBER_METAL)
  return()
endif()

set(EMBER_METAL_DIR ${CMAKE_CURRENT_LIST_DIR})
file(GLOB EMBER_METAL_BACKEND_SOURCES CONFIGURE_DEPENDS ${EMBER_METAL_DIR}/backend/*.cpp)
file(GLOB EMBER_METAL_KERNEL_FILES CONFIGURE_DEPENDS ${EMBER_METAL_DIR}/kernels/*.metal)
file(GLOB EMBER_METAL_KERNEL_HEADERS CONFIGURE_DEPENDS ${EMBER_METAL_DIR}/kernels/*.h)
# core headers the kernels include too (the math written once for every backend)
set(EMBER_METAL_SHARED_HEADERS ${PROJECT_SOURCE_DIR}/csrc/core/clamped_id.h)

# Metal compiles MSL at run time from source embedded in the module; edits to a .metal
# or .h file regenerate it.
set(EMBER_METAL_EMBEDDED ${CMAKE_CURRENT_BINARY_DIR}/ember_metal_kernels/kernel_sources.cpp)
add_custom_command(
  OUTPUT ${EMBER_METAL_EMBEDDED}
  COMMAND ${Python_EXECUTABLE} ${EMBER_METAL_DIR}/embed_kernels.py --out ${EMBER_METAL_EMBEDDED}
          -I ${EMBER_METAL_DIR}/kernels -I ${PROJECT_SOURCE_DIR}/csrc ${EMBER_METAL_KERNEL_FILES}
  DEPENDS ${EMBER_METAL_DIR}/embed_kernels.py ${EMBER_METAL_KERNEL_FILES}
          ${EMBER_METAL_KERNEL_HEADERS} ${EMBER_METAL_SHARED_HEADERS}
  COMMENT "Embedding the Metal kernel sources"
  VERBATIM)

target_sources(_core PRIVATE ${EMBER_METAL_BACKEND_SOURCES} ${EMBER_METAL_EMBEDDED})
target_include_directories(_core PRIVATE ${EMBER_METAL_DIR} ${PROJECT_SOURCE_DIR}/csrc)
target_compile_definitions(_core PRIVATE EMBER_WITH_METAL=1)

if(APPLE)
  if(EXISTS ${EMBER_METAL_DIR}/apple.cmake)
    include(${EMBER_METAL_DIR}/apple.cmake)
  endif()
else()
  include(${EMBER_METAL_DIR}/emulator/emulator.cmake)
  target_sources(_core PRIVATE ${EMBER_METAL_EMULATOR_SOURCES})
  ember_metal_add_kernel_tus(_core ${EMBER_METAL_KERNEL_FILES})
endif()
