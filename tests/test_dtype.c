/* SPDX-License-Identifier: MIT */
/* test_dtype.c — the library's scalar conversions of the element types
 * (kernels/dtype.h) against the model's (tests/model.c, double arithmetic
 * from the definitions), bit for bit: every bf16 and f16 pattern widened,
 * narrowed back with and without keeping NaN payloads; f32 values
 * narrowed: every pattern of the bits that decide the rounding in the
 * binades where it changes (subnormal, normal, overflow), every tie, and
 * random ones from all of f32. Plus hand-computed values. */
#include "check_quiet.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "internal.h"
#include "model.h"
#include "test_random.h"

static double scale = 1.0;

/* ------------------------------------------------ the SIMD conversions
 * Each ISA's (sp_convert_table: the vector layer's 16-bit loads and
 * stores, kernels/tmpl/convert.c) against the scalar ones above, which
 * this test proves against the model: every f32 pattern check_narrow sees
 * also goes through a batch that every ISA this CPU runs narrows (both
 * types, both narrowings); the batch's odd length puts values in every
 * lane and through the scalar tails. */
enum { BATCH = 1021 };
static uint32_t batch[BATCH];
static size_t batched;
static long simd_checked;

static long flush_batch(void) {
  long bad = 0;
  float f[BATCH];
  memcpy(f, batch, batched * sizeof f[0]);
  for (size_t e = 0; e < sp_convert_table_size; e++) {
    const sp_convert_entry *cv = &sp_convert_table[e];
    if (!sp_cpu_runs(cv->isa))
      continue;
    for (int keep = 0; keep < 2; keep++) {
      uint16_t b[BATCH], h[BATCH];
      cv->narrow(SIMDPOOL_BF16, keep, f, b, batched);
      cv->narrow(SIMDPOOL_F16, keep, f, h, batched);
      for (size_t i = 0; i < batched; i++) {
        const uint32_t u = batch[i];
        const uint16_t wb = keep ? sp_bf16_keep_bits(u) : sp_bf16_round_bits(u);
        const uint16_t wh = keep ? sp_f16_keep_bits(u) : sp_f16_round_bits(u);
        if (b[i] != wb && bad++ < 5)
          printf("%s bf16%s(0x%08" PRIx32 ") lane %zu: 0x%04x, scalar 0x%04x\n",
                 simdpool_isa_name(cv->isa), keep ? " keep" : "", u, i, b[i],
                 wb);
        if (h[i] != wh && bad++ < 5)
          printf("%s f16%s(0x%08" PRIx32 ") lane %zu: 0x%04x, scalar 0x%04x\n",
                 simdpool_isa_name(cv->isa), keep ? " keep" : "", u, i, h[i],
                 wh);
      }
      simd_checked += (long)batched;
    }
  }
  batched = 0;
  return bad;
}

/* Checks both narrowings of the f32 pattern u; returns the failures. */
static long check_narrow(uint32_t u) {
  long bad = 0;
  batch[batched++] = u;
  if (batched == BATCH)
    bad += flush_batch();
  for (int keep = 0; keep < 2; keep++) {
    const uint16_t lb = keep ? sp_bf16_keep_bits(u) : sp_bf16_round_bits(u);
    const uint16_t mb = model_f32_to_bf16(u, keep);
    const uint16_t lh = keep ? sp_f16_keep_bits(u) : sp_f16_round_bits(u);
    const uint16_t mh = model_f32_to_f16(u, keep);
    if (lb != mb && bad++ < 5)
      printf("bf16%s(0x%08" PRIx32 "): library 0x%04x, model 0x%04x\n",
             keep ? " keep" : "", u, lb, mb);
    if (lh != mh && bad++ < 5)
      printf("f16%s(0x%08" PRIx32 "): library 0x%04x, model 0x%04x\n",
             keep ? " keep" : "", u, lh, mh);
  }
  return bad;
}

