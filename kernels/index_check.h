/* SPDX-License-Identifier: MIT */
/* index_check.h — the validity test of flat I32/I64 indices (the pass
 * that lets MAX backward trust them), plain C that the compiler vectorises:
 * included once per SIMD ISA file (SP_FN from its vector layer) so it runs
 * at that ISA's width, and once by dispatch (execute.c, the baseline
 * instantiation) next to the general walk that finds the first bad index.
 * It decides no policy: it only says "all valid" or "not shown valid". */
#ifndef SIMDPOOL_INDEX_CHECK_H
#define SIMDPOOL_INDEX_CHECK_H

#include <stdint.h>

#include "kernel.h"
#include "kernel_util.h"

/* The valid ic_taps of one window along one axis, and the input position of
 * the first of them. */
typedef struct ic_taps {
  size_t first, count; /* input position of the first valid tap; how many */
  size_t k0;           /* its tap number along the axis */
} ic_taps;

static inline ic_taps ic_taps_of(size_t o, size_t s, size_t pad, size_t k,
                                 size_t d, size_t in) {
  ic_taps t;
  sp_tap_range(o, s, pad, k, d, in, &t.k0, &t.count);
  t.count -= t.k0;
  t.first = o * s + t.k0 * d - pad;
  return t;
}

/* Window columns whose ic_taps are all inside the input share one shape:
 * [lo, hi), computed once per call so the per-output check needs no
 * division. */
typedef struct ic_span {
  size_t lo, hi;
} ic_span;

static inline ic_span ic_interior(const sp_geom *g) {
  const size_t ew = g->dw * (g->kw - 1) + 1;
  ic_span r = {(g->pl + g->sw - 1) / g->sw, 0};
  if (g->w + g->pl >= ew)
    r.hi = (g->w + g->pl - ew) / g->sw + 1;
  if (r.hi > g->ow)
    r.hi = g->ow;
  return r;
}

/* Are all of p[0..count) below limit (<= 256)? A max reduction, which
 * compilers vectorise: U8 tap numbers of whole windows. */
static inline int ic_u8_below(const uint8_t *p, size_t count, size_t limit) {
  if (limit >= 256)
    return 1;
  uint8_t top = 0;
  for (size_t i = 0; i < count; i++)
    top = p[i] > top ? p[i] : top;
  return top < limit;
}

#endif /* SIMDPOOL_INDEX_CHECK_H */

#ifdef SP_FN
/* The vectorised check of flat I32/I64 indices, for undilated windows on
 * planes below 2^31 elements (the SIMD kernels' limit too). A run is n
 * outputs whose windows share their valid kernel rows and columns: na rows
 * of bn columns each, the first valid tap of the run's first output at
 * flat position q, later outputs step elements further (NCHW: along a row;
 * NHWC: the c channels of one pixel, step 0). v is valid iff r = v - q -
 * i*step is a*w + b with a < na and b < bn. Everything is 32-bit and the
 * kernel row comes from comparisons, not a division, so the compiler
 * vectorises each run. */
typedef struct ic_flat_run {
  uint32_t q, step, w, na, bn;
} ic_flat_run;

/* The low and high 32-bit halves of element i (little-endian int64: a
 * valid index is below 2^31, so its high half is 0 and its low half a
 * non-negative int32). */
#define FLAT_LO(v, i64, i) ((v)[(i64) ? 2 * (i) : (i)])
#define FLAT_HI(v, i64, i) ((i64) ? (v)[2 * (i) + 1] : 0)

/* 1 when every index of the run is valid. Windows that span whole rows
 * (bn == w) make one contiguous range; otherwise at most 4 kernel rows. */
