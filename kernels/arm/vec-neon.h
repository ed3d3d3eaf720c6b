/* SPDX-License-Identifier: MIT */
/* vec-neon.h — the vector layer for NEON (AArch64 Advanced SIMD): 4 float
 * lanes, masks as all-ones uint32 lanes.
 *
 * Semantics follow the x86 layers, not NEON's own instructions where they
 * differ: vmaxq_f32 propagates NaN and orders -0 < +0, so the max below is a
 * compare + select; no fused multiply-add is used (vfmaq would round once
 * where the scalar reference rounds twice) except inside vf_div_exact, whose
 * exactness is proven (tests/test_divide.c). */
#ifndef SIMDPOOL_VEC_NEON_H
#define SIMDPOOL_VEC_NEON_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SP_VL 4
#define SP_FN(name) name##_neon

typedef float32x4_t vf;
typedef int32x4_t vi;
typedef uint32x4_t vm; /* a lane is true when all its bits are set */

static inline vf vf_zero(void) {
  return vdupq_n_f32(0.0f);
}
static inline vf vf_set1(float v) {
  return vdupq_n_f32(v);
}
static inline vf vf_load(const float *p) {
  return vld1q_f32(p);
}
static inline void vf_store(float *p, vf v) {
  vst1q_f32(p, v);
}
/* n < SP_VL lanes from p, the rest zero; never touches p[n] or beyond. */
static inline vf vf_load_n(const float *p, size_t n) {
  float t[SP_VL] = {0};
  memcpy(t, p, n * sizeof *p);
  return vld1q_f32(t);
}
static inline void vf_store_n(float *p, vf v, size_t n) {
  float t[SP_VL];
  vst1q_f32(t, v);
  memcpy(p, t, n * sizeof *p);
}
/* Lanes [l0, l1) from p[l0..l1), the rest zero; touches nothing else. */
static inline vf vf_load_range(const float *p, size_t l0, size_t l1) {
  float t[SP_VL] = {0};
  for (size_t i = l0; i < l1; i++)
    t[i] = p[i];
  return vld1q_f32(t);
}
/* The lanes of m from p, the rest zero; touches nothing else. */
static inline vf vf_load_mask(const float *p, vm m) {
  uint32_t bits[SP_VL];
  float t[SP_VL] = {0};
  vst1q_u32(bits, m);
  for (int i = 0; i < SP_VL; i++)
    if (bits[i])
      t[i] = p[i];
  return vld1q_f32(t);
}
/* p[0], p[s], p[2s], p[3s]. */
static inline vf vf_gather(const float *p, size_t s) {
  const float t[SP_VL] = {p[0], p[s], p[2 * s], p[3 * s]};
  return vld1q_f32(t);
}
/* out[j] lane i = p[i*s + j] for i, j < 4: four rows of four, transposed. */
static inline __attribute__((always_inline)) void
vf_load_transposed(const float *p, size_t s, vf *out) {
  const float32x4_t r0 = vld1q_f32(p), r1 = vld1q_f32(p + s);
  const float32x4_t r2 = vld1q_f32(p + 2 * s), r3 = vld1q_f32(p + 3 * s);
  /* Pairs of rows, then pairs of pairs (as 64-bit lanes). */
  const float64x2_t a = vreinterpretq_f64_f32(vtrn1q_f32(r0, r1));
  const float64x2_t b = vreinterpretq_f64_f32(vtrn2q_f32(r0, r1));
  const float64x2_t c = vreinterpretq_f64_f32(vtrn1q_f32(r2, r3));
  const float64x2_t d = vreinterpretq_f64_f32(vtrn2q_f32(r2, r3));
  out[0] = vreinterpretq_f32_f64(vtrn1q_f64(a, c));
  out[1] = vreinterpretq_f32_f64(vtrn1q_f64(b, d));
  out[2] = vreinterpretq_f32_f64(vtrn2q_f64(a, c));
  out[3] = vreinterpretq_f32_f64(vtrn2q_f64(b, d));
}
/* Splits a = (x0..x3), b = (x4..x7) into even (x0 x2 x4 x6) and odd lanes. */
static inline void vf_deinterleave(vf a, vf b, vf *even, vf *odd) {
  *even = vuzp1q_f32(a, b);
  *odd = vuzp2q_f32(a, b);
}
/* The inverse: lo = (e0 o0 e1 o1), hi = (e2 o2 e3 o3). */
static inline void vf_interleave(vf even, vf odd, vf *lo, vf *hi) {
  *lo = vzip1q_f32(even, odd);
  *hi = vzip2q_f32(even, odd);
}

