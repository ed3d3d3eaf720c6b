/* SPDX-License-Identifier: MIT */
/* vec-sse41.h — the vector layer for SSE4.1: 4 float lanes, masks as all-ones
 * lanes. */
#ifndef SIMDPOOL_VEC_SSE41_H
#define SIMDPOOL_VEC_SSE41_H

#include <smmintrin.h>
#include <stdint.h>
#include <string.h>

#include "transpose4.h"

#define SP_VL 4
#define SP_FN(name) name##_sse41

typedef __m128 vf;
typedef __m128i vi;
typedef __m128 vm; /* a lane is true when all its bits are set */

static inline vf vf_zero(void) {
  return _mm_setzero_ps();
}
static inline vf vf_set1(float v) {
  return _mm_set1_ps(v);
}
static inline vf vf_load(const float *p) {
  return _mm_loadu_ps(p);
}
static inline void vf_store(float *p, vf v) {
  _mm_storeu_ps(p, v);
}
/* n < SP_VL lanes from p, the rest zero; never touches p[n] or beyond. */
static inline vf vf_load_n(const float *p, size_t n) {
  float t[SP_VL] = {0};
  memcpy(t, p, n * sizeof *p);
  return _mm_loadu_ps(t);
}
static inline void vf_store_n(float *p, vf v, size_t n) {
  float t[SP_VL];
  _mm_storeu_ps(t, v);
  memcpy(p, t, n * sizeof *p);
}
/* Lanes [l0, l1) from p[l0..l1), the rest zero; touches nothing else. */
static inline vf vf_load_range(const float *p, size_t l0, size_t l1) {
  float t[SP_VL] = {0};
  for (size_t i = l0; i < l1; i++)
    t[i] = p[i];
  return _mm_loadu_ps(t);
}
/* The lanes of m from p, the rest zero; touches nothing else. */
static inline vf vf_load_mask(const float *p, vm m) {
  float t[SP_VL] = {0};
  const int bits = _mm_movemask_ps(m);
  for (int i = 0; i < SP_VL; i++)
    if (bits >> i & 1)
      t[i] = p[i];
  return _mm_loadu_ps(t);
}
/* p[0], p[s], p[2s], p[3s]. */
static inline vf vf_gather(const float *p, size_t s) {
  return _mm_set_ps(p[3 * s], p[2 * s], p[s], p[0]);
}
/* out[j] lane i = p[i*s + j] for i, j < 4: four rows of four, transposed. */
static inline __attribute__((always_inline)) void
vf_load_transposed(const float *p, size_t s, vf *out) {
  const vf r[4] = {_mm_loadu_ps(p), _mm_loadu_ps(p + s),
                   _mm_loadu_ps(p + 2 * s), _mm_loadu_ps(p + 3 * s)};
  SP_X86_TRANSPOSE4(_mm, r, out);
}
/* Splits a = (x0..x3), b = (x4..x7) into even (x0 x2 x4 x6) and odd lanes. */
static inline void vf_deinterleave(vf a, vf b, vf *even, vf *odd) {
  *even = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  *odd = _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
/* The inverse: lo = (e0 o0 e1 o1), hi = (e2 o2 e3 o3). */
static inline void vf_interleave(vf even, vf odd, vf *lo, vf *hi) {
  *lo = _mm_unpacklo_ps(even, odd);
  *hi = _mm_unpackhi_ps(even, odd);
}

static inline vf vf_add(vf a, vf b) {
  return _mm_add_ps(a, b);
}
static inline vf vf_sub(vf a, vf b) {
  return _mm_sub_ps(a, b);
}
static inline vf vf_mul(vf a, vf b) {
  return _mm_mul_ps(a, b);
}
static inline vf vf_div(vf a, vf b) {
  return _mm_div_ps(a, b);
}
/* No FMA: the template's div_by divides (no vf_div_exact). */
#define SP_DIV_EXACT 0
static inline vf vf_sqrt(vf a) {
  return _mm_sqrt_ps(a);
}
static inline vf vf_abs(vf a) {
  return _mm_andnot_ps(_mm_set1_ps(-0.0f), a);
}
/* max(b, a) with x86 semantics: b > a ? b : a (a when either is NaN). */
static inline vf vf_max_x86(vf b, vf a) {
  return _mm_max_ps(b, a);
}
/* min(b, a) with x86 semantics: b < a ? b : a (a when either is NaN). */
static inline vf vf_min_x86(vf b, vf a) {
  return _mm_min_ps(b, a);
}

static inline vm vm_gt(vf a, vf b) {
  return _mm_cmpgt_ps(a, b);
}
static inline vm vm_lt(vf a, vf b) {
  return _mm_cmplt_ps(a, b);
}
static inline vm vm_eq(vf a, vf b) {
  return _mm_cmpeq_ps(a, b);
}
static inline vm vm_nan(vf a) {
  return _mm_cmpunord_ps(a, a);
}
/* Lanes where a or b is NaN. */
static inline vm vm_unord(vf a, vf b) {
  return _mm_cmpunord_ps(a, b);
}
/* Lanes that are not +0.0f (all bits clear); -0.0f is not +0.0f. */
static inline vm vm_not_pzero(vf a) {
  return _mm_andnot_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(a),
                                                        _mm_setzero_si128())),
                       _mm_castsi128_ps(_mm_set1_epi32(-1)));
}
/* Lanes whose bits, read as uint32, are not in [lo, hi] (lo, hi < 2^31).
 * Signed compares suffice: bits from 2^31 on read as negative, below lo. */
