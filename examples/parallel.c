/* SPDX-License-Identifier: MIT */
/* parallel.c — simdpool's parallel entry points over the built-in thread pool:
 * an average pooling layer forward and backward on every CPU, bit-identical to
 * the single-threaded calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpool.h"

static int failed(simdpool_status st, const char *what) {
  if (st == SIMDPOOL_OK)
    return 0;
  fprintf(stderr, "%s: %s: %s\n", what, simdpool_status_string(st),
          simdpool_last_error());
  return 1;
}

int main(void) {
  /* NHWC 4x56x56x64, average 3x3, stride 1, pad 1 (an Inception branch). */
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NHWC, 4, 64, 56, 56, 3, 3);
  d.stride_h = d.stride_w = 1;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.count_include_pad = 0;
  simdpool_plan *plan = NULL;
  if (failed(simdpool_plan_create(&d, &plan), "plan"))
    return 1;
  /* threads = 0: one per online CPU. The calling thread is one of them. */
  simdpool_threadpool *pool = NULL;
  if (failed(simdpool_threadpool_create(0, &pool), "thread pool")) {
    simdpool_plan_destroy(plan);
    return 1;
  }
  const size_t xb = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_X);
  const size_t yb = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_Y);
  float *x = malloc(xb), *y1 = malloc(yb), *y2 = malloc(yb);
  float *dx1 = malloc(xb), *dx2 = malloc(xb);
  int rc = !x || !y1 || !y2 || !dx1 || !dx2;
  if (!rc) {
    for (size_t i = 0; i < xb / sizeof *x; i++)
      x[i] = (float)(i % 977) / 977.0f - 0.5f;
    /* Serial, then the same calls spread over the pool. */
    rc = failed(simdpool_forward(plan, x, y1, NULL), "forward") ||
         failed(simdpool_forward_parallel(
                    plan, x, y2, NULL, simdpool_threadpool_parallel_for, pool),
                "forward_parallel") ||
         failed(simdpool_backward(plan, y1, NULL, NULL, dx1), "backward") ||
         failed(simdpool_backward_parallel(plan, y1, NULL, NULL, dx2,
                                           simdpool_threadpool_parallel_for,
                                           pool),
                "backward_parallel");
  }
  if (!rc) {
    const int same_y = memcmp(y1, y2, yb) == 0;
    const int same_dx = memcmp(dx1, dx2, xb) == 0;
    printf("avg 3x3/s1/p1 NHWC on %zu threads (%s): forward %s, backward %s "
           "the single-threaded bits\n",
           simdpool_threadpool_threads(pool),
           simdpool_isa_name(simdpool_plan_isa(plan)),
           same_y ? "matches" : "DIFFERS FROM",
           same_dx ? "matches" : "DIFFERS FROM");
    rc = !same_y || !same_dx;
  }
  free(x);
  free(y1);
  free(y2);
  free(dx1);
  free(dx2);
  simdpool_threadpool_destroy(pool);
  simdpool_plan_destroy(plan);
  printf(rc ? "parallel: FAILED\n" : "parallel: ok\n");
  return rc;
}
