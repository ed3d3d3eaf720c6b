/* SPDX-License-Identifier: MIT */
/* bmax.c — S8/U8 MAX forward without indices, in byte lanes: SP_VB
 * elements a vector, four times the f32 lanes'. The integers' max is the
 * MAX rule's result (no NaN; equal values have equal bits, so without
 * indices the order of the taps leaves no trace, and a tap read twice
 * changes nothing). 2D windows:
 * - NHWC: lanes over channels; each output pixel the max of its valid
 *   taps' vectors.
 * - NCHW, strides 1 and 2: lanes over a row's output columns. Those whose
 *   windows lie inside the row go in vectors: the max over the window's
 *   valid rows of the columns each tap reads, then along the row; stride 1
 *   (any dilation) the max of kw shifted loads, stride 2 (dilation 1) the
 *   max of neighbour pairs (vb_pairmax_*) at the offsets 0, 2, 4, ... and
 *   kw - 2, which cover taps 0 .. kw - 1. Loads read only the row's bytes
 *   (a vector's lanes past its last inner output are not stored). The
 *   border columns (padding, ceil mode) go one at a time. Other strides,
 *   and rows shorter than BMAX_MIN_W, are left to the caller's body.
 * The dtype kernels of S8/U8 MAX forward call sp_bmax_fwd first (GENERAL,
 * 2X2S2, 3X3S2P1 and 1X3S2P1 of either layout). Compiled once per SIMD
 * ISA, the dtype a constant argument of each body (as tmpl/qavg.c). */
#include "tmpl/vec.h"

#include "tmpl/common.h"

SP_HOT vb bmax(int s8, vb a, vb b) {
  return s8 ? vb_max_s8(a, b) : vb_max_u8(a, b);
}
SP_HOT vb bpair(int s8, vb lo, vb hi) {
  return s8 ? vb_pairmax_s8(lo, hi) : vb_pairmax_u8(lo, hi);
}
/* n <= SP_VB bytes at p (the rest zero), and back (only n written). */
SP_HOT vb bload(const uint8_t *p, size_t n) {
  return n == SP_VB ? vb_load(p) : vb_load_part(p, n);
}
SP_HOT void bstore(uint8_t *p, vb v, size_t n) {
  if (n == SP_VB)
    vb_store(p, v);
  else
    vb_store_part(p, v, n);
}

SP_HOT void bmax_nhwc(const sp_geom *g, const sp_io *io, int s8) {
  const size_t C = g->c, XS = g->xs, n = C < SP_VB ? C : SP_VB;
  const size_t rstep = g->dh * g->w * XS, cstep = g->dw * XS;
  const uint8_t *const x = io->xv;
  uint8_t *y = io->yv;
  for (size_t b = 0; b < g->n; b++) {
    const uint8_t *const xb = x + b * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      size_t nr;
      const uint8_t *const r0 = win_rows8(g, xb, g->w * XS, oy, &nr);
      for (size_t ox = 0; ox < g->ow; ox++, y += g->ys) {
        size_t kj0, kj1;
        sp_tap_range(ox, g->sw, g->pl, g->kw, g->dw, g->w, &kj0, &kj1);
        const size_t nk = kj1 - kj0;
        const uint8_t *const p0 = r0 + (ox * g->sw + kj0 * g->dw - g->pl) * XS;
        if (nr == 3 && nk == 3 && cstep == XS) {
          /* A whole undilated 3x3 window: the nine taps unrolled (the
           * run-time tap loops cost more than the maxes), three rows' max
           * per column, then the columns'. */
          for (size_t c = 0; c < C; c = vec_next(c, C, SP_VB)) {
            const uint8_t *const p = p0 + c;
            vb col[3];
            for (size_t k = 0; k < 3; k++)
              col[k] = bmax(
                  s8,
                  bmax(s8, bload(p + k * XS, n), bload(p + k * XS + rstep, n)),
                  bload(p + k * XS + 2 * rstep, n));
            bstore(y + c, bmax(s8, bmax(s8, col[0], col[1]), col[2]), n);
          }
          continue;
        }
        for (size_t c = 0; c < C; c = vec_next(c, C, SP_VB)) {
          vb m = bload(p0 + c, n);
          for (size_t a = 0; a < nr; a++)
            for (size_t k = 0; k < nk; k++)
              m = bmax(s8, m, bload(p0 + a * rstep + k * cstep + c, n));
          bstore(y + c, m, n);
        }
      }
    }
  }
}

/* The max over nr rows rstep bytes apart of n <= SP_VB bytes at p. */
SP_HOT vb bmax_rows(int s8, const uint8_t *p, size_t rstep, size_t nr,
                    size_t n) {
  vb m = bload(p, n);
  for (size_t r = 1; r < nr; r++)
    m = bmax(s8, m, bload(p + r * rstep, n));
  return m;
}

/* Bytes of a vector at column col of a row of w: what lies inside it. */
SP_HOT size_t bavail(size_t w, size_t col) {
  return col >= w ? 0 : w - col < SP_VB ? w - col : SP_VB;
}

/* The pairs' max at column c0 of the max over the window's rows: of the
 * bytes of the row (a vector past its end is not stored). */
SP_HOT vb bpair_at(int s8, const uint8_t *r0, size_t rstep, size_t nr, size_t w,
                   size_t c0) {
  const size_t n1 = bavail(w, c0 + SP_VB);
  const vb lo = bmax_rows(s8, r0 + c0, rstep, nr, bavail(w, c0));
  const vb hi = n1 ? bmax_rows(s8, r0 + c0 + SP_VB, rstep, nr, n1) : lo;
  return bpair(s8, lo, hi);
}

/* Output column ox of a row whose window rows start at r0: the max of its
 * valid taps, one at a time (the border columns). */
