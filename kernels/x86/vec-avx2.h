/* SPDX-License-Identifier: MIT */
/* vec-avx2.h — the vector layer for AVX2: 8 float lanes, masks as all-ones
 * lanes. */
#ifndef SIMDPOOL_VEC_AVX2_H
#define SIMDPOOL_VEC_AVX2_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "transpose4.h"

#define SP_VL 8
#define SP_FN(name) name##_avx2

typedef __m256 vf;
typedef __m256i vi;
typedef __m256 vm; /* a lane is true when all its bits are set */

static inline __m256i sp_avx2_first_n(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline vf vf_zero(void) {
  return _mm256_setzero_ps();
}
static inline vf vf_set1(float v) {
  return _mm256_set1_ps(v);
}
static inline vf vf_load(const float *p) {
  return _mm256_loadu_ps(p);
}
static inline void vf_store(float *p, vf v) {
  _mm256_storeu_ps(p, v);
}
/* n < SP_VL lanes from p, the rest zero; masked lanes never fault. */
static inline vf vf_load_n(const float *p, size_t n) {
  return _mm256_maskload_ps(p, sp_avx2_first_n(n));
}
static inline void vf_store_n(float *p, vf v, size_t n) {
  _mm256_maskstore_ps(p, sp_avx2_first_n(n), v);
}
/* Lanes [l0, l1) from p[l0..l1), the rest zero; masked lanes never fault. */
static inline vf vf_load_range(const float *p, size_t l0, size_t l1) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i m =
      _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)l0 - 1)),
                       _mm256_cmpgt_epi32(_mm256_set1_epi32((int)l1), lane));
  return _mm256_maskload_ps(p, m);
}
/* The lanes of m from p, the rest zero; masked lanes never fault. */
static inline vf vf_load_mask(const float *p, vm m) {
  return _mm256_maskload_ps(p, _mm256_castps_si256(m));
}
/* p[0], p[s], ..., p[7s] (column strides of 3 and more), by eight scalar
 * loads rather than vgatherdps: on Intel CPUs with the Gather Data Sampling
 * microcode fix a gather costs several times the loads, AMD's before Zen 4
 * are microcoded, and QEMU 7.2 (the CI's Haswell model) decodes a gather
 * indexed by ymm4 as unindexed, so the AVX2 code holds no gather at all. */
static inline vf vf_gather(const float *p, size_t s) {
  return _mm256_setr_ps(p[0], p[s], p[2 * s], p[3 * s], p[4 * s], p[5 * s],
                        p[6 * s], p[7 * s]);
}
/* out[j] lane i = p[i*s + j] for i, j < 8: eight rows of eight, transposed.
 * Each vector pairs row i's half with row i + 4's, then every 128-bit lane
 * is transposed as four by four. */
