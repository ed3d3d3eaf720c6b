/* SPDX-License-Identifier: MIT */
/* index_check.h — the validity test of flat I32/I64 indices (the pass
 * that lets MAX backward trust them), plain C that the compiler vectorises:
 * included once per SIMD ISA (tmpl/index_check.c, SP_FN from its vector layer)
 * so it runs at that ISA's width, and once by dispatch (execute.c, the baseline
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
 * planes below 2^31 elements (the SIMD kernels' limit too). Output i's
 * window has na valid rows of bn valid columns, its first valid tap at flat
 * position q; index v is valid iff r = v - q is a*w + b with a < na and
 * b < bn. In 32-bit unsigned arithmetic that is min over a < na of r - a*w
 * (a wrapped difference is huge and never the minimum that matters) below
 * bn: one subtraction and one unsigned min per valid row, no division, so
 * the compiler vectorises every loop. Rows past na get offset 0 (r - 0 = r
 * changes no minimum), so loops test a fixed 4 rows. Windows of more than
 * 4 rows must span whole rows (bn == w): r < na*w, given as span (else 0).
 * A negative v (I32, or the low half of an I64) is at least 2^31 as
 * unsigned, and since the window's last tap q + (na-1)*w + bn - 1 lies
 * inside the plane (below 2^31), every r - a*w is then above bn: no sign
 * test is needed. I64 needs its high half 0. */

/* The low and high 32-bit halves of element i (little-endian int64). */
#define FLAT_LO(v, i64, i) ((v)[(i64) ? 2 * (i) : (i)])
#define FLAT_HI(v, i64, i) ((i64) ? (v)[2 * (i) + 1] : 0)

/* A window's valid rows as row offsets: off[a] = a*w for 0 < a < na (at
 * most 4 rows), else 0; and the bound of r - off (span for whole rows). */
typedef struct ic_rows {
  uint32_t o1, o2, o3, span;
} ic_rows;

/* 0 when the rows cannot be said: more than 4 that are not whole rows. */
static inline int ic_rows_of(size_t na, int whole, size_t w, ic_rows *r) {
  if (na > 4 && !whole)
    return 0;
  const uint32_t w32 = (uint32_t)w;
  r->o1 = na > 1 && na <= 4 ? w32 : 0;
  r->o2 = na > 2 && na <= 4 ? 2 * w32 : 0;
  r->o3 = na > 3 && na <= 4 ? 3 * w32 : 0;
  r->span = na > 4 ? (uint32_t)(na * w) : 0;
  return 1;
}

#define IC_MINU(a, b) ((a) < (b) ? (a) : (b))
#define IC_MAXU(a, b) ((a) > (b) ? (a) : (b))

/* 1 when r names a valid tap (ic_rows r, bn columns). */
#define IC_HIT(rr, bn, rows)                                                   \
  (IC_MINU(IC_MINU((rr), (rr) - (rows)->o1),                                   \
           IC_MINU((rr) - (rows)->o2, (rr) - (rows)->o3)) <                    \
   IC_MAXU((bn), (rows)->span))

/* 1 when every index of a run is valid: n outputs with the same rows and
 * columns, output i's first valid tap at q + i*step (NCHW: along a row;
 * NHWC: the channels of one pixel, step 0). */
static inline int ic_run_ok(const int32_t *v, int i64, size_t n, uint32_t q,
                            uint32_t step, uint32_t bn, const ic_rows *rows) {
  int ok = 1;
  for (size_t i = 0; i < n; i++) {
    const uint32_t r = (uint32_t)FLAT_LO(v, i64, i) - q - (uint32_t)i * step;
    ok &= (FLAT_HI(v, i64, i) == 0) & IC_HIT(r, bn, rows);
  }
  return ok;
}

/* ic_run_ok's verdicts ANDed into acc[i] instead of reduced: NHWC runs
 * are one pixel's c channels (step 0), and a reduction per pixel cost more
 * than its compares; the caller reduces acc once per image (or, for runs
 * along short NCHW rows, once per plane). */
