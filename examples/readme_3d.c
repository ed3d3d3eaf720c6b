/* SPDX-License-Identifier: MIT */
/* readme_3d.c — README.md's 3D example, kept identical by a test. */
#include <stdint.h>
#include <stdio.h>

#include "simdpool.h"

int main(void) {
  /* One channel of 2 slices of 2x4 (NCDHW), max 2x2x2/stride 2, with the
   * I64 indices PyTorch's max_pool3d returns: (id*h + ih)*w + iw. */
  const float x[16] = {1, 2, 3, 4, 5, 6, 7, 8,  /* slice 0 */
                       9, 1, 2, 3, 0, 4, 9, 9}; /* slice 1 */
  float y[2];
  int64_t idx[2];
  simdpool_desc d;
  simdpool_desc_init_3d(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 2, 2, 4, 2, 2,
                        2);
  d.index_type = SIMDPOOL_INDEX_I64;
  simdpool_plan *plan;
  if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK) {
    fprintf(stderr, "%s\n", simdpool_last_error());
    return 1;
  }
  simdpool_forward(plan, x, y, idx); /* y = 9 9, idx = 8 14 (first of ties) */
  printf("3d: y = %g %g, indices = %lld %lld\n", y[0], y[1], (long long)idx[0],
         (long long)idx[1]);
  simdpool_plan_destroy(plan);
  return !(y[0] == 9 && y[1] == 9 && idx[0] == 8 && idx[1] == 14);
}