static inline __attribute__((always_inline)) void
vf_load_transposed(const float *p, size_t s, vf *out) {
  for (int h = 0; h < 2; h++) {
    __m256 r[4];
    for (int i = 0; i < 4; i++)
      r[i] = _mm256_insertf128_ps(
          _mm256_castps128_ps256(_mm_loadu_ps(p + (size_t)i * s + 4 * h)),
          _mm_loadu_ps(p + (size_t)(i + 4) * s + 4 * h), 1);
    SP_X86_TRANSPOSE4(_mm256, r, out + 4 * h);
  }
}
/* Splits a = (x0..x7), b = (x8..x15) into even (x0 x2 .. x14) and odd lanes. */
static inline void vf_deinterleave(vf a, vf b, vf *even, vf *odd) {
  const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  const __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  *even = _mm256_castpd_ps(
      _mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  *odd = _mm256_castpd_ps(
      _mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* The inverse: lo = (e0 o0 .. e3 o3), hi = (e4 o4 .. e7 o7). */
static inline void vf_interleave(vf even, vf odd, vf *lo, vf *hi) {
  const __m256 l = _mm256_unpacklo_ps(even, odd);
  const __m256 h = _mm256_unpackhi_ps(even, odd);
  *lo = _mm256_permute2f128_ps(l, h, 0x20);
  *hi = _mm256_permute2f128_ps(l, h, 0x31);
}

static inline vf vf_add(vf a, vf b) {
  return _mm256_add_ps(a, b);
}
static inline vf vf_sub(vf a, vf b) {
  return _mm256_sub_ps(a, b);
}
static inline vf vf_mul(vf a, vf b) {
  return _mm256_mul_ps(a, b);
}
static inline vf vf_div(vf a, vf b) {
  return _mm256_div_ps(a, b);
}
/* x / d from r = RN(1/d) by Markstein's correction: q = x*r, the exact
 * residual x - q*d, and q + residual*r rounded once (two FMAs). Exact only
 * where the template's div_lanes uses it (tests/test_divide.c). `sum` (a
 * compile-time constant): fma(fma(-q, d, x), r, q), whose ±0 gives +0, the
 * quotient of +0 + x; else q - fma(q, d, -x)*r, exact for ±0 too. The file
 * is built with -mfma for these intrinsics alone: -ffp-contract=off keeps
 * the compiler from fusing anything else (dispatch runs AVX2 only with FMA). */
#define SP_DIV_EXACT 1
static inline vf vf_div_exact(vf x, vf d, vf r, int sum) {
  const __m256 q = _mm256_mul_ps(x, r);
  if (sum)
    return _mm256_fmadd_ps(_mm256_fnmadd_ps(q, d, x), r, q);
  return _mm256_fnmadd_ps(_mm256_fmsub_ps(q, d, x), r, q);
}
static inline vf vf_sqrt(vf a) {
  return _mm256_sqrt_ps(a);
}
static inline vf vf_abs(vf a) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
}
/* max(b, a) with x86 semantics: b > a ? b : a (a when either is NaN). */
static inline vf vf_max_x86(vf b, vf a) {
  return _mm256_max_ps(b, a);
}
/* min(b, a) with x86 semantics: b < a ? b : a (a when either is NaN). */
static inline vf vf_min_x86(vf b, vf a) {
  return _mm256_min_ps(b, a);
}

static inline vm vm_gt(vf a, vf b) {
  return _mm256_cmp_ps(a, b, _CMP_GT_OQ);
}
static inline vm vm_lt(vf a, vf b) {
  return _mm256_cmp_ps(a, b, _CMP_LT_OQ);
}
static inline vm vm_eq(vf a, vf b) {
  return _mm256_cmp_ps(a, b, _CMP_EQ_OQ);
}
static inline vm vm_nan(vf a) {
  return _mm256_cmp_ps(a, a, _CMP_UNORD_Q);
}
/* Lanes where a or b is NaN. */
static inline vm vm_unord(vf a, vf b) {
  return _mm256_cmp_ps(a, b, _CMP_UNORD_Q);
}
/* Lanes that are not +0.0f (all bits clear); -0.0f is not +0.0f. */
static inline vm vm_not_pzero(vf a) {
  return _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
                              _mm256_castps_si256(a), _mm256_setzero_si256())),
                          _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
}
/* Lanes whose bits, read as uint32, are not in [lo, hi] (lo, hi < 2^31):
 * for floats of either sign, |a| outside [lo, hi] as floats' bits. Signed
 * compares suffice: bits from 2^31 on read as negative, below lo. */
static inline vm vm_bits_outside(vf a, uint32_t lo, uint32_t hi) {
  const __m256i b = _mm256_castps_si256(a);
  return _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)lo), b),
                      _mm256_cmpgt_epi32(b, _mm256_set1_epi32((int)hi))));
}
/* Lanes l0 <= lane < l1. */
static inline vm vm_range(size_t l0, size_t l1) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_castsi256_ps(
      _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)l0 - 1)),
                       _mm256_cmpgt_epi32(_mm256_set1_epi32((int)l1), lane)));
}
static inline vm vm_andnot(vm a, vm b) {
  return _mm256_andnot_ps(a, b);
}
static inline vm vm_or(vm a, vm b) {
  return _mm256_or_ps(a, b);
}
static inline vm vm_and(vm a, vm b) {
  return _mm256_and_ps(a, b);
}
static inline int vm_any(vm m) {
  return _mm256_movemask_ps(m) != 0;
}
/* m ? b : a, per lane. */
static inline vf vf_select(vm m, vf a, vf b) {
  return _mm256_blendv_ps(a, b, m);
}

/* acc + (m ? d : +0.0f): equal to acc + d where m, acc elsewhere, for
 * every acc but -0.0f and a signalling NaN. */
static inline vf vf_add_where(vf acc, vm m, vf d) {
  return _mm256_add_ps(acc, _mm256_and_ps(m, d));
}

