/* SPDX-License-Identifier: MIT */
/* readme_dtype.c — the README's element-type example: a bf16 average and a
 * quantized u8 one, each checked against its hand-computed result. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "simdpool.h"

/* bf16 is the top half of an f32 (these values are exact in bf16). */
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

int main(void) {
  /* bf16 average of one 2x2 window: the sum 4.5078125 and the quotient
   * 1.126953125 are computed in f32, then rounded once to bf16: 1.125. */
  const uint16_t x[4] = {to_bf16(1.0f), to_bf16(1.0078125f), to_bf16(2.0f),
                         to_bf16(0.5f)};
  uint16_t y[1];
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 1, 2, 2, 2, 2);
  d.dtype = SIMDPOOL_BF16;
  simdpool_plan *plan;
  if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK) {
    fprintf(stderr, "%s\n", simdpool_last_error());
    return 1;
  }
  simdpool_forward(plan, x, y, NULL);
  simdpool_plan_destroy(plan);
  printf("bf16: y = %g (0x%04x)\n", from_bf16(y[0]), (unsigned)y[0]);

  /* Quantized u8 average, windows of 2 (stride 2), real value
   * 0.5 * (q - 128) in and 1.0 * (q - 128) out: m = (0.5 / 1) / 2 = 0.25.
   * Window 0: acc = 3 + 3 = 6, 6 * 0.25 = 1.5, a tie: to even, 2 -> 130.
   * Window 1: acc = -8 + -7 = -15, -3.75 -> -4 -> 124. */
  const uint8_t q[4] = {131, 131, 120, 121};
  uint8_t qy[2];
  simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 1, 1, 4, 1, 2);
  d.dtype = SIMDPOOL_U8;
  d.quant.x_scale = 0.5f;
  d.quant.y_scale = 1.0f;
  d.quant.x_zero_point = d.quant.y_zero_point = 128;
  if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK) {
    fprintf(stderr, "%s\n", simdpool_last_error());
    return 1;
  }
  simdpool_forward(plan, q, qy, NULL);
  simdpool_plan_destroy(plan);
  printf("u8: y = %d %d\n", qy[0], qy[1]);
  return !(y[0] == 0x3f90 && qy[0] == 130 && qy[1] == 124);
}
