/* SPDX-License-Identifier: MIT */
/* nhwc.c — NHWC backward kernels (lanes over channels) of every family;
 * compiled once per SIMD ISA (kernels/meson.build). The forward ones are
 * tmpl/nhwc_fwd.c's. */
#include "tmpl/vec.h"

#include "tmpl/nhwc.h"

/* The output rows whose windows reach dx rows [r0, r1): [*oy0, *oy1). */
static inline void rows_covering(const sp_geom *g, size_t r0, size_t r1,
                                 size_t *oy0, size_t *oy1) {
  *oy0 = r0 + g->pt >= g->kh ? (r0 + g->pt - g->kh) / g->sh + 1 : 0;
  const size_t e = (r1 + g->pt + g->sh - 1) / g->sh;
  *oy1 = e < g->oh ? e : g->oh;
}

/* NHWC: whether output row oy of batch n has only finite dy (a NaN in dx
 * can only come from a dy that is not finite: finite sums overflow to inf,
 * never to NaN). Tested as each row is first used, while it is in cache. */

static inline int dy_row_finite(const sp_geom *g, const sp_io *io, size_t n,
                                size_t oy) {
  return all_finite_px(io->dy + (n * g->oh + oy) * g->ow * g->ys, g->ow, g->c,
                       g->ys);
}

/* The output rows [*oy0, *oy1) whose windows reach dx rows [r0, r1) of
 * batch n; returns whether all their dy are finite. */
static inline int band_dy_finite(const sp_geom *g, const sp_io *io, size_t n,
                                 size_t r0, size_t r1, size_t *oy0,
                                 size_t *oy1) {
  rows_covering(g, r0, r1, oy0, oy1);
  int finite = 1;
  for (size_t oy = *oy0; oy < *oy1; oy++)
    finite &= dy_row_finite(g, io, n, oy);
  return finite;
}

/* MAX backward, NHWC: outputs in order; each output adds dy to the tap its
 * lanes' winners name (adding +0.0f elsewhere changes nothing: dx is never
 * -0.0f). `from_indices` reads winners, else recomputes them from x. */
SP_HOT void maxpool_bwd_nhwc_body(const sp_geom *g, const sp_io *io,
                                  int from_indices) {
  const size_t C = g->c;
  /* Recomputed winners are tap numbers; read ones use the index type. */
  const simdpool_index_type it =
      from_indices ? g->index_type : SIMDPOOL_INDEX_U8;
  const size_t XS = g->xs;
  zero_dx_nhwc(g, io->dx);
  int finite = 1; /* every dy so far; tested a row at a time, in cache */
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = from_indices ? NULL : io->x + n * g->h * g->w * XS;
    float *dxn = io->dx + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      finite &= dy_row_finite(g, io, n, oy);
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        const float *dyp = io->dy + px * g->ys;
        /* The window's taps, once for all channel blocks: where each one
         * is in dx and the index value that names it. */
        enum { MAX_TAPS = 64 };
        size_t off[MAX_TAPS];
        int32_t val[MAX_TAPS];
        size_t ntaps = 0;
        if ((win.ki1 - win.ki0) * (win.kj1 - win.kj0) <= MAX_TAPS) {
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            for (size_t kj = win.kj0; kj < win.kj1; kj++, ntaps++) {
              const size_t flat = tap_flat(g, &win, ki, kj);
              off[ntaps] = flat * XS;
              val[ntaps] = index_value(it, ki * g->kw + kj, flat);
            }
          }
        }
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi t;
          if (from_indices)
            t = load_index(io->indices, it, o + c, cn);
          else
            max_block_nhwc(g, xn, &win, c, cn, 1, it, &t);
          const vf dy = load_lanes(dyp + c, cn);
          if (ntaps) {
            float *base = dxn + c;
            for (size_t k = 0; k < ntaps; k++) {
              const vm hit = vm_eq_i(t, vi_set1(val[k]));
              float *p = base + off[k];
              store_lanes(
                  p, vf_add(load_lanes(p, cn), vf_select(hit, vf_zero(), dy)),
                  cn);
            }
            continue;
          }
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              const size_t flat = tap_flat(g, &win, ki, kj);
              const vm hit =
                  vm_eq_i(t, vi_set1(index_value(it, ki * g->kw + kj, flat)));
              float *p = dxn + flat * XS + c;
              store_lanes(
                  p, vf_add(load_lanes(p, cn), vf_select(hit, vf_zero(), dy)),
                  cn);
            }
          }
        }
      }
    }
  }
  if (!finite)
    canonicalize_dx_nhwc(g, io->dx);
}

/* MAX backward, NHWC, undilated windows at least as wide as their stride
 * in both axes (overlapping or tiling: every pixel up to the last window
 * is covered), from indices or from x: each output's winners are read (or
 * recomputed) once per channel block and its dy goes to the pixels of its
 * window, lanes over channels. Walking the outputs in order, a pixel's
 * covering outputs come in output order: the first of them (kernel row
 * ki >= kh - sh or output row 0, and likewise for columns: no earlier
 * output covers the pixel) stores +0.0f + its share, later ones add to
 * what is there while it is in cache. So every dx element is the
 * reference's sum in the reference's order, written without a zeroing pass
 * or a gather's repeated index reads; pixels past the last windows are
 * +0.0f. Writes only dx rows [row0, row1) (sp_geom; the parallel split's
 * row bands), visiting every output that covers them. k3: a compile-time
 * 3x3/stride-2 window (the ResNet stem). */