static inline vi vi_set1(int32_t v) {
  return _mm256_set1_epi32(v);
}
/* base, base + step, base + 2*step, ... */
static inline vi vi_ramp(int32_t base, int32_t step) {
  return _mm256_add_epi32(
      _mm256_set1_epi32(base),
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                         _mm256_set1_epi32(step)));
}
static inline vi vi_add(vi a, vi b) {
  return _mm256_add_epi32(a, b);
}
static inline vi vi_select(vm m, vi a, vi b) {
  return _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), m));
}
static inline vm vm_eq_i(vi a, vi b) {
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b));
}
static inline vi vi_load_i32(const int32_t *p) {
  return _mm256_loadu_si256((const __m256i *)p);
}
static inline void vi_store_i32(int32_t *p, vi v) {
  _mm256_storeu_si256((__m256i *)p, v);
}
/* Low 32 bits of eight int64 (the values fit: dispatch checked them). */
static inline vi vi_load_i64(const int64_t *p) {
  const __m256 a = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)p));
  const __m256 b =
      _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(p + 4)));
  const __m256 lo = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_si256(
      _mm256_permute4x64_pd(_mm256_castps_pd(lo), _MM_SHUFFLE(3, 1, 2, 0)));
}
static inline void vi_store_i64(int64_t *p, vi v) {
  _mm256_storeu_si256((__m256i *)p,
                      _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)));
  _mm256_storeu_si256((__m256i *)(p + 4),
                      _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
}
static inline vi vi_load_u8(const uint8_t *p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
}
static inline void vi_store_u8(uint8_t *p, vi v) {
  const __m256i w =
      _mm256_packus_epi16(_mm256_packus_epi32(v, v), _mm256_setzero_si256());
  const int32_t lo = _mm_cvtsi128_si32(_mm256_castsi256_si128(w));
  const int32_t hi = _mm_cvtsi128_si32(_mm256_extracti128_si256(w, 1));
  memcpy(p, &lo, 4);
  memcpy(p + 4, &hi, 4);
}

/* ------------------------------------------------ 16-bit float elements
 * Loads that widen bf16/f16 to f32 and stores that narrow once, bit for
 * bit the scalar conversions of kernels/dtype.h (tests/test_dtype.c):
 * widening is exact and keeps every NaN's payload (a signalling NaN stays
 * signalling); _store_ rounds to nearest even with the canonical NaN,
 * _store_*_keep is MAX's narrowing (a NaN keeps its payload). SP_VL
 * elements at p, unaligned. */
static inline vf vf_load_bf16(const uint16_t *p) {
  const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}
/* 2*SP_VL bf16 elements at p as their even and odd elements, widened:
 * each 32-bit lane of one load holds an even element in its low half and
 * the odd one after it in its high half (little-endian), so a shift and a
 * mask do both the split and the widening. */
static inline void vf_load_bf16_pairs(const uint16_t *p, vf *even, vf *odd) {
  const __m256i u = _mm256_loadu_si256((const __m256i *)p);
  *even = _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
  *odd = _mm256_castsi256_ps(
      _mm256_and_si256(u, _mm256_set1_epi32((int)0xffff0000u)));
}
/* F16C's conversion (exact for numbers; dispatch runs AVX2 only where the
 * CPU has F16C) quietens a signalling NaN: NaN lanes are rebuilt from
 * their bits, sign | 0x7f800000 | payload << 13. */
static inline vf vf_load_f16(const uint16_t *p) {
  const __m128i h = _mm_loadu_si128((const __m128i *)p);
  const vf f = _mm256_cvtph_ps(h);
  /* The common case, no NaN (a quietened one is still a NaN): as is. */
  if (!_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)))
    return f;
  const __m256i u = _mm256_cvtepu16_epi32(h);
  const __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fff));
  const __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7c00));
  const __m256i bits = _mm256_or_si256(
      _mm256_and_si256(_mm256_slli_epi32(u, 16),
                       _mm256_set1_epi32((int)0x80000000u)),
      _mm256_or_si256(_mm256_slli_epi32(a, 13), _mm256_set1_epi32(0x70000000)));
  return _mm256_blendv_ps(f, _mm256_castsi256_ps(bits),
                          _mm256_castsi256_ps(nan));
}
/* vf_load_f16 without the NaN fix-up: exact for every number, and a NaN
 * loads as some NaN (F16C quietens a signalling one). For MAX bodies that
 * test their lanes for NaN themselves and redo such lanes from exact loads. */
