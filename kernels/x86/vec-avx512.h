/* SPDX-License-Identifier: MIT */
/* vec-avx512.h — the vector layer for AVX-512 (F, BW, DQ, VL): 16 float lanes,
 * opmask masks. */
#ifndef SIMDPOOL_VEC_AVX512_H
#define SIMDPOOL_VEC_AVX512_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "transpose4.h"

#define SP_VL 16
#define SP_FN(name) name##_avx512

typedef __m512 vf;
typedef __m512i vi;
typedef __mmask16 vm;

static inline __mmask16 sp_avx512_first_n(size_t n) {
  return (__mmask16)((1u << n) - 1u);
}

static inline vf vf_zero(void) {
  return _mm512_setzero_ps();
}
static inline vf vf_set1(float v) {
  return _mm512_set1_ps(v);
}
static inline vf vf_load(const float *p) {
  return _mm512_loadu_ps(p);
}
static inline void vf_store(float *p, vf v) {
  _mm512_storeu_ps(p, v);
}
/* n < SP_VL lanes from p, the rest zero; masked lanes never fault. */
static inline vf vf_load_n(const float *p, size_t n) {
  return _mm512_maskz_loadu_ps(sp_avx512_first_n(n), p);
}
static inline void vf_store_n(float *p, vf v, size_t n) {
  _mm512_mask_storeu_ps(p, sp_avx512_first_n(n), v);
}
/* Lanes [l0, l1) from p[l0..l1), the rest zero; masked lanes never fault. */
static inline vf vf_load_range(const float *p, size_t l0, size_t l1) {
  return _mm512_maskz_loadu_ps(
      (__mmask16)(sp_avx512_first_n(l1) & ~sp_avx512_first_n(l0)), p);
}
/* The lanes of m from p, the rest zero; masked lanes never fault. */
static inline vf vf_load_mask(const float *p, vm m) {
  return _mm512_maskz_loadu_ps(m, p);
}
/* p[0], p[s], ..., p[15s]. */
static inline vf vf_gather(const float *p, size_t s) {
  if (s <= (size_t)INT32_MAX / 16) {
    const __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((int)s));
    return _mm512_i32gather_ps(idx, p, 4);
  }
  float t[16];
  for (int i = 0; i < 16; i++)
    t[i] = p[(size_t)i * s];
  return _mm512_loadu_ps(t);
}
/* out[j] lane i = p[i*s + j] for i, j < 16: sixteen rows of sixteen,
 * transposed. For each group of four columns, vector k gathers them from
 * rows k, k + 4, k + 8, k + 12 (one per 128-bit lane), then every 128-bit
 * lane is transposed as four by four. */
static inline __attribute__((always_inline)) void
vf_load_transposed(const float *p, size_t s, vf *out) {
  for (int q = 0; q < 4; q++) {
    __m512 r[4];
    for (int i = 0; i < 4; i++) {
      const float *row = p + (size_t)i * s + 4 * q;
      /* Masked broadcasts rather than inserts: they need no shuffle port. */
      __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(row));
      v = _mm512_mask_broadcast_f32x4(v, 0x00f0, _mm_loadu_ps(row + 4 * s));
      v = _mm512_mask_broadcast_f32x4(v, 0x0f00, _mm_loadu_ps(row + 8 * s));
      r[i] = _mm512_mask_broadcast_f32x4(v, 0xf000, _mm_loadu_ps(row + 12 * s));
    }
    SP_X86_TRANSPOSE4(_mm512, r, out + 4 * q);
  }
}
/* Splits a = (x0..x15), b = (x16..x31) into even and odd lanes. */
static inline void vf_deinterleave(vf a, vf b, vf *even, vf *odd) {
  const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                       22, 24, 26, 28, 30);
  const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21,
                                       23, 25, 27, 29, 31);
  *even = _mm512_permutex2var_ps(a, ie, b);
  *odd = _mm512_permutex2var_ps(a, io, b);
}
/* The inverse: lo = (e0 o0 .. e7 o7), hi = (e8 o8 .. e15 o15). */
static inline void vf_interleave(vf even, vf odd, vf *lo, vf *hi) {
  const __m512i il =
      _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i ih = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13,
                                       29, 14, 30, 15, 31);
  *lo = _mm512_permutex2var_ps(even, il, odd);
  *hi = _mm512_permutex2var_ps(even, ih, odd);
}