static inline vm vm_bits_outside(vf a, uint32_t lo, uint32_t hi) {
  const __m128i b = _mm_castps_si128(a);
  return _mm_castsi128_ps(
      _mm_or_si128(_mm_cmpgt_epi32(_mm_set1_epi32((int)lo), b),
                   _mm_cmpgt_epi32(b, _mm_set1_epi32((int)hi))));
}
/* Lanes l0 <= lane < l1. */
static inline vm vm_range(size_t l0, size_t l1) {
  const __m128i lane = _mm_set_epi32(3, 2, 1, 0);
  return _mm_castsi128_ps(
      _mm_and_si128(_mm_cmpgt_epi32(lane, _mm_set1_epi32((int)l0 - 1)),
                    _mm_cmplt_epi32(lane, _mm_set1_epi32((int)l1))));
}
static inline vm vm_andnot(vm a, vm b) {
  return _mm_andnot_ps(a, b);
}
static inline vm vm_or(vm a, vm b) {
  return _mm_or_ps(a, b);
}
static inline vm vm_and(vm a, vm b) {
  return _mm_and_ps(a, b);
}
static inline int vm_any(vm m) {
  return _mm_movemask_ps(m) != 0;
}
/* m ? b : a, per lane. */
static inline vf vf_select(vm m, vf a, vf b) {
  return _mm_blendv_ps(a, b, m);
}

/* acc + (m ? d : +0.0f): equal to acc + d where m, acc elsewhere, for
 * every acc but -0.0f and a signalling NaN. */
static inline vf vf_add_where(vf acc, vm m, vf d) {
  return _mm_add_ps(acc, _mm_and_ps(m, d));
}

static inline vi vi_set1(int32_t v) {
  return _mm_set1_epi32(v);
}
/* base, base + step, base + 2*step, ... */
static inline vi vi_ramp(int32_t base, int32_t step) {
  return _mm_add_epi32(
      _mm_set1_epi32(base),
      _mm_mullo_epi32(_mm_set_epi32(3, 2, 1, 0), _mm_set1_epi32(step)));
}
static inline vi vi_add(vi a, vi b) {
  return _mm_add_epi32(a, b);
}
static inline vi vi_select(vm m, vi a, vi b) {
  return _mm_castps_si128(
      _mm_blendv_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), m));
}
static inline vm vm_eq_i(vi a, vi b) {
  return _mm_castsi128_ps(_mm_cmpeq_epi32(a, b));
}
static inline vi vi_load_i32(const int32_t *p) {
  return _mm_loadu_si128((const __m128i *)p);
}
static inline void vi_store_i32(int32_t *p, vi v) {
  _mm_storeu_si128((__m128i *)p, v);
}
/* Low 32 bits of four int64 (the values fit: dispatch checked them). */
static inline vi vi_load_i64(const int64_t *p) {
  __m128 a = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)p));
  __m128 b = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(p + 2)));
  return _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
}
static inline void vi_store_i64(int64_t *p, vi v) {
  _mm_storeu_si128((__m128i *)p, _mm_cvtepi32_epi64(v));
  _mm_storeu_si128((__m128i *)(p + 2),
                   _mm_cvtepi32_epi64(_mm_srli_si128(v, 8)));
}
static inline vi vi_load_u8(const uint8_t *p) {
  int32_t t;
  memcpy(&t, p, sizeof t);
  return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(t));
}
static inline void vi_store_u8(uint8_t *p, vi v) {
  __m128i b = _mm_packus_epi16(_mm_packus_epi32(v, v), _mm_setzero_si128());
  int32_t t = _mm_cvtsi128_si32(b);
  memcpy(p, &t, sizeof t);
}

