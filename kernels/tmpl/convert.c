/* SPDX-License-Identifier: MIT */
/* convert.c — bf16/f16 arrays widened to f32 and f32 arrays narrowed back,
 * with the vector layer's 16-bit loads and stores (the scalar conversions
 * of kernels/dtype.h for the tails: the same bits). Dispatch runs the f32
 * kernels of an ISA on bf16/f16 plans through these (parallel.c), in the
 * default floating-point environment like every kernel. Compiled once per
 * SIMD ISA (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/common.h"

#include "dtype.h"

static inline void put_bits(float *d, uint32_t b) {
  memcpy(d, &b, sizeof b);
}

static inline uint32_t get_bits(const float *s) {
  uint32_t b;
  memcpy(&b, s, sizeof b);
  return b;
}

void SP_FN(sp_widen16)(simdpool_dtype t, const uint16_t *src, float *dst,
                       size_t n) {
  size_t i = 0;
  if (t == SIMDPOOL_BF16) {
    for (; i + SP_VL <= n; i += SP_VL)
      vf_store(dst + i, vf_load_bf16(src + i));
    for (; i < n; i++)
      put_bits(dst + i, sp_bf16_widen_bits(src[i]));
  } else {
    for (; i + SP_VL <= n; i += SP_VL)
      vf_store(dst + i, vf_load_f16(src + i));
    for (; i < n; i++)
      put_bits(dst + i, sp_f16_widen_bits(src[i]));
  }
}

void SP_FN(sp_narrow16)(simdpool_dtype t, int keep, const float *src,
                        uint16_t *dst, size_t n) {
  size_t i = 0;
  if (t == SIMDPOOL_BF16 && keep) {
    for (; i + SP_VL <= n; i += SP_VL)
      vf_store_bf16_keep(dst + i, vf_load(src + i));
    for (; i < n; i++)
      dst[i] = sp_bf16_keep_bits(get_bits(src + i));
  } else if (t == SIMDPOOL_BF16) {
    for (; i + SP_VL <= n; i += SP_VL)
      vf_store_bf16(dst + i, vf_load(src + i));
    for (; i < n; i++)
      dst[i] = sp_bf16_round_bits(get_bits(src + i));
  } else if (keep) {
    for (; i + SP_VL <= n; i += SP_VL)
      vf_store_f16_keep(dst + i, vf_load(src + i));
    for (; i < n; i++)
      dst[i] = sp_f16_keep_bits(get_bits(src + i));
  } else {
    for (; i + SP_VL <= n; i += SP_VL)
      vf_store_f16(dst + i, vf_load(src + i));
    for (; i < n; i++)
      dst[i] = sp_f16_round_bits(get_bits(src + i));
  }
}
