#include "safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>

#include "device.h"
#include "error.h"

namespace ember::safetensors {

namespace {

// The safetensors package refuses headers above 100 MB; so does ember, before reading one.
constexpr uint64_t kMaxHeader = 100'000'000;
// JSON nesting of a valid header is at most 3 (header, tensor, shape); hostile nesting is
// refused long before it could exhaust the stack.
constexpr int kMaxDepth = 8;

[[noreturn]] void bad_file(const std::string& path, const std::string& what,
                           std::optional<uint64_t> offset = std::nullopt,
                           const std::string* name = nullptr) {
  std::string msg = "safetensors file '" + path + "': " + what;
  if (offset) msg += " (at byte " + std::to_string(*offset) + ")";
  Error e(ErrorKind::FileFormat, msg);
  e.with("path", path);
  if (offset) e.with("offset", int64_t(*offset));
  if (name) e.with("name", *name);
  throw e;
}

[[noreturn]] void os_error(const std::string& path, const std::string& what, int err) {
  throw Error(ErrorKind::OS, what + " '" + path + "': " + std::strerror(err))
      .with("errno", int64_t(err))
      .with("path", path);
}

// ---- a strict JSON reader for headers: objects, arrays, strings, integers, literals

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  std::string text;  // a string's value, or a number's digits
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
  uint64_t at = 0;  // its offset in the file
};

class Reader {
 public:
  Reader(const char* p, size_t n, uint64_t base, const std::string& path)
      : p_(p), n_(n), base_(base), path_(path) {}

  Json document() {
    skip_space();
    Json v = value(0);
    skip_space();
    if (i_ != n_) fail("unexpected bytes after the header's JSON object");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { bad_file(path_, "bad header: " + what, base_ + i_); }

  void skip_space() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r')) ++i_;
  }

  // After an object member or array item: true at ',' (another follows), false at `close`
  // (the container ends); each is consumed. Anything else fails with `what`.
  bool another(char close, const char* what) {
    skip_space();
    if (i_ < n_ && (p_[i_] == ',' || p_[i_] == close)) return p_[i_++] == ',';
    fail(what);
  }

  bool literal(const char* word) {
    const size_t len = std::strlen(word);
    if (n_ - i_ < len || std::memcmp(p_ + i_, word, len) != 0) return false;
    i_ += len;
    return true;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    if (i_ >= n_) fail("the JSON ends early");
    Json v;
    v.at = base_ + i_;
    const char c = p_[i_];
    if (c == '{') {
      v.kind = Json::Object;
      ++i_;
      skip_space();
      if (i_ < n_ && p_[i_] == '}') return ++i_, v;
      for (;;) {
        skip_space();
        if (i_ >= n_ || p_[i_] != '"') fail("expected a string key");
        std::string key = string();
        skip_space();
        if (i_ >= n_ || p_[i_] != ':') fail("expected ':' after a key");
        ++i_;
        skip_space();
        v.members.emplace_back(std::move(key), value(depth + 1));
        if (!another('}', "expected ',' or '}' in an object")) return v;
      }
    }
    if (c == '[') {
      v.kind = Json::Array;
      ++i_;
      skip_space();
      if (i_ < n_ && p_[i_] == ']') return ++i_, v;
      for (;;) {
        skip_space();
        v.items.push_back(value(depth + 1));
        if (!another(']', "expected ',' or ']' in an array")) return v;
      }
    }
    if (c == '"') {
      v.kind = Json::String;
      v.text = string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Number;
      const size_t start = i_;
      while (i_ < n_ && (std::strchr("+-.eE", p_[i_]) || (p_[i_] >= '0' && p_[i_] <= '9'))) ++i_;
      v.text.assign(p_ + start, i_ - start);
      return v;
    }
    if (literal("true") || literal("false")) return v.kind = Json::Bool, v;
    if (literal("null")) return v;
    fail("unexpected character in the JSON");
  }

  void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  uint32_t hex4() {
    if (n_ - i_ < 4) fail("a \\u escape ends early");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k, ++i_) {
      const char h = p_[i_];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f') v |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= uint32_t(h - 'A' + 10);
      else fail("a bad \\u escape");
    }
    return v;
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    for (;;) {
      if (i_ >= n_) fail("a string is not closed");
      const unsigned char c = static_cast<unsigned char>(p_[i_++]);
      if (c == '"') return out;
      if (c < 0x20) fail("a control character inside a string");
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (i_ >= n_) fail("a string is not closed");
      const char e = p_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            if (n_ - i_ < 2 || p_[i_] != '\\' || p_[i_ + 1] != 'u') fail("a lone surrogate");
            i_ += 2;
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("a lone surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("a lone surrogate");
          }
          put_utf8(out, cp);
          break;
        }
        default: fail("a bad escape in a string");
      }
    }
  }

  const char* p_;
  size_t n_;
  size_t i_ = 0;
  uint64_t base_;
  const std::string& path_;
};

