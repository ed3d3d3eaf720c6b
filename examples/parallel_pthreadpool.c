/* SPDX-License-Identifier: MIT */
/* parallel_pthreadpool.c — simdpool's parallel entry points over a pthreadpool
 * (the pool XNNPACK uses) through libsimdpool_pthreadpool: a caller that
 * already has a pthreadpool_t passes it with simdpool_pthreadpool_parallel_for.
 */
#include <pthreadpool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpool_pthreadpool.h"

int main(void) {
  /* NCHW 8x64x56x56, max 2x2/stride 2 writing U8 indices (the tap inside
   * each window). */
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 8, 64, 56, 56, 2, 2);
  d.index_type = SIMDPOOL_INDEX_U8;
  simdpool_plan *plan = NULL;
  simdpool_status st = simdpool_plan_create(&d, &plan);
  if (st != SIMDPOOL_OK) {
    fprintf(stderr, "plan: %s: %s\n", simdpool_status_string(st),
            simdpool_last_error());
    return 1;
  }
  pthreadpool_t pool = pthreadpool_create(0); /* 0: one thread per CPU */
  const size_t xb = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_X);
  const size_t yb = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_Y);
  const size_t ib = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_INDICES);
  float *x = malloc(xb), *y1 = malloc(yb), *y2 = malloc(yb);
  uint8_t *i1 = malloc(ib), *i2 = malloc(ib);
  int rc = !pool || !x || !y1 || !y2 || !i1 || !i2;
  if (!rc) {
    for (size_t i = 0; i < xb / sizeof *x; i++)
      x[i] = (float)((i * 2654435761u) % 10007);
    st = simdpool_forward(plan, x, y1, i1);
    if (st == SIMDPOOL_OK)
      st = simdpool_forward_parallel(plan, x, y2, i2,
                                     simdpool_pthreadpool_parallel_for, pool);
    if (st != SIMDPOOL_OK) {
      fprintf(stderr, "forward: %s: %s\n", simdpool_status_string(st),
              simdpool_last_error());
      rc = 1;
    }
  }
  if (!rc) {
    rc = memcmp(y1, y2, yb) != 0 || memcmp(i1, i2, ib) != 0;
    printf("max 2x2/s2 NCHW with U8 indices on %zu pthreadpool threads: %s "
           "the single-threaded call\n",
           pthreadpool_get_threads_count(pool),
           rc ? "DIFFERS FROM" : "matches");
  }
  free(x);
  free(y1);
  free(y2);
  free(i1);
  free(i2);
  if (pool)
    pthreadpool_destroy(pool);
  simdpool_plan_destroy(plan);
  printf(rc ? "parallel_pthreadpool: FAILED\n" : "parallel_pthreadpool: ok\n");
  return rc;
}
