/* execute.c — the public forward/backward entry points: argument checks, then
 * the plan's kernel. */
#include <stdint.h>

#include "internal.h"
#include "kernel_util.h"

/* The valid taps of one window along one axis, and the input position of
 * the first of them. */
typedef struct taps {
  size_t first, count; /* input position of the first valid tap; how many */
  size_t k0;           /* its tap number along the axis */
} taps;

static taps taps_of(size_t o, size_t s, size_t pad, size_t k, size_t d,
                    size_t in) {
  taps t;
  sp_tap_range(o, s, pad, k, d, in, &t.k0, &t.count);
  t.count -= t.k0;
  t.first = o * s + t.k0 * d - pad;
  return t;
}

/* Window columns whose taps are all inside the input share one shape:
 * [lo, hi), computed once per call so the per-output check needs no
 * division. */
typedef struct col_span {
  size_t lo, hi;
} col_span;

static col_span interior(const sp_geom *g) {
  const size_t ew = g->dw * (g->kw - 1) + 1;
  col_span r = {(g->pl + g->sw - 1) / g->sw, 0};
  if (g->w + g->pl >= ew)
    r.hi = (g->w + g->pl - ew) / g->sw + 1;
  if (r.hi > g->ow)
    r.hi = g->ow;
  return r;
}

/* Is flat position v (I32/I64) a valid tap of the window whose first valid
 * tap is at (row.first, col.first)? Rows of a window are dh*w apart and its
 * columns span less than w, so v decomposes uniquely by subtraction. */
static int flat_ok(const sp_geom *g, long long v, taps row, taps col) {
  if (v < 0)
    return 0;
  const size_t base = row.first * g->w + col.first;
  if ((unsigned long long)v < base)
    return 0;
  size_t rel = (size_t)v - base;
  const size_t row_step = g->dh * g->w;
  for (size_t a = 1; a < row.count && rel >= row_step; a++)
    rel -= row_step;
  return rel <= (col.count - 1) * g->dw && (g->dw == 1 || rel % g->dw == 0);
}

/* Are all of p[0..count) below limit (<= 256)? */
static int u8_run_ok(const uint8_t *p, size_t count, size_t limit) {
  if (limit >= 256)
    return 1;
  uint8_t top = 0; /* a max reduction: compilers vectorise it */
  for (size_t i = 0; i < count; i++)
    top = p[i] > top ? p[i] : top;
  return top < limit;
}

/* Flat I32/I64 indices of a plan whose windows never touch padding, with
 * dilation 1 and kernel_h <= 4 (2x2, 3x3, ...): v is valid iff v - base,
 * base being the window's top-left position, is a*w + b with a < kernel_h
 * and b < kernel_w. The kernel row a comes from comparisons, not a
 * division, so the loop is branch-free. Returns 1 when all are valid. */
static int flat_all_interior_ok(const sp_geom *g, const void *indices) {
  const long long w = (long long)g->w, kh = (long long)g->kh;
  const long long kw = (long long)g->kw;
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t planes = nhwc ? g->n : g->n * g->c, lanes = nhwc ? g->c : 1;
  const int i32 = g->index_type == SIMDPOOL_INDEX_I32;
  size_t o = 0;
  int bad = 0;
  for (size_t p = 0; p < planes; p++) {
    for (size_t oy = 0; oy < g->oh; oy++) {
      long long base = (long long)(oy * g->sh) * w;
      for (size_t ox = 0; ox < g->ow; ox++, base += (long long)g->sw) {
        for (size_t l = 0; l < lanes; l++, o++) {
          const long long v = i32 ? (long long)((const int32_t *)indices)[o]
                                  : (long long)((const int64_t *)indices)[o];
          const long long r = v - base;
          const long long a = (r >= w) + (r >= 2 * w) + (r >= 3 * w);
          const long long b = r - a * w;
          bad |= (r < 0) | (a >= kh) | (b >= kw);
        }
      }
    }
  }
  return !bad;
}

/* Checks that every index names a valid tap of its own window, so kernels
 * can trust them. Returns the first bad element or SIZE_MAX. */