static inline int ic_flat_run_ok(const int32_t *v, int i64, size_t n,
                                 const ic_flat_run *f) {
  int ok = 1;
  if (f->bn == f->w) {
    const uint32_t span = f->na * f->w; /* < 2^31: inside the plane */
    for (size_t i = 0; i < n; i++) {
      const int32_t lo = FLAT_LO(v, i64, i), hi = FLAT_HI(v, i64, i);
      const uint32_t r = (uint32_t)lo - f->q - (uint32_t)i * f->step;
      ok &= (hi == 0) & (lo >= 0) & (r < span);
    }
    return ok;
  }
  const uint32_t w = f->w, bn = f->bn;
  const int m1 = f->na > 1, m2 = f->na > 2, m3 = f->na > 3; /* rows 1..3 */
  for (size_t i = 0; i < n; i++) {
    const int32_t lo = FLAT_LO(v, i64, i), hi = FLAT_HI(v, i64, i);
    const uint32_t r = (uint32_t)lo - f->q - (uint32_t)i * f->step;
    const int hit = (r < bn) | (m1 & (r - w < bn)) | (m2 & (r - 2 * w < bn)) |
                    (m3 & (r - 3 * w < bn));
    ok &= (hi == 0) & (lo >= 0) & hit;
  }
  return ok;
}

/* ic_flat_run_ok's verdicts ANDed into acc[i] instead of reduced: NHWC
 * runs are one pixel's c channels, and a reduction per pixel cost more
 * than its compares; the caller reduces acc once per image. */
static inline void ic_flat_run_acc(int32_t *acc, const int32_t *v, int i64,
                                   size_t n, const ic_flat_run *f) {
  const uint32_t w = f->w, bn = f->bn, span = f->bn == f->w ? f->na * w : 0;
  const int m1 = f->na > 1, m2 = f->na > 2, m3 = f->na > 3; /* rows 1..3 */
  for (size_t i = 0; i < n; i++) {
    const int32_t lo = FLAT_LO(v, i64, i), hi = FLAT_HI(v, i64, i);
    const uint32_t r = (uint32_t)lo - f->q - (uint32_t)i * f->step;
    const int hit = (r < bn) | (m1 & (r - w < bn)) | (m2 & (r - 2 * w < bn)) |
                    (m3 & (r - 3 * w < bn)) | (r < span);
    acc[i] &= (hi == 0) & (lo >= 0) & hit;
  }
}

/* NCHW planes of at most IC_PLANE_MAX outputs are checked in one run per
 * plane against per-output window tables built once per call, so that
 * small planes (7x7 .. 28x28) are not cut into runs of a few outputs. */
#define IC_PLANE_MAX 1024

typedef struct ic_plane {
  /* per output: first valid tap's flat position, valid columns, valid rows,
   * and the whole-rows span na*w when the columns span the row (else 0) */
  uint32_t q[IC_PLANE_MAX], bn[IC_PLANE_MAX], na[IC_PLANE_MAX],
      span[IC_PLANE_MAX];
} ic_plane;

/* 0 when an output's window has more than 4 valid rows that do not span
 * whole rows (the tables cannot say it). */
static inline int ic_plane_init(const sp_geom *g, ic_plane *t) {
  size_t o = 0;
  for (size_t oy = 0; oy < g->oh; oy++) {
    const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, 1, g->h);
    for (size_t ox = 0; ox < g->ow; ox++, o++) {
      const ic_taps col = ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
      const int full = col.count == g->w;
      if (row.count > 4 && !full)
        return 0;
      t->q[o] = (uint32_t)(row.first * g->w + col.first);
      t->bn[o] = (uint32_t)col.count;
      t->na[o] = (uint32_t)row.count;
      t->span[o] = full ? (uint32_t)(row.count * g->w) : 0;
    }
  }
  return 1;
}

/* 1 when the n = oh*ow indices of one plane are valid (ic_flat_run_ok's
 * rule, per output from the tables). */
static inline int ic_plane_ok(const int32_t *v, int i64, size_t n,
                              const ic_plane *t, uint32_t w) {
  int ok = 1;
  for (size_t i = 0; i < n; i++) {
    const int32_t lo = FLAT_LO(v, i64, i), hi = FLAT_HI(v, i64, i);
    const uint32_t r = (uint32_t)lo - t->q[i], bn = t->bn[i], na = t->na[i];
    const int hit = (r < bn) | ((na > 1) & (r - w < bn)) |
                    ((na > 2) & (r - 2 * w < bn)) |
                    ((na > 3) & (r - 3 * w < bn)) | (r < t->span[i]);
    ok &= (hi == 0) & (lo >= 0) & hit;
  }
  return ok;
}

