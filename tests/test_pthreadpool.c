/* SPDX-License-Identifier: MIT */
/* test_pthreadpool.c — simdpool_pthreadpool_parallel_for: the parallel entry
 * points over pthreadpools of 1, 2, 3 and 8 threads give the bits of the
 * single-threaded calls, every method, both layouts, every index type. */
#include <pthreadpool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpool_pthreadpool.h"

static int failures;

static void check(int ok, const char *what, const simdpool_desc *d,
                  size_t threads) {
  if (ok)
    return;
  failures++;
  fprintf(stderr,
          "FAIL %s: method %d layout %d %zux%zux%zux%zu k%zu s%zu idx %d, "
          "%zu threads\n",
          what, (int)d->method, (int)d->layout, d->n, d->c, d->h, d->w,
          d->kernel_h, d->stride_h, (int)d->index_type, threads);
}

static void run(const simdpool_desc *d, pthreadpool_t pool, size_t threads) {
  simdpool_plan *plan = NULL;
  if (simdpool_plan_create(d, &plan) != SIMDPOOL_OK) {
    fprintf(stderr, "plan: %s\n", simdpool_last_error());
    failures++;
    return;
  }
  size_t oh, ow;
  simdpool_plan_output_shape(plan, &oh, &ow);
  const size_t nin = d->n * d->c * d->h * d->w, nout = d->n * d->c * oh * ow;
  float *x = malloc(nin * 4), *dy = malloc(nout * 4);
  float *y0 = malloc(nout * 4), *y1 = malloc(nout * 4);
  float *dx0 = malloc(nin * 4), *dx1 = malloc(nin * 4);
  int64_t *ix0 = malloc(nout * 8), *ix1 = malloc(nout * 8);
  for (size_t i = 0; i < nin; i++)
    x[i] = (float)((i * 2654435761u) % 23) - 11.0f;
  for (size_t i = 0; i < nout; i++)
    dy[i] = (float)((i * 40503u) % 9) * 0.5f;
  const int idx = d->index_type != SIMDPOOL_INDEX_NONE;
  const size_t isz = d->index_type == SIMDPOOL_INDEX_I64   ? 8
                     : d->index_type == SIMDPOOL_INDEX_I32 ? 4
                                                           : 1;
  simdpool_forward(plan, x, y0, idx ? ix0 : NULL);
  simdpool_status st = simdpool_forward_parallel(
      plan, x, y1, idx ? ix1 : NULL, simdpool_pthreadpool_parallel_for, pool);
  check(st == SIMDPOOL_OK && !memcmp(y0, y1, nout * 4) &&
            (!idx || !memcmp(ix0, ix1, nout * isz)),
        "forward", d, threads);
  simdpool_backward(plan, dy, NULL, x, dx0);
  st = simdpool_backward_parallel(plan, dy, NULL, x, dx1,
                                  simdpool_pthreadpool_parallel_for, pool);
  check(st == SIMDPOOL_OK && !memcmp(dx0, dx1, nin * 4), "backward", d,
        threads);
  if (idx) {
    simdpool_backward(plan, dy, ix0, NULL, dx0);
    st = simdpool_backward_parallel(plan, dy, ix0, NULL, dx1,
                                    simdpool_pthreadpool_parallel_for, pool);
    check(st == SIMDPOOL_OK && !memcmp(dx0, dx1, nin * 4),
          "backward from indices", d, threads);
  }
  free(x);
  free(dy);
  free(y0);
  free(y1);
  free(dx0);
  free(dx1);
  free(ix0);
  free(ix1);
  simdpool_plan_destroy(plan);
}

int main(void) {
  static const size_t threads[] = {1, 2, 3, 8};
  static const struct {
    simdpool_method m;
    size_t n, c, h, w, k, s, pad;
  } cases[] = {
      {SIMDPOOL_MAX, 1, 32, 64, 64, 2, 2, 0}, /* row blocks in NHWC */
      {SIMDPOOL_MAX, 2, 16, 57, 57, 3, 2, 1}, /* overlapping windows */
      {SIMDPOOL_AVG, 1, 24, 35, 35, 3, 1, 1},
      {SIMDPOOL_AVG, 1, 8, 96, 96, 2, 2, 0},
      {SIMDPOOL_LP, 1, 8, 40, 40, 2, 2, 0},
  };
  size_t runs = 0;
  for (size_t t = 0; t < 4; t++) {
    pthreadpool_t pool = pthreadpool_create(threads[t]);
    if (!pool) {
      fprintf(stderr, "pthreadpool_create(%zu) failed\n", threads[t]);
      return 1;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      for (int l = 0; l < 2; l++) {
        for (int it = 0; it < 4; it++) {
          if (it && cases[i].m != SIMDPOOL_MAX)
            break;
          simdpool_desc d;
          simdpool_desc_init(&d, cases[i].m, (simdpool_layout)l, cases[i].n,
                             cases[i].c, cases[i].h, cases[i].w, cases[i].k,
                             cases[i].k);
          d.stride_h = d.stride_w = cases[i].s;
          d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = cases[i].pad;
          d.index_type = (simdpool_index_type)it;
          run(&d, pool, threads[t]);
          runs++;
        }
      }
    }
    pthreadpool_destroy(pool);
  }
  /* A NULL pthreadpool runs inline. */
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 8, 64, 64, 2, 2);
  run(&d, NULL, 1);
  printf("pthreadpool: %zu configurations over 1, 2, 3 and 8 threads: %s\n",
         runs + 1, failures ? "FAILED" : "bit-identical");
  return failures ? 1 : 0;
}
