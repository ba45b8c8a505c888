#include "storage.h"

#include <algorithm>
#include <vector>

#include "device.h"

namespace ember {

void Storage::check_same_device(const std::string& op, const Storage& lhs, const Storage& rhs) {
  DevicePtr l = lhs.device(), r = rhs.device();
  if (!l->same_device(*r)) throw_device_mismatch(op, l, r);
}

namespace {

[[noreturn]] void throw_move(const DevicePtr& src, const DevicePtr& dst) {
  std::string msg =
      "to_device from " + src->describe() + " to " + dst->describe() + " is not implemented: ";
  if (src->kind() == dst->kind())
    msg += "these are two " + src->kind() +
           " Device instances and their queues are not ordered with each other. ";
  else
    msg += "there is no direct copy between " + src->kind() + " and " + dst->kind() + ". ";
  msg +=
      "Go through the CPU: t.to_device(ember.device(\"cpu\")).to_device(dst) "
      "(one read-back, one upload), or create the device once and pass it along.";
  throw Error(ErrorKind::MoveNotImplemented, msg).with("src", src).with("dst", dst);
}

}  // namespace

std::shared_ptr<Storage> Storage::copy_to(const DevicePtr& dst) const {
  DevicePtr src = device();
  if (src->kind() == "cpu" || dst->kind() == "cpu") {
    // Through host memory: one side is the host already.
    std::vector<unsigned char> host(size_t(numel()) * dtype_size(dtype()));
    impl_->to_host(host.data());
    return std::make_shared<Storage>(dst->from_host(host.data(), numel(), dtype()));
  }
  if (src->kind() == "cuda" && dst->kind() == "cuda") {
    auto peer = impl_->copy_to_peer(dst);
    if (peer) return std::make_shared<Storage>(std::move(peer));
  }
  throw_move(src, dst);  // Metal -> Metal instance, Metal <-> CUDA
}

StorageLocks::StorageLocks(std::initializer_list<const Storage*> reads,
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
  for (int i = 0; i < n_; ++i)
    entries_[i].write ? entries_[i].mu->lock() : entries_[i].mu->lock_shared();
}

StorageLocks::~StorageLocks() {
  for (int i = n_; i-- > 0;)
    entries_[i].write ? entries_[i].mu->unlock() : entries_[i].mu->unlock_shared();
}

}  // namespace ember