/* Larger NCHW planes: one run per output row, against per-column tables
 * (first valid column, valid columns) and the row's own first valid tap
 * qrow and valid rows na. The verdicts go into acc[i] (column i), which the
 * caller reduces once per plane: a reduction per row of a few dozen
 * outputs cost more than the row's compares. */
static inline void ic_row_acc(int32_t *acc, const int32_t *v, int i64, size_t n,
                              const uint32_t *qcol, const uint32_t *bncol,
                              uint32_t qrow, uint32_t na, uint32_t w) {
  const int m1 = na > 1, m2 = na > 2, m3 = na > 3;
  const uint32_t span = na * w;
  for (size_t i = 0; i < n; i++) {
    const int32_t lo = FLAT_LO(v, i64, i), hi = FLAT_HI(v, i64, i);
    const uint32_t r = (uint32_t)lo - qrow - qcol[i], bn = bncol[i];
    const int hit = (r < bn) | (m1 & (r - w < bn)) | (m2 & (r - 2 * w < bn)) |
                    (m3 & (r - 3 * w < bn)) | ((bn == w) & (r < span));
    acc[i] &= (hi == 0) & (lo >= 0) & hit;
  }
}

/* 1: every flat index is valid; 0: some index is bad, or the geometry is
 * not one this pass decides (dilation, taller windows that do not span
 * whole rows, planes of 2^31 elements or more); the general walk then
 * decides and finds the first bad element. Covers every padding. */
int SP_FN(sp_flat_indices_ok)(const sp_geom *g, const void *indices) {
  const ic_span in_ = ic_interior(g), *in = &in_;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  (void)g, (void)indices;
  return 0;
#else
  if (g->dh != 1 || g->dw != 1 || g->h * g->w > (size_t)INT32_MAX)
    return 0;
  if (g->kh > 4 && g->kw < g->w)
    return 0;
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const int i64 = g->index_type == SIMDPOOL_INDEX_I64;
  const size_t planes = nhwc ? g->n : g->n * g->c, lanes = nhwc ? g->c : 1;
  const int32_t *v = indices; /* in 32-bit halves for I64 */
  const size_t halves = i64 ? 2 : 1;
  int ok = 1;
  if (!nhwc && g->oh * g->ow <= IC_PLANE_MAX) {
    ic_plane t;
    if (!ic_plane_init(g, &t))
      return 0;
    const size_t n = g->oh * g->ow;
    for (size_t pl = 0; pl < planes && ok; pl++, v += n * halves)
      ok &= ic_plane_ok(v, i64, n, &t, (uint32_t)g->w);
    return ok;
  }
  if (!nhwc && g->ow <= IC_PLANE_MAX) {
    uint32_t qcol[IC_PLANE_MAX], bncol[IC_PLANE_MAX];
    int32_t acc[IC_PLANE_MAX];
    for (size_t ox = 0; ox < g->ow; ox++) {
      const ic_taps col = ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
      qcol[ox] = (uint32_t)col.first;
      bncol[ox] = (uint32_t)col.count;
      acc[ox] = 1;
    }
    for (size_t pl = 0; pl < planes && ok; pl++) {
      for (size_t oy = 0; oy < g->oh; oy++, v += g->ow * halves) {
        const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, 1, g->h);
        if (row.count > 4 && g->kw < g->w)
          return 0;
        ic_row_acc(acc, v, i64, g->ow, qcol, bncol,
                   (uint32_t)(row.first * g->w), (uint32_t)row.count,
                   (uint32_t)g->w);
      }
      for (size_t ox = 0; ox < g->ow; ox++)
        ok &= acc[ox];
    }
    return ok;
  }
  if (nhwc && g->c <= IC_PLANE_MAX) {
    int32_t acc[IC_PLANE_MAX];
    for (size_t ch = 0; ch < g->c; ch++)
      acc[ch] = 1;
    for (size_t pl = 0; pl < planes && ok; pl++) {
      for (size_t oy = 0; oy < g->oh; oy++) {
        const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, 1, g->h);
        if (row.count > 4 && g->kw < g->w)
          return 0;
        ic_flat_run f = {0, 0, (uint32_t)g->w, (uint32_t)row.count, 0};
        for (size_t ox = 0; ox < g->ow; ox++, v += g->c * halves) {
          const int inner = ox >= in->lo && ox < in->hi;
          const ic_taps col =
              inner ? (ic_taps){ox * g->sw - g->pl, g->kw, 0}
                    : ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
          f.q = (uint32_t)(row.first * g->w + col.first);
          f.bn = (uint32_t)col.count;
          ic_flat_run_acc(acc, v, i64, g->c, &f);
        }
      }
      for (size_t ch = 0; ch < g->c; ch++)
        ok &= acc[ch];
    }
    return ok;
  }
  for (size_t pl = 0; pl < planes && ok; pl++) {
    for (size_t oy = 0; oy < g->oh && ok; oy++) {
      const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, 1, g->h);
      if (row.count > 4 && g->kw < g->w)
        return 0;
      ic_flat_run f = {0, 0, (uint32_t)g->w, (uint32_t)row.count, 0};
      for (size_t ox = 0; ox < g->ow;) {
        /* Interior columns: one run in NCHW; border ones a run each. */
        const int inner = ox >= in->lo && ox < in->hi;
        const ic_taps col = inner
                                ? (ic_taps){ox * g->sw - g->pl, g->kw, 0}
                                : ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
        const size_t cols = inner && !nhwc ? in->hi - ox : 1;
        f.q = (uint32_t)(row.first * g->w + col.first);
        f.bn = (uint32_t)col.count;
        f.step = nhwc ? 0 : (uint32_t)g->sw;
        ok &= ic_flat_run_ok(v, i64, cols * lanes, &f);
        v += cols * lanes * halves;
        ox += cols;
      }
    }
  }
  return ok;