// A non-negative integer of a header (a dim or an offset), exactly, below 2^63.
uint64_t integer(const Json& v, const std::string& path, const std::string& name, const char* what) {
  const bool digits = !v.text.empty() && std::all_of(v.text.begin(), v.text.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
  if (v.kind != Json::Number || !digits)
    bad_file(path, std::string(what) + " of tensor '" + name + "' must be a non-negative integer",
             v.at, &name);
  uint64_t x = 0;
  for (char c : v.text) {
    if (x > (uint64_t(INT64_MAX) - uint64_t(c - '0')) / 10)
      bad_file(path, std::string(what) + " of tensor '" + name + "' is too large", v.at, &name);
    x = x * 10 + uint64_t(c - '0');
  }
  return x;
}

struct Code {
  const char* code;
  std::optional<DType> dtype;
  uint64_t size;
};

// Every dtype code of the format; those ember lacks load as UnsupportedDTypeError.
const Code kCodes[] = {
    {"BOOL", DType::Bool, 1}, {"U8", DType::U8, 1},          {"I8", std::nullopt, 1},
    {"F8_E5M2", std::nullopt, 1}, {"F8_E4M3", std::nullopt, 1}, {"F8_E8M0", std::nullopt, 1},
    {"I16", std::nullopt, 2}, {"U16", std::nullopt, 2},      {"F16", DType::F16, 2},
    {"BF16", DType::BF16, 2}, {"I32", DType::I32, 4},        {"U32", DType::U32, 4},
    {"F32", DType::F32, 4},   {"C64", std::nullopt, 8},      {"F64", DType::F64, 8},
    {"I64", DType::I64, 8},   {"U64", std::nullopt, 8},
};

const Code* find_code(const std::string& code) {
  for (const Code& c : kCodes)
    if (code == c.code) return &c;
  return nullptr;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
      out += '\\';  // the short escapes, as serde_json (the package's writer) uses
      out += c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// Writes all of `n` bytes, or raises naming the file.
void write_all(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min<size_t>(n, size_t(1) << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      os_error(path, "could not write", errno);
    }
    p += w;
    n -= size_t(w);
  }
}

}  // namespace

const char* dtype_code(DType d) {
  for (const Code& c : kCodes)
    if (c.dtype == d) return c.code;
  return "?";
}

// The file's bytes, mapped with private pages: tensors that share them can be written
// (a written page is copied), the file never is. Unmapped when the last tensor goes.
struct File::Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base) ::munmap(base, size);
  }
};