static inline vf vf_load_f16_ord(const uint16_t *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
/* Eight lanes of at most 0xffff as eight uint16. */
static inline void sp_avx2_store16(uint16_t *p, __m256i r) {
  _mm_storeu_si128((__m128i *)p,
                   _mm_packus_epi32(_mm256_castsi256_si128(r),
                                    _mm256_extracti128_si256(r, 1)));
}
/* bf16 bits (in the low half of each lane) of u rounded to nearest even;
 * NaN lanes are left to the callers. */
static inline __m256i sp_avx2_bf16_rne(__m256i u) {
  const __m256i odd =
      _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd),
      16);
}
static inline __m256i sp_avx2_nan(vf v) {
  return _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}
/* Every store below first tests for NaN lanes: without them (the common
 * case) rounding is all there is. */
static inline int sp_avx2_any_nan(vf v) {
  return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0;
}
static inline void vf_store_bf16(uint16_t *p, vf v) {
  if (!sp_avx2_any_nan(v)) {
    sp_avx2_store16(p, sp_avx2_bf16_rne(_mm256_castps_si256(v)));
    return;
  }
  sp_avx2_store16(
      p, _mm256_blendv_epi8(sp_avx2_bf16_rne(_mm256_castps_si256(v)),
                            _mm256_set1_epi32(0x7fc0), sp_avx2_nan(v)));
}
/* A NaN keeps its upper 16 bits, unless its payload lies only in the
 * lower ones: then the canonical NaN. */
static inline __m256i sp_avx2_bf16_keep(vf v) {
  const __m256i u = _mm256_castps_si256(v);
  if (!sp_avx2_any_nan(v))
    return sp_avx2_bf16_rne(u);
  const __m256i hi = _mm256_srli_epi32(u, 16);
  const __m256i nan = sp_avx2_nan(v);
  const __m256i none = _mm256_cmpeq_epi32(
      _mm256_and_si256(hi, _mm256_set1_epi32(0x7f)), _mm256_setzero_si256());
  return _mm256_blendv_epi8(
      sp_avx2_bf16_rne(u),
      _mm256_blendv_epi8(hi, _mm256_set1_epi32(0x7fc0), none), nan);
}
static inline void vf_store_bf16_keep(uint16_t *p, vf v) {
  sp_avx2_store16(p, sp_avx2_bf16_keep(v));
}
/* even and odd interleaved into 2*SP_VL elements at p, each narrowed as
 * by vf_store_bf16_keep: the even result in the low half of a 32-bit lane,
 * the odd one in the high half, one store. */
/* Stores of values that are bf16 values exactly (a widened element, +0,
 * the canonical NaN): the upper halves, which is what rounding would give
 * them, NaN payloads included. SP_VL elements, and 2*SP_VL interleaved as
 * vf_store_bf16_pairs_keep's. */
static inline void vf_store_bf16_exact(uint16_t *p, vf v) {
  sp_avx2_store16(p, _mm256_srli_epi32(_mm256_castps_si256(v), 16));
}
static inline void vf_store_bf16_pairs_exact(uint16_t *p, vf even, vf odd) {
  _mm256_storeu_si256(
      (__m256i *)p,
      _mm256_or_si256(_mm256_srli_epi32(_mm256_castps_si256(even), 16),
                      _mm256_and_si256(_mm256_castps_si256(odd),
                                       _mm256_set1_epi32((int)0xffff0000u))));
}
static inline void vf_store_bf16_pairs_keep(uint16_t *p, vf even, vf odd) {
  _mm256_storeu_si256(
      (__m256i *)p,
      _mm256_or_si256(sp_avx2_bf16_keep(even),
                      _mm256_slli_epi32(sp_avx2_bf16_keep(odd), 16)));
}
/* VCVTPS2PH with round to nearest even is IEEE's narrowing (gradual
 * underflow, overflow to inf, whatever MXCSR says); NaN lanes are set
 * apart. */
static inline void vf_store_f16(uint16_t *p, vf v) {
  if (!sp_avx2_any_nan(v)) {
    _mm_storeu_si128((__m128i *)p,
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    return;
  }
  const __m256i h =
      _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  sp_avx2_store16(
      p, _mm256_blendv_epi8(h, _mm256_set1_epi32(0x7e00), sp_avx2_nan(v)));
}
static inline void vf_store_f16_keep(uint16_t *p, vf v) {
  if (!sp_avx2_any_nan(v)) {
    _mm_storeu_si128((__m128i *)p,
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    return;
  }
  const __m256i u = _mm256_castps_si256(v);
  const __m256i pay =
      _mm256_and_si256(_mm256_srli_epi32(u, 13), _mm256_set1_epi32(0x3ff));
  const __m256i kept = _mm256_or_si256(
      _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000)),
      _mm256_or_si256(pay, _mm256_set1_epi32(0x7c00)));
  const __m256i none = _mm256_cmpeq_epi32(pay, _mm256_setzero_si256());
  const __m256i h =
      _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  sp_avx2_store16(
      p, _mm256_blendv_epi8(
             h, _mm256_blendv_epi8(kept, _mm256_set1_epi32(0x7e00), none),
             sp_avx2_nan(v)));
}