SP_HOT void maxpool_bwd_inorder_nhwc(const sp_geom *g, const sp_io *io,
                                     int from_x, int k3) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs;
  const size_t KH = k3 ? 3 : g->kh, KW = k3 ? 3 : g->kw;
  const size_t SH = k3 ? 2 : g->sh, SW = k3 ? 2 : g->sw;
  const simdpool_index_type it = from_x ? SIMDPOOL_INDEX_U8 : g->index_type;
  const int u8 = it == SIMDPOOL_INDEX_U8;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  size_t oy0, oy1; /* the output rows whose windows reach rows [R0, R1) */
  rows_covering(g, R0, R1, &oy0, &oy1);
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = from_x ? io->x + n * H * W * XS : NULL;
    float *dxn = io->dx + n * H * W * XS;
    for (size_t oy = oy0; oy < oy1; oy++) {
      finite &= dy_row_finite(g, io, n, oy);
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        const float *dyp = io->dy + px * g->ys;
        const window win = window_at(g, oy, ox);
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi key;
          if (from_x)
            max_block_nhwc(g, xn, &win, c, cn, 1, it, &key);
          else
            key = load_index(io->indices, it, o + c, cn);
          const vf dy = load_lanes(dyp + c, cn);
          /* The window's valid rows inside the band. */
          const ptrdiff_t r0 = (ptrdiff_t)R0 - win.iy,
                          r1 = (ptrdiff_t)R1 - win.iy;
          const size_t ka = r0 > (ptrdiff_t)win.ki0 ? (size_t)r0 : win.ki0;
          const size_t kb = r1 < (ptrdiff_t)win.ki1 ? (size_t)r1 : win.ki1;
          for (size_t ki = ka; ki < kb; ki++) {
            const size_t iy = (size_t)(win.iy + (ptrdiff_t)ki);
            const int first_row = oy == 0 || ki + SH >= KH;
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              const size_t ix = (size_t)(win.ix + (ptrdiff_t)kj);
              const int32_t val = (int32_t)(u8 ? ki * KW + kj : iy * W + ix);
              const vf t = vf_select(vm_eq_i(key, vi_set1(val)), vf_zero(), dy);
              float *p = dxn + (iy * W + ix) * XS + c;
              const int first = first_row && (ox == 0 || kj + SW >= KW);
              store_lanes(p, vf_add(first ? vf_zero() : load_lanes(p, cn), t),
                          cn);
            }
          }
        }
      }
    }
    /* Rows and columns past the last windows, inside the band. */
    const size_t end_y = (g->oh - 1) * SH + KH - g->pt;
    const size_t end_x = (g->ow - 1) * SW + KW - g->pl;
    const size_t rows = end_y < R1 ? end_y : R1, cols = end_x < W ? end_x : W;
    for (size_t iy = R0; iy < rows && cols < W; iy++)
      zero_px(dxn + (iy * W + cols) * XS, W - cols, C, XS);
    if (rows < R1) {
      const size_t from = rows > R0 ? rows : R0;
      zero_px(dxn + from * W * XS, (R1 - from) * W, C, XS);
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* MAX backward from flat I32/I64 indices by scatter, NHWC, any window:
 * outputs in order, each channel's dy added to the pixel its index names,
 * the reference's loop (bwd_scatter_nchw's reasons: a few instructions per
 * element where the in-order kernel compares every lane against each tap).
 * dx rows are zeroed just before the first output row that reaches them.
 * Writes only dx rows [row0, row1) (row1 = 0: all): output rows whose
 * windows lie inside the band scatter unfiltered (dispatch checked every
 * index against its window), the few at its edges skip indices outside it.
 * i64: the index type, a compile-time constant. */
SP_HOT void bwd_scatter_nhwc(const sp_geom *g, const sp_io *io, int i64) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  size_t oy0 = 0, oy1 = g->oh; /* the output rows that reach the band */
  if (g->row1)
    rows_covering(g, R0, R1, &oy0, &oy1);
  const size_t lo = R0 * W, span = (R1 - R0) * W; /* the band's pixels */
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    float *dxn = io->dx + n * H * W * XS;
    size_t zeroed = R0; /* dx rows of the band zeroed so far */
    for (size_t oy = oy0; oy < oy1; oy++) {
      size_t ki0, ki1;
      sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
      const size_t top = oy * g->sh + ki0 * g->dh - g->pt;
      const size_t last = oy * g->sh + (ki1 - 1) * g->dh - g->pt + 1;
      const size_t lim = last < R1 ? last : R1;
      /* Rows [zeroed, lim) are new: zeroed pixel column by pixel column,
       * each just before the first output of this row that reaches it, so
       * its lines are in L1 when the adds come (a whole NHWC row of a
       * wide layer is bigger than L1). zc: columns of them zeroed so far. */
      const size_t nr = lim > zeroed ? lim - zeroed : 0;
      float *const fresh = dxn + zeroed * W * XS;
      size_t zc = 0;
      finite &= dy_row_finite(g, io, n, oy);
      const int inside = top >= R0 && last <= R1;
      for (size_t ox = 0; ox < g->ow; ox++) {
        if (nr) {
          /* One past the last input column of window ox. */
          const size_t ec = ox * g->sw + (g->kw - 1) * g->dw + 1;
          const size_t end = ec <= g->pl ? 0 : ec - g->pl < W ? ec - g->pl : W;
          if (end > zc) {
            for (size_t r = 0; r < nr; r++)
              zero_px(fresh + (r * W + zc) * XS, end - zc, C, XS);
            zc = end;
          }
        }
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const float *dyp = io->dy + px * g->ys;
        const int64_t *i8 = (const int64_t *)io->indices + px * C;
        const int32_t *i4 = (const int32_t *)io->indices + px * C;
        if (inside) {
          for (size_t c = 0; c < C; c++)
            dxn[(size_t)(i64 ? i8[c] : i4[c]) * XS + c] += dyp[c];
        } else {
          /* Half of an edge row's indices fall outside the band, at
           * random: a branch per element mispredicted that often, so the
           * ones outside add to a local sink instead. */
          float sink = 0.0f;
          for (size_t c = 0; c < C; c++) {
            const size_t f = (size_t)(i64 ? i8[c] : i4[c]);
            float *const dst = f - lo < span ? dxn + f * XS + c : &sink;
            *dst += dyp[c];
          }
        }
      }
      if (nr && zc < W)
        for (size_t r = 0; r < nr; r++)
          zero_px(fresh + (r * W + zc) * XS, W - zc, C, XS);
      zeroed += nr;
    }
    if (zeroed < R1)
      zero_px(dxn + zeroed * W * XS, (R1 - zeroed) * W, C, XS);
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* bwd_scatter_nhwc on the plan's flat index type (I32 or I64). */
SP_HOT void bwd_scatter_nhwc_flat(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_I64)
    bwd_scatter_nhwc(g, io, 1);
  else
    bwd_scatter_nhwc(g, io, 0);
}

/* MAX backward from indices, NHWC, gathered: each dx pixel sums, in output
 * order, the dy of the outputs whose windows cover it and whose indices name
 * it, so dx is written once, without the zeroing pass and the per-tap
 * read-modify-write of the scatter above. The sums are the reference's: it
 * adds those same dy, in output order, to a +0.0f, and a lane whose index
 * names another tap adds +0.0f, which changes no bits (dx is never -0.0f).
 * The covering outputs of an input row advance with cover_advance
 * (tmpl/common.h). */

