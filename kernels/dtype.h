/* SPDX-License-Identifier: MIT */
/* dtype.h — scalar conversions of the element types
 * (docs/semantics.md#element-types): bf16 and f16 widen to f32 exactly and
 * narrow once with round to nearest even. Integer code only, so that no
 * result depends on the floating-point environment and no NaN is quietened
 * on the way (a float load or store may quieten a signalling NaN on some
 * targets; integer moves never do). The SIMD conversions must agree with
 * these bit for bit; tests/test_dtype.c proves these against the model's. */
#ifndef SIMDPOOL_DTYPE_H
#define SIMDPOOL_DTYPE_H

#include <stdint.h>

/* The canonical quiet NaNs of arithmetic results. */
#define SP_BF16_CANONICAL_NAN ((uint16_t)0x7fc0)
#define SP_F16_CANONICAL_NAN ((uint16_t)0x7e00)

/* bf16 -> f32: the bits shifted up; exact for every pattern, NaN payloads
 * and signalling NaNs included. */
static inline uint32_t sp_bf16_widen_bits(uint16_t h) {
  return (uint32_t)h << 16;
}

/* f16 -> f32, exact: normals rebias the exponent (15 -> 127), subnormals
 * (m * 2^-24) are normalised, inf and NaN keep their payload (shifted up by
 * 13; a signalling NaN stays signalling). */
static inline uint32_t sp_f16_widen_bits(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu)
    return sign | 0x7f800000u | mant << 13;
  if (exp != 0)
    return sign | (exp + 112u) << 23 | mant << 13;
  if (mant == 0)
    return sign;
  /* m * 2^-24 with the leading one of m at bit 10 - s: 2^(-14 - s) * 1.f */
  uint32_t e = 113u; /* f32 exponent field of 2^-14 */
  while (!(mant & 0x400u)) {
    mant <<= 1;
    e--;
  }
  return sign | e << 23 | (mant & 0x3ffu) << 13;
}

/* f32 -> bf16, round to nearest even; a NaN becomes the canonical NaN. A
 * value above the largest bf16 rounds to inf (the carry runs into the
 * exponent); f32 subnormals round like the rest (bf16 has f32's exponent
 * range). */
static inline uint16_t sp_bf16_round_bits(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return SP_BF16_CANONICAL_NAN;
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* f32 -> f16, round to nearest even, gradual underflow, overflow to inf
 * (from 65520 = 65504 + half an ulp up, where the tie goes to the even
 * inf); a NaN becomes the canonical NaN. */
static inline uint16_t sp_f16_round_bits(uint32_t u) {
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return SP_F16_CANONICAL_NAN;
  if (a >= 0x477ff000u) /* 65520 and above, inf */
    return sign | 0x7c00u;
  if (a >= 0x38800000u) /* 2^-14 and above: f16 normals; rebias 127 -> 15 */
    return sign |
           (uint16_t)((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13);
  const uint32_t e = a >> 23;
  if (e < 102u) /* below 2^-25: rounds to zero (2^-25 itself is e = 102) */
    return sign;
  /* a = m * 2^(e - 150) with m = 1.f in 24 bits; in units of 2^-24 that
   * is m >> (126 - e), rounded to nearest even (a carry to 0x400 is the
   * smallest normal, correctly encoded). */
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t s = 126u - e; /* 14 .. 24 */
  return sign | (uint16_t)((m + (1u << (s - 1)) - 1u + ((m >> s) & 1u)) >> s);
}

/* The narrowing of a MAX result (docs/semantics.md#bf16-and-f16): a NaN
 * keeps its payload (it is a widened input's, never computed), everything
 * else rounds. For a widened bf16 or f16 value this gives back its own 16
 * bits; a clamp bound that is not representable rounds. A NaN whose
 * payload lies only in the bits the type lacks (never a widened input's)
 * would become inf: it becomes the canonical NaN instead. */
static inline uint16_t sp_bf16_keep_bits(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (u >> 16) & 0x7fu ? (uint16_t)(u >> 16) : SP_BF16_CANONICAL_NAN;
  return sp_bf16_round_bits(u);
}

static inline uint16_t sp_f16_keep_bits(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (u >> 13) & 0x3ffu ? (uint16_t)(((u >> 16) & 0x8000u) | 0x7c00u |
                                           ((u >> 13) & 0x3ffu))
                              : SP_F16_CANONICAL_NAN;
  return sp_f16_round_bits(u);
}

#endif
