# BLAS for the CPU matmul: Accelerate on macOS, OpenBLAS from the scipy-openblas32
# wheel elsewhere (its symbols carry a scipy_ prefix; the wheel is also a run-time
# dependency, and the module finds the library next to it in site-packages).
function(ember_link_blas target)
  if(APPLE)
    find_library(ACCELERATE Accelerate REQUIRED)
    target_link_libraries(${target} PRIVATE ${ACCELERATE})
    target_compile_definitions(${target} PRIVATE EMBER_BLAS_ACCELERATE ACCELERATE_NEW_LAPACK)
    return()
  endif()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
            "import scipy_openblas32 as s; print(s.get_lib_dir(), end='')"
    OUTPUT_VARIABLE OPENBLAS_LIB_DIR RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ember needs the scipy-openblas32 package to build: pip install scipy-openblas32")
  endif()
  find_package(OpenBLAS CONFIG REQUIRED PATHS "${OPENBLAS_LIB_DIR}/cmake/openblas" NO_DEFAULT_PATH)
  target_link_libraries(${target} PRIVATE OpenBLAS::OpenBLAS)
  target_compile_definitions(${target} PRIVATE EMBER_BLAS_SCIPY_OPENBLAS)
  # At run time the library lives in site-packages/scipy_openblas32/lib beside ember/.
  set_target_properties(${target} PROPERTIES
    INSTALL_RPATH "$ORIGIN/../scipy_openblas32/lib"
    BUILD_RPATH "${OPENBLAS_LIB_DIR}")
endfunction()
