/* SPDX-License-Identifier: MIT */
/* test_no_sleef.c — LP pooling with and without SLEEF (the -Dsleef option).
 *
 * Built with EXPECT_SLEEF=0 (a build without SLEEF): every LP plan with a
 * finite p > 0 other than 1 and 2 is SIMDPOOL_UNSUPPORTED with the message of
 * docs/semantics.md, on every ISA the machine runs and both layouts, and the
 * output pointer is left NULL; p = 1 and p = 2 still pool (hand-computed
 * values, bit for bit), MAX and AVG ignore p, and p <= 0 or NaN stays an
 * INVALID_ARGUMENT. Built with EXPECT_SLEEF=1 the same p are accepted (their
 * values are the model suite's business). */

#include "check_quiet.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "simdpool.h"

#ifndef EXPECT_SLEEF
#error "EXPECT_SLEEF must be 0 or 1 (tests/meson.build sets it)"
#endif

static const float general_p[] = {3.0f,        0.5f,      1.5f,    2.5f,
                                  1e-3f,       100.0f,    FLT_MAX, 1e-45f,
                                  0.99999994f, 1.0000001f};

static const simdpool_isa isas[] = {SIMDPOOL_ISA_AUTO,   SIMDPOOL_ISA_SCALAR,
                                    SIMDPOOL_ISA_SSE41,  SIMDPOOL_ISA_AVX2,
                                    SIMDPOOL_ISA_AVX512, SIMDPOOL_ISA_NEON};

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* LP 2x2 windows over a 1x1x2x4 map (NCHW), or 1x2x2x2 NHWC with c = 2. */
static simdpool_desc lp_desc(float p, simdpool_layout layout,
                             simdpool_isa isa) {
  simdpool_desc d;
  if (layout == SIMDPOOL_NCHW)
    simdpool_desc_init(&d, SIMDPOOL_LP, layout, 1, 1, 2, 4, 2, 2);
  else
    simdpool_desc_init(&d, SIMDPOOL_LP, layout, 1, 2, 2, 2, 2, 2);
  d.p = p;
  d.isa = isa;
  return d;
}

START_TEST(general_p_plans) {
  int tried = 0;
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
    if (isas[i] != SIMDPOOL_ISA_AUTO && !simdpool_isa_supported(isas[i]))
      continue;
    for (int layout = 0; layout < 2; layout++)
      for (size_t k = 0; k < sizeof general_p / sizeof general_p[0]; k++) {
        const float p = general_p[k];
        simdpool_desc d = lp_desc(p, (simdpool_layout)layout, isas[i]);
        simdpool_plan *plan = NULL;
        const simdpool_status st = simdpool_plan_create(&d, &plan);
        tried++;
#if EXPECT_SLEEF
        ck_assert_msg(st == SIMDPOOL_OK, "p=%g isa=%s: %s: %s", (double)p,
                      simdpool_isa_name(isas[i]), simdpool_status_string(st),
                      simdpool_last_error());
        simdpool_plan_destroy(plan);
#else
        char want[256];
        snprintf(want, sizeof want,
                 "p=%g: LP pooling with p other than 1 and 2 needs SLEEF, "
                 "which this build of simdpool was configured without "
                 "(-Dsleef=disabled or not found)",
                 (double)p);
        ck_assert_msg(st == SIMDPOOL_UNSUPPORTED, "p=%g isa=%s: got %s",
                      (double)p, simdpool_isa_name(isas[i]),
                      simdpool_status_string(st));
        ck_assert_str_eq(simdpool_last_error(), want);
        ck_assert_ptr_null(plan);
#endif
      }
  }
  ck_assert_int_ge(tried, 2 * 2 * 10); /* AUTO and SCALAR at least */
}
END_TEST

/* p = 1 and p = 2 need no SLEEF: NCHW windows {3, -4, 0, 0} and
 * {1, 2, 2, -4}: p = 1 gives 7 and 9, p = 2 sqrtf(25) = 5 and sqrtf(25) = 5,
 * all exact. */
START_TEST(special_p_pool) {
  const float x[8] = {3, -4, 1, 2, 0, 0, 2, -4};
  const float want[2][2] = {{7, 9}, {5, 5}};
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
    if (isas[i] != SIMDPOOL_ISA_AUTO && !simdpool_isa_supported(isas[i]))
      continue;
    for (int k = 0; k < 2; k++) {
      simdpool_desc d = lp_desc((float)(k + 1), SIMDPOOL_NCHW, isas[i]);
      simdpool_plan *plan = NULL;
      ck_assert_msg(simdpool_plan_create(&d, &plan) == SIMDPOOL_OK, "%s",
                    simdpool_last_error());
      float y[2] = {-1, -1};
      ck_assert_msg(simdpool_forward(plan, x, y, NULL) == SIMDPOOL_OK, "%s",
                    simdpool_last_error());
      for (int j = 0; j < 2; j++)
        ck_assert_msg(f2u(y[j]) == f2u(want[k][j]),
                      "p=%d isa=%s y[%d]=%a, want %a", k + 1,
                      simdpool_isa_name(isas[i]), j, (double)y[j],
                      (double)want[k][j]);
      simdpool_plan_destroy(plan);
    }
  }
}
END_TEST

/* p is read only by LP, and the finite-p > 0 rule still comes first. */
START_TEST(other_rules_unchanged) {
  const simdpool_method methods[2] = {SIMDPOOL_MAX, SIMDPOOL_AVG};
  for (int m = 0; m < 2; m++) {
    simdpool_desc d;
    simdpool_desc_init(&d, methods[m], SIMDPOOL_NCHW, 1, 1, 2, 4, 2, 2);
    d.p = 3.0f;
    simdpool_plan *plan = NULL;
    ck_assert_msg(simdpool_plan_create(&d, &plan) == SIMDPOOL_OK, "%s",
                  simdpool_last_error());
    simdpool_plan_destroy(plan);
  }
  const float bad[3] = {0.0f, -3.0f, NAN};
  for (int k = 0; k < 3; k++) {
    simdpool_desc d = lp_desc(bad[k], SIMDPOOL_NCHW, SIMDPOOL_ISA_AUTO);
    simdpool_plan *plan = NULL;
    ck_assert_int_eq(simdpool_plan_create(&d, &plan),
                     SIMDPOOL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(
        strstr(simdpool_last_error(), "LP pooling needs a finite p > 0"));
    ck_assert_ptr_null(plan);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create(EXPECT_SLEEF ? "lp-with-sleef" : "lp-without-sleef");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, general_p_plans);
  tcase_add_test(tc, special_p_pool);
  tcase_add_test(tc, other_rules_unchanged);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
