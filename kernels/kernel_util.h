/* SPDX-License-Identifier: MIT */
/* kernel_util.h — small scalar helpers shared by every kernel: the MAX step,
 * canonical NaN, index I/O. */
#ifndef SIMDPOOL_KERNEL_UTIL_H
#define SIMDPOOL_KERNEL_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if SP_HAVE_SLEEF
#include <sleef.h>
#endif

#include "kernel.h"

/* x^y as LP with p other than 1 and 2 defines it: SLEEF's no-FMA
 * Sleef_powf1_u10purec. Without SLEEF plan creation rejects such plans
 * (UNSUPPORTED), so no kernel reaches the NaN below. */
static inline float sp_powf(float x, float y) {
#if SP_HAVE_SLEEF
  return Sleef_powf1_u10purec(x, y);
#else
  (void)x, (void)y;
  return NAN;
#endif
}

/* The MAX step (docs/semantics.md#max-forward): does v replace the max m? */
static inline int sp_max_replaces(float v, float m) {
  return v > m || isnan(v);
}

/* v, or the canonical quiet NaN when v is any NaN. */
static inline float sp_canonical(float v) {
  if (isnan(v)) {
    uint32_t bits = SP_CANONICAL_NAN_BITS;
    memcpy(&v, &bits, sizeof v);
  }
  return v;
}

/* Writes the index of a MAX sp_winner at element o of the indices tensor:
 * the flat input position for I32/I64, the tap number for U8. */
static inline void sp_store_index(void *indices, simdpool_index_type type,
                                  size_t o, size_t flat, size_t tap) {
  switch (type) {
  case SIMDPOOL_INDEX_I32:
    ((int32_t *)indices)[o] = (int32_t)flat;
    break;
  case SIMDPOOL_INDEX_I64:
    ((int64_t *)indices)[o] = (int64_t)flat;
    break;
  case SIMDPOOL_INDEX_U8:
    ((uint8_t *)indices)[o] = (uint8_t)tap;
    break;
  case SIMDPOOL_INDEX_NONE:
    break;
  }
}

/* Reads a flat I32/I64 index (already validated by dispatch). */
static inline size_t sp_load_flat_index(const void *indices,
                                        simdpool_index_type type, size_t o) {
  if (type == SIMDPOOL_INDEX_I32)
    return (size_t)((const int32_t *)indices)[o];
  return (size_t)((const int64_t *)indices)[o];
}

/* ------------------------------------------------ one output at a time
 * The reference computes every output with these; SIMD kernels use them for
 * border windows, so both share one definition of the semantics. */

/* One (n, c) plane of a tensor: element (y, x) sits at base + (y*w + x)*step.
 */
typedef struct sp_plane {
  size_t base, step;
} sp_plane;

static inline sp_plane sp_plane_of(const sp_geom *g, size_t n, size_t c,
                                   size_t h, size_t w) {
  sp_plane p;
  if (g->layout == SIMDPOOL_NCHW) {
    p.base = (n * g->c + c) * h * w;
    p.step = 1;
  } else {
    p.base = n * h * w * g->c + c;
    p.step = g->c;
  }
  return p;
}

/* The planes of x and dx (sp_plane_x) and of y and dy (sp_plane_y), with
 * the plan's NHWC pixel strides (pixel elements apart); sp_plane_of is the
 * dense plane (indices). */
static inline sp_plane sp_plane_px(const sp_geom *g, size_t n, size_t c,
                                   size_t h, size_t w, size_t pixel) {
  sp_plane p = sp_plane_of(g, n, c, h, w);
  if (g->layout == SIMDPOOL_NHWC) {
    p.base = n * h * w * pixel + c;
    p.step = pixel;
  }
  return p;
}

static inline sp_plane sp_plane_x(const sp_geom *g, size_t n, size_t c) {
  return sp_plane_px(g, n, c, g->h, g->w, g->xs);
}

static inline sp_plane sp_plane_y(const sp_geom *g, size_t n, size_t c) {
  return sp_plane_px(g, n, c, g->oh, g->ow, g->ys);
}

