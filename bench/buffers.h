// SPDX-License-Identifier: MIT
// buffers.h — 64-byte-aligned, page-touched buffers and the deterministic
// non-trivial input data every benchmark shares, in every element type.
#ifndef SPBENCH_BUFFERS_H
#define SPBENCH_BUFFERS_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "simdpool.h"
extern "C" {
#include "dtype.h" // the library's RNE narrowings
}

namespace spbench {

// An owned, 64-byte-aligned block of bytes with slack at the end (peers such
// as XNNPACK may read a few bytes past a tensor). Allocation touches every
// page so that no benchmark pays first-touch page faults.
class Buffer {
public:
  static constexpr size_t kAlign = 64;
  static constexpr size_t kSlack = 256;

  Buffer() = default;
  explicit Buffer(size_t bytes) { reset(bytes); }
  ~Buffer() { std::free(p_); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  Buffer &operator=(Buffer &&o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_ = o.p_;
      bytes_ = o.bytes_;
      o.p_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }

  // (Re)allocates bytes (contents zero); throws std::bad_alloc.
  void reset(size_t bytes) {
    std::free(p_);
    p_ = nullptr;
    bytes_ = 0;
    const size_t total = (bytes + kSlack + kAlign - 1) / kAlign * kAlign;
    p_ = std::aligned_alloc(kAlign, total);
    if (!p_)
      throw std::bad_alloc();
    std::memset(p_, 0, total);
    bytes_ = bytes;
  }
  // Grows to at least bytes, keeping nothing.
  void ensure(size_t bytes) {
    if (bytes > bytes_ || !p_)
      reset(bytes);
  }

  size_t bytes() const { return bytes_; }
  void *data() { return p_; }
  const void *data() const { return p_; }
  float *f() { return static_cast<float *>(p_); }
  const float *f() const { return static_cast<const float *>(p_); }
  bool empty() const { return p_ == nullptr; }

private:
  void *p_ = nullptr;
  size_t bytes_ = 0;
};

// Fills n floats with a seeded xorshift stream of values in [-4, 4) on a grid
// of 2^-20: distinct enough that ties are rare, no NaN, inf or denormal (the
// peers' NaN rules differ from PyTorch's; see bench/README.md).
inline void fill_random(float *x, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const int32_t v = static_cast<int32_t>((s >> 20) & 0x7FFFFF) - 0x400000;
    x[i] = static_cast<float>(v) * (1.0f / 1048576.0f);
  }
}

// Fills n elements of dtype t at p. F32: fill_random's values. BF16 and F16:
// the same seeded values narrowed once with the library's round to nearest
// even (dtype.h), so finite values in [-4, 4] (no NaN, inf or subnormals;
// ties in a window are more frequent than in f32: bf16 keeps 8 significant
// bits). S8 and U8: seeded random bytes (every value of the type).
inline void fill_typed(void *p, size_t n, simdpool_dtype t, uint64_t seed) {
  if (t == SIMDPOOL_F32) {
    fill_random(static_cast<float *>(p), n, seed);
    return;
  }
  if (t == SIMDPOOL_BF16 || t == SIMDPOOL_F16) {
    std::vector<float> f(n);
    fill_random(f.data(), n, seed);
    uint16_t *h = static_cast<uint16_t *>(p);
    for (size_t i = 0; i < n; i++) {
      uint32_t u;
      std::memcpy(&u, &f[i], 4);
      h[i] = t == SIMDPOOL_BF16 ? sp_bf16_round_bits(u) : sp_f16_round_bits(u);
    }
    return;
  }
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  uint8_t *b = static_cast<uint8_t *>(p);
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    b[i] = static_cast<uint8_t>(s >> 32);
  }
}

} // namespace spbench

#endif
