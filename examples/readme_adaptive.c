/* SPDX-License-Identifier: MIT */
/* readme_adaptive.c — README.md's adaptive example, kept identical by a
 * test. */
#include <stdio.h>

#include "simdpool.h"

int main(void) {
  /* adaptive_avg_pool1d 5 -> 3 (a 1x5 plane): output i pools input
   * [floor(i*5/3), ceil((i+1)*5/3)): {0,1}, {1,2,3}, {3,4}. */
  const float x[5] = {1, 2, 3, 4, 6};
  float y[3];
  simdpool_desc d;
  simdpool_desc_init_adaptive(&d, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 1, 1, 1, 5, 1,
                              1, 3);
  simdpool_plan *plan;
  if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK) {
    fprintf(stderr, "%s\n", simdpool_last_error());
    return 1;
  }
  simdpool_forward(plan, x, y, NULL); /* y = 1.5 3 5 */
  printf("adaptive: y = %g %g %g\n", y[0], y[1], y[2]);
  simdpool_plan_destroy(plan);
  return !(y[0] == 1.5f && y[1] == 3 && y[2] == 5);
}
