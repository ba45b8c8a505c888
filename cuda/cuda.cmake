# The CUDA device kind, added to the module target _core (included by the top
# CMakeLists.txt). Its description is always compiled, so that a build without the
# backend still explains how to get it; the backend itself joins this folder later.
target_sources(_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/kind.cpp)