/* ------------------------------------------------ 16-bit float elements
 * Loads that widen bf16/f16 to f32 and stores that narrow once, bit for
 * bit the scalar conversions of kernels/dtype.h (tests/test_dtype.c):
 * widening is exact and keeps every NaN's payload (a signalling NaN stays
 * signalling); _store_ rounds to nearest even with the canonical NaN,
 * _store_*_keep is MAX's narrowing (a NaN keeps its payload). SP_VL
 * elements at p, unaligned. */
static inline vf vf_load_bf16(const uint16_t *p) {
  const __m128i u = _mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)p));
  return _mm_castsi128_ps(_mm_slli_epi32(u, 16));
}
/* 2*SP_VL bf16 elements at p as their even and odd elements, widened:
 * each 32-bit lane of one load holds an even element in its low half and
 * the odd one after it in its high half (little-endian), so a shift and a
 * mask do both the split and the widening. */
static inline void vf_load_bf16_pairs(const uint16_t *p, vf *even, vf *odd) {
  const __m128i u = _mm_loadu_si128((const __m128i *)p);
  *even = _mm_castsi128_ps(_mm_slli_epi32(u, 16));
  *odd = _mm_castsi128_ps(_mm_and_si128(u, _mm_set1_epi32((int)0xffff0000u)));
}
/* SSE4.1 has no F16C. The magnitude's bits moved to f32's places and
 * scaled by 2^112 is the value exactly, normal or subnormal (the kernels
 * run without DAZ); inf and NaN lanes are rebuilt from their bits. */
static inline vf vf_load_f16(const uint16_t *p) {
  const __m128i u = _mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)p));
  const __m128i a = _mm_and_si128(u, _mm_set1_epi32(0x7fff));
  const __m128i sign =
      _mm_and_si128(_mm_slli_epi32(u, 16), _mm_set1_epi32((int)0x80000000u));
  const __m128i num = _mm_castps_si128(_mm_mul_ps(
      _mm_castsi128_ps(_mm_slli_epi32(a, 13)), _mm_set1_ps(0x1p112f)));
  const __m128i special =
      _mm_or_si128(_mm_slli_epi32(a, 13), _mm_set1_epi32(0x70000000));
  return _mm_castsi128_ps(_mm_or_si128(
      sign, _mm_blendv_epi8(num, special,
                            _mm_cmpgt_epi32(a, _mm_set1_epi32(0x7bff)))));
}
/* vf_load_f16 (the other ISAs' skips a NaN fix-up; this one has none to
 * skip: its inf and NaN lanes share one rebuild). */
static inline vf vf_load_f16_ord(const uint16_t *p) {
  return vf_load_f16(p);
}
/* Four lanes of at most 0xffff as four uint16. */
static inline void sp_sse41_store16(uint16_t *p, __m128i r) {
  _mm_storel_epi64((__m128i *)p, _mm_packus_epi32(r, r));
}
static inline __m128i sp_sse41_bf16_rne(__m128i u) {
  const __m128i odd = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
  return _mm_srli_epi32(
      _mm_add_epi32(_mm_add_epi32(u, _mm_set1_epi32(0x7fff)), odd), 16);
}
static inline __m128i sp_sse41_nan(vf v) {
  return _mm_castps_si128(_mm_cmpunord_ps(v, v));
}
static inline void vf_store_bf16(uint16_t *p, vf v) {
  sp_sse41_store16(p, _mm_blendv_epi8(sp_sse41_bf16_rne(_mm_castps_si128(v)),
                                      _mm_set1_epi32(0x7fc0), sp_sse41_nan(v)));
}
/* A NaN keeps its upper 16 bits, unless its payload lies only in the
 * lower ones: then the canonical NaN. */