File::File(const std::string& path) : path_(path), map_(std::make_shared<Mapping>()) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) os_error(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = S_ISDIR(st.st_mode) ? EISDIR : errno ? errno : EINVAL;
    ::close(fd);
    os_error(path, "cannot read", err);
  }
  const uint64_t size = uint64_t(st.st_size);
  if (size < 8) {
    ::close(fd);
    bad_file(path, "the file has " + std::to_string(size) +
                       " bytes, fewer than the 8 of the header's length");
  }
  void* base = ::mmap(nullptr, size_t(size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (base == MAP_FAILED) os_error(path, "cannot map", err);
  map_->base = base;
  map_->size = size_t(size);
  const auto* bytes = static_cast<const unsigned char*>(base);

  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | bytes[k];
  if (n > size - 8)
    bad_file(path, "the header claims " + std::to_string(n) + " bytes but the file has only " +
                       std::to_string(size - 8) + " after the length",
             0);
  if (n > kMaxHeader)
    bad_file(path, "the header claims " + std::to_string(n) + " bytes, more than the format's " +
                       "limit of 100 MB",
             0);
  if (n < 2) bad_file(path, "the header is empty", 8);
  data_start_ = 8 + n;
  const uint64_t data_size = size - data_start_;

  Json doc = Reader(reinterpret_cast<const char*>(bytes) + 8, size_t(n), 8, path).document();
  if (doc.kind != Json::Object) bad_file(path, "the header is not a JSON object", 8);

  std::map<std::string, bool> seen;
  for (auto& [name, v] : doc.members) {
    if (seen.count(name)) bad_file(path, "the name '" + name + "' appears twice", v.at, &name);
    seen[name] = true;
    if (name == "__metadata__") {
      if (v.kind != Json::Object) bad_file(path, "__metadata__ must be an object", v.at);
      Metadata md;
      for (auto& [k, s] : v.members) {
        if (s.kind != Json::String)
          bad_file(path, "the __metadata__ value of '" + k + "' must be a string", s.at);
        md.emplace_back(k, s.text);
      }
      metadata_ = std::move(md);
      continue;
    }
    if (v.kind != Json::Object)
      bad_file(path, "the entry of tensor '" + name + "' must be an object", v.at, &name);
    const Json *code = nullptr, *shape = nullptr, *offsets = nullptr;
    for (auto& [k, field] : v.members) {
      if (k == "dtype") code = &field;
      else if (k == "shape") shape = &field;
      else if (k == "data_offsets") offsets = &field;
    }
    if (!code || !shape || !offsets)
      bad_file(path, "tensor '" + name + "' needs dtype, shape and data_offsets", v.at, &name);
    if (code->kind != Json::String)
      bad_file(path, "the dtype of tensor '" + name + "' must be a string", code->at, &name);
    const Code* c = find_code(code->text);
    if (!c)
      bad_file(path, "tensor '" + name + "' has the unknown dtype '" + code->text + "'", code->at,
               &name);
    if (shape->kind != Json::Array)
      bad_file(path, "the shape of tensor '" + name + "' must be a list", shape->at, &name);
    if (offsets->kind != Json::Array || offsets->items.size() != 2)
      bad_file(path, "the data_offsets of tensor '" + name + "' must be a pair [begin, end]",
               offsets->at, &name);
    Entry e;
    e.name = name;
    e.code = c->code;
    e.dtype = c->dtype;
    uint64_t bytes_needed = c->size;
    for (const Json& d : shape->items) {
      const uint64_t dim = integer(d, path, name, "a dim");
      e.shape.push_back(int64_t(dim));
      if (dim != 0 && bytes_needed > uint64_t(INT64_MAX) / dim)
        bad_file(path, "the shape of tensor '" + name + "' has too many elements", shape->at,
                 &name);
      bytes_needed *= dim;
    }
    e.begin = integer(offsets->items[0], path, name, "the begin offset");
    e.end = integer(offsets->items[1], path, name, "the end offset");
    if (e.begin > e.end)
      bad_file(path, "tensor '" + name + "' begins after it ends", offsets->at, &name);
    if (e.end > data_size)
      bad_file(path, "tensor '" + name + "' ends at byte " + std::to_string(e.end) +
                         " of the data, which has only " + std::to_string(data_size),
               offsets->at, &name);
    if (e.end - e.begin != bytes_needed)
      bad_file(path, "tensor '" + name + "' has " + std::to_string(e.end - e.begin) +
                         " bytes but its dtype and shape need " + std::to_string(bytes_needed),
               offsets->at, &name);
    entries_.push_back(std::move(e));
  }
  // The format's rule: the tensors tile the data exactly, in order, with no gap or overlap.
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const Entry& e : entries_) {
    if (e.begin != expected)
      bad_file(path, std::string(e.begin < expected ? "tensor '" + e.name + "' overlaps the one before it"
                                                    : "a gap before tensor '" + e.name + "'") +
                         " (it begins at byte " + std::to_string(e.begin) + " of the data, " +
                         std::to_string(expected) + " was expected)",
               data_start_ + e.begin, &e.name);
    expected = e.end;
  }
  if (expected != data_size)
    bad_file(path, "the data has " + std::to_string(data_size) + " bytes but the tensors cover " +
                       std::to_string(expected),
             data_start_ + expected);
}

const Entry& File::entry(const std::string& name) const {
  for (const Entry& e : entries_)
    if (e.name == name) return e;
  std::string names;
  for (size_t i = 0; i < entries_.size() && i < 10; ++i)
    names += (i ? ", '" : "'") + entries_[i].name + "'";
  if (entries_.size() > 10) names += ", ...";
  throw Error(ErrorKind::InvalidArgument, "get_tensor: no tensor named '" + name + "' in '" +
                                              path_ + "'" +
                                              (names.empty() ? " (it holds none)" : "; it holds " + names))
      .with("op", std::string("get_tensor"));
}