static inline vf vf_add(vf a, vf b) {
  return vaddq_f32(a, b);
}
static inline vf vf_sub(vf a, vf b) {
  return vsubq_f32(a, b);
}
static inline vf vf_mul(vf a, vf b) {
  return vmulq_f32(a, b);
}
/* IEEE division and square root, exactly rounded like the scalar ones. */
static inline vf vf_div(vf a, vf b) {
  return vdivq_f32(a, b);
}
/* x / d from r = RN(1/d) by Markstein's correction: q = x*r, the exact
 * residual x - q*d, and q + residual*r rounded once (two FMAs). Exact only
 * where the template's div_lanes uses it (tests/test_divide.c). `sum` (a
 * compile-time constant): fma(fma(-q, d, x), r, q), whose ±0 gives +0, the
 * quotient of +0 + x; else q - fma(q, d, -x)*r, exact for ±0 too. */
#define SP_DIV_EXACT 1
static inline vf vf_div_exact(vf x, vf d, vf r, int sum) {
  const float32x4_t q = vmulq_f32(x, r);
  if (sum)
    return vfmaq_f32(q, vfmsq_f32(x, q, d), r);
  return vfmsq_f32(q, vfmaq_f32(vnegq_f32(x), q, d), r);
}
static inline vf vf_sqrt(vf a) {
  return vsqrtq_f32(a);
}
/* Clears the sign bit only (NaN payloads kept), as fabsf does. */
static inline vf vf_abs(vf a) {
  return vreinterpretq_f32_u32(
      vbicq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x80000000u)));
}
/* max(b, a) with x86 semantics: b > a ? b : a (a when either is NaN, and a
 * on ties such as -0 vs +0). Not vmaxq_f32, which differs on both. */
static inline vf vf_max_x86(vf b, vf a) {
  return vbslq_f32(vcgtq_f32(b, a), b, a);
}
/* min(b, a) with x86 semantics: b < a ? b : a (a when either is NaN, and
 * on ties). Not vminq_f32, for the same reasons. */
static inline vf vf_min_x86(vf b, vf a) {
  return vbslq_f32(vcltq_f32(b, a), b, a);
}

/* Ordered compares: false when either lane is NaN, as _CMP_*_OQ. */
static inline vm vm_gt(vf a, vf b) {
  return vcgtq_f32(a, b);
}
static inline vm vm_lt(vf a, vf b) {
  return vcltq_f32(a, b);
}
static inline vm vm_eq(vf a, vf b) {
  return vceqq_f32(a, b);
}
static inline vm vm_nan(vf a) {
  return vmvnq_u32(vceqq_f32(a, a));
}
/* Lanes where a or b is NaN. */
static inline vm vm_unord(vf a, vf b) {
  return vmvnq_u32(vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b)));
}
/* Lanes that are not +0.0f (all bits clear); -0.0f is not +0.0f. */
static inline vm vm_not_pzero(vf a) {
  const uint32x4_t b = vreinterpretq_u32_f32(a);
  return vtstq_u32(b, b);
}
/* Lanes whose bits, read as uint32, are not in [lo, hi] (lo, hi < 2^31). */
static inline vm vm_bits_outside(vf a, uint32_t lo, uint32_t hi) {
  const uint32x4_t b = vreinterpretq_u32_f32(a);
  return vmvnq_u32(
      vandq_u32(vcgeq_u32(b, vdupq_n_u32(lo)), vcleq_u32(b, vdupq_n_u32(hi))));
}
/* Lanes l0 <= lane < l1. */
static inline vm vm_range(size_t l0, size_t l1) {
  static const uint32_t lane[SP_VL] = {0, 1, 2, 3};
  const uint32x4_t l = vld1q_u32(lane);
  return vandq_u32(vcgeq_u32(l, vdupq_n_u32((uint32_t)l0)),
                   vcltq_u32(l, vdupq_n_u32((uint32_t)l1)));
}
/* ~a & b. */
static inline vm vm_andnot(vm a, vm b) {
  return vbicq_u32(b, a);
}
static inline vm vm_or(vm a, vm b) {
  return vorrq_u32(a, b);
}
static inline vm vm_and(vm a, vm b) {
  return vandq_u32(a, b);
}
static inline int vm_any(vm m) {
  return vmaxvq_u32(m) != 0;
}
/* m ? b : a, per lane. */
static inline vf vf_select(vm m, vf a, vf b) {
  return vbslq_f32(m, b, a);
}

