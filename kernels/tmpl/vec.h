/* SPDX-License-Identifier: MIT */
/* vec.h — the vector layer of the ISA a part (a .c file under tmpl/) is being
 * compiled for: kernels/meson.build compiles every part once per SIMD ISA, with
 * that ISA's flags and -DSP_ISA_<name>. */
#ifndef SP_TMPL_VEC_H
#define SP_TMPL_VEC_H

#if defined(SP_ISA_SSE41)
#include "x86/vec-sse41.h"
#elif defined(SP_ISA_AVX2)
#include "x86/vec-avx2.h"
#elif defined(SP_ISA_AVX512)
#include "x86/vec-avx512.h"
#elif defined(SP_ISA_NEON)
#include "arm/vec-neon.h"
#else
#error                                                                         \
    "a kernel part is compiled for one ISA: -DSP_ISA_SSE41, _AVX2, _AVX512 or _NEON (kernels/meson.build)"
#endif

#ifndef SP_VB_PART
#include <stdint.h>
#include <string.h>
/* The first n < SP_VB bytes at p (the rest zero), and back (only n
 * written), through a lane buffer where the ISA has no masked bytes. */
static inline vb vb_load_part(const void *p, size_t n) {
  uint8_t t[SP_VB] = {0};
  memcpy(t, p, n);
  return vb_load(t);
}
static inline void vb_store_part(void *p, vb v, size_t n) {
  uint8_t t[SP_VB];
  vb_store(t, v);
  memcpy(p, t, n);
}
#endif

#endif /* SP_TMPL_VEC_H */
