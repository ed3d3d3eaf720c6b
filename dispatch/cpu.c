/* SPDX-License-Identifier: MIT */
/* cpu.c — CPU-feature detection (cpuid + xgetbv on x86, NEON baseline on
 * aarch64) and ISA names. */
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* Bit (1 << isa) is set when the CPU and OS run isa; bit 31 marks "detected".
 */
static atomic_uint cpu_isa_bits;
#define DETECTED_BIT (1u << 31)

#if defined(__x86_64__) || defined(__i386__)
static unsigned long long read_xcr0(void) {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

static unsigned detect(void) {
  unsigned bits = 1u << SIMDPOOL_ISA_SCALAR;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return bits;
  const int sse41 = (c >> 19) & 1;
  const int fma = (c >> 12) & 1;
  const int f16c = (c >> 29) & 1;
  const int osxsave = (c >> 27) & 1;
  const int avx = (c >> 28) & 1;
  if (sse41)
    bits |= 1u << SIMDPOOL_ISA_SSE41;
  if (!osxsave || !avx)
    return bits;
  /* The OS must save XMM and YMM state (XCR0 bits 1, 2) for AVX, and also
   * the opmask and ZMM state (bits 5, 6, 7) for AVX-512. */
  const unsigned long long xcr0 = read_xcr0();
  const int os_ymm = (xcr0 & 0x6) == 0x6;
  const int os_zmm = (xcr0 & 0xe6) == 0xe6;
  if (__get_cpuid_max(0, 0) < 7)
    return bits;
  __cpuid_count(7, 0, a, b, c, d);
  const int avx2 = (b >> 5) & 1;
  const int avx512 = ((b >> 16) & 1) /* F */ && ((b >> 17) & 1) /* DQ */ &&
                     ((b >> 30) & 1) /* BW */ && ((b >> 31) & 1) /* VL */;
  if (os_ymm && avx2 && fma && f16c && sse41)
    bits |= 1u << SIMDPOOL_ISA_AVX2;
  if (os_zmm && avx512 && (bits & (1u << SIMDPOOL_ISA_AVX2)))
    bits |= 1u << SIMDPOOL_ISA_AVX512;
  return bits;
}
#elif defined(__aarch64__)
static unsigned detect(void) {
  /* Advanced SIMD is part of the AArch64 baseline. */
  return (1u << SIMDPOOL_ISA_SCALAR) | (1u << SIMDPOOL_ISA_NEON);
}
#else
static unsigned detect(void) {
  return 1u << SIMDPOOL_ISA_SCALAR;
}
#endif

int sp_cpu_runs(simdpool_isa isa) {
  unsigned bits = atomic_load_explicit(&cpu_isa_bits, memory_order_acquire);
  if (!(bits & DETECTED_BIT)) {
    /* Detection is idempotent: racing first calls store the same value. */
    bits = detect() | DETECTED_BIT;
    atomic_store_explicit(&cpu_isa_bits, bits, memory_order_release);
  }
  if ((unsigned)isa > SIMDPOOL_ISA_NEON)
    return 0;
  return (bits >> (unsigned)isa) & 1;
}

/* The L2 size + 1 once read (0: not yet), so that a failed read (0)
 * is cached too. glibc's sysconf answers from cpuid on x86; elsewhere (and
 * where it answers 0, as on many arm64 systems) Linux's sysfs has it. */
static atomic_size_t cpu_l2_plus1;

static size_t read_l2_bytes(void) {
  long v = -1;
#if defined(_SC_LEVEL2_CACHE_SIZE)
  v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (v > 0)
    return (size_t)v;
  FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index2/size", "r");
  if (!f)
    return 0;
  unsigned long long k = 0;
  char unit = 0;
  const int got = fscanf(f, "%llu%c", &k, &unit);
  fclose(f);
  if (got < 1)
    return 0;
  if (got == 2 && (unit == 'K' || unit == 'k'))
    k *= 1024;
  else if (got == 2 && (unit == 'M' || unit == 'm'))
    k *= 1024 * 1024;
  return (size_t)k;
}

size_t sp_cpu_l2_bytes(void) {
  size_t v = atomic_load_explicit(&cpu_l2_plus1, memory_order_relaxed);
  if (!v) { /* idempotent, as detection above */
    v = read_l2_bytes() + 1;
    atomic_store_explicit(&cpu_l2_plus1, v, memory_order_relaxed);
  }
  return v - 1;
}

int sp_isa_built(simdpool_isa isa) {
  for (size_t i = 0; i < sp_registry_size; i++)
    if (sp_registry[i].isa == isa)
      return 1;
  return 0;
}

int simdpool_isa_supported(simdpool_isa isa) {
  if (isa == SIMDPOOL_ISA_AUTO)
    return 1;
  return sp_isa_built(isa) && sp_cpu_runs(isa);
}

const char *simdpool_isa_name(simdpool_isa isa) {
  switch (isa) {
  case SIMDPOOL_ISA_AUTO:
    return "auto";
  case SIMDPOOL_ISA_SCALAR:
    return "scalar";
  case SIMDPOOL_ISA_SSE41:
    return "sse41";
  case SIMDPOOL_ISA_AVX2:
    return "avx2";
  case SIMDPOOL_ISA_AVX512:
    return "avx512";
  case SIMDPOOL_ISA_NEON:
    return "neon";
  }
  return "unknown";
}
