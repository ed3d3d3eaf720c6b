/* SPDX-License-Identifier: MIT */
/* consumer.c — a C11 program that uses simdpool as an outside project would
 * (public header and library only): max and average pooling of a 4x4 NHWC
 * map with hand-computed answers, backward from the indices, the built-in
 * thread pool, an error report, and the version. Exit status 0 on success. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simdpool.h>

static int failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "consumer.c:%d: check failed: %s\n", __LINE__, #cond);   \
      failures++;                                                              \
    }                                                                          \
  } while (0)

/* The 4x4 map of the pooling tutorial as channel 0, 10 - x as channel 1,
 * stored NHWC: x[(h * 4 + w) * 2 + c]. */
static void make_input(float x[32]) {
  static const float map[16] = {1, 3, 2, 4, 5, 6, 1, 2, 3, 2, 8, 1, 0, 1, 4, 5};
  for (int i = 0; i < 16; i++) {
    x[2 * i] = map[i];
    x[2 * i + 1] = 10.0f - map[i];
  }
}

static simdpool_plan *make_plan(simdpool_method m, simdpool_index_type it) {
  simdpool_desc d;
  simdpool_desc_init(&d, m, SIMDPOOL_NHWC, 1, 2, 4, 4, 2, 2);
  d.index_type = it;
  simdpool_plan *plan = NULL;
  const simdpool_status st = simdpool_plan_create(&d, &plan);
  if (st != SIMDPOOL_OK) {
    fprintf(stderr, "plan: %s: %s\n", simdpool_status_string(st),
            simdpool_last_error());
    failures++;
  }
  return plan;
}

static void max_forward_backward(const float x[32]) {
  simdpool_plan *plan = make_plan(SIMDPOOL_MAX, SIMDPOOL_INDEX_I32);
  if (!plan)
    return;
  size_t oh = 0, ow = 0;
  simdpool_plan_output_shape(plan, &oh, &ow);
  CHECK(oh == 2 && ow == 2);

  /* Window maxima: channel 0 6 4 / 3 8, channel 1 9 9 / 10 9; indices are
   * ih * 4 + iw of the winner. */
  static const float want_y[8] = {6, 9, 4, 9, 3, 10, 8, 9};
  static const int32_t want_idx[8] = {5, 0, 3, 6, 8, 12, 10, 11};
  float y[8];
  int32_t idx[8];
  CHECK(simdpool_forward(plan, x, y, idx) == SIMDPOOL_OK);
  CHECK(memcmp(y, want_y, sizeof y) == 0);
  CHECK(memcmp(idx, want_idx, sizeof idx) == 0);

  /* The gradient goes to the winner only. */
  static const float dy[8] = {1, 10, 2, 20, 3, 30, 4, 40};
  float dx[32], want_dx[32] = {0};
  for (int i = 0; i < 8; i++)
    want_dx[want_idx[i] * 2 + i % 2] = dy[i];
  CHECK(simdpool_backward(plan, dy, idx, NULL, dx) == SIMDPOOL_OK);
  CHECK(memcmp(dx, want_dx, sizeof dx) == 0);

  printf("max 2x2/s2 (%s): y = %g %g %g %g | %g %g %g %g\n",
         simdpool_isa_name(simdpool_plan_isa(plan)), y[0], y[2], y[4], y[6],
         y[1], y[3], y[5], y[7]);
  simdpool_plan_destroy(plan);
}

static void avg_forward(const float x[32]) {
  simdpool_plan *plan = make_plan(SIMDPOOL_AVG, SIMDPOOL_INDEX_NONE);
  if (!plan)
    return;
  /* (1+3+5+6)/4, (2+4+1+2)/4, (3+2+0+1)/4, (8+1+4+5)/4 and 10 minus each. */
  static const float want_y[8] = {3.75f, 6.25f, 2.25f, 7.75f,
                                  1.5f,  8.5f,  4.5f,  5.5f};
  float y[8];
  CHECK(simdpool_forward(plan, x, y, NULL) == SIMDPOOL_OK);
  CHECK(memcmp(y, want_y, sizeof y) == 0);
  simdpool_plan_destroy(plan);
}