/* Can every input row's covering output rows be listed? */
static inline int bwd_gather_fits(const sp_geom *g) {
  return ((g->kh - 1) * g->dh + g->sh) / g->sh <= GATHER_MAX;
}

/* acc plus the dy of one channel block (dy element od, index element o)
 * where the index names `val` (vf_add_where: acc is never -0.0f). */
SP_HOT vf gather_add(vf acc, const sp_io *io, simdpool_index_type it, size_t o,
                     size_t od, vi val, size_t cn) {
  const vm hit = vm_eq_i(load_index(io->indices, it, o, cn), val);
  return vf_add_where(acc, hit, load_lanes(io->dy + od, cn));
}

/* The index value that names input pixel ix (flat: its position in the
 * plane) in the window of output column ox of a covering row whose kernel
 * row gives yk of the tap number; 0 when dilation makes the window skip the
 * pixel's column. */
SP_HOT int gather_value(const sp_geom *g, simdpool_index_type it, size_t yk,
                        size_t ix, size_t ox, size_t flat, vi *v) {
  const size_t rx = ix + g->pl - ox * g->sw;
  if (g->dw > 1 && rx % g->dw)
    return 0;
  *v = vi_set1(index_value(it, yk + (g->dw == 1 ? rx : rx / g->dw), flat));
  return 1;
}

static inline void maxpool_bwd_idx_nhwc_gather(const sp_geom *g,
                                               const sp_io *io) {
  const size_t C = g->c, XS = g->xs, YS = g->ys;
  const simdpool_index_type it = g->index_type;
  /* Every dy row tested so far; each output row covers an input row (its
   * window holds one, plan.c), so by the last input row all are. */
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    cover rv = {0, 0};
    size_t tested = 0; /* output rows [0, tested) of this batch */
    for (size_t iy = 0; iy < g->h; iy++) {
      cover_advance(&rv, iy, g->pt, g->sh, g->kh, g->dh, g->oh);
      for (; tested < rv.hi; tested++)
        finite &= dy_row_finite(g, io, n, tested);
      /* The covering output rows: where they start, and their kernel row's
       * part of the tap number. */
      size_t yo[GATHER_MAX], yk[GATHER_MAX], ny = 0;
      for (size_t oy = rv.lo; oy < rv.hi; oy++) {
        const size_t ry = iy + g->pt - oy * g->sh;
        if (g->dh > 1 && ry % g->dh)
          continue;
        yo[ny] = (n * g->oh + oy) * g->ow; /* its first pixel */
        yk[ny++] = (g->dh == 1 ? ry : ry / g->dh) * g->kw;
      }
      cover cv = {0, 0};
      float *drow = io->dx + (n * g->h + iy) * g->w * XS;
      for (size_t ix = 0; ix < g->w; ix++, drow += XS) {
        cover_advance(&cv, ix, g->pl, g->sw, g->kw, g->dw, g->ow);
        const size_t flat = iy * g->w + ix;
        size_t c = 0;
        for (; c + NHWC_UNROLL * SP_VL <= C; c += NHWC_UNROLL * SP_VL) {
          vf a0 = vf_zero(), a1 = a0, a2 = a0, a3 = a0;
          for (size_t k = 0; k < ny; k++) {
            for (size_t ox = cv.lo; ox < cv.hi; ox++) {
              vi v;
              if (!gather_value(g, it, yk[k], ix, ox, flat, &v))
                continue;
              const size_t o = (yo[k] + ox) * C + c;
              const size_t od = (yo[k] + ox) * YS + c;
              a0 = gather_add(a0, io, it, o, od, v, SP_VL);
              a1 = gather_add(a1, io, it, o + SP_VL, od + SP_VL, v, SP_VL);
              a2 = gather_add(a2, io, it, o + 2 * SP_VL, od + 2 * SP_VL, v,
                              SP_VL);
              a3 = gather_add(a3, io, it, o + 3 * SP_VL, od + 3 * SP_VL, v,
                              SP_VL);
            }
          }
          vf_store(drow + c, a0);
          vf_store(drow + c + SP_VL, a1);
          vf_store(drow + c + 2 * SP_VL, a2);
          vf_store(drow + c + 3 * SP_VL, a3);
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vf a = vf_zero();
          for (size_t k = 0; k < ny; k++) {
            for (size_t ox = cv.lo; ox < cv.hi; ox++) {
              vi v;
              if (gather_value(g, it, yk[k], ix, ox, flat, &v))
                a = gather_add(a, io, it, (yo[k] + ox) * C + c,
                               (yo[k] + ox) * YS + c, v, cn);
            }
          }
          store_lanes(drow + c, a, cn);
        }
      }
    }
  }
  if (!finite)
    canonicalize_dx_nhwc(g, io->dx);
}

/* From x, the gathered NHWC MAX backward kernels keep the U8 taps of the
 * output rows a dx row hears from in a ring on the stack: `rows` slots of
 * NHWC_RING / rows bytes, each output row's taps computed once per channel
 * block by the forward's four-block fold (its y is not needed). */
#define NHWC_RING 24576 /* bytes: 24 KiB of stack */

/* The channel block a ring of `rows` slots holds: as many vectors (up to
 * NHWC_UNROLL) as a slot holds for ow outputs; 0 if not one. */
static inline size_t ring_block(const sp_geom *g, size_t rows) {
  const size_t v = NHWC_RING / rows / g->ow / SP_VL;
  return (v < NHWC_UNROLL ? v : NHWC_UNROLL) * SP_VL;
}

/* The U8 taps of outputs [ox0, ox1) of output row oy, channels [c0, c0 +
 * cb), into slot (cb per output, from ox0). gu8: the plan's geometry with
 * index type U8. */
SP_HOT void ring_fill(const sp_geom *gu8, const float *xn, size_t oy,
                      size_t ox0, size_t ox1, size_t c0, size_t cb,
                      uint8_t *slot) {
  for (size_t ox = ox0; ox < ox1; ox++) {
    const window win = window_at(gu8, oy, ox);
    _Alignas(64) float ytmp[NHWC_UNROLL * SP_VL];
    const int k3 = gu8->kh == 3 && gu8->kw == 3 && win.ki0 == 0 &&
                   win.ki1 == 3 && win.kj0 == 0 && win.kj1 == 3;
    const size_t at = (ox - ox0) * cb;
    if (cb == NHWC_UNROLL * SP_VL &&
        (k3 ? max4_nhwc(gu8, xn, &win, c0, ytmp, 1, slot, at, 1)
            : max4_nhwc(gu8, xn, &win, c0, ytmp, 1, slot, at, 0)))
      continue;
    /* A block with NaN, or a short one: vector by vector. */
    for (size_t c = 0; c < cb; c += SP_VL) {
      const size_t cn = cb - c < SP_VL ? cb - c : SP_VL;
      vi key;
      max_block_nhwc(gu8, xn, &win, c0 + c, cn, 1, SIMDPOOL_INDEX_U8, &key);
      store_index(slot, SIMDPOOL_INDEX_U8, at + c, key, cn);
    }
  }
}

