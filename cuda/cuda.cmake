# The CUDA backend, added to the module target _core (included by the top CMakeLists.txt).
# EMBER_CUDA=AUTO builds it when nvcc and cuBLAS are found: the system toolkit's, or the
# nvidia-cublas wheel's (nvidia/cu13 in site-packages, as PyTorch's wheels use it).
set(EMBER_CUDA "AUTO" CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE EMBER_CUDA PROPERTY STRINGS AUTO ON OFF)

# The kind's description, built or not: asking for CUDA then says how to get it.
target_sources(_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/kind.cpp)

function(ember_cuda_skip why)
  if(EMBER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBER_CUDA=ON but ${why}")
  endif()
  message(STATUS "ember: CUDA backend not built (${why})")
endfunction()

# cuBLAS from the toolkit (CUDA::cublas) or from the nvidia-cublas wheel: sets
# EMBER_CUBLAS_TARGET and, for the wheel, EMBER_CUBLAS_WHEEL_LIB.
function(ember_find_cublas)
  find_package(CUDAToolkit QUIET)
  if(TARGET CUDA::cublas AND TARGET CUDA::cublasLt)
    set(EMBER_CUBLAS_TARGET CUDA::cublas PARENT_SCOPE)
    return()
  endif()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
            "import sysconfig, site; print(';'.join([sysconfig.get_paths()['purelib'], *site.getsitepackages()]), end='')"
    OUTPUT_VARIABLE site_dirs RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    return()
  endif()
  foreach(dir IN LISTS site_dirs)
    set(root "${dir}/nvidia/cu13")
    if(EXISTS "${root}/include/cublas_v2.h" AND EXISTS "${root}/lib/libcublas.so.13")
      add_library(ember_cublas SHARED IMPORTED GLOBAL)
      set_target_properties(ember_cublas PROPERTIES
        IMPORTED_LOCATION "${root}/lib/libcublas.so.13"
        INTERFACE_INCLUDE_DIRECTORIES "${root}/include")
      set(EMBER_CUBLAS_TARGET ember_cublas PARENT_SCOPE)
      set(EMBER_CUBLAS_WHEEL_LIB "${root}/lib" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

if(EMBER_CUDA STREQUAL "OFF")
  return()
endif()

include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  ember_cuda_skip("no CUDA compiler (nvcc) was found")
  return()
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # Hopper machine code plus its PTX, which the driver compiles for newer GPUs.
  set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
endif()
enable_language(CUDA)
ember_find_cublas()
if(NOT EMBER_CUBLAS_TARGET)
  ember_cuda_skip("cuBLAS was found neither in the CUDA toolkit nor as the nvidia-cublas wheel")
  return()
endif()
find_package(CUDAToolkit REQUIRED)

set(EMBER_CUDA_DIR ${CMAKE_CURRENT_LIST_DIR})
file(GLOB EMBER_CUDA_HOST_SOURCES CONFIGURE_DEPENDS ${EMBER_CUDA_DIR}/backend/*.cpp)
file(GLOB EMBER_CUDA_KERNEL_SOURCES CONFIGURE_DEPENDS ${EMBER_CUDA_DIR}/ops/*.cu)

# The kernels build apart from the module's C++ flags (warnings, sanitizers), which nvcc
# does not take.
add_library(ember_cuda_kernels OBJECT ${EMBER_CUDA_KERNEL_SOURCES})
target_include_directories(ember_cuda_kernels PRIVATE ${PROJECT_SOURCE_DIR}/csrc ${EMBER_CUDA_DIR})
target_link_libraries(ember_cuda_kernels PRIVATE ${EMBER_CUBLAS_TARGET} CUDA::cudart_static)
set_target_properties(ember_cuda_kernels PROPERTIES
  POSITION_INDEPENDENT_CODE ON CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
  CUDA_VISIBILITY_PRESET hidden)
target_compile_options(ember_cuda_kernels PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-fno-math-errno>)

target_sources(_core PRIVATE ${EMBER_CUDA_HOST_SOURCES} $<TARGET_OBJECTS:ember_cuda_kernels>)
target_include_directories(_core PRIVATE ${EMBER_CUDA_DIR})
target_link_libraries(_core PRIVATE ${EMBER_CUBLAS_TARGET} CUDA::cudart_static)
target_compile_definitions(_core PRIVATE EMBER_WITH_CUDA=1)
if(EMBER_CUBLAS_WHEEL_LIB)
  # At run time the wheel's libraries live in site-packages/nvidia/cu13/lib beside ember/.
  get_target_property(rpath _core INSTALL_RPATH)
  get_target_property(build_rpath _core BUILD_RPATH)
  set_target_properties(_core PROPERTIES
    INSTALL_RPATH "${rpath};$ORIGIN/../nvidia/cu13/lib"
    BUILD_RPATH "${build_rpath};${EMBER_CUBLAS_WHEEL_LIB}")
endif()
message(STATUS "ember: CUDA backend built for ${CMAKE_CUDA_ARCHITECTURES}, cuBLAS ${EMBER_CUBLAS_TARGET}")
