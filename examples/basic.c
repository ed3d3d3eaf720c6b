/* SPDX-License-Identifier: MIT */
/* basic.c — simdpool from C: the max pooling layer of a ResNet stem (3x3,
 * stride 2, pad 1) forward with int64 indices and backward from them, buffers
 * sized by the plan, every status checked, and what a rejected descriptor
 * reports. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "simdpool.h"

/* Reports a failed call (status and simdpool_last_error()); nonzero if so. */
static int failed(simdpool_status st, const char *what) {
  if (st == SIMDPOOL_OK)
    return 0;
  fprintf(stderr, "%s: %s: %s\n", what, simdpool_status_string(st),
          simdpool_last_error());
  return 1;
}

int main(void) {
  const size_t n = 2, c = 4, h = 30, w = 30;
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, n, c, h, w, 3, 3);
  d.stride_h = d.stride_w = 2;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.index_type = SIMDPOOL_INDEX_I64; /* what PyTorch trains with */

  simdpool_plan *plan = NULL;
  if (failed(simdpool_plan_create(&d, &plan), "plan"))
    return 1;
  size_t oh, ow;
  simdpool_plan_output_shape(plan, &oh, &ow); /* 15 x 15 */
  printf("max 3x3/s2/p1 NCHW %zux%zux%zux%zu -> %zux%zu on %s (%s)\n", n, c, h,
         w, oh, ow, simdpool_isa_name(simdpool_plan_isa(plan)),
         simdpool_plan_kernel_name(plan, SIMDPOOL_OP_FORWARD));

  /* The plan knows every buffer's size. */
  float *x = malloc(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_X));
  float *y = malloc(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_Y));
  int64_t *idx =
      malloc(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_INDICES));
  float *dy = malloc(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_DY));
  float *dx = malloc(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_DX));
  int rc = !x || !y || !idx || !dy || !dx;
  if (rc)
    fprintf(stderr, "out of memory\n");

  if (!rc) {
    /* A deterministic input without ties: (i * 7919) mod 1000 is one-to-one
     * on each run of 1000 elements. */
    for (size_t i = 0; i < n * c * h * w; i++)
      x[i] = (float)((i * 7919) % 1000);
    rc = failed(simdpool_forward(plan, x, y, idx), "forward");
  }
  if (!rc) {
    /* Check one output by the definition: the largest valid tap of its
     * window, and its index ih * w + iw inside the plane. Plane 5, output
     * row 0 and column 7: rows -1..1 (row -1 is padding), columns 13..15. */
    const size_t plane = 5, oy = 0, ox = 7;
    const float *xp = x + plane * h * w;
    int64_t best = -1;
    for (size_t ih = 0; ih <= 1; ih++)
      for (size_t iw = 2 * ox - 1; iw <= 2 * ox + 1; iw++)
        if (best < 0 || xp[ih * w + iw] > xp[best])
          best = (int64_t)(ih * w + iw);
    const size_t o = plane * oh * ow + oy * ow + ox;
    printf("output %zu: %g at index %" PRId64 " (by hand: %g at %" PRId64 ")\n",
           o, (double)y[o], idx[o], (double)xp[best], best);
    rc = y[o] != xp[best] || idx[o] != best;
  }
  if (!rc) {
    /* Backward from the indices with dy = 1: each output adds 1 to its
     * winner, so dx sums to the number of outputs. */
    for (size_t i = 0; i < n * c * oh * ow; i++)
      dy[i] = 1.0f;
    rc = failed(simdpool_backward(plan, dy, idx, NULL, dx), "backward");
  }
  if (!rc) {
    double sum = 0;
    for (size_t i = 0; i < n * c * h * w; i++)
      sum += dx[i];
    printf("backward (%s): dx sums to %g for %zu outputs\n",
           simdpool_plan_kernel_name(plan, SIMDPOOL_OP_BACKWARD_INDICES), sum,
           n * c * oh * ow);
    rc = sum != (double)(n * c * oh * ow);
  }
  free(x);
  free(y);
  free(idx);
  free(dy);
  free(dx);
  simdpool_plan_destroy(plan);

  /* A descriptor the library rejects: a pad as large as the window. The
   * status says what kind of failure, simdpool_last_error() which field and
   * why. */
  d.pad_top = 3;
  simdpool_plan *bad = NULL;
  const simdpool_status st = simdpool_plan_create(&d, &bad);
  printf("pad_top = 3: %s: %s\n", simdpool_status_string(st),
         simdpool_last_error());
  if (st != SIMDPOOL_INVALID_ARGUMENT || bad != NULL)
    rc = 1;
  printf(rc ? "basic: FAILED\n" : "basic: ok\n");
  return rc;
}
