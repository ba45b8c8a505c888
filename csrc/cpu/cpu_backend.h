// The CPU backend: host memory, kernels per op family in this folder.
#pragma once

#include <memory>

#include "core/backend.h"

namespace ember::cpu {

class CpuDevice : public BackendDevice {
 public:
  std::string kind() const override { return "cpu"; }
  int64_t ordinal() const override { return 0; }
  std::string location() const override { return "cpu:0 (host memory)"; }
  std::string name() const override;
  void synchronize() override {}  // kernels finish before they return

  EMBER_BACKEND_DEVICE_ALLOCATION
  std::unique_ptr<BackendStorage> wrap_host(void* data, int64_t numel, DType dtype,
                                            std::shared_ptr<void> owner) override;
  std::map<std::string, std::string> info() const override;
  void empty_cache() override;
  std::map<std::string, int64_t> memory_stats() const override;
};

class CpuStorage : public BackendStorage {
 public:
  CpuStorage(DevicePtr device, DType dtype, int64_t numel);  // uninitialised
  // Over memory another library owns: `owner` keeps it alive, nothing is freed here.
  CpuStorage(DevicePtr device, DType dtype, int64_t numel, void* data, std::shared_ptr<void> owner);
  ~CpuStorage() override;

  DType dtype() const override { return dtype_; }
  int64_t numel() const override { return numel_; }
  const DevicePtr& device() const override { return device_; }
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* ptr() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* ptr() const {
    return static_cast<const T*>(data_);
  }

  void to_host(void* dst) const override;
  // Host memory: other backends copy straight from and into it.
  void* host_memory() override { return data_; }
  const void* host_memory() const override { return data_; }
  EMBER_BACKEND_STORAGE_OPS
  IndexBounds index_bounds(const Layout& src) const override;
  bool gather_bounded(const Layout& src, int64_t dim, const BackendStorage& ids,
                      const Layout& ids_layout, BackendStorage& dst, int64_t* lo,
                      int64_t* hi) const override;
  bool gather_points(const Layout& src, const std::vector<PointIds>& ids, BackendStorage& dst,
                     int64_t* lo, int64_t* hi, bool offsets) const override;
  bool reduce_sum_squares(const Layout& src, int64_t reduced_dims,
                          BackendStorage& dst) const override;
  bool softmax_columns(const Layout& src, int64_t dim, bool log,
                       BackendStorage& dst) const override;
  bool reduce_prod(const Layout& src, int64_t reduced_dims, BackendStorage& dst) const override;
  bool reduce_logsumexp(const Layout& src, int64_t reduced_dims,
                        BackendStorage& dst) const override;
  bool reduce_var(const Layout& src, int64_t reduced_dims, double correction, bool root,
                  BackendStorage& dst) const override;
  bool topk(const Layout& src, int64_t k, bool largest, BackendStorage& values,
            BackendStorage& indices) const override;

 private:
  DevicePtr device_;
  DType dtype_;
  int64_t numel_;
  void* data_;
  std::shared_ptr<void> owner_;  // set for foreign memory; else data_ is ours to free
};

// Downcasts a storage that core guarantees lives on the CPU device.
inline CpuStorage& as_cpu(BackendStorage& s) {
  return static_cast<CpuStorage&>(s);
}
inline const CpuStorage& as_cpu(const BackendStorage& s) {
  return static_cast<const CpuStorage&>(s);
}

// The index at element `off` of an index tensor (int64, uint32 or uint8), as int64: for
// reads of one id at a time; loops over many take with_ids below.
inline int64_t id_at(const CpuStorage& ids, int64_t off) {
  switch (ids.dtype()) {
    case DType::I64: return ids.ptr<int64_t>()[off];
    case DType::U32: return int64_t(ids.ptr<uint32_t>()[off]);
    default: return int64_t(ids.ptr<uint8_t>()[off]);
  }
}

// Calls fn(const I* ids) with the index tensor's data in its own type (int64, uint32 or
// uint8: what core hands the kernels), so loops over ids read them without a switch.
template <typename Fn>
void with_ids(const CpuStorage& ids, Fn&& fn) {
  switch (ids.dtype()) {
    case DType::I64: return fn(ids.ptr<int64_t>());
    case DType::U32: return fn(ids.ptr<uint32_t>());
    default: return fn(ids.ptr<uint8_t>());
  }
}

}  // namespace ember::cpu