/* MAX backward from indices, NHWC, 3x3/s1/p1 with same-size planes
 * (GoogLeNet's and Inception's pools), gathered: dx pixel p = (iy, ix)
 * hears from the outputs (iy + a - 1, ix + b - 1) inside the plane, in
 * output order (a, then b, ascending), where its tap is 8 - (3a + b); a
 * lane adds that output's dy where its U8 index is that tap, else +0.0f,
 * which changes no bits (dx is never -0.0f). (Flat indices keep the
 * scatter: four or eight times the bytes, read nine times here, this
 * gather measured 1.2x (I32) and 1.4x (I64) slower than the scatter's
 * single read on GoogLeNet's 192x28x28, AVX-512. Read once per output row
 * and turned into U8 taps in a ring, as from x, I64 measured 0.94x the
 * scatter with AVX-512 and 0.7x with AVX2; sliding nine outputs' keys in
 * registers along a row, 0.56x.)
 * Each dx element is stored once, no zeroing pass. Channel blocks of up to
 * NHWC_UNROLL vectors run outermost, so the three output rows a dx row
 * hears from stay in L1 across the row's pixels. Writes only dx rows
 * [row0, row1) (the parallel split's row bands). */
static inline int nhwc3x3s1_fits(const sp_geom *g) {
  return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 &&
         g->dw == 1 && g->pt == 1 && g->pl == 1 && g->oh == g->h &&
         g->ow == g->w;
}

/* Lanes [off, off + cn) of a dx pixel past the channel base of each of
 * its nv covering outputs (key element oi[k] in ind, dy element od[k]), in
 * output order, where the key is val[k]. kt: the key type. */
SP_HOT vf nhwc3_sum(const void *ind, simdpool_index_type kt, const float *dy,
                    const size_t *oi, const size_t *od, const int32_t *val,
                    size_t nv, size_t off, size_t cn) {
  vf acc = vf_zero();
  for (size_t k = 0; k < nv; k++) {
    const vm hit =
        vm_eq_i(load_index(ind, kt, oi[k] + off, cn), vi_set1(val[k]));
    acc = vf_add_where(acc, hit, load_lanes(dy + od[k] + off, cn));
  }
  return acc;
}

/* The cb channels of a dx pixel from its covering outputs (nhwc3_sum). */
SP_HOT void s1_store(float *d, const void *ind, const float *dy,
                     const size_t *oi, const size_t *od, const int32_t *val,
                     size_t nv, size_t cb) {
  if (cb == NHWC_UNROLL * SP_VL) {
    for (size_t v = 0; v < NHWC_UNROLL; v++)
      vf_store(d + v * SP_VL, nhwc3_sum(ind, SIMDPOOL_INDEX_U8, dy, oi, od, val,
                                        nv, v * SP_VL, SP_VL));
    return;
  }
  for (size_t c = 0; c < cb; c += SP_VL) {
    const size_t cn = cb - c < SP_VL ? cb - c : SP_VL;
    store_lanes(d + c,
                nhwc3_sum(ind, SIMDPOOL_INDEX_U8, dy, oi, od, val, nv, c, cn),
                cn);
  }
}

