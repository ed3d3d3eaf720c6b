/* SPDX-License-Identifier: MIT */
/* convert.c — bf16/f16/s8/u8 arrays widened to f32 and f32 arrays narrowed
 * back, with the vector layer's 16-bit and 8-bit loads and stores (the
 * scalar conversions of kernels/dtype.h for the tails: the same bits).
 * Dispatch runs the f32 kernels of an ISA on bf16/f16 plans and S8/U8 MAX
 * plans through these (parallel.c), in the default floating-point
 * environment like every kernel. Compiled once per SIMD ISA
 * (kernels/meson.build). */
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

/* 8-bit integers, exactly: widening converts, narrowing truncates an
 * integer-valued float (a widened input, or MAX's copy of one). */
static void widen8(int s8, const void *src, float *dst, size_t n) {
  const uint8_t *u = src;
  const int8_t *s = src;
  size_t i = 0;
  for (; i + SP_VL <= n; i += SP_VL)
    vf_store(dst + i, vf_from_vi(s8 ? vi_load_s8(s + i) : vi_load_u8(u + i)));
  for (; i < n; i++)
    dst[i] = s8 ? (float)s[i] : (float)u[i];
}

static void narrow8(int s8, const float *src, void *dst, size_t n) {
  uint8_t *u = dst;
  int8_t *s = dst;
  size_t i = 0;
  for (; i + SP_VL <= n; i += SP_VL) {
    const vi v = vi_from_vf(vf_load(src + i));
    if (s8)
      vi_store_s8(s + i, v);
    else
      vi_store_u8(u + i, v);
  }
  for (; i < n; i++) {
    if (s8)
      s[i] = (int8_t)src[i];
    else
      u[i] = (uint8_t)src[i];
  }
}

void SP_FN(sp_widen)(simdpool_dtype t, const void *src_, float *dst, size_t n) {
  const uint16_t *src = src_;
  size_t i = 0;
  if (t == SIMDPOOL_S8 || t == SIMDPOOL_U8) {
    widen8(t == SIMDPOOL_S8, src_, dst, n);
  } else if (t == SIMDPOOL_BF16) {
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

void SP_FN(sp_narrow)(simdpool_dtype t, int keep, const float *src, void *dst_,
                      size_t n) {
  uint16_t *dst = dst_;
  size_t i = 0;
  if (t == SIMDPOOL_S8 || t == SIMDPOOL_U8) {
    narrow8(t == SIMDPOOL_S8, src, dst_, n);
  } else if (t == SIMDPOOL_BF16 && keep) {
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