/* A larger case through the built-in pool must equal the serial call bit for
 * bit. */
static void parallel_matches_serial(void) {
  enum { N = 2, C = 5, H = 33, W = 47 };
  const size_t in = (size_t)N * C * H * W;
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NCHW, N, C, H, W, 3, 3);
  d.stride_h = d.stride_w = 2;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  simdpool_plan *plan = NULL;
  CHECK(simdpool_plan_create(&d, &plan) == SIMDPOOL_OK);
  simdpool_threadpool *pool = NULL;
  CHECK(simdpool_threadpool_create(3, &pool) == SIMDPOOL_OK);
  if (!plan || !pool) {
    simdpool_plan_destroy(plan);
    simdpool_threadpool_destroy(pool);
    return;
  }
  CHECK(simdpool_threadpool_threads(pool) == 3);
  size_t oh, ow;
  simdpool_plan_output_shape(plan, &oh, &ow);
  const size_t out = (size_t)N * C * oh * ow;
  float *x = malloc(in * sizeof *x), *dx1 = malloc(in * sizeof *dx1),
        *dx2 = malloc(in * sizeof *dx2), *y1 = malloc(out * sizeof *y1),
        *y2 = malloc(out * sizeof *y2);
  if (x && dx1 && dx2 && y1 && y2) {
    uint32_t s = 12345;
    for (size_t i = 0; i < in; i++) {
      s = s * 1664525u + 1013904223u;
      x[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    CHECK(simdpool_forward(plan, x, y1, NULL) == SIMDPOOL_OK);
    CHECK(simdpool_forward_parallel(plan, x, y2, NULL,
                                    simdpool_threadpool_parallel_for,
                                    pool) == SIMDPOOL_OK);
    CHECK(memcmp(y1, y2, out * sizeof *y1) == 0);
    CHECK(simdpool_backward(plan, y1, NULL, NULL, dx1) == SIMDPOOL_OK);
    CHECK(simdpool_backward_parallel(plan, y1, NULL, NULL, dx2,
                                     simdpool_threadpool_parallel_for,
                                     pool) == SIMDPOOL_OK);
    CHECK(memcmp(dx1, dx2, in * sizeof *dx1) == 0);
    printf("avg 3x3/s2/p1 on %zu threads: %zu outputs == serial\n",
           simdpool_threadpool_threads(pool), out);
  } else {
    CHECK(!"out of memory");
  }
  free(x);
  free(dx1);
  free(dx2);
  free(y1);
  free(y2);
  simdpool_threadpool_destroy(pool);
  simdpool_plan_destroy(plan);
}

/* A zero kernel is a clean INVALID_ARGUMENT with a reason. */
static void error_report(void) {
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 0, 2);
  simdpool_plan *plan = NULL;
  CHECK(simdpool_plan_create(&d, &plan) == SIMDPOOL_INVALID_ARGUMENT);
  CHECK(plan == NULL);
  CHECK(simdpool_last_error()[0] != '\0');
  printf("kernel_h=0: %s\n", simdpool_last_error());
}

int main(void) {
  printf("simdpool %s (header %s, version %d)\n", simdpool_version(),
         SIMDPOOL_VERSION_STRING, SIMDPOOL_VERSION);
  CHECK(strcmp(simdpool_version(), SIMDPOOL_VERSION_STRING) == 0);
  float x[32];
  make_input(x);
  max_forward_backward(x);
  avg_forward(x);
  parallel_matches_serial();
  error_report();
  if (failures) {
    fprintf(stderr, "consumer (C): %d check(s) failed\n", failures);
    return 1;
  }
  printf("consumer (C): all checks passed\n");
  return 0;
}