static inline void ic_run_acc(int32_t *acc, const int32_t *v, int i64, size_t n,
                              uint32_t q, uint32_t step, uint32_t bn,
                              const ic_rows *rows) {
  for (size_t i = 0; i < n; i++) {
    const uint32_t r = (uint32_t)FLAT_LO(v, i64, i) - q - (uint32_t)i * step;
    acc[i] &= (FLAT_HI(v, i64, i) == 0) & IC_HIT(r, bn, rows);
  }
}

/* NCHW planes of at most IC_PLANE_MAX outputs are checked in one run per
 * plane against per-output window tables built once per call, so that
 * small planes (7x7 .. 28x28) are not cut into runs of a few outputs. */
#define IC_PLANE_MAX 1024

typedef struct ic_plane {
  /* per output: first valid tap's flat position, the bound of r - off
   * (valid columns, or the whole-rows span), the row offsets */
  uint32_t q[IC_PLANE_MAX], bn[IC_PLANE_MAX], o1[IC_PLANE_MAX],
      o2[IC_PLANE_MAX], o3[IC_PLANE_MAX];
} ic_plane;

/* 0 when an output's window has more than 4 valid rows that do not span
 * whole rows (the tables cannot say it). */
static inline int ic_plane_init(const sp_geom *g, ic_plane *t) {
  size_t o = 0;
  for (size_t oy = 0; oy < g->oh; oy++) {
    const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, 1, g->h);
    for (size_t ox = 0; ox < g->ow; ox++, o++) {
      const ic_taps col = ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
      ic_rows rows;
      if (!ic_rows_of(row.count, col.count == g->w, g->w, &rows))
        return 0;
      t->q[o] = (uint32_t)(row.first * g->w + col.first);
      t->bn[o] = IC_MAXU((uint32_t)col.count, rows.span);
      t->o1[o] = rows.o1;
      t->o2[o] = rows.o2;
      t->o3[o] = rows.o3;
    }
  }
  return 1;
}

/* 1 when the n = oh*ow indices of one plane are valid, per output from the
 * tables. */
static inline int ic_plane_ok(const int32_t *v, int i64, size_t n,
                              const ic_plane *t) {
  int ok = 1;
  for (size_t i = 0; i < n; i++) {
    const uint32_t r = (uint32_t)FLAT_LO(v, i64, i) - t->q[i];
    const uint32_t m =
        IC_MINU(IC_MINU(r, r - t->o1[i]), IC_MINU(r - t->o2[i], r - t->o3[i]));
    ok &= (FLAT_HI(v, i64, i) == 0) & (m < t->bn[i]);
  }
  return ok;
}

/* Larger NCHW planes: one run per output row, against per-column tables
 * (first valid column, valid columns) and the row's own first valid tap
 * qrow and rows. The verdicts go into acc[i] (column i), which the caller
 * reduces once per plane: a reduction per row of a few dozen outputs cost
 * more than the row's compares. */
static inline void ic_row_acc(int32_t *acc, const int32_t *v, int i64, size_t n,
                              const uint32_t *qcol, const uint32_t *bncol,
                              uint32_t qrow, const ic_rows *rows) {
  for (size_t i = 0; i < n; i++) {
    const uint32_t r = (uint32_t)FLAT_LO(v, i64, i) - qrow - qcol[i];
    acc[i] &= (FLAT_HI(v, i64, i) == 0) & IC_HIT(r, bncol[i], rows);
  }
}

/* 1: every flat index is valid; 0: some index is bad, or the geometry is
 * not one this pass decides (dilation, taller windows that do not span
 * whole rows, planes of 2^31 elements or more); the general walk then
 * decides and finds the first bad element. Covers every padding. i64 is a
 * constant in each instantiation (sp_flat_indices_ok). */