static size_t find_bad_index(const sp_geom *g, const void *indices,
                             long long *value) {
  /* U8 tap numbers -> (kernel row, kernel column), without divisions. */
  uint8_t tap_row[256], tap_col[256];
  const size_t ntaps = g->index_type == SIMDPOOL_INDEX_U8 ? g->kh * g->kw : 0;
  for (size_t t = 0, ki = 0, kj = 0; t < ntaps; t++) {
    tap_row[t] = (uint8_t)ki;
    tap_col[t] = (uint8_t)kj;
    if (++kj == g->kw) {
      kj = 0;
      ki++;
    }
  }
  const col_span in = interior(g);
  /* No window touches padding: one tight pass for U8, and for flat indices
   * of undilated windows up to 4 rows high. A failing pass falls through to
   * the general walk, which also finds the first bad element. */
  const size_t eh = g->dh * (g->kh - 1) + 1;
  const int no_padding = g->pt == 0 && (g->oh - 1) * g->sh + eh <= g->h &&
                         in.lo == 0 && in.hi == g->ow;
  if (no_padding && ntaps &&
      u8_run_ok((const uint8_t *)indices, g->n * g->c * g->oh * g->ow, ntaps))
    return SIZE_MAX;
  if (no_padding && !ntaps && g->dh == 1 && g->dw == 1 && g->kh <= 4 &&
      flat_all_interior_ok(g, indices))
    return SIZE_MAX;
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t planes = nhwc ? g->n : g->n * g->c; /* outer loop */
  const size_t lanes = nhwc ? g->c : 1;            /* innermost run */
  size_t o = 0;
  for (size_t pl = 0; pl < planes; pl++) {
    for (size_t oy = 0; oy < g->oh; oy++) {
      const taps row = taps_of(oy, g->sh, g->pt, g->kh, g->dh, g->h);
      for (size_t ox = 0; ox < g->ow; ox++) {
        /* U8 over a full row's interior windows: every tap number below
         * kernel_h*kernel_w names a valid tap, one vectorisable pass. */
        if (ntaps && ox == in.lo && in.lo < in.hi && row.count == g->kh &&
            u8_run_ok((const uint8_t *)indices + o, (in.hi - in.lo) * lanes,
                      ntaps)) {
          o += (in.hi - in.lo) * lanes;
          ox = in.hi - 1;
          continue;
        }
        taps col;
        if (ox >= in.lo && ox < in.hi) {
          col.first = ox * g->sw - g->pl;
          col.count = g->kw;
          col.k0 = 0;
        } else {
          col = taps_of(ox, g->sw, g->pl, g->kw, g->dw, g->w);
        }
        for (size_t l = 0; l < lanes; l++, o++) {
          int ok;
          if (g->index_type == SIMDPOOL_INDEX_U8) {
            const size_t t = ((const uint8_t *)indices)[o];
            *value = (long long)t;
            ok = t < ntaps && tap_row[t] >= row.k0 &&
                 tap_row[t] < row.k0 + row.count && tap_col[t] >= col.k0 &&
                 tap_col[t] < col.k0 + col.count;
          } else {
            *value = g->index_type == SIMDPOOL_INDEX_I32
                         ? (long long)((const int32_t *)indices)[o]
                         : (long long)((const int64_t *)indices)[o];
            ok = flat_ok(g, *value, row, col);
          }
          if (!ok)
            return o;
        }
      }
    }
  }
  return SIZE_MAX;
}

simdpool_status simdpool_forward(const simdpool_plan *plan, const float *x,
                                 float *y, void *indices) {
  if (!plan)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "forward: plan is NULL");
  if (!x || !y)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "forward: %s is NULL",
                   !x ? "x" : "y");
  const int has_index = plan->geom.index_type != SIMDPOOL_INDEX_NONE;
  if (has_index && !indices)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "forward: indices is NULL but the plan writes indices "
                   "(index_type=%d)",
                   (int)plan->geom.index_type);
  if (!has_index && indices)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "forward: indices given but the plan has index_type=NONE");
  const sp_io io = {x, y, indices, NULL, NULL};
  plan->kernel[SP_OP_FWD]->fn(&plan->geom, &io);
  return SIMDPOOL_OK;
}

simdpool_status simdpool_backward(const simdpool_plan *plan, const float *dy,
                                  const void *indices, const float *x,
                                  float *dx) {
  if (!plan)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "backward: plan is NULL");
  if (!dy || !dx)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "backward: %s is NULL",
                   !dy ? "dy" : "dx");
  const sp_geom *g = &plan->geom;
  sp_op op = SP_OP_BWD;
  if (indices) {
    if (g->index_type == SIMDPOOL_INDEX_NONE)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "backward: indices given but the plan has no index type "
                     "(only MAX plans with index_type I32, I64 or U8 have "
                     "indices)");
    long long value = 0;
    const size_t bad = find_bad_index(g, indices, &value);
    if (bad != SIZE_MAX)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "backward: indices[%zu] = %lld names no valid tap of "
                     "its window",
                     bad, value);
    op = SP_OP_BWD_IDX;
  } else if (g->method != SIMDPOOL_AVG && !x) {
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   g->method == SIMDPOOL_MAX
                       ? "backward: MAX needs indices or x, both are NULL"
                       : "backward: LP needs x, it is NULL");
  }
  const sp_io io = {x, NULL, (void *)(uintptr_t)indices, dy, dx};
  plan->kernel[op]->fn(g, &io);
  return SIMDPOOL_OK;
}