/* acc + (m ? d : +0.0f): equal to acc + d where m, acc elsewhere, for
 * every acc but -0.0f and a signalling NaN. */
static inline vf vf_add_where(vf acc, vm m, vf d) {
  return vaddq_f32(
      acc, vreinterpretq_f32_u32(vandq_u32(m, vreinterpretq_u32_f32(d))));
}

static inline vi vi_set1(int32_t v) {
  return vdupq_n_s32(v);
}
/* base, base + step, base + 2*step, ... (wrapping, as the x86 layers). */
static inline vi vi_ramp(int32_t base, int32_t step) {
  static const int32_t lane[SP_VL] = {0, 1, 2, 3};
  return vaddq_s32(vdupq_n_s32(base), vmulq_n_s32(vld1q_s32(lane), step));
}
static inline vi vi_add(vi a, vi b) {
  return vaddq_s32(a, b);
}
static inline vi vi_select(vm m, vi a, vi b) {
  return vbslq_s32(m, b, a);
}
static inline vm vm_eq_i(vi a, vi b) {
  return vceqq_s32(a, b);
}
static inline vi vi_load_i32(const int32_t *p) {
  return vld1q_s32(p);
}
static inline void vi_store_i32(int32_t *p, vi v) {
  vst1q_s32(p, v);
}
/* Low 32 bits of four int64 (the values fit: dispatch checked them). */
static inline vi vi_load_i64(const int64_t *p) {
  return vcombine_s32(vmovn_s64(vld1q_s64(p)), vmovn_s64(vld1q_s64(p + 2)));
}
static inline void vi_store_i64(int64_t *p, vi v) {
  vst1q_s64(p, vmovl_s32(vget_low_s32(v)));
  vst1q_s64(p + 2, vmovl_high_s32(v));
}
static inline vi vi_load_u8(const uint8_t *p) {
  uint8_t t[8] = {0};
  memcpy(t, p, SP_VL);
  const uint16x8_t h = vmovl_u8(vld1_u8(t));
  return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h)));
}
/* Narrows each lane to its low byte (the values are tap numbers < 256), as
 * the template's scalar tail does with (uint8_t). */
static inline void vi_store_u8(uint8_t *p, vi v) {
  const uint16x4_t h = vmovn_u32(vreinterpretq_u32_s32(v));
  uint8_t t[8];
  vst1_u8(t, vmovn_u16(vcombine_u16(h, h)));
  memcpy(p, t, SP_VL);
}

/* ------------------------------------------------ 16-bit float elements
 * Loads that widen bf16/f16 to f32 and stores that narrow once, bit for
 * bit the scalar conversions of kernels/dtype.h (tests/test_dtype.c):
 * widening is exact and keeps every NaN's payload (a signalling NaN stays
 * signalling); _store_ rounds to nearest even with the canonical NaN,
 * _store_*_keep is MAX's narrowing (a NaN keeps its payload). SP_VL
 * elements at p, unaligned. */
static inline vf vf_load_bf16(const uint16_t *p) {
  return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}
/* 2*SP_VL bf16 elements at p as their even and odd elements, widened:
 * each 32-bit lane of one load holds an even element in its low half and
 * the odd one after it in its high half (little-endian), so a shift and a
 * mask do both the split and the widening. */