static inline int ic_flat_ok(const sp_geom *g, const void *indices, int i64) {
  const ic_span in = ic_interior(g);
  const int nhwc = g->layout == SIMDPOOL_NHWC;
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
      ok &= ic_plane_ok(v, i64, n, &t);
    return ok;
  }
  if (!nhwc && g->ow <= IC_PLANE_MAX) {
    uint32_t qcol[IC_PLANE_MAX], bncol[IC_PLANE_MAX];
    int32_t acc[IC_PLANE_MAX];
    int whole = 1; /* every column spans the row */
    for (size_t ox = 0; ox < g->ow; ox++) {
      const ic_taps col = ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
      qcol[ox] = (uint32_t)col.first;
      bncol[ox] = (uint32_t)col.count;
      whole &= col.count == g->w;
      acc[ox] = 1;
    }
    for (size_t pl = 0; pl < planes && ok; pl++) {
      for (size_t oy = 0; oy < g->oh; oy++, v += g->ow * halves) {
        const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, 1, g->h);
        ic_rows rows;
        if (!ic_rows_of(row.count, whole, g->w, &rows))
          return 0;
        ic_row_acc(acc, v, i64, g->ow, qcol, bncol,
                   (uint32_t)(row.first * g->w), &rows);
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
        for (size_t ox = 0; ox < g->ow; ox++, v += g->c * halves) {
          const int inner = ox >= in.lo && ox < in.hi;
          const ic_taps col =
              inner ? (ic_taps){ox * g->sw - g->pl, g->kw, 0}
                    : ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
          ic_rows rows;
          if (!ic_rows_of(row.count, col.count == g->w, g->w, &rows))
            return 0;
          ic_run_acc(acc, v, i64, g->c,
                     (uint32_t)(row.first * g->w + col.first), 0,
                     (uint32_t)col.count, &rows);
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
      for (size_t ox = 0; ox < g->ow;) {
        /* Interior columns: one run in NCHW; border ones a run each. */
        const int inner = ox >= in.lo && ox < in.hi;
        const ic_taps col = inner
                                ? (ic_taps){ox * g->sw - g->pl, g->kw, 0}
                                : ic_taps_of(ox, g->sw, g->pl, g->kw, 1, g->w);
        const size_t cols = inner && !nhwc ? in.hi - ox : 1;
        ic_rows rows;
        if (!ic_rows_of(row.count, col.count == g->w, g->w, &rows))
          return 0;
        ok &= ic_run_ok(v, i64, cols * lanes,
                        (uint32_t)(row.first * g->w + col.first),
                        nhwc ? 0 : (uint32_t)g->sw, (uint32_t)col.count, &rows);
        v += cols * lanes * halves;
        ox += cols;
      }
    }
  }
  return ok;
}

int SP_FN(sp_flat_indices_ok)(const sp_geom *g, const void *indices) {
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  (void)g, (void)indices;
  return 0;
#else
  if (g->dh != 1 || g->dw != 1 || g->h * g->w > (size_t)INT32_MAX)
    return 0;
  return g->index_type == SIMDPOOL_INDEX_I64 ? ic_flat_ok(g, indices, 1)
                                             : ic_flat_ok(g, indices, 0);
#endif
}

/* 3D 2x2x2/s2 windows, every one whole (SP_SHAPE_2X2X2S2): output
 * (od, oy, ox)'s taps are q + {0, w, hw, hw + w} + {0, 1} with
 * q = (2od*h + 2oy)*w + 2ox, the 2D pass's four rows (offsets w, hw,
 * hw + w; they increase, as its wrap argument needs) of two columns. Runs
 * into acc, reduced once per plane: NCHW one per output row (step 2, acc
 * over its columns), NHWC one per pixel (acc over its channels); a reduced
 * run each beyond IC_PLANE_MAX. */
static inline int ic_2x2x2_ok(const sp_geom *g, const void *indices, int i64) {
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t planes = nhwc ? g->n : g->n * g->c, halves = i64 ? 2 : 1;
  const uint32_t w = (uint32_t)g->w, hw = (uint32_t)(g->h * g->w);
  const ic_rows rows = {w, hw, hw + w, 0};
  const int32_t *v = indices;              /* in 32-bit halves for I64 */
  const size_t nacc = nhwc ? g->c : g->ow; /* a run's length */
  const int acc_ok = nacc <= IC_PLANE_MAX;
  int32_t acc[IC_PLANE_MAX];
  for (size_t i = 0; acc_ok && i < nacc; i++)
    acc[i] = 1;
  int ok = 1;
  for (size_t pl = 0; pl < planes && ok; pl++) {
    for (size_t od = 0; od < g->od; od++) {
      for (size_t oy = 0; oy < g->oh; oy++) {
        const uint32_t q = (uint32_t)((2 * od * g->h + 2 * oy) * g->w);
        for (size_t ox = 0; ox < g->ow; ox += nhwc ? 1 : g->ow) {
          const uint32_t qx = q + 2 * (uint32_t)ox, step = nhwc ? 0 : 2;
          if (acc_ok)
            ic_run_acc(acc, v, i64, nacc, qx, step, 2, &rows);
          else
            ok &= ic_run_ok(v, i64, nacc, qx, step, 2, &rows);
          v += nacc * halves;
        }
      }
    }
    for (size_t i = 0; acc_ok && i < nacc; i++)
      ok &= acc[i];
  }
  return ok;
}

