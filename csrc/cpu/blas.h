// The BLAS in use: Accelerate on macOS, scipy-openblas elsewhere.
#pragma once

#include <string>

#if defined(EMBER_BLAS_ACCELERATE)
#include <Accelerate/Accelerate.h>
#define EMBER_SGEMM cblas_sgemm
#define EMBER_DGEMM cblas_dgemm
#else
#include <cblas.h>
#define EMBER_SGEMM scipy_cblas_sgemm
#define EMBER_DGEMM scipy_cblas_dgemm
#endif

namespace ember::cpu {

std::string blas_name();
int blas_threads();

}  // namespace ember::cpu