SP_HOT void max3x3s1_nhwc_gather(const sp_geom *g, const sp_io *io,
                                 simdpool_index_type it) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs, YS = g->ys;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const int from_x = it == SIMDPOOL_INDEX_NONE;
  const size_t CB = from_x ? ring_block(g, 3) : NHWC_UNROLL * SP_VL;
  const size_t RS = NHWC_RING / 3; /* a ring slot */
  _Alignas(64) uint8_t ring[NHWC_RING];
  sp_geom gu8 = *g; /* from x: the forward's folds writing U8 taps */
  gu8.index_type = SIMDPOOL_INDEX_U8;
  const void *ind = from_x ? (const void *)ring : io->indices;
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    size_t oy0, oy1; /* the output rows that reach the band */
    finite &= band_dy_finite(g, io, n, R0, R1, &oy0, &oy1);
    const float *xn = from_x ? io->x + n * H * W * XS : NULL;
    for (size_t c0 = 0; c0 < C; c0 += CB) {
      const size_t cb = C - c0 < CB ? C - c0 : CB;
      size_t filled = oy0; /* from x: output rows [.., filled) in the ring */
      for (size_t iy = R0; iy < R1; iy++) {
        for (; from_x && filled < oy1 && filled <= iy + 1; filled++)
          ring_fill(&gu8, xn, filled, 0, g->ow, c0, cb,
                    ring + (filled % 3) * RS);
        /* Where output row iy + a - 1's keys and dy start (channel c0). */
        size_t rki[3], rkd[3];
        for (size_t a = 0; a < 3; a++) {
          const size_t oy = iy + a - 1; /* wraps for iy = 0, a = 0: unused */
          rki[a] = from_x ? (oy % 3) * RS : (n * H + oy) * W * C + c0;
          rkd[a] = (n * H + oy) * W * YS + c0;
        }
        const size_t ks = from_x ? cb : C; /* key step per output pixel */
        const int inner_row = iy >= 1 && iy + 1 < H;
        float *drow = io->dx + (n * H + iy) * W * XS + c0;
        for (size_t ix = 0; ix < W; ix++) {
          size_t oi[9], od[9];
          int32_t val[9];
          size_t nv = 0;
          if (inner_row && ix >= 1 && ix + 1 < W && cb == NHWC_UNROLL * SP_VL) {
            /* All nine covering outputs, a full channel block (most
             * pixels): three key rows and three dy rows, each output a
             * fixed step further on. */
            const uint8_t *kr[3];
            const float *yr[3];
            for (size_t a = 0; a < 3; a++) {
              kr[a] = (const uint8_t *)ind + rki[a] + (ix - 1) * ks;
              yr[a] = io->dy + rkd[a] + (ix - 1) * YS;
            }
            float *d = drow + ix * XS;
            for (size_t v = 0; v < NHWC_UNROLL * SP_VL; v += SP_VL) {
              vf acc = vf_zero();
              for (size_t a = 0; a < 3; a++)
                for (size_t b = 0; b < 3; b++)
                  acc =
                      vf_add_where(acc,
                                   vm_eq_i(vi_load_u8(kr[a] + b * ks + v),
                                           vi_set1((int32_t)(8 - (3 * a + b)))),
                                   vf_load(yr[a] + b * YS + v));
              vf_store(d + v, acc);
            }
            continue;
          }
          for (size_t a = 0; a < 3; a++) {
            if (iy + a < 1 || iy + a - 1 >= H)
              continue;
            for (size_t b = 0; b < 3; b++) {
              if (ix + b < 1 || ix + b - 1 >= W)
                continue;
              oi[nv] = rki[a] + (ix + b - 1) * ks;
              od[nv] = rkd[a] + (ix + b - 1) * YS;
              val[nv++] = (int32_t)(8 - (3 * a + b));
            }
          }
          s1_store(drow + ix * XS, ind, io->dy, oi, od, val, nv, cb);
        }
      }
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* MAX backward, NHWC, 3x3/s2/p1 (the ResNet stem), gathered, from indices
 * of every type or from x. Output (r, q) covers dx rows 2r-1 .. 2r+1 and
 * columns 2q-1 .. 2q+1, so the dx rows 2r and 2r+1 hear only from output
 * rows r (kernel rows 1 and 2) and r+1 (kernel row 0), and along a row
 * even column 2q from output column q (kj = 1), odd column 2q+1 from q
 * (kj = 2), then q+1 (kj = 0). The kernel walks dx row pairs, and per
 * channel vector slides along q with the keys and dy of outputs (r, q),
 * (r, q+1), (r+1, q), (r+1, q+1) in registers, each loaded twice in all
 * (as row r and as row r+1): every pixel of the 2x2 group (2r.., 2q..) is
 * the sum, in output order, of the covering outputs' dy where the key
 * names its tap, else +0.0f, which changes no bits (dx is never -0.0f),
 * stored once: no zeroing pass, no read-modify-write. Keys are window
 * tap offsets: the U8 tap number 3ki+kj, a flat index minus its window's
 * top-left position (ki*w+kj, distinct for w >= 3), or, from x, the U8
 * taps of each output row computed once per channel block into a ring of
 * two rows. Pixels no window covers get +0.0f. Writes only dx rows
 * [row0, row1) (the parallel split's row bands). it: the index type, NONE
 * for from x; a compile-time constant. */
/* Whether the gather takes this plan's flat keys (SP_FLAT_GATHER); their
 * tap offsets are distinct when w >= 3. */
static inline int s2_flat_fits(const sp_geom *g) {
  return SP_FLAT_GATHER && g->w >= 3;
}

#define S2_CB (4 * NHWC_UNROLL * SP_VL)
SP_HOT void max3x3s2_nhwc_gather(const sp_geom *g, const sp_io *io,
                                 simdpool_index_type it) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs, YS = g->ys;
  const size_t OH = g->oh, OW = g->ow;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const int from_x = it == SIMDPOOL_INDEX_NONE;
  const int flat = it == SIMDPOOL_INDEX_I32 || it == SIMDPOOL_INDEX_I64;
  const size_t CB = from_x ? ring_block(g, 2) : S2_CB;
  const size_t RS = NHWC_RING / 2; /* a ring slot */
  const size_t cov_w = 2 * OW < W ? 2 * OW : W;
  vi tg[3][3]; /* each tap's key */
  for (size_t ki = 0; ki < 3; ki++)
    for (size_t kj = 0; kj < 3; kj++)
      tg[ki][kj] = vi_set1((int32_t)(flat ? ki * W + kj : 3 * ki + kj));
  const vf z = vf_zero();
  const vi none = vi_set1(-1);
  _Alignas(64) uint8_t ring[NHWC_RING];
  sp_geom gu8 = *g; /* from x: the forward's folds writing U8 taps */
  gu8.index_type = SIMDPOOL_INDEX_U8;
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    size_t oy0, oy1; /* the output rows that reach the band */
    finite &= band_dy_finite(g, io, n, R0, R1, &oy0, &oy1);
    const float *xn = from_x ? io->x + n * H * W * XS : NULL;
    for (size_t c0 = 0; c0 < C; c0 += CB) {
      const size_t cb = C - c0 < CB ? C - c0 : CB;
      size_t filled = oy0; /* from x: output rows [.., filled) in the ring */
      for (size_t r = R0 / 2; 2 * r < R1; r++) {
        const int top = 2 * r >= R0, bot = 2 * r + 1 < R1;
        float *d0 = io->dx + ((n * H + 2 * r) * W) * XS + c0;
        float *d1 = d0 + W * XS;
        if (r >= OH) { /* no window reaches rows 2r, 2r + 1 */
          if (top)
            zero_px(d0, W, cb, XS);
          if (bot)
            zero_px(d1, W, cb, XS);
          continue;
        }
        const int has_b = bot && r + 1 < OH;
        for (; from_x && filled <= r + (size_t)has_b; filled++)
          ring_fill(&gu8, xn, filled, 0, OW, c0, cb, ring + (filled & 1) * RS);
        /* Outputs (r, q) and (r + 1, q): their dy pixels, and where their
         * keys are (index element of channel c0, the step per q). */
        const size_t pa = (n * OH + r) * OW, pb = pa + OW;
        const size_t ks = from_x ? cb : C;
        const size_t ka0 = from_x ? 0 : pa * C + c0;
        const size_t kb0 = from_x ? 0 : pb * C + c0;
        const void *inda =
            from_x ? (const void *)(ring + (r & 1) * RS) : io->indices;
        const void *indb =
            from_x ? (const void *)(ring + ((r + 1) & 1) * RS) : io->indices;
        const simdpool_index_type kt = from_x ? SIMDPOOL_INDEX_U8 : it;
        /* Top-left positions of the windows of (r, 0) and (r + 1, 0). */
        const int32_t tla = (int32_t)(2 * r * W) - (int32_t)W - 1;
        const int32_t tlb = tla + 2 * (int32_t)W;
#define S2_KEY(ind, k0, tl, q)                                                 \
  (flat ? vi_add(load_index(ind, kt, (k0) + (q)*ks + c, cn),                   \
                 vi_set1(-((tl) + 2 * (int32_t)(q))))                          \
        : load_index(ind, kt, (k0) + (q)*ks + c, cn))
        /* The keys of (r, q) and (r + 1, q) per channel vector, carried from
         * one q to the next in L1 (channels innermost: sequential reads). */
        _Alignas(64) int32_t bufa[S2_CB];
        _Alignas(64) int32_t bufb[S2_CB];
        for (size_t c = 0; c < cb; c += SP_VL) {
          const size_t cn = cb - c < SP_VL ? cb - c : SP_VL;
          vi_store_i32(bufa + c, S2_KEY(inda, ka0, tla, 0));
          vi_store_i32(bufb + c, has_b ? S2_KEY(indb, kb0, tlb, 0) : none);
        }
        for (size_t q = 0; q < OW; q++) {
          const size_t x0 = 2 * q;
          const int more = q + 1 < OW;
          const float *dya = io->dy + (pa + q) * YS + c0;
          const float *dyb = io->dy + (pb + q) * YS + c0;
          float *p0 = d0 + x0 * XS, *p1 = d1 + x0 * XS;
          for (size_t c = 0; c < cb; c += SP_VL) {
            const size_t cn = cb - c < SP_VL ? cb - c : SP_VL;
            const vi ka = vi_load_i32(bufa + c), kb = vi_load_i32(bufb + c);
            const vf da = load_lanes(dya + c, cn);
            vi kan = none, kbn = none;
            vf dan = z, dbn = z, db = z;
            if (more) {
              kan = S2_KEY(inda, ka0, tla, q + 1);
              dan = load_lanes(dya + YS + c, cn);
            }
            if (has_b) {
              db = load_lanes(dyb + c, cn);
              if (more) {
                kbn = S2_KEY(indb, kb0, tlb, q + 1);
                dbn = load_lanes(dyb + YS + c, cn);
              }
            }
            vi_store_i32(bufa + c, kan);
            vi_store_i32(bufb + c, kbn);
            if (top) {
              const vf e = vf_add_where(z, vm_eq_i(ka, tg[1][1]), da);
              vf o = vf_add_where(z, vm_eq_i(ka, tg[1][2]), da);
              o = vf_add_where(o, vm_eq_i(kan, tg[1][0]), dan);
              if (x0 < W)
                store_lanes(p0 + c, e, cn);
              if (x0 + 1 < W)
                store_lanes(p0 + XS + c, o, cn);
            }
            if (bot) {
              vf e = vf_add_where(z, vm_eq_i(ka, tg[2][1]), da);
              e = vf_add_where(e, vm_eq_i(kb, tg[0][1]), db);
              vf o = vf_add_where(z, vm_eq_i(ka, tg[2][2]), da);
              o = vf_add_where(o, vm_eq_i(kan, tg[2][0]), dan);
              o = vf_add_where(o, vm_eq_i(kb, tg[0][2]), db);
              o = vf_add_where(o, vm_eq_i(kbn, tg[0][0]), dbn);
              if (x0 < W)
                store_lanes(p1 + c, e, cn);
              if (x0 + 1 < W)
                store_lanes(p1 + XS + c, o, cn);
            }
          }
        }
#undef S2_KEY
        if (cov_w < W) { /* columns past the last windows */
          if (top)
            zero_px(d0 + cov_w * XS, W - cov_w, cb, XS);
          if (bot)
            zero_px(d1 + cov_w * XS, W - cov_w, cb, XS);
        }
      }
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* MAX backward, NHWC, 1x3/s2/p1 rows (SP_SHAPE_1X3S2P1: the 1D k3/s2/p1
 * of audio nets; output row r is input row r), gathered, from indices of
 * every type or from x. Output q covers dx columns 2q-1 .. 2q+1, so even
 * column 2q hears only from q (tap 1), odd column 2q+1 from q (tap 2), then
 * q+1 (tap 0): per channel vector the keys and dy of q and q+1 slide along
 * the row, and each dx pixel is the sum, in output order, of the covering
 * outputs' dy where the key names its tap, else +0.0f (no bits change: dx
 * is never -0.0f), stored once: no zeroing pass, no read-modify-write.
 * Keys are tap numbers: U8 as they are, a flat index minus its window's
 * first column, or from x the forward's U8 taps, computed for a tile of
 * outputs at a time into a ring on the stack (a 1D row can be far longer
 * than the ring). Pixels no window covers get +0.0f. Writes only dx rows
 * [row0, row1) and columns [col0, col1) (the parallel split's row and
 * column bands), reading every output that covers them. it: the index
 * type, NONE for from x; a compile-time constant. */
SP_HOT void max1x3s2_nhwc_gather(const sp_geom *g, const sp_io *io,
                                 simdpool_index_type it) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs, YS = g->ys;
  const size_t OW = g->ow;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const size_t X0 = g->col0, X1 = g->col1 ? g->col1 : W;
  const int from_x = it == SIMDPOOL_INDEX_NONE;
  const int flat = it == SIMDPOOL_INDEX_I32 || it == SIMDPOOL_INDEX_I64;
  const simdpool_index_type kt = from_x ? SIMDPOOL_INDEX_U8 : it;
  const size_t CB = from_x ? NHWC_UNROLL * SP_VL : S2_CB;
  const size_t cov_w = 2 * OW < W ? 2 * OW : W;
  /* The dx columns [X0, xe) some window covers, and the outputs whose
   * column pairs (2q, 2q + 1) meet them. */
  const size_t xe = X1 < cov_w ? X1 : cov_w;
  const size_t qa = X0 / 2, qe = X0 < xe ? (xe + 1) / 2 : qa;
  const vi t0 = vi_set1(0), t1 = vi_set1(1), t2 = vi_set1(2);
  const vf z = vf_zero();
  const vi none = vi_set1(-1);
  _Alignas(64) uint8_t ring[NHWC_RING];
  sp_geom gu8 = *g; /* from x: the forward's folds writing U8 taps */
  gu8.index_type = SIMDPOOL_INDEX_U8;
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = from_x ? io->x + n * H * W * XS : NULL;
    for (size_t r = R0; r < R1; r++) {
      float *const drow = io->dx + (n * H + r) * W * XS;
      const size_t pa = (n * H + r) * OW; /* output (r, 0) */
      if (qa < qe) /* the dy this band reads: outputs [qa, qe], in the row */
        finite &= all_finite_px(io->dy + (pa + qa) * YS,
                                (qe < OW ? qe + 1 : OW) - qa, C, YS);
      const int32_t tl = (int32_t)(r * W) - 1; /* window (r, 0)'s first */
      for (size_t c0 = 0; c0 < C; c0 += CB) {
        const size_t cb = C - c0 < CB ? C - c0 : CB;
        /* From x, tiles of T outputs and the key of the one after. */
        const size_t T = from_x ? NHWC_RING / cb - 1 : qe - qa;
        for (size_t q0 = qa; q0 < qe; q0 += T) {
          const size_t q1 = qe - q0 < T ? qe : q0 + T;
          const size_t kq = from_x ? q0 : 0; /* the keys' first output */
          if (from_x)
            ring_fill(&gu8, xn, r, q0, q1 < OW ? q1 + 1 : OW, c0, cb, ring);
          const void *ind = from_x ? (const void *)ring : io->indices;
          const size_t ks = from_x ? cb : C, k0 = from_x ? 0 : pa * C + c0;
#define S1_KEY(q)                                                              \
  (flat ? vi_add(load_index(ind, kt, k0 + ((q)-kq) * ks + c, cn),              \
                 vi_set1(-(tl + 2 * (int32_t)(q))))                            \
        : load_index(ind, kt, k0 + ((q)-kq) * ks + c, cn))
          _Alignas(64) int32_t buf[S2_CB]; /* key of q, per channel vector */
          for (size_t c = 0; c < cb; c += SP_VL) {
            const size_t cn = cb - c < SP_VL ? cb - c : SP_VL;
            vi_store_i32(buf + c, S1_KEY(q0));
          }
          for (size_t q = q0; q < q1; q++) {
            const size_t x0 = 2 * q;
            const int more = q + 1 < OW;
            const int ev = x0 >= X0 && x0 < xe,
                      od = x0 + 1 >= X0 && x0 + 1 < xe;
            const float *dya = io->dy + (pa + q) * YS + c0;
            float *p0 = drow + x0 * XS + c0;
            for (size_t c = 0; c < cb; c += SP_VL) {
              const size_t cn = cb - c < SP_VL ? cb - c : SP_VL;
              const vi ka = vi_load_i32(buf + c);
              const vf da = load_lanes(dya + c, cn);
              vi kan = none;
              vf dan = z;
              if (more) {
                kan = S1_KEY(q + 1);
                dan = load_lanes(dya + YS + c, cn);
              }
              vi_store_i32(buf + c, kan);
              if (ev)
                store_lanes(p0 + c, vf_add_where(z, vm_eq_i(ka, t1), da), cn);
              if (od) {
                vf o = vf_add_where(z, vm_eq_i(ka, t2), da);
                o = vf_add_where(o, vm_eq_i(kan, t0), dan);
                store_lanes(p0 + XS + c, o, cn);
              }
            }
          }
#undef S1_KEY
        }
        const size_t zc = X0 > cov_w ? X0 : cov_w; /* columns past them */
        if (zc < X1)
          zero_px(drow + zc * XS + c0, X1 - zc, cb, XS);
      }
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      for (size_t r = R0; r < R1; r++)
        canonicalize_px(io->dx + ((n * H + r) * W + X0) * XS, X1 - X0, C, XS);
}

void SP_FN(sp_maxpool_bwd_nhwc)(const sp_geom *g, const sp_io *io) {
  if (nhwc3x3s1_fits(g) && ring_block(g, 3))
    max3x3s1_nhwc_gather(g, io, SIMDPOOL_INDEX_NONE);
  else if (sp_bwd_rows_ok(g))
    maxpool_bwd_inorder_nhwc(g, io, 1, 0);
  else
    maxpool_bwd_nhwc_body(g, io, 0);
}

void SP_FN(sp_maxpool_bwd_idx_nhwc)(const sp_geom *g, const sp_io *io) {
  if (nhwc3x3s1_fits(g) && g->index_type == SIMDPOOL_INDEX_U8) {
    max3x3s1_nhwc_gather(g, io, SIMDPOOL_INDEX_U8);
    return;
  }
  if (g->index_type != SIMDPOOL_INDEX_U8)
    bwd_scatter_nhwc_flat(g, io);
  else if (sp_bwd_rows_ok(g))
    maxpool_bwd_inorder_nhwc(g, io, 0, 0);
  else if (bwd_gather_fits(g))
    maxpool_bwd_idx_nhwc_gather(g, io);
  else
    maxpool_bwd_nhwc_body(g, io, 1);
}

void SP_FN(sp_maxpool_bwd_3x3s2p1_nhwc)(const sp_geom *g, const sp_io *io) {
  if (g->kh == 1) /* 1x3 rows */
    max1x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_NONE);
  else if (ring_block(g, 2))
    max3x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_NONE);
  else /* rows too wide for the ring */
    maxpool_bwd_inorder_nhwc(g, io, 1, 1);
}