/* 1: every flat I32/I64 index of a 2x2x2/s2 plan (SP_SHAPE_2X2X2S2: the
 * caller's test) names a tap of its window; 0: one does not, or the plane
 * has 2^31 elements or more. */
int SP_FN(sp_2x2x2_indices_ok)(const sp_geom *g, const void *indices) {
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  (void)g, (void)indices;
  return 0;
#else
  if (sp_in_plane(g) > (size_t)INT32_MAX)
    return 0;
  return g->index_type == SIMDPOOL_INDEX_I64 ? ic_2x2x2_ok(g, indices, 1)
                                             : ic_2x2x2_ok(g, indices, 0);
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

/* U8 tap numbers, NCHW, windows of at most 32 taps: tap a*kw + b of output
 * (oy, ox) is valid iff its row a is valid for oy and its column b for ox,
 * so each position's valid taps are the bit mask row(oy) & col(ox) (every
 * column of the valid rows, every row of the valid columns): the column
 * masks once, then the table of a plane of at most IC_U8_TABLE positions
 * one AND each (built per call: a parallel chunk of one plane builds it
 * too, and building it tap by tap had cost more than such a chunk's
 * check). Then one pass per plane that compilers vectorise (variable
 * shifts): t is valid iff t < kh*kw and its bit of the mask is set. */
#define IC_U8_TABLE 4096 /* positions (and columns): 2 x 16 KiB of stack */
static inline int ic_u8_nchw_ok(const sp_geom *g, const uint8_t *v) {
  const size_t ohw = g->oh * g->ow;
  const uint32_t taps = (uint32_t)(g->kh * g->kw);
  uint32_t cols[IC_U8_TABLE], allowed[IC_U8_TABLE];
  for (size_t ox = 0; ox < g->ow; ox++) {
    const ic_taps c = ic_taps_of(ox, g->sw, g->pl, g->kw, g->dw, g->w);
    uint32_t m = 0;
    for (size_t a = 0; a < g->kh; a++)
      for (size_t b = c.k0; b < c.k0 + c.count; b++)
        m |= 1u << (a * g->kw + b);
    cols[ox] = m;
  }
  for (size_t oy = 0; oy < g->oh; oy++) {
    const ic_taps r = ic_taps_of(oy, g->sh, g->pt, g->kh, g->dh, g->h);
    uint32_t rm = 0;
    for (size_t a = r.k0; a < r.k0 + r.count; a++)
      for (size_t b = 0; b < g->kw; b++)
        rm |= 1u << (a * g->kw + b);
    for (size_t ox = 0; ox < g->ow; ox++)
      allowed[oy * g->ow + ox] = rm & cols[ox];
  }
  uint32_t miss = 0;
  uint8_t top = 0;
  for (size_t p = 0; p < g->n * g->c; p++, v += ohw)
    for (size_t i = 0; i < ohw; i++) {
      const uint8_t t = v[i];
      top = t > top ? t : top;
      miss |= ~(allowed[i] >> (t & 31u));
    }
  return top < taps && !(miss & 1u);
}

/* 1: every U8 index names a valid tap of its window; 0: one does not, or
 * the pass does not decide (NCHW planes too big for the table, windows
 * of more than 32 taps). Any padding and dilation. */
int SP_FN(sp_u8_indices_ok)(const sp_geom *g, const void *indices) {
  if (g->layout == SIMDPOOL_NCHW && g->kh * g->kw <= 32 &&
      g->oh * g->ow <= IC_U8_TABLE)
    return ic_u8_nchw_ok(g, indices);
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