/* ------------------------------------------------ 8-bit integer elements
 * S8/U8 MAX runs the f32 kernels on exact widenings (every 8-bit integer
 * is an f32): int32 lanes to floats and back (truncating: the values are
 * integers), and signed bytes in and out (vi_load_u8/vi_store_u8 above are
 * the unsigned ones). */
static inline vf vf_from_vi(vi v) {
  return _mm256_cvtepi32_ps(v);
}
static inline vi vi_from_vf(vf v) {
  return _mm256_cvttps_epi32(v);
}
/* Rounded to nearest even (MXCSR's mode: the kernels run in the default
 * environment). */
static inline vi vi_round(vf v) {
  return _mm256_cvtps_epi32(v);
}
static inline vi vi_load_s8(const int8_t *p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p));
}
/* Signed saturation: exact for values in [-128, 127]. */
static inline void vi_store_s8(int8_t *p, vi v) {
  const __m256i w =
      _mm256_packs_epi16(_mm256_packs_epi32(v, v), _mm256_setzero_si256());
  const int32_t lo = _mm_cvtsi128_si32(_mm256_castsi256_si128(w));
  const int32_t hi = _mm_cvtsi128_si32(_mm256_extracti128_si256(w, 1));
  memcpy(p, &lo, 4);
  memcpy(p + 4, &hi, 4);
}

/* SP_VL int32 lanes x[2i] + x[2i+1] of the 2*SP_VL bytes at p, unsigned
 * or signed (the quantized average's stride-2 windows, tmpl/qavg.c). */
static inline vi vi_pairsum_u8(const uint8_t *p) {
  return _mm256_madd_epi16(
      _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p)),
      _mm256_set1_epi16(1));
}
static inline vi vi_pairsum_s8(const int8_t *p) {
  return _mm256_madd_epi16(
      _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)),
      _mm256_set1_epi16(1));
}

/* ------------------------------------------------ byte lanes
 * SP_VB 8-bit elements in one vector, for the S8/U8 MAX without indices
 * (tmpl/bmax.c): unaligned loads and stores, the lane-wise max, and the
 * max of each pair of neighbours (windows of stride 2 along a row). */
typedef __m256i vb;
#define SP_VB 32
static inline vb vb_load(const void *p) {
  return _mm256_loadu_si256((const __m256i *)p);
}
static inline void vb_store(void *p, vb v) {
  _mm256_storeu_si256((__m256i *)p, v);
}
static inline vb vb_max_u8(vb a, vb b) {
  return _mm256_max_epu8(a, b);
}
static inline vb vb_max_s8(vb a, vb b) {
  return _mm256_max_epi8(a, b);
}

/* max(x[2i], x[2i+1]) of the 2*SP_VB bytes x = lo then hi: each pair's
 * max into its even byte, the even bytes packed (their 16-bit lanes are
 * 0..255, which packus keeps; it packs within 128-bit halves, so the
 * quadwords are put back in order). */
static inline vb sp_vb_evens(vb lo, vb hi) {
  const __m256i m = _mm256_set1_epi16(0x00ff);
  const __m256i p =
      _mm256_packus_epi16(_mm256_and_si256(lo, m), _mm256_and_si256(hi, m));
  return _mm256_permute4x64_epi64(p, 0xd8);
}
static inline vb vb_pairmax_u8(vb lo, vb hi) {
  return sp_vb_evens(_mm256_max_epu8(lo, _mm256_srli_epi16(lo, 8)),
                     _mm256_max_epu8(hi, _mm256_srli_epi16(hi, 8)));
}
static inline vb vb_pairmax_s8(vb lo, vb hi) {
  return sp_vb_evens(_mm256_max_epi8(lo, _mm256_srli_epi16(lo, 8)),
                     _mm256_max_epi8(hi, _mm256_srli_epi16(hi, 8)));
}

#endif /* SIMDPOOL_VEC_AVX2_H */