/* Input row (or column) of tap i of the window that starts at output o. */
static inline ptrdiff_t sp_tap_pos(size_t o, size_t stride, size_t pad,
                                   size_t i, size_t dil) {
  return (ptrdiff_t)(o * stride) - (ptrdiff_t)pad + (ptrdiff_t)(i * dil);
}

static inline int sp_inside(ptrdiff_t pos, size_t extent) {
  return pos >= 0 && pos < (ptrdiff_t)extent;
}

/* The sp_winner of one MAX window: its input position (iy*w + ix) and its tap
 * number (ki*kw + kj). Scans the valid taps row-major; a later tap replaces
 * the running max when v > max or v is NaN. */
typedef struct sp_winner {
  size_t flat, tap;
} sp_winner;

static inline sp_winner sp_max_window(const sp_geom *g, const float *x,
                                      sp_plane px, size_t oy, size_t ox) {
  sp_winner best = {0, 0};
  float m = 0.0f;
  int found = 0;
  for (size_t ki = 0; ki < g->kh; ki++) {
    ptrdiff_t iy = sp_tap_pos(oy, g->sh, g->pt, ki, g->dh);
    if (!sp_inside(iy, g->h))
      continue;
    for (size_t kj = 0; kj < g->kw; kj++) {
      ptrdiff_t ix = sp_tap_pos(ox, g->sw, g->pl, kj, g->dw);
      if (!sp_inside(ix, g->w))
        continue;
      size_t flat = (size_t)iy * g->w + (size_t)ix;
      float v = x[px.base + flat * px.step];
      if (!found || v > m || isnan(v)) {
        m = v;
        best.flat = flat;
        best.tap = ki * g->kw + kj;
        found = 1;
      }
    }
  }
  return best;
}

/* Number of taps of one axis whose position lies in [lo, hi): the taps sit
 * at start + i*dil for i in [0, k), so the count is the overlap of [0, k)
 * with [ceil((lo - start) / dil), ceil((hi - start) / dil)). */
static inline size_t sp_taps_in(size_t o, size_t stride, size_t pad, size_t k,
                                size_t dil, ptrdiff_t lo, ptrdiff_t hi) {
  const ptrdiff_t start = (ptrdiff_t)(o * stride) - (ptrdiff_t)pad;
  const ptrdiff_t d = (ptrdiff_t)dil, kk = (ptrdiff_t)k;
  ptrdiff_t i0 = 0, i1 = 0;
  if (lo > start)
    i0 = d == 1 ? lo - start : (lo - start + d - 1) / d;
  if (hi > start)
    i1 = d == 1 ? hi - start : (hi - start + d - 1) / d;
  if (i1 > kk)
    i1 = kk;
  return i1 > i0 ? (size_t)(i1 - i0) : 0;
}

/* The taps of window row oy (sp_avg_taps_h) or column ox (sp_avg_taps_w)
 * an AVG divisor counts: the valid ones, or with count_include_pad those
 * inside [-pad_begin, in + pad_end). */
static inline size_t sp_avg_taps_h(const sp_geom *g, size_t oy) {
  const ptrdiff_t lo = g->count_include_pad ? -(ptrdiff_t)g->pt : 0;
  const size_t hi = g->h + (g->count_include_pad ? g->pb : 0);
  return sp_taps_in(oy, g->sh, g->pt, g->kh, g->dh, lo, (ptrdiff_t)hi);
}

static inline size_t sp_avg_taps_w(const sp_geom *g, size_t ox) {
  const ptrdiff_t lo = g->count_include_pad ? -(ptrdiff_t)g->pl : 0;
  const size_t hi = g->w + (g->count_include_pad ? g->pr : 0);
  return sp_taps_in(ox, g->sw, g->pl, g->kw, g->dw, lo, (ptrdiff_t)hi);
}

/* AVG divisor of the window at (oy, ox). */
static inline float sp_avg_divisor(const sp_geom *g, size_t oy, size_t ox) {
  return (float)(sp_avg_taps_h(g, oy) * sp_avg_taps_w(g, ox));
}

