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

#endif /* SIMDPOOL_VEC_SSE41_H */