void SP_FN(sp_maxpool_bwd_idx_3x3s2p1_nhwc)(const sp_geom *g, const sp_io *io) {
  if (g->kh == 1 && g->index_type == SIMDPOOL_INDEX_U8) /* 1x3 rows */
    max1x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_U8);
  else if (g->kh == 1 && g->index_type == SIMDPOOL_INDEX_I64)
    max1x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_I64);
  else if (g->kh == 1)
    max1x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_I32);
  else if (g->index_type == SIMDPOOL_INDEX_U8)
    max3x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_U8);
  else if (!s2_flat_fits(g))
    bwd_scatter_nhwc_flat(g, io);
  else if (g->index_type == SIMDPOOL_INDEX_I64)
    max3x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_I64);
  else
    max3x3s2_nhwc_gather(g, io, SIMDPOOL_INDEX_I32);
}

/* AVG backward, NHWC. Writes only dx rows [row0, row1) (sp_geom; the
 * parallel split's row bands), reading every output that covers them.
 *
 * Undilated windows: gathered, lanes over channels, a slab of up to
 * NHWC_UNROLL channel blocks at a time. Each output row's shares dy /
 * divisor are computed once into a ring of the output rows covering the
 * current dx row; each dx pixel then sums, in output order, the shares of
 * the outputs whose windows cover it and is stored once: no zeroing pass
 * and no per-tap read-modify-write. The reference adds the same shares in
 * the same order to a +0.0f, as the sum here starts. */