static inline void vf_load_bf16_pairs(const uint16_t *p, vf *even, vf *odd) {
  const uint32x4_t u = vreinterpretq_u32_u16(vld1q_u16(p));
  *even = vreinterpretq_f32_u32(vshlq_n_u32(u, 16));
  *odd = vreinterpretq_f32_u32(vandq_u32(u, vdupq_n_u32(0xffff0000u)));
}
/* FCVTL (exact for numbers) quietens a signalling NaN: NaN lanes are
 * rebuilt from their bits, sign | 0x7f800000 | payload << 13. */
static inline vf vf_load_f16(const uint16_t *p) {
  const uint16x4_t h = vld1_u16(p);
  const uint32x4_t u = vmovl_u16(h);
  const uint32x4_t a = vandq_u32(u, vdupq_n_u32(0x7fff));
  const uint32x4_t bits =
      vorrq_u32(vandq_u32(vshlq_n_u32(u, 16), vdupq_n_u32(0x80000000u)),
                vorrq_u32(vshlq_n_u32(a, 13), vdupq_n_u32(0x70000000u)));
  return vbslq_f32(vcgtq_u32(a, vdupq_n_u32(0x7c00)),
                   vreinterpretq_f32_u32(bits),
                   vcvt_f32_f16(vreinterpret_f16_u16(h)));
}
/* vf_load_f16 without the NaN fix-up: exact for every number, and a NaN
 * loads as some NaN (FCVTL quietens a signalling one). For MAX bodies that
 * test their lanes for NaN themselves and redo such lanes from exact loads. */
static inline vf vf_load_f16_ord(const uint16_t *p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}
/* The NaN lanes of v, narrowed to 16-bit lanes. */
static inline uint16x4_t sp_neon_nan16(vf v) {
  return vmovn_u32(vmvnq_u32(vceqq_f32(v, v)));
}
static inline uint16x4_t sp_neon_bf16_rne(uint32x4_t u) {
  const uint32x4_t odd = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
  return vshrn_n_u32(vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7fff)), odd), 16);
}
static inline void vf_store_bf16(uint16_t *p, vf v) {
  vst1_u16(p, vbsl_u16(sp_neon_nan16(v), vdup_n_u16(0x7fc0),
                       sp_neon_bf16_rne(vreinterpretq_u32_f32(v))));
}
/* A NaN keeps its upper 16 bits, unless its payload lies only in the
 * lower ones: then the canonical NaN. */
static inline uint16x4_t sp_neon_bf16_keep(vf v) {
  const uint32x4_t u = vreinterpretq_u32_f32(v);
  const uint16x4_t hi = vshrn_n_u32(u, 16);
  const uint16x4_t nan = sp_neon_nan16(v);
  const uint16x4_t nan_r =
      vbsl_u16(vtst_u16(hi, vdup_n_u16(0x7f)), hi, vdup_n_u16(0x7fc0));
  return vbsl_u16(nan, nan_r, sp_neon_bf16_rne(u));
}
static inline void vf_store_bf16_keep(uint16_t *p, vf v) {
  vst1_u16(p, sp_neon_bf16_keep(v));
}
/* even and odd interleaved into 2*SP_VL elements at p, each narrowed as
 * by vf_store_bf16_keep: the even result in the low half of a 32-bit lane,
 * the odd one in the high half, one store. */
/* Stores of values that are bf16 values exactly (a widened element, +0,
 * the canonical NaN): the upper halves, which is what rounding would give
 * them, NaN payloads included. SP_VL elements, and 2*SP_VL interleaved as
 * vf_store_bf16_pairs_keep's. */
static inline void vf_store_bf16_exact(uint16_t *p, vf v) {
  vst1_u16(p, vshrn_n_u32(vreinterpretq_u32_f32(v), 16));
}
static inline void vf_store_bf16_pairs_exact(uint16_t *p, vf even, vf odd) {
  const uint16x4x2_t r = {{vshrn_n_u32(vreinterpretq_u32_f32(even), 16),
                           vshrn_n_u32(vreinterpretq_u32_f32(odd), 16)}};
  vst2_u16(p, r);
}
static inline void vf_store_bf16_pairs_keep(uint16_t *p, vf even, vf odd) {
  const uint16x4x2_t r = {{sp_neon_bf16_keep(even), sp_neon_bf16_keep(odd)}};
  vst2_u16(p, r);
}
/* FCVTN rounds as FPCR says: to nearest even, with gradual underflow, in
 * the default environment the kernels run in; NaN lanes are set apart. */