#endif
}

/* U8 tap numbers t (window positions, padding included), NHWC: t names a
 * valid tap iff t < kh*kw and its kernel row a = t / kw and column
 * b = t - a*kw lie in the window's valid rows [ka, ka + na) and columns
 * [kb, kb + nb); a comes from a multiply: for t < 256 and kw <= 256,
 * (t * (2^16/kw + 1)) >> 16 is floor(t / kw). One run per pixel, over its
 * c channels. (NCHW rows are too short for this loop's vectors: the
 * general walk, with its own pass over interior columns, is faster.) */
static inline int ic_u8_run_ok(const uint8_t *v, size_t n, uint32_t kb,
                               uint32_t nb, uint32_t ka, uint32_t na,
                               uint32_t kw, uint32_t taps) {
  const uint32_t mul = 65536u / kw + 1u;
  int ok = 1;
  for (size_t i = 0; i < n; i++) {
    const uint32_t t = v[i], a = (t * mul) >> 16, b = t - a * kw;
    ok &= (t < taps) & (a - ka < na) & (b - kb < nb);
  }
  return ok;
}

/* 1: every U8 index names a valid tap of its window; 0: one does not, or
 * the pass does not decide (NCHW). Any padding and dilation. */
int SP_FN(sp_u8_indices_ok)(const sp_geom *g, const void *indices) {
  if (g->layout != SIMDPOOL_NHWC || g->kh * g->kw > 256)
    return 0;
  const uint32_t kw = (uint32_t)g->kw, taps = (uint32_t)(g->kh * g->kw);
  const ic_span in = ic_interior(g);
  const uint8_t *v = indices;
  int ok = 1;
  for (size_t n = 0; n < g->n && ok; n++) {
    for (size_t oy = 0; oy < g->oh; oy++) {
      const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, g->dh, g->h);
      for (size_t ox = 0; ox < g->ow; ox++, v += g->c) {
        if (row.count == g->kh && ox == in.lo && in.lo < in.hi) {
          /* Whole windows: every t below kh*kw is valid. */
          const size_t len = (in.hi - in.lo) * g->c;
          ok &= ic_u8_below(v, len, taps);
          v += len - g->c;
          ox = in.hi - 1;
          continue;
        }
        const ic_taps col = ic_taps_of(ox, g->sw, g->pl, g->kw, g->dw, g->w);
        ok &= ic_u8_run_ok(v, g->c, (uint32_t)col.k0, (uint32_t)col.count,
                           (uint32_t)row.k0, (uint32_t)row.count, kw, taps);
      }
    }
  }
  return ok;
}
#endif /* SP_FN */