START_TEST(widen_every_pattern) {
  for (uint32_t h = 0; h < 0x10000u; h++) {
    ck_assert_msg(sp_bf16_widen_bits((uint16_t)h) ==
                      model_bf16_to_f32_bits((uint16_t)h),
                  "bf16 0x%04x", h);
    ck_assert_msg(sp_f16_widen_bits((uint16_t)h) ==
                      model_f16_to_f32_bits((uint16_t)h),
                  "f16 0x%04x", h);
    /* Back again: a widened value is its own nearest pattern, and keeps
     * its NaN payload; rounding makes NaNs canonical. */
    const uint32_t b = sp_bf16_widen_bits((uint16_t)h);
    const uint32_t f = sp_f16_widen_bits((uint16_t)h);
    const int bnan = (h & 0x7fffu) > 0x7f80u, fnan = (h & 0x7fffu) > 0x7c00u;
    ck_assert_uint_eq(sp_bf16_keep_bits(b), h);
    ck_assert_uint_eq(sp_f16_keep_bits(f), h);
    ck_assert_uint_eq(sp_bf16_round_bits(b), bnan ? 0x7fc0u : h);
    ck_assert_uint_eq(sp_f16_round_bits(f), fnan ? 0x7e00u : h);
    ck_assert_int_eq(check_narrow(b) + check_narrow(f), 0);
  }
  ck_assert_int_eq(flush_batch(), 0);
}
END_TEST

/* Every ISA's widening of every pattern, whole vectors and tails (from
 * offsets 0 and 1), against the scalar one. */
START_TEST(simd_widen_every_pattern) {
  static uint16_t h[0x10000];
  static float f[0x10000];
  for (uint32_t i = 0; i < 0x10000u; i++)
    h[i] = (uint16_t)i;
  size_t runs = 0;
  for (size_t e = 0; e < sp_convert_table_size; e++) {
    const sp_convert_entry *cv = &sp_convert_table[e];
    if (!sp_cpu_runs(cv->isa))
      continue;
    for (int t = 0; t < 2; t++) {
      const simdpool_dtype dt = t ? SIMDPOOL_F16 : SIMDPOOL_BF16;
      for (size_t off = 0; off < 2; off++) {
        memset(f, 0, sizeof f);
        cv->widen(dt, h + off, f + off, 0x10000u - off);
        for (uint32_t i = (uint32_t)off; i < 0x10000u; i++) {
          uint32_t got;
          memcpy(&got, &f[i], sizeof got);
          const uint32_t want = t ? sp_f16_widen_bits((uint16_t)i)
                                  : sp_bf16_widen_bits((uint16_t)i);
          ck_assert_msg(got == want, "%s %s widen 0x%04x: 0x%08x, want 0x%08x",
                        simdpool_isa_name(cv->isa), t ? "f16" : "bf16", i, got,
                        want);
        }
        runs++;
      }
    }
  }
  printf("test_dtype: SIMD widening, %zu runs of every pattern (%zu ISAs "
         "built)\n",
         runs, sp_convert_table_size);
}
END_TEST

/* Every low pattern below the kept bits (17 bits: f16 drops 13, bf16 16,
 * plus the kept lsb) under a few high patterns, both signs, in the binades
 * where rounding differs: f32 subnormals and the smallest normals, f16's
 * subnormal range (2^-25 .. 2^-14, where the rounding position moves),
 * its normals, its overflow (2^15 .. 2^16), f32's largest binade. */