static inline vf vf_add(vf a, vf b) {
  return _mm512_add_ps(a, b);
}
static inline vf vf_sub(vf a, vf b) {
  return _mm512_sub_ps(a, b);
}
static inline vf vf_mul(vf a, vf b) {
  return _mm512_mul_ps(a, b);
}
static inline vf vf_div(vf a, vf b) {
  return _mm512_div_ps(a, b);
}
/* x / d from r = RN(1/d) by Markstein's correction: q = x*r, the exact
 * residual x - q*d, and q + residual*r rounded once (two FMAs). Exact only
 * where the template's div_lanes uses it (tests/test_divide.c). `sum` (a
 * compile-time constant): fma(fma(-q, d, x), r, q), whose ±0 gives +0, the
 * quotient of +0 + x; else q - fma(q, d, -x)*r, exact for ±0 too. */
#define SP_DIV_EXACT 1
static inline vf vf_div_exact(vf x, vf d, vf r, int sum) {
  const __m512 q = _mm512_mul_ps(x, r);
  if (sum)
    return _mm512_fmadd_ps(_mm512_fnmadd_ps(q, d, x), r, q);
  return _mm512_fnmadd_ps(_mm512_fmsub_ps(q, d, x), r, q);
}
static inline vf vf_sqrt(vf a) {
  return _mm512_sqrt_ps(a);
}
static inline vf vf_abs(vf a) {
  return _mm512_abs_ps(a);
}
/* max(b, a) with x86 semantics: b > a ? b : a (a when either is NaN). */
static inline vf vf_max_x86(vf b, vf a) {
  return _mm512_max_ps(b, a);
}
/* min(b, a) with x86 semantics: b < a ? b : a (a when either is NaN). */
static inline vf vf_min_x86(vf b, vf a) {
  return _mm512_min_ps(b, a);
}

static inline vm vm_gt(vf a, vf b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ);
}
static inline vm vm_lt(vf a, vf b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
}
static inline vm vm_eq(vf a, vf b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ);
}
static inline vm vm_nan(vf a) {
  return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
}
/* Lanes where a or b is NaN. */
static inline vm vm_unord(vf a, vf b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
}
/* Lanes that are not +0.0f (all bits clear); -0.0f is not +0.0f. */
static inline vm vm_not_pzero(vf a) {
  const __m512i b = _mm512_castps_si512(a);
  return _mm512_test_epi32_mask(b, b);
}
/* Lanes whose bits, read as uint32, are not in [lo, hi] (lo, hi < 2^31):
 * for floats of either sign, |a| outside [lo, hi] as floats' bits; integer
 * compares, off the floating-point adders. */
static inline vm vm_bits_outside(vf a, uint32_t lo, uint32_t hi) {
  const __m512i b = _mm512_castps_si512(a);
  return (vm)~_mm512_mask_cmple_epu32_mask(
      _mm512_cmpge_epu32_mask(b, _mm512_set1_epi32((int)lo)), b,
      _mm512_set1_epi32((int)hi));
}
/* Lanes l0 <= lane < l1. */
static inline vm vm_range(size_t l0, size_t l1) {
  return (vm)(sp_avx512_first_n(l1) & ~sp_avx512_first_n(l0));
}
static inline vm vm_andnot(vm a, vm b) {
  return (vm)(~a & b);
}
static inline vm vm_or(vm a, vm b) {
  return (vm)(a | b);
}
static inline vm vm_and(vm a, vm b) {
  return (vm)(a & b);
}
static inline int vm_any(vm m) {
  return m != 0;
}
/* m ? b : a, per lane. */
static inline vf vf_select(vm m, vf a, vf b) {
  return _mm512_mask_blend_ps(m, a, b);
}

/* acc + d where m, acc elsewhere (one masked add). */
static inline vf vf_add_where(vf acc, vm m, vf d) {
  return _mm512_mask_add_ps(acc, m, acc, d);
}

