/* SPDX-License-Identifier: MIT */
/* consumer_pthreadpool.c — an outside program that runs simdpool's parallel
 * entry points over a pthreadpool through the adapter library
 * (simdpool_pthreadpool.h): the results must equal the serial calls bit for
 * bit. Exit status 0 on success. */
#include <pthreadpool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simdpool_pthreadpool.h>

int main(void) {
  /* One 2x16x40x40 NCHW tensor, max 3x3/s2/pad 1 with I64 indices (a ResNet
   * stem), forward and backward from the indices. */
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 2, 16, 40, 40, 3, 3);
  d.stride_h = d.stride_w = 2;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.index_type = SIMDPOOL_INDEX_I64;
  simdpool_plan *plan = NULL;
  simdpool_status st = simdpool_plan_create(&d, &plan);
  if (st != SIMDPOOL_OK) {
    fprintf(stderr, "plan: %s: %s\n", simdpool_status_string(st),
            simdpool_last_error());
    return 1;
  }
  const size_t xb = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_X);
  const size_t yb = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_Y);
  const size_t ib = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_INDICES);
  float *x = malloc(xb), *y1 = malloc(yb), *y2 = malloc(yb);
  float *dx1 = malloc(xb), *dx2 = malloc(xb);
  int64_t *i1 = malloc(ib), *i2 = malloc(ib);
  pthreadpool_t pool = pthreadpool_create(3);
  int failed = !x || !y1 || !y2 || !dx1 || !dx2 || !i1 || !i2 || !pool;
  if (!failed) {
    uint32_t s = 4242;
    for (size_t i = 0; i < xb / sizeof *x; i++) {
      s = s * 1664525u + 1013904223u;
      x[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    failed |= simdpool_forward(plan, x, y1, i1) != SIMDPOOL_OK;
    failed |= simdpool_forward_parallel(plan, x, y2, i2,
                                        simdpool_pthreadpool_parallel_for,
                                        pool) != SIMDPOOL_OK;
    /* y doubles as dy: any values do. */
    failed |= simdpool_backward(plan, y1, i1, NULL, dx1) != SIMDPOOL_OK;
    failed |= simdpool_backward_parallel(plan, y1, i1, NULL, dx2,
                                         simdpool_pthreadpool_parallel_for,
                                         pool) != SIMDPOOL_OK;
    failed |= memcmp(y1, y2, yb) != 0 || memcmp(i1, i2, ib) != 0 ||
              memcmp(dx1, dx2, xb) != 0;
    if (failed)
      fprintf(stderr, "consumer (pthreadpool): %s\n",
              simdpool_last_error()[0] ? simdpool_last_error()
                                       : "parallel results differ");
    else
      printf("consumer (pthreadpool): max 3x3/s2/p1 on %zu pthreadpool "
             "threads == serial (%zu outputs, %s)\n",
             pthreadpool_get_threads_count(pool), yb / sizeof *y1,
             simdpool_plan_kernel_name(plan, SIMDPOOL_OP_FORWARD));
  }
  if (pool)
    pthreadpool_destroy(pool);
  free(x);
  free(y1);
  free(y2);
  free(dx1);
  free(dx2);
  free(i1);
  free(i2);
  simdpool_plan_destroy(plan);
  return failed;
}