/* y of one AVG window: the row-major sum of its valid taps over the divisor,
 * NaN canonical. */
static inline float sp_avg_window(const sp_geom *g, const float *x, sp_plane px,
                                  size_t oy, size_t ox) {
  float acc = 0.0f;
  for (size_t ki = 0; ki < g->kh; ki++) {
    ptrdiff_t iy = sp_tap_pos(oy, g->sh, g->pt, ki, g->dh);
    if (!sp_inside(iy, g->h))
      continue;
    for (size_t kj = 0; kj < g->kw; kj++) {
      ptrdiff_t ix = sp_tap_pos(ox, g->sw, g->pl, kj, g->dw);
      if (sp_inside(ix, g->w))
        acc += x[px.base + ((size_t)iy * g->w + (size_t)ix) * px.step];
    }
  }
  return sp_canonical(acc / sp_avg_divisor(g, oy, ox));
}

/* The valid taps of the window at output o along one axis form the range
 * [*i0, *i1) (non-empty: dispatch rejects windows without input). */
static inline void sp_tap_range(size_t o, size_t stride, size_t pad, size_t k,
                                size_t dil, size_t in, size_t *i0, size_t *i1) {
  const size_t start = o * stride; /* padded coordinates */
  size_t first = 0, end;
  /* Taps at padded positions in [pad, pad + in) are inside; dilation 1
   * needs no division (this runs per output row and column). */
  if (dil == 1) {
    first = start < pad ? pad - start : 0;
    end = pad + in - start;
  } else {
    if (start < pad)
      first = (pad - start + dil - 1) / dil;
    end = (pad + in - start + dil - 1) / dil;
  }
  *i0 = first;
  *i1 = end < k ? end : k;
}

/* t(v) and r(a) of docs/semantics.md#lp-forward for the plan's p. */
static inline float sp_lp_term(float p, float v) {
  if (p == 1.0f)
    return v;
  if (p == 2.0f)
    return v * v;
  return sp_powf(v, p);
}

static inline float sp_lp_root(float p, float a) {
  if (p == 1.0f)
    return a;
  if (p == 2.0f)
    return sqrtf(a);
  return sp_powf(a, 1.0f / p);
}

/* y of one LP window, before NaN canonicalization. */
static inline float sp_lp_window(const sp_geom *g, const float *x, sp_plane px,
                                 size_t oy, size_t ox) {
  float acc = 0.0f;
  for (size_t ki = 0; ki < g->kh; ki++) {
    ptrdiff_t iy = sp_tap_pos(oy, g->sh, g->pt, ki, g->dh);
    if (!sp_inside(iy, g->h))
      continue;
    for (size_t kj = 0; kj < g->kw; kj++) {
      ptrdiff_t ix = sp_tap_pos(ox, g->sw, g->pl, kj, g->dw);
      if (sp_inside(ix, g->w))
        acc += sp_lp_term(
            g->p,
            fabsf(x[px.base + ((size_t)iy * g->w + (size_t)ix) * px.step]));
    }
  }
  return sp_lp_root(g->p, acc);
}

/* sign(x): +1, -1, +0 for ±0, NaN for NaN. */
static inline float sp_lp_sign(float v) {
  if (v > 0.0f)
    return 1.0f;
  if (v < 0.0f)
    return -1.0f;
  if (v == 0.0f)
    return 0.0f;
  return v;
}

/* MAX backward in output order (the NHWC kernels with row_range): undilated
 * windows at least as wide as their stride on both axes, so every pixel up
 * to the last window is covered and a pixel's first covering output is
 * known from its kernel row and column alone. Such kernels can write any
 * band of dx rows [row0, row1) by themselves, so the parallel split may
 * cut a plane into row bands even where windows overlap. */
static inline int sp_bwd_rows_ok(const sp_geom *g) {
  return g->dh == 1 && g->dw == 1 && g->sh <= g->kh && g->sw <= g->kw;
}

#endif /* SIMDPOOL_KERNEL_UTIL_H */
