/* SPDX-License-Identifier: MIT */
/* readme_example.c — README.md's usage example, kept identical by a test. */
#include <stdint.h>
#include <stdio.h>

#include "simdpool.h"

int main(void) {
  /* One 4x4 NCHW feature map, max 2x2/stride 2 (PyTorch's defaults). */
  const float x[16] = {1, 3, 2, 4, 5, 6, 1, 2, 3, 2, 8, 1, 0, 1, 4, 5};
  float y[4], dx[16];
  const float dy[4] = {1, 2, 3, 4};
  uint8_t taps[4]; /* U8 indices: the winner's position inside its window */

  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  d.index_type = SIMDPOOL_INDEX_U8;

  simdpool_plan *plan;
  simdpool_status st = simdpool_plan_create(&d, &plan);
  if (st != SIMDPOOL_OK) {
    fprintf(stderr, "%s: %s\n", simdpool_status_string(st),
            simdpool_last_error());
    return 1;
  }
  simdpool_forward(plan, x, y, taps);          /* y = 6 4 3 8 */
  simdpool_backward(plan, dy, taps, NULL, dx); /* dx[5]=1 dx[3]=2 ... */
  printf("%s: y = %g %g %g %g\n", simdpool_isa_name(simdpool_plan_isa(plan)),
         y[0], y[1], y[2], y[3]);
  simdpool_plan_destroy(plan);
  return 0;
}