static inline vi vi_set1(int32_t v) {
  return _mm512_set1_epi32(v);
}
/* base, base + step, base + 2*step, ... */
static inline vi vi_ramp(int32_t base, int32_t step) {
  return _mm512_add_epi32(
      _mm512_set1_epi32(base),
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                           12, 13, 14, 15),
                         _mm512_set1_epi32(step)));
}
static inline vi vi_add(vi a, vi b) {
  return _mm512_add_epi32(a, b);
}
static inline vi vi_select(vm m, vi a, vi b) {
  return _mm512_mask_blend_epi32(m, a, b);
}
static inline vm vm_eq_i(vi a, vi b) {
  return _mm512_cmpeq_epi32_mask(a, b);
}
static inline vi vi_load_i32(const int32_t *p) {
  return _mm512_loadu_si512((const void *)p);
}
static inline void vi_store_i32(int32_t *p, vi v) {
  _mm512_storeu_si512((void *)p, v);
}
/* Low 32 bits of sixteen int64 (the values fit: dispatch checked them). */
static inline vi vi_load_i64(const int64_t *p) {
  const __m256i lo = _mm512_cvtepi64_epi32(_mm512_loadu_si512((const void *)p));
  const __m256i hi =
      _mm512_cvtepi64_epi32(_mm512_loadu_si512((const void *)(p + 8)));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
static inline void vi_store_i64(int64_t *p, vi v) {
  _mm512_storeu_si512((void *)p,
                      _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v)));
  _mm512_storeu_si512((void *)(p + 8),
                      _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1)));
}
static inline vi vi_load_u8(const uint8_t *p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
}
static inline void vi_store_u8(uint8_t *p, vi v) {
  _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(v));
}
/* The first n (< 16) indices as int32 lanes, the rest zero; masked lanes
 * never fault. (load_index's tails: through a stack array, each lane
 * stored on its own and reloaded as a vector, they stalled on store
 * forwarding.) */
#define SP_VI_LOAD_N 1
static inline vi vi_load_i32_n(const int32_t *p, size_t n) {
  return _mm512_maskz_loadu_epi32(sp_avx512_first_n(n), p);
}
static inline vi vi_load_i64_n(const int64_t *p, size_t n) {
  const __mmask8 m0 = (__mmask8)(n >= 8 ? 0xffu : (1u << n) - 1u);
  const __mmask8 m1 = (__mmask8)(n <= 8 ? 0u : (1u << (n - 8)) - 1u);
  const __m256i lo = _mm512_cvtepi64_epi32(_mm512_maskz_loadu_epi64(m0, p));
  const __m256i hi =
      _mm512_cvtepi64_epi32(_mm512_maskz_loadu_epi64(m1, n > 8 ? p + 8 : p));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
static inline vi vi_load_u8_n(const uint8_t *p, size_t n) {
  return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(sp_avx512_first_n(n), p));
}

/* ------------------------------------------------ 16-bit float elements
 * Loads that widen bf16/f16 to f32 and stores that narrow once, bit for
 * bit the scalar conversions of kernels/dtype.h (tests/test_dtype.c):
 * widening is exact and keeps every NaN's payload (a signalling NaN stays
 * signalling); _store_ rounds to nearest even with the canonical NaN,
 * _store_*_keep is MAX's narrowing (a NaN keeps its payload). Sixteen
 * elements at p, unaligned. */
static inline vf vf_load_bf16(const uint16_t *p) {
  const __m512i u =
      _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
}
/* 2*SP_VL bf16 elements at p as their even and odd elements, widened:
 * each 32-bit lane of one load holds an even element in its low half and
 * the odd one after it in its high half (little-endian), so a shift and a
 * mask do both the split and the widening. */
static inline void vf_load_bf16_pairs(const uint16_t *p, vf *even, vf *odd) {
  const __m512i u = _mm512_loadu_si512((const void *)p);
  *even = _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
  *odd = _mm512_castsi512_ps(
      _mm512_and_si512(u, _mm512_set1_epi32((int)0xffff0000u)));
}
/* F16C's conversion (exact for numbers) quietens a signalling NaN: NaN
 * lanes are rebuilt from their bits, sign | 0x7f800000 | payload << 13. */
static inline vf vf_load_f16(const uint16_t *p) {
  const __m256i h = _mm256_loadu_si256((const __m256i *)p);
  const vf f = _mm512_cvtph_ps(h);
  /* The common case, no NaN (a quietened one is still a NaN): as is. */
  const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
  if (!nan)
    return f;
  const __m512i u = _mm512_cvtepu16_epi32(h);
  const __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7fff));
  const __m512i bits = _mm512_or_si512(
      _mm512_and_si512(_mm512_slli_epi32(u, 16),
                       _mm512_set1_epi32((int)0x80000000u)),
      _mm512_or_si512(_mm512_slli_epi32(a, 13), _mm512_set1_epi32(0x70000000)));
  return _mm512_mask_blend_ps(nan, f, _mm512_castsi512_ps(bits));
}
/* vf_load_f16 without the NaN fix-up: exact for every number, and a NaN
 * loads as some NaN (F16C quietens a signalling one). For MAX bodies that
 * test their lanes for NaN themselves and redo such lanes from exact loads. */
