// Storage: one backend buffer behind a reader-writer lock. It is the one place
// that checks "same device" before a multi-input op and that knows the move table.
#pragma once

#include <atomic>
#include <initializer_list>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "backend.h"
#include "tracking.h"

namespace ember {

class Storage {
 public:
  explicit Storage(std::unique_ptr<BackendStorage> impl) : impl_(std::move(impl)) {}
  BackendStorage& impl() { return *impl_; }
  const BackendStorage& impl() const { return *impl_; }
  DType dtype() const { return impl_->dtype(); }
  int64_t numel() const { return impl_->numel(); }
  const DevicePtr& device() const { return impl_->device(); }
  std::shared_mutex& mutex() const { return mu_; }
  // Bumped by every kernel launch that writes this storage (StorageLocks): autograd's
  // saved tensors compare it to refuse a backward through values changed in place.
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  // Bumped when a tensor over this storage takes a new autograd history in place
  // (h += y in the graph): views made before then describe its values no more.
  uint64_t history() const { return history_.load(std::memory_order_relaxed); }
  void bump_history() const { history_.fetch_add(1, std::memory_order_relaxed); }
  // Called with the storage's exclusive lock held (writers are serialised): no atomic
  // read-modify-write needed, only a tear-free store for the unlocked readers.
  void bump_version() const {
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
#if EMBER_TRACKING
  // Where the user's code created this storage, or null (tracking off, or made inside ember).
  tracking::Site site() const {
    return site_.load(std::memory_order_acquire);
  }
  // Made while tracking was on: only such storages get a site.
  bool tracked() const {
    return tracked_;
  }
  // Records `site` unless one is recorded already (the first tensor handed to Python wins).
  void set_site(tracking::Site site) const {
    tracking::Site none = nullptr;
    site_.compare_exchange_strong(none, site, std::memory_order_acq_rel);
  }
#else
  tracking::Site site() const {
    return nullptr;
  }
  bool tracked() const {
    return false;
  }
  void set_site(tracking::Site) const {}
#endif

  // Raises DeviceMismatch naming `op` when the two live on different Devices.
  static void check_same_device(const std::string& op, const Storage& lhs, const Storage& rhs);
  // A copy of all elements on `dst`, following the move table of the design (§2).
  std::shared_ptr<Storage> copy_to(const DevicePtr& dst) const;

 private:
  std::unique_ptr<BackendStorage> impl_;
  mutable std::shared_mutex mu_;
  mutable std::atomic<uint64_t> version_{0};
  mutable std::atomic<uint64_t> history_{0};
#if EMBER_TRACKING
  bool tracked_ = tracking::enabled();
  mutable std::atomic<tracking::Site> site_{nullptr};
#endif
};

// Holds shared locks on the inputs and exclusive locks on the outputs of one op,
// taken in address order (so two ops never deadlock) and once per storage.
class StorageLocks {
 public:
  // Every storage a kernel touches must be on one Device: checked here, where every
  // kernel launch passes, behind the ops' own checks (which name the user's op and come
  // in the order shapes, devices, dtypes). `op` names the op if this one ever fires.
  StorageLocks(const char* op, std::initializer_list<const Storage*> reads,
               std::initializer_list<const Storage*> writes);
  // A copy between devices (copy_from's read-back into host memory): no device check.
  struct AcrossDevices {};
  StorageLocks(AcrossDevices, std::initializer_list<const Storage*> reads,
               std::initializer_list<const Storage*> writes);
  ~StorageLocks();
  StorageLocks(const StorageLocks&) = delete;
  StorageLocks& operator=(const StorageLocks&) = delete;

 private:
  struct Entry {
    std::shared_mutex* mu;
    bool write;
  };
  void lock(std::initializer_list<const Storage*> reads,
            std::initializer_list<const Storage*> writes);
  Entry entries_[6];
  int n_ = 0;
};

}  // namespace ember
