/* SPDX-License-Identifier: MIT */
/* readme_1d.c — README.md's 1D example, kept identical by a test. */
#include <stdio.h>

#include "simdpool.h"

int main(void) {
  /* avg_pool1d: 2 channels of 5 samples (NCW), kernel 3, stride 2, pad 1,
   * padding not counted (count_include_pad = 0). */
  const float x[10] = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50};
  float y[6];
  simdpool_desc d;
  simdpool_desc_init_1d(&d, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 2, 5, 3);
  d.stride_w = 2;
  d.pad_left = d.pad_right = 1;
  d.count_include_pad = 0;
  simdpool_plan *plan;
  if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK) {
    fprintf(stderr, "%s\n", simdpool_last_error());
    return 1;
  }
  simdpool_forward(plan, x, y, NULL); /* y = 1.5 3 4.5 | 15 30 45 */
  printf("1d: y = %g %g %g | %g %g %g\n", y[0], y[1], y[2], y[3], y[4], y[5]);
  simdpool_plan_destroy(plan);
  return !(y[0] == 1.5f && y[1] == 3 && y[2] == 4.5f && y[3] == 15 &&
           y[4] == 30 && y[5] == 45);
}
