// SPDX-License-Identifier: MIT
// roofline.cc — the reference loops: a streaming copy and a read-4-write-1
// reduction, compiled once per x86 vector width (target_clones) so the
// reference is never narrower than the widest kernel it is compared with.
#include "roofline.h"

namespace spbench {

namespace {
// 64 bytes, one cache line; the compiler splits it into the widest vectors
// the clone's target has (1 zmm, 2 ymm or 4 xmm).
typedef float v16f __attribute__((vector_size(64)));
} // namespace

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SPBENCH_CLONES                                                         \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef SPBENCH_CLONES
#define SPBENCH_CLONES
#endif

// The empty asm after each step keeps the compiler from turning the loop into
// a call to memcpy (whose large-size path uses non-temporal stores, which no
// pooling kernel does); it emits no instruction.
SPBENCH_CLONES void roof_copy(float *dst, const float *src, size_t n) {
  // Both pointers are 64-byte aligned (the bench allocates them so).
  const size_t lines = n / 16;
  v16f *d = reinterpret_cast<v16f *>(dst);
  const v16f *s = reinterpret_cast<const v16f *>(src);
  size_t i = 0;
  for (; i + 4 <= lines; i += 4) { // 4 lines per step: loads and stores overlap
    const v16f a = s[i], b = s[i + 1], c = s[i + 2], e = s[i + 3];
    d[i] = a;
    d[i + 1] = b;
    d[i + 2] = c;
    d[i + 3] = e;
    __asm__ volatile("" ::: "memory");
  }
  for (; i < lines; i++)
    d[i] = s[i];
  for (size_t j = lines * 16; j < n; j++)
    dst[j] = src[j];
}

SPBENCH_CLONES void roof_r4w1(float *dst, const float *src, size_t n) {
  const size_t lines = n / 16;
  v16f *d = reinterpret_cast<v16f *>(dst);
  const v16f *s = reinterpret_cast<const v16f *>(src);
  size_t i = 0;
  for (; i + 2 <= lines; i += 2) {
    const v16f a = (s[4 * i] + s[4 * i + 1]) + (s[4 * i + 2] + s[4 * i + 3]);
    const v16f b =
        (s[4 * i + 4] + s[4 * i + 5]) + (s[4 * i + 6] + s[4 * i + 7]);
    d[i] = a;
    d[i + 1] = b;
    __asm__ volatile("" ::: "memory");
  }
  for (; i < lines; i++)
    d[i] = (s[4 * i] + s[4 * i + 1]) + (s[4 * i + 2] + s[4 * i + 3]);
  for (size_t i = lines * 16; i < n; i++)
    dst[i] = (src[4 * i] + src[4 * i + 1]) + (src[4 * i + 2] + src[4 * i + 3]);
}

const char *roof_isa() {
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
  if (__builtin_cpu_supports("avx512f"))
    return "avx512";
  if (__builtin_cpu_supports("avx2"))
    return "avx2";
  return "sse2";
#endif
#endif
#if defined(__aarch64__)
  return "neon";
#else
  return "baseline";
#endif
}

} // namespace spbench
