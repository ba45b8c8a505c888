// Events of a Metal queue: command buffer sequence numbers. One queue completes its
// command buffers in commit order, so "buffer n completed" covers all work before it.
#include "core/error.h"
#include "metal_backend.h"

namespace ember::metal {

namespace {

class MetalEvent : public Event {
 public:
  MetalEvent(std::weak_ptr<BackendDevice> device,
             std::shared_ptr<const CompletedPrefix> completed_seq, uint64_t seq)
      : device_(std::move(device)), completed_seq_(std::move(completed_seq)), seq_(seq) {}

  bool completed() const override {
    return completed_seq_->load(std::memory_order_acquire) >= seq_;
  }

  void wait() const override {
    // A device that is gone waited for its queue when it went.
    if (auto d = device_.lock()) static_cast<MetalDevice&>(*d).wait_for(seq_);
  }

 private:
  std::weak_ptr<BackendDevice> device_;  // weak: the device's pool keeps events
  std::shared_ptr<const CompletedPrefix> completed_seq_;
  uint64_t seq_;
};

}  // namespace

EventPtr MetalDevice::event_at(uint64_t seq) {
  if (seq == 0) return nullptr;  // no command buffer ever used it
  return std::make_shared<MetalEvent>(weak_from_this(), completed_seq_, seq);
}

bool MetalDevice::query() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !open_ && completed_seq_->load(std::memory_order_acquire) + 1 >= open_seq_;
}

void MetalDevice::wait_for(uint64_t seq) {
  if (seq == 0) return;
  check_process("wait for its queue");
  std::vector<std::shared_ptr<rt::CommandBuffer>> waiting;  // `seq` and those before it
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (seq >= open_seq_) commit_locked();  // that work is still being encoded
    ++host_waits_;
    for (const InFlight& f : in_flight_)
      if (f.seq <= seq) waiting.push_back(f.cb);  // the rest is later work: not waited for
  }
  wait_committed(seq, waiting, /*interruptible=*/true);
  raise_pending_error();
}

}  // namespace ember::metal
