/* example_pool.c — pools seed 001's 4x4 example and a random tensor; prints
 * results and the ISA. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "simdpool.h"

static int check(simdpool_status st, const char *what) {
  if (st != SIMDPOOL_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, simdpool_status_string(st),
            simdpool_last_error());
    return 1;
  }
  return 0;
}

/* Max 2x2/stride-2 over the tutorial's 4x4 feature map, with indices, then
 * the backward pass of dA = [[1,2],[3,4]]. */
static int seed_example(void) {
  const float a_prev[16] = {1, 3, 2, 4, 5, 6, 1, 2, 3, 2, 8, 1, 0, 1, 4, 5};
  const float da[4] = {1, 2, 3, 4};
  float a[4], da_prev[16];
  int32_t idx[4];

  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  d.index_type = SIMDPOOL_INDEX_I32;
  simdpool_plan *plan;
  if (check(simdpool_plan_create(&d, &plan), "plan"))
    return 1;
  if (check(simdpool_forward(plan, a_prev, a, idx), "forward") ||
      check(simdpool_backward(plan, da, idx, NULL, da_prev), "backward")) {
    simdpool_plan_destroy(plan);
    return 1;
  }
  printf("seed 4x4 max 2x2/s2 on %s\n",
         simdpool_isa_name(simdpool_plan_isa(plan)));
  printf("A       = [[%g, %g], [%g, %g]]   indices %d %d %d %d\n", a[0], a[1],
         a[2], a[3], idx[0], idx[1], idx[2], idx[3]);
  printf("dA_prev =");
  for (int i = 0; i < 16; i++)
    printf("%s%g", i % 4 ? ", " : (i ? "]\n          [" : " ["), da_prev[i]);
  printf("]\n");
  simdpool_plan_destroy(plan);
  return 0;
}

/* A random NHWC tensor through 3x3/stride-2/pad-1 average pooling. */
static int random_example(void) {
  const size_t n = 1, c = 3, h = 7, w = 7;
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NHWC, n, c, h, w, 3, 3);
  d.stride_h = d.stride_w = 2;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.count_include_pad = 0;
  simdpool_plan *plan;
  if (check(simdpool_plan_create(&d, &plan), "plan"))
    return 1;
  size_t oh, ow;
  simdpool_plan_output_shape(plan, &oh, &ow);
  float *x = malloc(n * c * h * w * sizeof *x);
  float *y = malloc(n * c * oh * ow * sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    simdpool_plan_destroy(plan);
    return 1;
  }
  srand(1);
  for (size_t i = 0; i < n * c * h * w; i++)
    x[i] = (float)(rand() % 2001 - 1000) / 100.0f;
  int rc = check(simdpool_forward(plan, x, y, NULL), "forward");
  if (!rc) {
    printf("random 1x%zux%zux%zu NHWC avg 3x3/s2/pad1 -> %zux%zu on %s\n", h, w,
           c, oh, ow, simdpool_isa_name(simdpool_plan_isa(plan)));
    for (size_t ch = 0; ch < c; ch++) {
      printf("  channel %zu:", ch);
      for (size_t i = 0; i < oh * ow; i++)
        printf(" %7.3f", (double)y[i * c + ch]);
      printf("\n");
    }
  }
  free(x);
  free(y);
  simdpool_plan_destroy(plan);
  return rc;
}

int main(void) {
  printf("simdpool %s\n", simdpool_version());
  return seed_example() || random_example();
}