#define AVG_NHWC_SCRATCH 8192 /* floats: 32 KiB of stack */

static inline size_t avg_nhwc_slab(const sp_geom *g) {
  const size_t rows = (g->kh - 1) / g->sh + 1;
  if (g->dh != 1 || g->dw != 1 || rows > GATHER_MAX)
    return 0;
  size_t cb = round_up(g->c, SP_VL);
  if (cb > NHWC_UNROLL * SP_VL)
    cb = NHWC_UNROLL * SP_VL;
  while (cb > SP_VL && rows * g->ow * cb > AVG_NHWC_SCRATCH)
    cb -= SP_VL;
  return rows * g->ow * cb <= AVG_NHWC_SCRATCH ? cb : 0;
}

SP_HOT void avgpool_bwd_nhwc_gather(const sp_geom *g, const sp_io *io,
                                    size_t cb) {
  _Alignas(64) float ring[AVG_NHWC_SCRATCH];
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs, YS = g->ys;
  const size_t rows = (g->kh - 1) / g->sh + 1, slot = g->ow * cb;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const size_t kk = g->kh * g->kw;
  const divisor full = divisor_count(kk);
  size_t tw[AVG_NHWC_SCRATCH / SP_VL]; /* each output column's taps */
  for (size_t ox = 0; ox < g->ow; ox++)
    tw[ox] = sp_avg_taps_w(g, ox);
  /* Every dy the band hears from is loaded once per channel slab, for its
   * share: tested there. */
  vm bad = vm_range(0, 0);
  for (size_t n = 0; n < g->n; n++) {
    float *dxn = io->dx + n * H * W * XS;
    for (size_t c0 = 0; c0 < C; c0 += cb) {
      const size_t cs = C - c0 < cb ? C - c0 : cb;
      const size_t nb = (cs + SP_VL - 1) / SP_VL;
      cover rv = {0, 0};
      size_t filled = 0; /* output rows [.., filled) have their shares */
      for (size_t iy = R0; iy < R1; iy++) {
        cover_advance(&rv, iy, g->pt, g->sh, g->kh, 1, g->oh);
        if (filled < rv.lo)
          filled = rv.lo;
        for (; filled < rv.hi; filled++) {
          float *s = ring + (filled % rows) * slot;
          const float *dy = io->dy + (n * g->oh + filled) * g->ow * YS + c0;
          const size_t th = sp_avg_taps_h(g, filled);
          for (size_t ox = 0; ox < g->ow; ox++, s += cb, dy += YS) {
            const size_t k = th * tw[ox];
            const divisor div = k == kk ? full : divisor_count(k);
            for (size_t b = 0; b < nb; b++) {
              const size_t cn = cs - b * SP_VL < SP_VL ? cs - b * SP_VL : SP_VL;
              const vf v = load_lanes(dy + b * SP_VL, cn);
              bad = vm_or(bad, vf_nonfinite(v));
              vf_store(s + b * SP_VL, div_by(v, &div));
            }
          }
        }
        const float *sl[GATHER_MAX];
        for (size_t oy = rv.lo; oy < rv.hi; oy++)
          sl[oy - rv.lo] = ring + (oy % rows) * slot;
        const size_t m = rv.hi - rv.lo;
        cover cv = {0, 0};
        float *d = dxn + iy * W * XS + c0;
        for (size_t ix = 0; ix < W; ix++, d += XS) {
          cover_advance(&cv, ix, g->pl, g->sw, g->kw, 1, g->ow);
          if (nb == NHWC_UNROLL && cs == nb * SP_VL) {
            vf acc[NHWC_UNROLL];
            for (int u = 0; u < NHWC_UNROLL; u++)
              acc[u] = vf_zero();
            for (size_t t = 0; t < m; t++)
              for (size_t ox = cv.lo; ox < cv.hi; ox++)
                for (int u = 0; u < NHWC_UNROLL; u++)
                  acc[u] = vf_add(acc[u],
                                  vf_load(sl[t] + ox * cb + (size_t)u * SP_VL));
            for (int u = 0; u < NHWC_UNROLL; u++)
              vf_store(d + (size_t)u * SP_VL, acc[u]);
          } else {
            for (size_t b = 0; b < nb; b++) {
              const size_t cn = cs - b * SP_VL < SP_VL ? cs - b * SP_VL : SP_VL;
              vf acc = vf_zero();
              for (size_t t = 0; t < m; t++)
                for (size_t ox = cv.lo; ox < cv.hi; ox++)
                  acc = vf_add(acc, vf_load(sl[t] + ox * cb + b * SP_VL));
              store_lanes(d + b * SP_VL, acc, cn);
            }
          }
        }
      }
    }
  }
  if (vm_any(bad))
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* Dilated windows: outputs in order, each adding its share to its taps
 * inside the band, after the band is zeroed. */
SP_HOT void avgpool_bwd_nhwc_scatter(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const divisor full = divisor_set1((float)(g->kh * g->kw));
  size_t oy0 = 0, oy1 = g->oh;
  if (g->dh == 1)
    rows_covering(g, R0, R1, &oy0, &oy1);
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    float *dxn = io->dx + n * H * W * XS;
    zero_px(dxn + R0 * W * XS, (R1 - R0) * W, C, XS);
    for (size_t oy = oy0; oy < oy1; oy++) {
      finite &= dy_row_finite(g, io, n, oy);
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const divisor div = window_divisor(g, &win, oy, ox, &full);
        const float *dyp = io->dy + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          const vf share = div_by(load_lanes(dyp + c, cn), &div);
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            const size_t iy = (size_t)(win.iy + (ptrdiff_t)(ki * g->dh));
            if (iy < R0 || iy >= R1)
              continue;
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              float *p = dxn + tap_flat(g, &win, ki, kj) * XS + c;
              store_lanes(p, vf_add(load_lanes(p, cn), share), cn);
            }
          }
        }
      }
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

void SP_FN(sp_avgpool_bwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t cb = avg_nhwc_slab(g);
  if (cb)
    avgpool_bwd_nhwc_gather(g, io, cb);
  else
    avgpool_bwd_nhwc_scatter(g, io);
}

void SP_FN(sp_lppool_bwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, XS = g->xs;
  const int kind = lp_kind(g->p);
  zero_dx_nhwc(g, io->dx);
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * XS;
    float *dxn = io->dx + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const float *dyp = io->dy + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          const vf dy = load_lanes(dyp + c, cn);
          const vf gr =
              kind == LP_ONE
                  ? dy
                  : lp_grad_v(kind, g->p, dy,
                              lp_block_nhwc(g, xn, &win, c, cn, kind));
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              const size_t e = tap_flat(g, &win, ki, kj) * XS + c;
              const vf q = lp_share_v(kind, g->p, gr, load_lanes(xn + e, cn));
              store_lanes(dxn + e, vf_add(load_lanes(dxn + e, cn), q), cn);
            }
          }
        }
      }
    }
  }
  canonicalize_dx_nhwc(g, io->dx);
}
