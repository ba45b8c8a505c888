// The CUDA device kind as core and the bindings see it. Compiled in even when the
// backend is not, so that asking for CUDA says how to get it.
#include "core/backend.h"

namespace ember::cuda {

namespace {

DeviceKind cuda_kind() {
  DeviceKind k;
  k.name = "cuda";
  k.rank = 2;
  k.install_hint = "reinstall ember on a machine with the CUDA toolkit and cuBLAS";
  k.doc = "The shared CUDA device of `ordinal`; with new_stream=True a new instance.";
  k.fresh_keyword = "new_stream";  // candle's new_cuda_with_stream
  // The destination stream waits on the source's event (cudaStreamWaitEvent), on the GPU.
  k.copies_between_instances = true;
  return k;
}

const bool described = register_kind(cuda_kind());

}  // namespace

}  // namespace ember::cuda