static inline __m128i sp_sse41_bf16_keep(vf v) {
  const __m128i u = _mm_castps_si128(v);
  const __m128i hi = _mm_srli_epi32(u, 16);
  const __m128i none = _mm_cmpeq_epi32(_mm_and_si128(hi, _mm_set1_epi32(0x7f)),
                                       _mm_setzero_si128());
  return _mm_blendv_epi8(sp_sse41_bf16_rne(u),
                         _mm_blendv_epi8(hi, _mm_set1_epi32(0x7fc0), none),
                         sp_sse41_nan(v));
}
static inline void vf_store_bf16_keep(uint16_t *p, vf v) {
  sp_sse41_store16(p, sp_sse41_bf16_keep(v));
}
/* even and odd interleaved into 2*SP_VL elements at p, each narrowed as
 * by vf_store_bf16_keep: the even result in the low half of a 32-bit lane,
 * the odd one in the high half, one store. */
/* Stores of values that are bf16 values exactly (a widened element, +0,
 * the canonical NaN): the upper halves, which is what rounding would give
 * them, NaN payloads included. SP_VL elements, and 2*SP_VL interleaved as
 * vf_store_bf16_pairs_keep's. */
static inline void vf_store_bf16_exact(uint16_t *p, vf v) {
  sp_sse41_store16(p, _mm_srli_epi32(_mm_castps_si128(v), 16));
}
static inline void vf_store_bf16_pairs_exact(uint16_t *p, vf even, vf odd) {
  _mm_storeu_si128(
      (__m128i *)p,
      _mm_or_si128(_mm_srli_epi32(_mm_castps_si128(even), 16),
                   _mm_and_si128(_mm_castps_si128(odd),
                                 _mm_set1_epi32((int)0xffff0000u))));
}
static inline void vf_store_bf16_pairs_keep(uint16_t *p, vf even, vf odd) {
  _mm_storeu_si128((__m128i *)p,
                   _mm_or_si128(sp_sse41_bf16_keep(even),
                                _mm_slli_epi32(sp_sse41_bf16_keep(odd), 16)));
}
/* f16 bits of v rounded to nearest even, in 32-bit lanes; NaN lanes are
 * left to the callers. Adding M = 2^(max(e, -14) + 13), e the exponent of
 * |v|, rounds |v| (below 2^(e+1), so the sum stays in M's binade) to a
 * multiple of ulp(M) = 2^(max(e, -14) - 10), f16's spacing there, with the
 * FPU's round to nearest even; subtracting M back is exact. The rounded
 * value is then encoded: rebias its bits (normal, or rounded up to
 * 2^-14), or count units of 2^-24 (subnormal). From 65520 (and inf) on:
 * inf. */
static inline __m128i sp_sse41_f16_rne(vf v) {
  const __m128i u = _mm_castps_si128(v);
  const __m128i a = _mm_and_si128(u, _mm_set1_epi32(0x7fffffff));
  const __m128i e = _mm_max_epi32(_mm_srli_epi32(a, 23), _mm_set1_epi32(113));
  const __m128 m = _mm_castsi128_ps(
      _mm_slli_epi32(_mm_add_epi32(e, _mm_set1_epi32(13)), 23));
  const __m128 r = _mm_sub_ps(_mm_add_ps(_mm_castsi128_ps(a), m), m);
  const __m128i rb = _mm_castps_si128(r);
  const __m128i normal =
      _mm_srli_epi32(_mm_sub_epi32(rb, _mm_set1_epi32(0x38000000)), 13);
  const __m128i tiny = _mm_cvttps_epi32(_mm_mul_ps(r, _mm_set1_ps(0x1p24f)));
  __m128i h = _mm_blendv_epi8(tiny, normal,
                              _mm_cmpgt_epi32(rb, _mm_set1_epi32(0x387fffff)));
  h = _mm_blendv_epi8(h, _mm_set1_epi32(0x7c00),
                      _mm_cmpgt_epi32(a, _mm_set1_epi32(0x477fefff)));
  return _mm_or_si128(
      h, _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(0x8000)));
}
static inline void vf_store_f16(uint16_t *p, vf v) {
  sp_sse41_store16(p, _mm_blendv_epi8(sp_sse41_f16_rne(v),
                                      _mm_set1_epi32(0x7e00), sp_sse41_nan(v)));
}
static inline void vf_store_f16_keep(uint16_t *p, vf v) {
  const __m128i u = _mm_castps_si128(v);
  const __m128i pay =
      _mm_and_si128(_mm_srli_epi32(u, 13), _mm_set1_epi32(0x3ff));
  const __m128i kept =
      _mm_or_si128(_mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(0x8000)),
                   _mm_or_si128(pay, _mm_set1_epi32(0x7c00)));
  const __m128i none = _mm_cmpeq_epi32(pay, _mm_setzero_si128());
  sp_sse41_store16(
      p, _mm_blendv_epi8(sp_sse41_f16_rne(v),
                         _mm_blendv_epi8(kept, _mm_set1_epi32(0x7e00), none),
                         sp_sse41_nan(v)));
}

