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

  std::unique_ptr<BackendStorage> alloc_uninit(int64_t numel, DType dtype) override;
  std::unique_ptr<BackendStorage> zeros(int64_t numel, DType dtype) override;
  std::unique_ptr<BackendStorage> from_host(const void* data, int64_t numel, DType dtype) override;
  void fill_random(BackendStorage& dst, RandomDist dist, uint64_t seed, uint64_t counter, double a,
                   double b) override;
  std::map<std::string, std::string> info() const override;
  void empty_cache() override;
  std::map<std::string, int64_t> memory_stats() const override;
};

class CpuStorage : public BackendStorage {
 public:
  CpuStorage(DevicePtr device, DType dtype, int64_t numel);  // uninitialised
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
  void fill(const Layout& dst_layout, double value) override;
  void unary(UnaryOp op, const UnaryParams& p, const Layout& src, BackendStorage& dst,
             const Layout& dst_layout) const override;
  void affine(const Layout& src, double mul, double add, BackendStorage& dst,
              const Layout& dst_layout) const override;
  void binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
              BackendStorage& dst, const Layout& dst_layout) const override;
  void cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
           BackendStorage& dst, const Layout& dst_layout) const override;
  void where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
             const BackendStorage& on_false, const Layout& f_layout, BackendStorage& dst,
             const Layout& dst_layout) const override;
  void reduce(ReduceOp op, const Layout& src, int64_t reduced_dims,
              BackendStorage& dst) const override;
  void softmax(const Layout& src, bool log, BackendStorage& dst) const override;
  void matmul(const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
              BackendStorage& dst) const override;
  void cast(const Layout& src, BackendStorage& dst, const Layout& dst_layout) const override;
  void copy_strided(const Layout& src, BackendStorage& dst,
                    const Layout& dst_layout) const override;
  void index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                    const Layout& ids_layout, BackendStorage& dst) const override;
  void gather(const Layout& src, int64_t dim, const BackendStorage& ids, const Layout& ids_layout,
              BackendStorage& dst) const override;

 private:
  DevicePtr device_;
  DType dtype_;
  int64_t numel_;
  void* data_;
};

// Downcasts a storage that core guarantees lives on the CPU device.
inline CpuStorage& as_cpu(BackendStorage& s) {
  return static_cast<CpuStorage&>(s);
}
inline const CpuStorage& as_cpu(const BackendStorage& s) {
  return static_cast<const CpuStorage&>(s);
}

}  // namespace ember::cpu
