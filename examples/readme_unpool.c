/* SPDX-License-Identifier: MIT */
/* readme_unpool.c — README.md's unpooling example, kept identical by a
 * test. */
#include <stdint.h>
#include <stdio.h>

#include "simdpool.h"

int main(void) {
  /* SegNet-style: max 2x2/stride 2 with I64 indices, then max_unpool2d back
   * to 4x4: each maximum returns to where it came from, the rest is 0. */
  const float x[16] = {1, 3, 2, 4, 5, 6, 1, 2, 3, 2, 8, 1, 0, 1, 4, 5};
  float y[4], up[16];
  int64_t idx[4];
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  d.index_type = SIMDPOOL_INDEX_I64;
  simdpool_plan *plan;
  if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK) {
    fprintf(stderr, "%s\n", simdpool_last_error());
    return 1;
  }
  simdpool_forward(plan, x, y, idx); /* y = 6 4 3 8, idx = 5 3 8 10 */
  simdpool_unpool(plan, y, idx, up); /* up[5] = 6, up[3] = 4, ... */
  printf("unpool: up[3] = %g, up[5] = %g, up[8] = %g, up[10] = %g\n", up[3],
         up[5], up[8], up[10]);
  int zeros = 0;
  for (int i = 0; i < 16; i++)
    zeros += up[i] == 0;
  simdpool_plan_destroy(plan);
  return !(up[3] == 4 && up[5] == 6 && up[8] == 3 && up[10] == 8 &&
           zeros == 12);
}
