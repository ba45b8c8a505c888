#include "storage.h"

#include <algorithm>

#include "blocking.h"
#include "device.h"

namespace ember {

void Storage::check_same_device(const std::string& op, const Storage& lhs, const Storage& rhs) {
  DevicePtr l = lhs.device(), r = rhs.device();
  if (!l->same_device(*r)) throw_device_mismatch(op, l, r, lhs.site(), rhs.site());
}

namespace {

[[noreturn]] void throw_move(const DevicePtr& src, const DevicePtr& dst) {
  std::string msg =
      "to_device from " + src->describe() + " to " + dst->describe() + " is not implemented: ";
  if (src->kind() == dst->kind())
    msg += "these are two " + src->kind() + " Device instances and " +
           kind_of(*src).why_no_copy_between_instances + ". ";
  else
    msg += "there is no direct copy between " + src->kind() + " and " + dst->kind() + ". ";
  const std::string host = host_kind().name;
  msg += "Go through the host: t.to_device(ember.device(\"" + host +
         "\")).to_device(dst) (one read-back, one upload), or create the device once and pass "
         "it along.";
  throw Error(ErrorKind::MoveNotImplemented, msg).with("src", src).with("dst", dst);
}

}  // namespace

std::shared_ptr<Storage> Storage::copy_to(const DevicePtr& dst) const {
  // Host memory on one side: the other backend reads it, or writes it, directly.
  if (const void* host = impl_->host_memory())
    return std::make_shared<Storage>(dst->from_host(host, numel(), dtype()));
  if (kind_of(*dst).host) {
    std::unique_ptr<BackendStorage> out = dst->alloc_uninit(numel(), dtype());
    read_to_host(*impl_, out->host_memory());
    return std::make_shared<Storage>(std::move(out));
  }
  const DevicePtr& src = device();
  if (src->kind() == dst->kind() && kind_of(*src).copies_between_instances)
    if (auto peer = impl_->copy_to_peer(dst)) return std::make_shared<Storage>(std::move(peer));
  throw_move(src, dst);
}

StorageLocks::StorageLocks(const char* op, std::initializer_list<const Storage*> reads,
                           std::initializer_list<const Storage*> writes) {
  const Storage* first = nullptr;
  for (auto list : {writes, reads})
    for (const Storage* s : list) {
      if (!s) continue;
      if (!first) first = s;
      // every launch passes here: compare without copying the device handles, and build
      // the error only when they differ
      if (s != first && !first->device()->same_device(*s->device()))
        Storage::check_same_device(op, *first, *s);
    }
  lock(reads, writes);
  for (const Storage* s : writes)
    if (s) s->bump_version();  // under the exclusive lock
}

StorageLocks::StorageLocks(AcrossDevices, std::initializer_list<const Storage*> reads,
                           std::initializer_list<const Storage*> writes) {
  lock(reads, writes);
  for (const Storage* s : writes)
    if (s) s->bump_version();
}

void StorageLocks::lock(std::initializer_list<const Storage*> reads,
                        std::initializer_list<const Storage*> writes) {
  auto add = [&](const Storage* s, bool write) {
    if (!s) return;
    for (int i = 0; i < n_; ++i)
      if (entries_[i].mu == &s->mutex()) {
        entries_[i].write |= write;
        return;
      }
    entries_[n_++] = {&s->mutex(), write};
  };
  for (auto* s : writes) add(s, true);
  for (auto* s : reads) add(s, false);
  std::sort(entries_, entries_ + n_, [](const Entry& a, const Entry& b) { return a.mu < b.mu; });
  for (int i = 0; i < n_; ++i) {
    Entry& e = entries_[i];
    if (e.write ? e.mu->try_lock() : e.mu->try_lock_shared()) continue;
    // Held by another thread: block without the interpreter, which that thread may need.
    run_released([&e] { e.write ? e.mu->lock() : e.mu->lock_shared(); });
  }
}

StorageLocks::~StorageLocks() {
  for (int i = n_; i-- > 0;)
    entries_[i].write ? entries_[i].mu->unlock() : entries_[i].mu->unlock_shared();
}

}  // namespace ember
