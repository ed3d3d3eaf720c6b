/* execute.c — the public forward/backward entry points: argument checks, then
 * the plan's kernel. */
#include <stdint.h>

#include "internal.h"

/* Element o of the output tensor belongs to plane (n, c) at (oy, ox). */
static void output_coords(const sp_geom *g, size_t o, size_t *n, size_t *c,
                          size_t *oy, size_t *ox) {
  const size_t plane = g->oh * g->ow;
  if (g->layout == SIMDPOOL_NCHW) {
    *ox = o % g->ow;
    *oy = o / g->ow % g->oh;
    *c = o / plane % g->c;
    *n = o / plane / g->c;
  } else {
    *c = o % g->c;
    *ox = o / g->c % g->ow;
    *oy = o / g->c / g->ow % g->oh;
    *n = o / g->c / plane;
  }
}

/* Is position pos (in input coordinates) tap number t of the window that
 * starts at output o along one axis? Returns the tap or -1. */
static ptrdiff_t tap_of(size_t o, size_t s, size_t pad, size_t k, size_t d,
                        size_t pos) {
  const size_t start = o * s; /* padded coordinates */
  const size_t padded = pos + pad;
  if (padded < start || (padded - start) % d != 0)
    return -1;
  const size_t t = (padded - start) / d;
  return t < k ? (ptrdiff_t)t : -1;
}

/* Checks that every index names a valid tap of its own window, so that
 * kernels can trust them. Returns the first bad element or SIZE_MAX. */
static size_t find_bad_index(const sp_geom *g, const void *indices,
                             long long *value) {
  const size_t count = g->n * g->c * g->oh * g->ow;
  for (size_t o = 0; o < count; o++) {
    size_t n, c, oy, ox;
    output_coords(g, o, &n, &c, &oy, &ox);
    int ok;
    if (g->index_type == SIMDPOOL_INDEX_U8) {
      const size_t t = ((const uint8_t *)indices)[o];
      *value = (long long)t;
      const size_t ki = t / g->kw, kj = t % g->kw;
      /* The tap's input position, in padded coordinates. */
      const size_t py = oy * g->sh + ki * g->dh, px = ox * g->sw + kj * g->dw;
      ok = t < g->kh * g->kw && py >= g->pt && py < g->pt + g->h &&
           px >= g->pl && px < g->pl + g->w;
    } else {
      const long long v = g->index_type == SIMDPOOL_INDEX_I32
                              ? (long long)((const int32_t *)indices)[o]
                              : (long long)((const int64_t *)indices)[o];
      *value = v;
      ok = v >= 0 && (unsigned long long)v < (unsigned long long)g->h * g->w;
      if (ok) {
        const size_t iy = (size_t)v / g->w, ix = (size_t)v % g->w;
        ok = tap_of(oy, g->sh, g->pt, g->kh, g->dh, iy) >= 0 &&
             tap_of(ox, g->sw, g->pl, g->kw, g->dw, ix) >= 0;
      }
    }
    if (!ok)
      return o;
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