SP_HOT uint8_t bmax_one(int s8, const sp_geom *g, const uint8_t *r0,
                        size_t rstep, size_t nr, size_t ox) {
  size_t kj0, kj1;
  sp_tap_range(ox, g->sw, g->pl, g->kw, g->dw, g->w, &kj0, &kj1);
  const uint8_t *const p = r0 + ox * g->sw + kj0 * g->dw - g->pl;
  int m = s8 ? INT8_MIN : 0;
  for (size_t r = 0; r < nr; r++)
    for (size_t k = 0; k < kj1 - kj0; k++) {
      const uint8_t q = p[r * rstep + k * g->dw];
      const int v = s8 ? (int)(int8_t)q : (int)q;
      m = v > m ? v : m;
    }
  return (uint8_t)m;
}

/* Strides 1 and 2 (dilation 1) over rows of at least a vector (masked
 * byte loads) or two (loads through a lane buffer): shorter ones ran
 * slower in byte lanes than the f32-lane bodies (small_max2 on AVX-512
 * and AVX2), their loads mostly partial. */
#ifdef SP_VB_PART
#define BMAX_MIN_W SP_VB
#else
#define BMAX_MIN_W (2 * SP_VB)
#endif
SP_HOT int bmax_nchw_ok(const sp_geom *g) {
  return g->w >= BMAX_MIN_W &&
         (g->sw == 1 || (g->sw == 2 && g->dw == 1 && g->kw >= 2));
}

/* The vectors of one output row's inner columns [jlo, jlo + inner) over
 * its window rows from r0: nr rows, kw taps, stride sw (and dw). Called
 * with constants for the common windows, so that the loops unroll. */
SP_HOT void bmax_row(int s8, const uint8_t *r0, size_t rstep, size_t nr,
                     size_t kw, size_t sw, size_t dw, size_t w, size_t pl,
                     size_t jlo, size_t inner, uint8_t *y) {
  const size_t on = inner < SP_VB ? inner : SP_VB;
  for (size_t i = 0; i < inner; i = vec_next(i, inner, SP_VB)) {
    /* Each load reads only bytes of the row: a vector's last outputs'
     * windows end inside it, the lanes past them are not stored. */
    const size_t col = (jlo + i) * sw - pl;
    vb m;
    if (sw == 1) {
      m = bmax_rows(s8, r0 + col, rstep, nr, bavail(w, col));
      for (size_t k = 1; k < kw; k++) {
        const size_t ck = col + k * dw;
        m = bmax(s8, m, bmax_rows(s8, r0 + ck, rstep, nr, bavail(w, ck)));
      }
    } else {
      /* Stride 2: the pairs at offsets 0, 2, 4, ... and kw - 2 cover
       * taps 0 .. kw - 1. */
      m = bpair_at(s8, r0, rstep, nr, w, col);
      for (size_t t = 2; t + 2 <= kw; t += 2)
        m = bmax(s8, m, bpair_at(s8, r0, rstep, nr, w, col + t));
      if (kw & 1)
        m = bmax(s8, m, bpair_at(s8, r0, rstep, nr, w, col + kw - 2));
    }
    bstore(y + jlo + i, m, on);
  }
}

SP_HOT void bmax_nchw(const sp_geom *g, const sp_io *io, int s8) {
  const size_t W = g->w, sw = g->sw, kw = g->kw, dw = g->dw, ow = g->ow;
  const size_t rstep = g->dh * W;
  /* The columns whose windows lie inside the row, [jlo, jhi): in
   * vectors; the others (padding, ceil mode) one at a time. */
  size_t jlo;
  const size_t inner = inner_cols(g, &jlo), jhi = jlo + inner;
  /* Windows of 2x2/s2, 3x3/s2 and 3x3/s1 (rows of all their taps) */
  const int common = dw == 1 && g->kh == kw && (kw == 2 || kw == 3) &&
                     (sw == 2 || (sw == 1 && kw == 3));
  const uint8_t *const x = io->xv;
  uint8_t *y = io->yv;
  for (size_t row = 0; row < g->n * g->c * g->oh; row++, y += ow) {
    size_t oy, nr;
    const uint8_t *const r0 = nchw_row8(g, x, row, &oy, &nr);
    if (common && nr == 2 && kw == 2)
      bmax_row(s8, r0, rstep, 2, 2, 2, 1, W, g->pl, jlo, inner, y);
    else if (common && nr == 3 && sw == 2)
      bmax_row(s8, r0, rstep, 3, 3, 2, 1, W, g->pl, jlo, inner, y);
    else if (common && nr == 3)
      bmax_row(s8, r0, rstep, 3, 3, 1, 1, W, g->pl, jlo, inner, y);
    else
      bmax_row(s8, r0, rstep, nr, kw, sw, dw, W, g->pl, jlo, inner, y);
    for (size_t ox = border_next(0, jlo, jhi); ox < ow;
         ox = border_next(ox + 1, jlo, jhi))
      y[ox] = bmax_one(s8, g, r0, rstep, nr, ox);
  }
}

int SP_FN(sp_bmax_fwd)(const sp_geom *g, const sp_io *io) {
  if (!sp_dtype_integer(g->dtype) || g->index_type != SIMDPOOL_INDEX_NONE ||
      !sp_geom_2d(g))
    return 0;
  const int s8 = g->dtype == SIMDPOOL_S8;
  if (g->layout == SIMDPOOL_NHWC) {
    if (s8)
      bmax_nhwc(g, io, 1);
    else
      bmax_nhwc(g, io, 0);
    return 1;
  }
  if (!bmax_nchw_ok(g))
    return 0;
  if (s8)
    bmax_nchw(g, io, 1);
  else
    bmax_nchw(g, io, 0);
  return 1;
}
