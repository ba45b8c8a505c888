// Libraries and pipelines of a MetalDevice: each kernel family is two Metal libraries,
// its 64-bit integer kernels and the rest (kernels/common.h), built on first use. A GPU
// whose compiler rejects the int64 library loses the int64 ops only.
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/sources.h"
#include "metal_backend.h"

namespace ember::metal {

namespace {

bool is_dtype_token(const std::string& t) {
  for (const char* d : {"f32", "f16", "bf16", "i64", "u32", "u8", "b8", "b16", "b32", "b64"})
    if (t == d) return true;
  return false;
}

std::vector<std::string> tokens(const std::string& kernel) {
  std::vector<std::string> out;
  std::stringstream in(kernel);
  for (std::string t; std::getline(in, t, '_');) out.push_back(t);
  return out;
}

// The op a kernel serves, as users call it: "binary_add_strided_i64" -> "add".
std::string kernel_op(const std::string& family, const std::string& kernel) {
  if (family == "matmul" || family == "sort") return family;  // sort: every kernel serves it
  if (family == "copy") {
    if (kernel.rfind("copy_cast", 0) == 0) return "to_dtype";
    return kernel.rfind("copy_fill", 0) == 0 ? "fill" : "copy";
  }
  std::string op;
  const std::vector<std::string> parts = tokens(kernel);
  for (size_t i = 1; i < parts.size(); ++i)
    if (!is_dtype_token(parts[i]) && parts[i] != "strided")
      op += (op.empty() ? "" : "_") + parts[i];
  if (family == "index" && (op == "select" || op == "rows")) return "index_select";
  // t[i, j] and its writes; the range check of index ops' ids
  if (family == "index" && (op.rfind("points", 0) == 0 || op == "bounds")) return "index";
  if (family == "scatter") return op.empty() ? "scatter" : "scatter_" + op;
  if (family == "scan" && op.rfind("nonzero", 0) == 0) return "nonzero";  // its two passes
  return op.empty() ? family : op;
}

}  // namespace

bool is_int64_kernel(const std::string& kernel) {
  for (const std::string& t : tokens(kernel))
    if (t == "i64" || t == "b64") return true;
  return false;
}

rt::Library& MetalDevice::library_locked(const std::string& label) {
  auto& library = libraries_[label];
  if (library) return *library;
  auto failed = library_errors_.find(label);  // a compile failure would only repeat
  if (failed != library_errors_.end()) throw rt::RuntimeError(failed->second);
  const std::string& source = kernel_source(label);
  try {
    if (source.empty()) throw rt::RuntimeError("no kernel family '" + label + "'");
    library = gpu_->compile_library(label, source);
  } catch (const rt::RuntimeError& e) {
    libraries_.erase(label);
    library_errors_.emplace(label, e.what());
    throw;
  }
  return *library;
}

const rt::Pipeline& MetalDevice::pipeline(const char* family, const std::string& kernel) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = pipelines_.find(kernel);
  if (found != pipelines_.end()) return *found->second;
  const bool int64 = is_int64_kernel(kernel);
  const std::string label = int64 ? std::string(family) + "_i64" : std::string(family);
  try {
    auto pipeline = library_locked(label).pipeline(kernel);
    return *pipelines_.emplace(kernel, std::move(pipeline)).first->second;
  } catch (const rt::RuntimeError& e) {
    if (int64)
      throw_unsupported_dtype(kernel_op(family, kernel), DType::I64, shared_from_this(),
                              std::string("this GPU's Metal compiler rejected the 64-bit integer "
                                          "kernels of ") +
                                  family + ".metal (" + e.what() +
                                  "); other dtypes work, and int64 tensors still move to the "
                                  "CPU with .to_device(\"cpu\")");
    throw Error(ErrorKind::Device, describe() + ": cannot build kernel " + kernel + " of " +
                                       family + ".metal: " + e.what())
        .with("device", shared_from_this());
  }
}

}  // namespace ember::metal