Tensor File::load(const Entry& e, const DevicePtr& device) const {
  if (!e.dtype)
    throw Error(ErrorKind::UnsupportedDType,
                "load_file: tensor '" + e.name + "' of '" + path_ + "' has dtype " + e.code +
                    ", which ember has no dtype for (ember holds BOOL, U8, U32, I32, I64, F16, "
                    "BF16, F32 and F64)")
        .with("op", std::string("load_file"))
        .with("device", device);
  const DType dtype = *e.dtype;
  if (!device->supports_dtype(dtype))
    throw_unsupported_dtype("load_file", dtype, device,
                            "tensor '" + e.name + "' cannot be loaded there; load it to the CPU "
                            "and convert it first, e.g. .to_dtype(ember.float32)");
  char* data = static_cast<char*>(map_->base) + data_start_ + e.begin;
  const int64_t numel = shape_numel(e.shape);
  if (dtype == DType::Bool)  // ember's bools are the bytes 0 and 1; others are not bools
    for (uint64_t i = 0; i < e.end - e.begin; ++i)
      if (static_cast<unsigned char>(data[i]) > 1)
        bad_file(path_, "bool tensor '" + e.name + "' holds the byte " +
                            std::to_string(int(static_cast<unsigned char>(data[i]))) +
                            " (bools are 0 or 1)",
                 data_start_ + e.begin + i, &e.name);
  const bool aligned = reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0;
  if (device->kind() == "cpu" && aligned && numel > 0)
    return wrap_host("load_file", data, numel, Layout(e.shape), dtype, map_, device);
  return from_host(data, e.shape, dtype, device);
}

void save(const std::vector<std::pair<std::string, Tensor>>& tensors,
          const std::optional<Metadata>& metadata, const std::string& path) {
  // The safetensors package's order, so that its files and ember's are the same bytes:
  // by dtype, I64 F64 F32 U32 I32 BF16 F16 U8 BOOL (the larger elements first, so with the
  // data 8-aligned each tensor starts aligned to its element size), then by name.
  const auto rank = [](DType d) {
    const DType order[] = {DType::I64, DType::F64, DType::F32, DType::U32, DType::I32,
                           DType::BF16, DType::F16, DType::U8, DType::Bool};
    return int(std::find(std::begin(order), std::end(order), d) - std::begin(order));
  };
  std::vector<const std::pair<std::string, Tensor>*> order;
  for (const auto& item : tensors) {
    if (item.first == "__metadata__")
      throw_invalid("save_file", "'__metadata__' is the format's own key, not a tensor name");
    order.push_back(&item);
  }
  std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) {
    const int ra = rank(a->second.dtype()), rb = rank(b->second.dtype());
    return ra != rb ? ra < rb : a->first < b->first;
  });
  std::string header = "{";
  if (metadata) {
    header += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata->size(); ++i)
      header += (i ? "," : "") + json_string((*metadata)[i].first) + ":" +
                json_string((*metadata)[i].second);
    header += "}";
  }
  uint64_t offset = 0;
  for (const auto* item : order) {
    const Tensor& t = item->second;
    const uint64_t bytes = uint64_t(t.numel()) * dtype_size(t.dtype());
    if (header.size() > 1) header += ",";
    header += json_string(item->first) + ":{\"dtype\":\"" + dtype_code(t.dtype()) + "\",\"shape\":[";
    for (int64_t d = 0; d < t.ndim(); ++d)
      header += (d ? "," : "") + std::to_string(t.shape()[size_t(d)]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  while ((8 + header.size()) % 8 != 0) header += ' ';
  if (header.size() > kMaxHeader)
    throw_invalid("save_file", "the header would exceed the format's limit of 100 MB");

  // A temporary file beside the target, renamed over it once complete.
  static std::atomic<uint64_t> counter{0};
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string tmp = dir + "." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
                          std::to_string(counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) os_error(path, "cannot write", errno);
  try {
    unsigned char len[8];
    for (int k = 0; k < 8; ++k) len[k] = static_cast<unsigned char>(uint64_t(header.size()) >> (8 * k));
    write_all(fd, len, 8, path);
    write_all(fd, header.data(), header.size(), path);
    std::vector<char> buffer;
    for (const auto* item : order) {
      const Tensor& t = item->second;
      const size_t bytes = size_t(t.numel()) * dtype_size(t.dtype());
      if (bytes == 0) continue;
      buffer.resize(bytes);
      to_host(t, buffer.data());  // any view's values, from any device
      write_all(fd, buffer.data(), bytes, path);
    }
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    os_error(path, "could not write", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    os_error(path, "could not write", err);
  }
}

}  // namespace ember::safetensors
