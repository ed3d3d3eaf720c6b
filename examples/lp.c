/* SPDX-License-Identifier: MIT */
/* lp.c — power-average (LP) pooling: p = 1, 2 and 3 over a 2x4 map in 2x2
 * windows, checked against the formula y = (sum of |x|^p)^(1/p), and the
 * gradient for p = 2. A simdpool built without SLEEF has no p = 3: its plan
 * is SIMDPOOL_UNSUPPORTED, which a caller can tell from a real failure. */
#include <math.h>
#include <stdio.h>

#include "simdpool.h"

/* One 1x1x2x4 NCHW map: windows {1, -2, 0, 2} and {3, 4, -1, 2}. */
static const float x[8] = {1, -2, 3, 4, 0, 2, -1, 2};

/* LP forward with exponent p into y[2]; its status (printed unless OK). */
static simdpool_status lp_forward(float p, float y[2]) {
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_LP, SIMDPOOL_NCHW, 1, 1, 2, 4, 2, 2);
  d.p = p;
  simdpool_plan *plan = NULL;
  simdpool_status st = simdpool_plan_create(&d, &plan);
  if (st == SIMDPOOL_OK)
    st = simdpool_forward(plan, x, y, NULL);
  if (st != SIMDPOOL_OK)
    fprintf(stderr, "p = %g: %s: %s\n", (double)p, simdpool_status_string(st),
            simdpool_last_error());
  simdpool_plan_destroy(plan);
  return st;
}

int main(void) {
  float y[2];
  int rc = 0;
  /* p = 1: the sum of |x|, exact. */
  rc |= lp_forward(1.0f, y) != SIMDPOOL_OK;
  printf("p = 1: %g %g (expected 5 10)\n", (double)y[0], (double)y[1]);
  rc |= y[0] != 5.0f || y[1] != 10.0f;
  /* p = 2: sqrtf of the sum of squares (9 and 30, exact in f32), so exactly
   * 3 and sqrtf(30). */
  rc |= lp_forward(2.0f, y) != SIMDPOOL_OK;
  printf("p = 2: %.9g %.9g (expected 3 %.9g)\n", (double)y[0], (double)y[1],
         (double)sqrtf(30.0f));
  rc |= y[0] != 3.0f || y[1] != sqrtf(30.0f);
  /* Other p: SLEEF's powf, within an ulp or so of the real value (17 and
   * 100 to the 1/3 here). */
  const simdpool_status st3 = lp_forward(3.0f, y);
  if (st3 == SIMDPOOL_UNSUPPORTED) {
    printf("p = 3: not in this build (configured without SLEEF)\n");
  } else {
    const double want0 = cbrt(17.0), want1 = cbrt(100.0);
    printf("p = 3: %.9g %.9g (expected about %.9g %.9g)\n", (double)y[0],
           (double)y[1], want0, want1);
    rc |= st3 != SIMDPOOL_OK || fabs(y[0] - want0) > 1e-6 * want0 ||
          fabs(y[1] - want1) > 1e-6 * want1;
  }

  /* Backward for p = 2 needs x: dx = (dy / y) * x per tap. With dy = 1 the
   * first window's taps get x / 3. */
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_LP, SIMDPOOL_NCHW, 1, 1, 2, 4, 2, 2);
  simdpool_plan *plan = NULL;
  const float dy[2] = {1, 1};
  float dx[8];
  simdpool_status st = simdpool_plan_create(&d, &plan);
  if (st == SIMDPOOL_OK)
    st = simdpool_backward(plan, dy, NULL, x, dx);
  if (st != SIMDPOOL_OK) {
    fprintf(stderr, "backward: %s: %s\n", simdpool_status_string(st),
            simdpool_last_error());
    rc = 1;
  } else {
    const float g = 1.0f / 3.0f;
    printf("p = 2 backward: dx[0] = %.9g dx[1] = %.9g (expected %.9g %.9g)\n",
           (double)dx[0], (double)dx[1], (double)(g * x[0]),
           (double)(g * x[1]));
    rc |= dx[0] != g * x[0] || dx[1] != g * x[1] || dx[4] != g * x[4];
  }
  simdpool_plan_destroy(plan);
  printf(rc ? "lp: FAILED\n" : "lp: ok\n");
  return rc;
}