static inline vf vf_load_f16_ord(const uint16_t *p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
/* bf16 bits (in the low half of each lane) of v rounded to nearest even;
 * NaN lanes are left to the callers. */
static inline __m512i sp_avx512_bf16_rne(__m512i u) {
  const __m512i odd =
      _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  return _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd),
      16);
}
/* Every store below first tests for NaN lanes: without them (the common
 * case) rounding is all there is. */
static inline void vf_store_bf16(uint16_t *p, vf v) {
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  if (!nan) {
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(sp_avx512_bf16_rne(
                                          _mm512_castps_si512(v))));
    return;
  }
  const __m512i r =
      _mm512_mask_mov_epi32(sp_avx512_bf16_rne(_mm512_castps_si512(v)), nan,
                            _mm512_set1_epi32(0x7fc0));
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(r));
}
/* A NaN keeps its upper 16 bits, unless its payload lies only in the
 * lower ones: then the canonical NaN. */
static inline __m512i sp_avx512_bf16_keep(vf v) {
  const __m512i u = _mm512_castps_si512(v);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i r = sp_avx512_bf16_rne(u);
  if (!nan)
    return r;
  const __m512i hi = _mm512_srli_epi32(u, 16);
  const __mmask16 pay =
      _mm512_mask_test_epi32_mask(nan, hi, _mm512_set1_epi32(0x7f));
  return _mm512_mask_mov_epi32(
      _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7fc0)), pay, hi);
}
static inline void vf_store_bf16_keep(uint16_t *p, vf v) {
  _mm256_storeu_si256((__m256i *)p,
                      _mm512_cvtepi32_epi16(sp_avx512_bf16_keep(v)));
}
/* even and odd interleaved into 2*SP_VL elements at p, each narrowed as
 * by vf_store_bf16_keep: the even result in the low half of a 32-bit lane,
 * the odd one in the high half, one store. */
/* Stores of values that are bf16 values exactly (a widened element, +0,
 * the canonical NaN): the upper halves, which is what rounding would give
 * them, NaN payloads included. SP_VL elements, and 2*SP_VL interleaved as
 * vf_store_bf16_pairs_keep's. */
static inline void vf_store_bf16_exact(uint16_t *p, vf v) {
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(_mm512_srli_epi32(
                                        _mm512_castps_si512(v), 16)));
}
static inline void vf_store_bf16_pairs_exact(uint16_t *p, vf even, vf odd) {
  _mm512_storeu_si512(
      (void *)p,
      _mm512_or_si512(_mm512_srli_epi32(_mm512_castps_si512(even), 16),
                      _mm512_and_si512(_mm512_castps_si512(odd),
                                       _mm512_set1_epi32((int)0xffff0000u))));
}
static inline void vf_store_bf16_pairs_keep(uint16_t *p, vf even, vf odd) {
  _mm512_storeu_si512(
      (void *)p,
      _mm512_or_si512(sp_avx512_bf16_keep(even),
                      _mm512_slli_epi32(sp_avx512_bf16_keep(odd), 16)));
}
/* VCVTPS2PH with round to nearest even is IEEE's narrowing (gradual
 * underflow, overflow to inf, whatever MXCSR says); NaN lanes are set
 * apart. */
static inline void vf_store_f16(uint16_t *p, vf v) {
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m256i h =
      _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  if (!nan) {
    _mm256_storeu_si256((__m256i *)p, h);
    return;
  }
  _mm256_storeu_si256(
      (__m256i *)p, _mm256_mask_blend_epi16(nan, h, _mm256_set1_epi16(0x7e00)));
}
static inline void vf_store_f16_keep(uint16_t *p, vf v) {
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  if (!nan) {
    _mm256_storeu_si256(
        (__m256i *)p,
        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return;
  }
  const __m512i u = _mm512_castps_si512(v);
  const __m512i pay =
      _mm512_and_si512(_mm512_srli_epi32(u, 13), _mm512_set1_epi32(0x3ff));
  const __mmask16 keep = _mm512_mask_test_epi32_mask(nan, pay, pay);
  const __m512i kept = _mm512_or_si512(
      _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x8000)),
      _mm512_or_si512(pay, _mm512_set1_epi32(0x7c00)));
  __m512i r = _mm512_cvtepu16_epi32(
      _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7e00));
  r = _mm512_mask_mov_epi32(r, keep, kept);
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(r));
}

