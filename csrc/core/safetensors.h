// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON naming each tensor's dtype, shape and
// byte range in the data that follows, then the data. Read by mapping the file; every
// field of a header is checked before any tensor is made, so a damaged or hostile file
// is a FileFormatError naming the file and what is wrong, never a crash or an
// allocation of a size the file only claims.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensor.h"

namespace ember::safetensors {

struct Entry {
  std::string name;
  std::string code;            // the file's dtype code: "F32", "BF16", "I8", ...
  std::optional<DType> dtype;  // ember's, none for a code ember has no dtype for
  Shape shape;
  uint64_t begin = 0, end = 0;  // the byte range in the data section
};

using Metadata = std::vector<std::pair<std::string, std::string>>;

class File {
 public:
  // Maps `path` and checks its header. A missing or unreadable file is an OS error
  // (FileNotFoundError, PermissionError, ...); a malformed one a FileFormatError.
  explicit File(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<Entry>& entries() const { return entries_; }  // in data order
  const std::optional<Metadata>& metadata() const { return metadata_; }
  // The entry of `name`; InvalidArgumentError naming the file when there is none.
  const Entry& entry(const std::string& name) const;
  // The tensor of `e` on `device`. On the CPU it shares the mapping (pages are private:
  // a write copies its page, never touching the file) unless its bytes are misaligned for
  // its dtype, when it is copied; elsewhere it is one upload from the mapping.
  Tensor load(const Entry& e, const DevicePtr& device) const;

 private:
  struct Mapping;
  std::string path_;
  std::shared_ptr<Mapping> map_;
  uint64_t data_start_ = 0;
  std::vector<Entry> entries_;
  std::optional<Metadata> metadata_;
};

// Writes `tensors` (each saved as its values: views, broadcasts and GPU tensors
// included) with `metadata` to `path` through a temporary file in the same directory,
// renamed over `path` only once complete: a failed save leaves any previous file as it was.
void save(const std::vector<std::pair<std::string, Tensor>>& tensors,
          const std::optional<Metadata>& metadata, const std::string& path);

// The safetensors code of an ember dtype ("F32", "BOOL", ...).
const char* dtype_code(DType d);

}  // namespace ember::safetensors