/* ------------------------------------------------ 8-bit integer elements
 * S8/U8 MAX runs the f32 kernels on exact widenings (every 8-bit integer
 * is an f32): int32 lanes to floats and back (truncating: the values are
 * integers), and signed bytes in and out (vi_load_u8/vi_store_u8 above are
 * the unsigned ones). */
static inline vf vf_from_vi(vi v) {
  return _mm_cvtepi32_ps(v);
}
static inline vi vi_from_vf(vf v) {
  return _mm_cvttps_epi32(v);
}
/* Rounded to nearest even (MXCSR's mode: the kernels run in the default
 * environment). */
static inline vi vi_round(vf v) {
  return _mm_cvtps_epi32(v);
}
static inline vi vi_load_s8(const int8_t *p) {
  int32_t t;
  memcpy(&t, p, sizeof t);
  return _mm_cvtepi8_epi32(_mm_cvtsi32_si128(t));
}
/* Signed saturation: exact for values in [-128, 127]. */
static inline void vi_store_s8(int8_t *p, vi v) {
  __m128i b = _mm_packs_epi16(_mm_packs_epi32(v, v), _mm_setzero_si128());
  int32_t t = _mm_cvtsi128_si32(b);
  memcpy(p, &t, sizeof t);
}

/* SP_VL int32 lanes x[2i] + x[2i+1] of the 2*SP_VL bytes at p, unsigned
 * or signed (the quantized average's stride-2 windows, tmpl/qavg.c). */
static inline vi vi_pairsum_u8(const uint8_t *p) {
  return _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)p)),
                        _mm_set1_epi16(1));
}
static inline vi vi_pairsum_s8(const int8_t *p) {
  return _mm_madd_epi16(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)p)),
                        _mm_set1_epi16(1));
}

/* ------------------------------------------------ byte lanes
 * SP_VB 8-bit elements in one vector, for the S8/U8 MAX without indices
 * (tmpl/bmax.c): unaligned loads and stores, the lane-wise max, and the
 * max of each pair of neighbours (windows of stride 2 along a row). */
typedef __m128i vb;
#define SP_VB 16
static inline vb vb_load(const void *p) {
  return _mm_loadu_si128((const __m128i *)p);
}
static inline void vb_store(void *p, vb v) {
  _mm_storeu_si128((__m128i *)p, v);
}
static inline vb vb_max_u8(vb a, vb b) {
  return _mm_max_epu8(a, b);
}
static inline vb vb_max_s8(vb a, vb b) {
  return _mm_max_epi8(a, b);
}

/* max(x[2i], x[2i+1]) of the 2*SP_VB bytes x = lo then hi: each pair's
 * max into its even byte, the even bytes packed (their 16-bit lanes are
 * 0..255, which packus keeps). */
static inline vb sp_vb_evens(vb lo, vb hi) {
  const __m128i m = _mm_set1_epi16(0x00ff);
  return _mm_packus_epi16(_mm_and_si128(lo, m), _mm_and_si128(hi, m));
}
static inline vb vb_pairmax_u8(vb lo, vb hi) {
  return sp_vb_evens(_mm_max_epu8(lo, _mm_srli_epi16(lo, 8)),
                     _mm_max_epu8(hi, _mm_srli_epi16(hi, 8)));
}
static inline vb vb_pairmax_s8(vb lo, vb hi) {
  return sp_vb_evens(_mm_max_epi8(lo, _mm_srli_epi16(lo, 8)),
                     _mm_max_epi8(hi, _mm_srli_epi16(hi, 8)));
}

#endif /* SIMDPOOL_VEC_SSE41_H */