/* ------------------------------------------------ 8-bit integer elements
 * S8/U8 MAX runs the f32 kernels on exact widenings (every 8-bit integer
 * is an f32): int32 lanes to floats and back (truncating: the values are
 * integers), and signed bytes in and out (vi_load_u8/vi_store_u8 above are
 * the unsigned ones). */
static inline vf vf_from_vi(vi v) {
  return _mm512_cvtepi32_ps(v);
}
static inline vi vi_from_vf(vf v) {
  return _mm512_cvttps_epi32(v);
}
/* Rounded to nearest even (MXCSR's mode: the kernels run in the default
 * environment). */
static inline vi vi_round(vf v) {
  return _mm512_cvtps_epi32(v);
}
static inline vi vi_load_s8(const int8_t *p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p));
}
static inline void vi_store_s8(int8_t *p, vi v) {
  _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(v));
}

/* SP_VL int32 lanes x[2i] + x[2i+1] of the 2*SP_VL bytes at p, unsigned
 * or signed (the quantized average's stride-2 windows, tmpl/qavg.c). */
static inline vi vi_pairsum_u8(const uint8_t *p) {
  return _mm512_madd_epi16(
      _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)p)),
      _mm512_set1_epi16(1));
}
static inline vi vi_pairsum_s8(const int8_t *p) {
  return _mm512_madd_epi16(
      _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)p)),
      _mm512_set1_epi16(1));
}

/* ------------------------------------------------ byte lanes
 * SP_VB 8-bit elements in one vector, for the S8/U8 MAX without indices
 * (tmpl/bmax.c): unaligned loads and stores, the lane-wise max, and the
 * max of each pair of neighbours (windows of stride 2 along a row). */
typedef __m512i vb;
#define SP_VB 64
static inline vb vb_load(const void *p) {
  return _mm512_loadu_si512(p);
}
static inline void vb_store(void *p, vb v) {
  _mm512_storeu_si512(p, v);
}
static inline vb vb_max_u8(vb a, vb b) {
  return _mm512_max_epu8(a, b);
}
static inline vb vb_max_s8(vb a, vb b) {
  return _mm512_max_epi8(a, b);
}

/* max(x[2i], x[2i+1]) of the 2*SP_VB bytes x = lo then hi: each pair's
 * max into its even byte, the even bytes packed (their 16-bit lanes are
 * 0..255, which packus keeps; it packs within 128-bit quarters, so the
 * quadwords are put back in order). */
static inline vb sp_vb_evens(vb lo, vb hi) {
  const __m512i m = _mm512_set1_epi16(0x00ff);
  const __m512i p =
      _mm512_packus_epi16(_mm512_and_si512(lo, m), _mm512_and_si512(hi, m));
  return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), p);
}
static inline vb vb_pairmax_u8(vb lo, vb hi) {
  return sp_vb_evens(_mm512_max_epu8(lo, _mm512_srli_epi16(lo, 8)),
                     _mm512_max_epu8(hi, _mm512_srli_epi16(hi, 8)));
}
static inline vb vb_pairmax_s8(vb lo, vb hi) {
  return sp_vb_evens(_mm512_max_epi8(lo, _mm512_srli_epi16(lo, 8)),
                     _mm512_max_epi8(hi, _mm512_srli_epi16(hi, 8)));
}
/* The first n < SP_VB bytes at p (the rest zero), and back (only n
 * written): masked, so nothing past them is touched. */
#define SP_VB_PART 1
static inline __mmask64 sp_avx512_first_n8(size_t n) {
  return _cvtu64_mask64(n >= 64 ? ~0ull : (1ull << n) - 1u);
}
static inline vb vb_load_part(const void *p, size_t n) {
  return _mm512_maskz_loadu_epi8(sp_avx512_first_n8(n), p);
}
static inline void vb_store_part(void *p, vb v, size_t n) {
  _mm512_mask_storeu_epi8(p, sp_avx512_first_n8(n), v);
}

#endif /* SIMDPOOL_VEC_AVX512_H */