static inline void vf_store_f16(uint16_t *p, vf v) {
  vst1_u16(p, vbsl_u16(sp_neon_nan16(v), vdup_n_u16(0x7e00),
                       vreinterpret_u16_f16(vcvt_f16_f32(v))));
}
static inline void vf_store_f16_keep(uint16_t *p, vf v) {
  const uint32x4_t u = vreinterpretq_u32_f32(v);
  const uint16x4_t pay =
      vmovn_u32(vandq_u32(vshrq_n_u32(u, 13), vdupq_n_u32(0x3ff)));
  const uint16x4_t kept =
      vorr_u16(vand_u16(vshrn_n_u32(u, 16), vdup_n_u16(0x8000)),
               vorr_u16(pay, vdup_n_u16(0x7c00)));
  const uint16x4_t nan_r =
      vbsl_u16(vtst_u16(pay, pay), kept, vdup_n_u16(0x7e00));
  vst1_u16(p, vbsl_u16(sp_neon_nan16(v), nan_r,
                       vreinterpret_u16_f16(vcvt_f16_f32(v))));
}

/* ------------------------------------------------ 8-bit integer elements
 * S8/U8 MAX runs the f32 kernels on exact widenings (every 8-bit integer
 * is an f32): int32 lanes to floats and back (truncating: the values are
 * integers), and signed bytes in and out (vi_load_u8/vi_store_u8 above are
 * the unsigned ones). */
static inline vf vf_from_vi(vi v) {
  return vcvtq_f32_s32(v);
}
static inline vi vi_from_vf(vf v) {
  return vcvtq_s32_f32(v);
}
/* Rounded to nearest, ties to even (FCVTNS, whatever FPCR says). */
static inline vi vi_round(vf v) {
  return vcvtnq_s32_f32(v);
}
static inline vi vi_load_s8(const int8_t *p) {
  int8_t t[8] = {0};
  memcpy(t, p, SP_VL);
  return vmovl_s16(vget_low_s16(vmovl_s8(vld1_s8(t))));
}
/* Each lane's low byte (the values are in [-128, 127]). */
static inline void vi_store_s8(int8_t *p, vi v) {
  vi_store_u8((uint8_t *)p, v);
}

/* SP_VL int32 lanes x[2i] + x[2i+1] of the 2*SP_VL bytes at p, unsigned
 * or signed (the quantized average's stride-2 windows, tmpl/qavg.c). */
static inline vi vi_pairsum_u8(const uint8_t *p) {
  return vreinterpretq_s32_u32(vpaddlq_u16(vmovl_u8(vld1_u8(p))));
}
static inline vi vi_pairsum_s8(const int8_t *p) {
  return vpaddlq_s16(vmovl_s8(vld1_s8(p)));
}

/* ------------------------------------------------ byte lanes
 * SP_VB 8-bit elements in one vector, for the S8/U8 MAX without indices
 * (tmpl/bmax.c): unaligned loads and stores, the lane-wise max, and the
 * max of each pair of neighbours (windows of stride 2 along a row). */
typedef uint8x16_t vb;
#define SP_VB 16
static inline vb vb_load(const void *p) {
  return vld1q_u8((const uint8_t *)p);
}
static inline void vb_store(void *p, vb v) {
  vst1q_u8((uint8_t *)p, v);
}
static inline vb vb_max_u8(vb a, vb b) {
  return vmaxq_u8(a, b);
}
static inline vb vb_max_s8(vb a, vb b) {
  return vreinterpretq_u8_s8(
      vmaxq_s8(vreinterpretq_s8_u8(a), vreinterpretq_s8_u8(b)));
}

/* max(x[2i], x[2i+1]) of the 2*SP_VB bytes x = lo then hi: NEON's
 * pairwise max. */
static inline vb vb_pairmax_u8(vb lo, vb hi) {
  return vpmaxq_u8(lo, hi);
}
static inline vb vb_pairmax_s8(vb lo, vb hi) {
  return vreinterpretq_u8_s8(
      vpmaxq_s8(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi)));
}

#endif /* SIMDPOOL_VEC_NEON_H */