START_TEST(narrow_binades) {
  static const unsigned exps[] = {0,   1,   2,   101, 102, 103, 104, 105,
                                  106, 107, 108, 109, 110, 111, 112, 113,
                                  114, 127, 141, 142, 143, 253, 254, 255};
  static const uint32_t highs[] = {0, 1, 0x20, 0x3f};
  const uint32_t lows = scale >= 1.0 ? 1u << 17 : 1u << 15;
  long bad = 0;
  for (size_t e = 0; e < sizeof exps / sizeof exps[0]; e++)
    for (size_t k = 0; k < sizeof highs / sizeof highs[0]; k++)
      for (uint32_t lo = 0; lo < lows; lo++) {
        const uint32_t m = highs[k] << 17 | (lo * ((1u << 17) / lows));
        const uint32_t u = exps[e] << 23 | m;
        bad += check_narrow(u) + check_narrow(u | 0x80000000u);
      }
  bad += flush_batch();
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Every tie of f16's subnormal and normal rounding positions, with an even
 * and an odd kept bit, and a hair either side. */
START_TEST(narrow_ties) {
  long bad = 0;
  for (unsigned e = 100; e <= 143; e++) {
    const unsigned s = e < 113 ? 126 - e : 13; /* bits dropped */
    if (s > 24)
      continue;
    for (uint32_t kept = 0; kept < 64; kept++) {
      const uint32_t m = (0x800000u | kept << s | 1u << (s - 1)) & 0xffffffu;
      const uint32_t u = e << 23 | (m & 0x7fffffu);
      bad += check_narrow(u) + check_narrow(u - 1) + check_narrow(u + 1);
    }
  }
  for (unsigned e = 0; e < 255; e++) /* bf16: 16 bits dropped */
    for (uint32_t kept = 0; kept < 4; kept++) {
      const uint32_t u = e << 23 | kept << 16 | 0x8000u;
      bad += check_narrow(u) + check_narrow(u - 1) + check_narrow(u + 1);
    }
  bad += flush_batch();
  ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(narrow_random) {
  long bad = 0;
  const long count = (long)(scale * (1 << 21));
  for (long i = 0; i < count; i++)
    bad += check_narrow((uint32_t)rnd());
  bad += flush_batch();
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Hand-computed (f32 bits -> bf16 / f16, RNE): */
START_TEST(narrow_by_hand) {
  static const struct {
    uint32_t f32;
    uint16_t bf16, f16;
  } rows[] = {
      {0x3f800000u, 0x3f80u, 0x3c00u}, /* 1 */
      {0x3f808000u, 0x3f80u, 0x3c04u}, /* 1 + 2^-8: bf16 tie, to even 1 */
      {0x3f818000u, 0x3f82u, 0x3c0cu}, /* 1 + 3*2^-8: bf16 tie up to even */
      {0x3f801000u, 0x3f80u, 0x3c00u}, /* 1 + 2^-11: f16 tie, to even 1 */
      {0x3f803000u, 0x3f80u, 0x3c02u}, /* 1 + 3*2^-11: f16 tie up */
      {0x477fe000u, 0x4780u, 0x7bffu}, /* 65504, f16's largest */
      {0x477fefffu, 0x4780u, 0x7bffu}, /* just below 65520 */
      {0x477ff000u, 0x4780u, 0x7c00u}, /* 65520: tie, to even inf */
      {0x7f7fffffu, 0x7f80u, 0x7c00u}, /* FLT_MAX: inf in both */
      {0x33800000u, 0x3380u, 0x0001u}, /* 2^-24: f16's smallest */
      {0x33000000u, 0x3300u, 0x0000u}, /* 2^-25: tie, to even 0 */
      {0x33000001u, 0x3300u, 0x0001u}, /* a hair above: up */
      {0x33c00000u, 0x33c0u, 0x0002u}, /* 3*2^-25: tie, to even 2 */
      {0x387fe000u, 0x3880u, 0x0400u}, /* 2^-14 - 2^-25: tie, to 2^-14 */
      {0x00000001u, 0x0000u, 0x0000u}, /* 2^-149: below half a bf16 quantum */
      {0x00008000u, 0x0000u, 0x0000u}, /* 2^-134: bf16 tie, to even 0 */
      {0x00018000u, 0x0002u, 0x0000u}, /* 3*2^-134: bf16 tie, to even 2 */
      {0x80000000u, 0x8000u, 0x8000u}, /* -0 */
      {0xff800000u, 0xff80u, 0xfc00u}, /* -inf */
      {0x7fa00001u, 0x7fc0u, 0x7e00u}, /* a NaN: canonical */
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ck_assert_msg(sp_bf16_round_bits(rows[i].f32) == rows[i].bf16,
                  "bf16(0x%08" PRIx32 ") = 0x%04x, by hand 0x%04x", rows[i].f32,
                  sp_bf16_round_bits(rows[i].f32), rows[i].bf16);
    ck_assert_msg(sp_f16_round_bits(rows[i].f32) == rows[i].f16,
                  "f16(0x%08" PRIx32 ") = 0x%04x, by hand 0x%04x", rows[i].f32,
                  sp_f16_round_bits(rows[i].f32), rows[i].f16);
    ck_assert_int_eq(check_narrow(rows[i].f32), 0);
  }
  /* Widening by hand: f16 0x0001 = 2^-24, 0x03ff = 1023 * 2^-24, 0x7c01 a
   * signalling NaN (payload 1 << 13), bf16 0xff81 likewise. */
  ck_assert_uint_eq(sp_f16_widen_bits(0x0001u), 0x33800000u);
  ck_assert_uint_eq(sp_f16_widen_bits(0x03ffu), 0x387fc000u);
  ck_assert_uint_eq(sp_f16_widen_bits(0x7c01u), 0x7f802000u);
  ck_assert_uint_eq(sp_f16_widen_bits(0xfbffu), 0xc77fe000u);
  ck_assert_uint_eq(sp_bf16_widen_bits(0xff81u), 0xff810000u);
  /* Keeping payloads: an f32 NaN whose payload f16 cannot hold. */
  ck_assert_uint_eq(sp_f16_keep_bits(0x7f800001u), 0x7e00u);
  ck_assert_uint_eq(sp_bf16_keep_bits(0xff800001u), 0x7fc0u);
  ck_assert_uint_eq(sp_f16_keep_bits(0xffc02000u), 0xfe01u);
}
END_TEST

/* Every ISA's 8-bit conversions: every S8 and U8 value widened to its
 * float and narrowed back, in runs of every length up to 3 vectors past
 * 256 values (the tails) from offsets 0 and 1. */
START_TEST(simd_8bit_every_value) {
  enum { N = 256 * 3 + 67 };
  size_t runs = 0;
  for (size_t e = 0; e < sp_convert_table_size; e++) {
    const sp_convert_entry *cv = &sp_convert_table[e];
    if (!sp_cpu_runs(cv->isa))
      continue;
    for (int s8 = 0; s8 < 2; s8++) {
      const simdpool_dtype dt = s8 ? SIMDPOOL_S8 : SIMDPOOL_U8;
      uint8_t raw[N + 1], back[N + 1];
      float f[N + 1];
      for (size_t i = 0; i <= N; i++)
        raw[i] = (uint8_t)(i * 7 + 3);
      for (size_t off = 0; off < 2; off++)
        for (size_t n = 0; n + off <= N; n += n < 80 ? 1 : 61) {
          memset(f, 0xff, sizeof f);
          memset(back, 0xa5, sizeof back);
          cv->widen(dt, raw + off, f + off, n);
          cv->narrow(dt, 0, f + off, back + off, n);
          for (size_t i = off; i < off + n; i++) {
            const float want = s8 ? (float)(int8_t)raw[i] : (float)raw[i];
            ck_assert_msg(memcmp(&f[i], &want, sizeof want) == 0 &&
                              back[i] == raw[i],
                          "%s %s value 0x%02x at %zu of %zu: %g, back 0x%02x",
                          simdpool_isa_name(cv->isa), s8 ? "s8" : "u8", raw[i],
                          i, n, (double)f[i], back[i]);
          }
          /* Nothing past the run is written. */
          ck_assert_uint_eq(back[off + n < N ? off + n : N],
                            off + n < N ? 0xa5 : back[N]);
          runs++;
        }
    }
  }
  printf("test_dtype: SIMD 8-bit conversions, %zu runs\n", runs);
}
END_TEST

int main(void) {
  scale = test_random_init();
  printf("test_dtype: seed %" PRIu64 ", scale %g\n", seed, scale);
  Suite *suite = suite_create("dtype");
  TCase *tc = tcase_create("conversions");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, narrow_by_hand);
  tcase_add_test(tc, widen_every_pattern);
  tcase_add_test(tc, narrow_ties);
  tcase_add_test(tc, narrow_binades);
  tcase_add_test(tc, narrow_random);
  tcase_add_test(tc, simd_widen_every_pattern);
  tcase_add_test(tc, simd_8bit_every_value);
  suite_add_tcase(suite, tc);
  SRunner *sr = srunner_create(suite);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  printf("test_dtype: %ld narrowings checked on the SIMD ISAs this CPU "
         "runs\n",
         simd_checked);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
