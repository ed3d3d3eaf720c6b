/* SPDX-License-Identifier: MIT */
/* pool_2x2s2.c — the 2x2/stride-2 kernels (no padding), forward and
 * backward, NCHW and NHWC; compiled once per SIMD ISA (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/nchw.h"

/* ================================================================ 2x2/s2
 * The hot path: 2x2 windows, stride 2, no padding, every tap valid
 * (SP_SHAPE_2X2S2). MAX reduces each row's pair first, then row 0 with row
 * 1: a tree that keeps the taps in scan order, hence the reference's bits. */

/* MAX of one 2x2 block of lanes; *won gets the winner's label, l[t] for
 * tap t (tap numbers, or flat positions: the same selects either way). */
static inline vf max2x2_as(vf a00, vf a01, vf a10, vf a11, const vi l[4],
                           vi *won) {
  const vm rt = mx_replaces(a01, a00);
  const vm rb = mx_replaces(a11, a10);
  const vf top = vf_select(rt, a00, a01);
  const vf bottom = vf_select(rb, a10, a11);
  const vm rr = mx_replaces(bottom, top);
  *won = vi_select(rr, vi_select(rt, l[0], l[1]), vi_select(rb, l[2], l[3]));
  return vf_select(rr, top, bottom);
}

/* The same with the tap numbers 0..3. */
static inline vf max2x2(vf a00, vf a01, vf a10, vf a11, vi *tap) {
  const vi l[4] = {vi_set1(0), vi_set1(1), vi_set1(2), vi_set1(3)};
  return max2x2_as(a00, a01, a10, a11, l, tap);
}

/* acc = (((0 + a00) + a01) + a10) + a11 of AVG or of the LP terms. */
static inline vf sum2x2(vf a00, vf a01, vf a10, vf a11) {
  return vf_add(vf_add(vf_add(vf_add(vf_zero(), a00), a01), a10), a11);
}

/* Backward from indices: the tap number of each lane (index idx of the
 * window at flat position base). Flat labels here and below count from
 * g->fbase (SP_K_FBASE: a block of the parallel split). */
static inline vi index_to_tap(const sp_geom *g, vi idx, vi base) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    return idx;
  const int32_t w = (int32_t)g->w;
  /* idx - base is 0, 1, w or w+1 (dispatch validated the indices). */
  const vm is0 = vm_eq_i(idx, base);
  const vm is1 = vm_eq_i(idx, vi_add(base, vi_set1(1)));
  const vm is2 = vm_eq_i(idx, vi_add(base, vi_set1(w)));
  return vi_select(
      is0, vi_select(is1, vi_select(is2, vi_set1(3), vi_set1(2)), vi_set1(1)),
      vi_set1(0));
}

/* NCHW: SP_VL outputs need 2*SP_VL inputs of each row; n < SP_VL outputs
 * (a row tail) read exactly 2n. */
static inline void load_pairs(const float *p, size_t n, vf *even, vf *odd) {
  load_elems(p, 2 * n, even, odd);
}
static inline void store_pairs(float *p, size_t n, vf even, vf odd) {
  store_elems(p, 2 * n, even, odd);
}

/* P2_GATHER: unpooling's backward, y = the tap the index names (no
 * arithmetic: bits as they are). */
enum { P2_MAX, P2_AVG, P2_LP, P2_GATHER };

/* The tap each index names (0..3, dispatch checked each is a valid tap of
 * its own window) as one of a00..a11. */
static inline vf select2x2(vi tap, vf a00, vf a01, vf a10, vf a11) {
  const vf top = vf_select(vm_eq_i(tap, vi_set1(1)), a00, a01);
  const vf bottom = vf_select(vm_eq_i(tap, vi_set1(3)), a10, a11);
  const vm lower = vm_or(vm_eq_i(tap, vi_set1(2)), vm_eq_i(tap, vi_set1(3)));
  return vf_select(lower, top, bottom);
}

/* The index values of a 2x2x2 window's taps relative to its first tap's:
 * flat offsets (rows w, slices hw apart), or with u8 the tap numbers. Front
 * slice 0..3, back 4..7; a 2x2 window is the front four. */
static inline void taps2x2x2(int u8, size_t w, size_t hw, int32_t off[8]) {
  const int32_t r = u8 ? 2 : (int32_t)w, s = u8 ? 4 : (int32_t)hw;
  const int32_t o[8] = {0, 1, r, r + 1, s, s + 1, s + r, s + r + 1};
  for (int t = 0; t < 8; t++)
    off[t] = o[t];
}

/* The tap whose mask holds (exactly one does: dispatch checked the index
 * names a tap of its own window), of the first `taps` of a. */
static inline vf select_tap(const vm *m, const vf *a, int taps) {
  vf v = a[0];
  for (int t = 1; t < taps; t++)
    v = vf_select(m[t], v, a[t]);
  return v;
}

/* Forward 2x2/s2 of any method on one block of lanes; MAX with track puts
 * in *tap the winner's entry of labels (the four taps' index values). */
static inline vf fwd2x2(int method, int kind, int track, float pv, float inv_p,
                        vf a00, vf a01, vf a10, vf a11, const vi *labels,
                        vi *tap) {
  if (method == P2_MAX) {
    /* Without NaNs, max(b, a) = b > a ? b : a is the MAX step exactly (ties
     * keep a); a block holding a NaN takes the full compare-and-select. */
    if (!track && !vm_any(vm_or(vm_unord(a00, a01), vm_unord(a10, a11))))
      return vf_max_x86(vf_max_x86(a11, a10), vf_max_x86(a01, a00));
    return max2x2_as(a00, a01, a10, a11, labels, tap);
  }
  if (method == P2_AVG) {
    const divisor four = divisor_const(4.0f);
    return avg_result(sum2x2(a00, a01, a10, a11), &four);
  }
  return vcanon(
      lp_root_v(kind, inv_p,
                sum2x2(lp_term_v(kind, pv, a00), lp_term_v(kind, pv, a01),
                       lp_term_v(kind, pv, a10), lp_term_v(kind, pv, a11))));
}

/* Runs the body (the last argument) for the blocks of a row of ow outputs,
 * with ox (the block's first output) and cnt in scope: one short block when
 * ow < SP_VL, else full blocks (cnt a compile-time SP_VL, so they load and
 * store whole vectors), the last of them ending at ow and overlapping its
 * neighbour instead of a masked short block. Only for outputs that are
 * stored, not accumulated: an overlapped one is stored twice, same value. */
#define FOR_EACH_ROW_BLOCK(ow, ...)                                            \
  do {                                                                         \
    if ((ow) < SP_VL) {                                                        \
      const size_t ox = 0, cnt = (ow);                                         \
      __VA_ARGS__                                                              \
    } else {                                                                   \
      for (size_t ox = 0; ox + SP_VL < (ow); ox += SP_VL) {                    \
        const size_t cnt = SP_VL;                                              \
        __VA_ARGS__                                                            \
      }                                                                        \
      const size_t ox = (ow)-SP_VL, cnt = SP_VL;                               \
      __VA_ARGS__                                                              \
    }                                                                          \
  } while (0)

/* One block of cnt outputs at (oy, ox) from input rows r0, r1 (at ox's
 * first input); cnt == SP_VL is a compile-time constant in the row loop, so
 * full blocks load and store whole vectors. */
SP_HOT void fwd2x2_nchw_block(const sp_geom *g, const sp_io *io, int method,
                              int track, int pf, int kind, float pv,
                              float inv_p, const float *r0, const float *r1,
                              size_t o, size_t oy, size_t ox, size_t cnt) {
  vf a00, a01, a10, a11;
  if (pf) {
    prefetch_ahead(r0, 2 * cnt);
    prefetch_ahead(r1, 2 * cnt);
  }
  load_pairs(r0, cnt, &a00, &a01);
  load_pairs(r1, cnt, &a10, &a11);
  /* The winner's index value straight from the select tree: I32/I64 the
   * flat positions of each lane's four taps, U8 the tap numbers. */
  vi l[4] = {vi_set1(0), vi_set1(1), vi_set1(2), vi_set1(3)}, won;
  if (method == P2_MAX && track && g->index_type != SIMDPOOL_INDEX_U8) {
    l[0] = vi_ramp((int32_t)(g->fbase + 2 * oy * g->w + 2 * ox), 2);
    l[1] = vi_add(l[0], vi_set1(1));
    l[2] = vi_add(l[0], vi_set1((int32_t)g->w));
    l[3] = vi_add(l[2], vi_set1(1));
  }
  if (method == P2_GATHER) {
    const vi tap =
        index_to_tap(g, load_index(io->indices, g->index_type, o, cnt),
                     vi_ramp((int32_t)(g->fbase + 2 * oy * g->w + 2 * ox), 2));
    store_lanes(io->y + o, select2x2(tap, a00, a01, a10, a11), cnt);
    return;
  }
  const vf y =
      fwd2x2(method, kind, track, pv, inv_p, a00, a01, a10, a11, l, &won);
  store_lanes(io->y + o, yclamp(g, y), cnt);
  if (method == P2_MAX && track)
    store_index(io->indices, g->index_type, o, won, cnt);
}

/* method, track, pf (g->beyond_l2): compile-time constants. */
SP_HOT void fwd2x2_nchw_rows(const sp_geom *g, const sp_io *io, int method,
                             int track, int pf) {
  const int kind = lp_kind(g->p);
  const float pv = g->p, inv_p = 1.0f / g->p;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->oh, g->ow);
      for (size_t oy = 0; oy < g->oh; oy++) {
        const float *r0 = io->x + px.base + 2 * oy * g->w;
        const float *r1 = r0 + g->w;
        const size_t orow = py.base + oy * g->ow;
        FOR_EACH_ROW_BLOCK(g->ow, {
          fwd2x2_nchw_block(g, io, method, track, pf, kind, pv, inv_p,
                            r0 + 2 * ox, r1 + 2 * ox, orow + ox, oy, ox, cnt);
        });
      }
    }
  }
}

SP_HOT void fwd2x2_nchw_body(const sp_geom *g, const sp_io *io, int method,
                             int track) {
  if (g->beyond_l2)
    fwd2x2_nchw_rows(g, io, method, track, 1);
  else
    fwd2x2_nchw_rows(g, io, method, track, 0);
}

SP_HOT void fwd2x2_nhwc_body(const sp_geom *g, const sp_io *io, int method) {
  const size_t C = g->c, XS = g->xs;
  const int kind = lp_kind(g->p);
  const float pv = g->p, inv_p = 1.0f / g->p;
  const int track = method != P2_GATHER && g->index_type != SIMDPOOL_INDEX_NONE;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t f00 = 2 * oy * g->w + 2 * ox;
        const float *p00 = xn + f00 * XS, *p10 = p00 + g->w * XS;
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        float *yp = io->y + px * g->ys;
        /* The pixel's four taps as index values (U8: tap numbers). */
        const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
        const int32_t b = u8 ? 0 : (int32_t)(g->fbase + f00),
                      w1 = u8 ? 2 : (int32_t)g->w;
        const vi l[4] = {vi_set1(b), vi_set1(b + 1), vi_set1(b + w1),
                         vi_set1(b + w1 + 1)};
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          if (method == P2_GATHER) {
            const vi tap = index_to_tap(
                g, load_index(io->indices, g->index_type, o + c, cn), l[0]);
            store_lanes(yp + c,
                        select2x2(tap, load_lanes(p00 + c, cn),
                                  load_lanes(p00 + XS + c, cn),
                                  load_lanes(p10 + c, cn),
                                  load_lanes(p10 + XS + c, cn)),
                        cn);
            continue;
          }
          vi won = vi_set1(0); /* set by MAX with track */
          const vf y =
              fwd2x2(method, kind, track, pv, inv_p, load_lanes(p00 + c, cn),
                     load_lanes(p00 + XS + c, cn), load_lanes(p10 + c, cn),
                     load_lanes(p10 + XS + c, cn), l, &won);
          store_lanes(yp + c, yclamp(g, y), cn);
          if (method == P2_MAX && track)
            store_index(io->indices, g->index_type, o + c, won, cn);
        }
      }
    }
  }
}

/* NHWC 2x2x2/s2 (SP_SHAPE_2X2X2S2), MAX (P2_MAX) or unpooling's backward
 * (P2_GATHER: the tap each index names), lanes over channels, one output
 * pixel's eight taps at a time: its front slice's tree, its back slice's,
 * then back against front as in NCHW. (Folding the 2D window into this
 * body as its front four taps measured 1.2-1.4x slower on in-cache 2D
 * planes than the 2D body above.) */
SP_HOT void fwd2x2x2_nhwc_body(const sp_geom *g, const sp_io *io, int method) {
  const size_t C = g->c, XS = g->xs, hw = g->h * g->w;
  const int track = method != P2_GATHER && g->index_type != SIMDPOOL_INDEX_NONE;
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  int32_t off[8], lab[8]; /* the taps' element offsets, their index values */
  taps2x2x2(0, g->w, hw, off);
  taps2x2x2(u8, g->w, hw, lab);
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * sp_in_plane(g) * XS;
    for (size_t od = 0; od < g->od; od++) {
      for (size_t oy = 0; oy < g->oh; oy++) {
        for (size_t ox = 0; ox < g->ow; ox++) {
          const size_t f00 = (2 * od * g->h + 2 * oy) * g->w + 2 * ox;
          const size_t px = ((n * g->od + od) * g->oh + oy) * g->ow + ox;
          const size_t o = px * C; /* indices: dense */
          const float *p = xn + f00 * XS;
          float *yp = io->y + px * g->ys;
          vi l[8];            /* the pixel's taps as index values */
          const float *tp[8]; /* and where they are */
          for (int t = 0; t < 8; t++) {
            l[t] = vi_set1((u8 ? 0 : (int32_t)(g->fbase + f00)) + lab[t]);
            tp[t] = p + (size_t)off[t] * XS;
          }
          for (size_t c = 0; c < C; c += SP_VL) {
            const size_t cn = C - c < SP_VL ? C - c : SP_VL;
            vf a[8];
            for (int t = 0; t < 8; t++)
              a[t] = load_lanes(tp[t] + c, cn);
            if (method == P2_GATHER) {
              const vi idx = load_index(io->indices, g->index_type, o + c, cn);
              vm m[8];
              for (int t = 0; t < 8; t++)
                m[t] = vm_eq_i(idx, l[t]);
              store_lanes(yp + c, select_tap(m, a, 8), cn);
              continue;
            }
            vi wf = vi_set1(0), wb = vi_set1(0); /* set with track */
            const vf front = fwd2x2(P2_MAX, 0, track, 0.0f, 0.0f, a[0], a[1],
                                    a[2], a[3], l, &wf);
            const vf back = fwd2x2(P2_MAX, 0, track, 0.0f, 0.0f, a[4], a[5],
                                   a[6], a[7], l + 4, &wb);
            const vm later = mx_replaces(back, front);
            store_lanes(yp + c, yclamp(g, vf_select(later, front, back)), cn);
            if (track)
              store_index(io->indices, g->index_type, o + c,
                          vi_select(later, wf, wb), cn);
          }
        }
      }
    }
  }
}

/* ================================================================ 2x2x2/s2
 * 3D MAX, 2x2x2 windows, stride 2, no padding (SP_SHAPE_2X2X2S2), NCHW:
 * lanes over output columns as in 2D. Each window is the 2x2 tree of its
 * front slice, the same of its back slice, then back against front: taps
 * stay in scan order (depth, row, column), hence the reference's bits. */

/* One block of cnt outputs at (od, oy, ox); r0 is the window's first input
 * row (front slice), hw the elements of one slice. P2_MAX (track: with
 * indices) or P2_GATHER (unpooling's backward: the tap each index names). */
SP_HOT void fwd2x2x2_nchw_block(const sp_geom *g, const sp_io *io, int method,
                                int track, const float *r0, size_t hw, size_t o,
                                size_t od, size_t oy, size_t ox, size_t cnt) {
  vf a[8];
  load_pairs(r0, cnt, &a[0], &a[1]);
  load_pairs(r0 + g->w, cnt, &a[2], &a[3]);
  load_pairs(r0 + hw, cnt, &a[4], &a[5]);
  load_pairs(r0 + hw + g->w, cnt, &a[6], &a[7]);
  /* Labels: the flat positions of each lane's taps (I32/I64) or the tap
   * numbers 0..7 (U8; front 0..3, back 4..7). */
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  int32_t lab[8];
  taps2x2x2(u8, g->w, hw, lab);
  const vi base =
      u8 || !(track || method == P2_GATHER)
          ? vi_set1(0)
          : vi_ramp(
                (int32_t)(g->fbase + (2 * od * g->h + 2 * oy) * g->w + 2 * ox),
                2);
  vi l[8];
  for (int t = 0; t < 8; t++)
    l[t] = vi_add(base, vi_set1(lab[t]));
  if (method == P2_GATHER) {
    const vi idx = load_index(io->indices, g->index_type, o, cnt);
    vm m[8];
    for (int t = 0; t < 8; t++)
      m[t] = vm_eq_i(idx, l[t]);
    store_lanes(io->y + o, select_tap(m, a, 8), cnt);
    return;
  }
  vi wf = vi_set1(0), wb = vi_set1(0);
  const vf front =
      fwd2x2(P2_MAX, 0, track, 0.0f, 0.0f, a[0], a[1], a[2], a[3], l, &wf);
  const vf back =
      fwd2x2(P2_MAX, 0, track, 0.0f, 0.0f, a[4], a[5], a[6], a[7], l + 4, &wb);
  const vm later = mx_replaces(back, front);
  store_lanes(io->y + o, yclamp(g, vf_select(later, front, back)), cnt);
  if (track)
    store_index(io->indices, g->index_type, o, vi_select(later, wf, wb), cnt);
}

SP_HOT void fwd2x2x2_nchw_body(const sp_geom *g, const sp_io *io, int method,
                               int track) {
  const size_t hw = g->h * g->w;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->d * g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->od * g->oh, g->ow);
      for (size_t od = 0; od < g->od; od++) {
        for (size_t oy = 0; oy < g->oh; oy++) {
          const float *r0 = io->x + px.base + (2 * od * g->h + 2 * oy) * g->w;
          const size_t orow = py.base + (od * g->oh + oy) * g->ow;
          FOR_EACH_ROW_BLOCK(g->ow, {
            fwd2x2x2_nchw_block(g, io, method, track, r0 + 2 * ox, hw,
                                orow + ox, od, oy, ox, cnt);
          });
        }
      }
    }
  }
}

void SP_FN(sp_maxpool_fwd_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    fwd2x2x2_nchw_body(g, io, P2_MAX, 0);
  else
    fwd2x2x2_nchw_body(g, io, P2_MAX, 1);
}
void SP_FN(sp_maxpool_fwd_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2x2_nhwc_body(g, io, P2_MAX);
}
void SP_FN(sp_unpool_bwd_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2x2_nchw_body(g, io, P2_GATHER, 0);
}
void SP_FN(sp_unpool_bwd_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2x2_nhwc_body(g, io, P2_GATHER);
}

/* NCHW planes whose rows hold fewer than SP_VL outputs (14x14 -> 7x7:
 * VGG's last pool, adaptive 14 -> 7) leave most lanes of every row block
 * idle. Groups of planes go instead through the stack scratch as one
 * channels-last image (tmpl/lop.h) and the NHWC body, lanes over the
 * group: the same taps in the same order per lane, and flat indices and U8
 * taps are the same in both layouts, so the same bits. big, small: the
 * scratch arrays of plane and output plane size; 0: the rows stay. */
static inline size_t p2_lop_width(const sp_geom *g, size_t big, size_t small) {
  return g->ow < SP_VL ? lop_group(g, big, small) : 0;
}

/* Forward (P2_MAX, P2_AVG, P2_LP; track: MAX with indices) in groups of gw
 * planes. */
SP_HOT void fwd2x2_nchw_lop(const sp_geom *g, const sp_io *io, int method,
                            int track, size_t gw) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t P = g->h * g->w, Q = g->oh * g->ow, planes = g->n * g->c;
  float *const xs = scratch, *const ys = xs + P * gw;
  void *const is = ys + Q * gw;
  const sp_geom gs = lop_geom(g, track, gw);
  for (size_t p0 = 0; p0 < planes; p0 += gw) {
    const size_t np = planes - p0 < gw ? planes - p0 : gw;
    lop_gather(xs, gw, io->x + p0 * P, P, P, np);
    const sp_io ios = {xs, ys, track ? is : NULL, NULL, NULL};
    fwd2x2_nhwc_body(&gs, &ios, method);
    lop_scatter(io->y + p0 * Q, ys, gw, Q, Q, np);
    if (track)
      lop_indices(g, io->indices, is, gw, p0, np, 1);
  }
}

/* The NCHW forward entry: through the scratch where rows are short and a
 * group fits, else by rows. */
SP_HOT void fwd2x2_nchw(const sp_geom *g, const sp_io *io, int method,
                        int track) {
  const size_t gw = p2_lop_width(g, 1, 1 + (size_t)track);
  if (gw)
    fwd2x2_nchw_lop(g, io, method, track, gw);
  else
    fwd2x2_nchw_body(g, io, method, track);
}

void SP_FN(sp_maxpool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    fwd2x2_nchw(g, io, P2_MAX, 0);
  else
    fwd2x2_nchw(g, io, P2_MAX, 1);
}
void SP_FN(sp_maxpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_MAX);
}
void SP_FN(sp_avgpool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw(g, io, P2_AVG, 0);
}
void SP_FN(sp_avgpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_AVG);
}
void SP_FN(sp_lppool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw(g, io, P2_LP, 0);
}
void SP_FN(sp_lppool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_LP);
}
void SP_FN(sp_unpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw_body(g, io, P2_GATHER, 0);
}
void SP_FN(sp_unpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_GATHER);
}

/* Backward 2x2/s2: windows do not overlap, so every covered dx element gets
 * exactly one write: 0 + share (canonical) where the gradient goes, +0.0f
 * elsewhere; uncovered elements (an odd last row or column) get +0.0f.
 * `mode`: BWD_MAX (recompute), BWD_MAX_IDX, BWD_AVG or BWD_UNPOOL (dy's
 * bits where the index points). The per-tap masks come from the winners'
 * tap numbers; AVG sends the share to all four. */
static inline void bwd2x2_masks(int mode, vi tap, vm *m00, vm *m01, vm *m10,
                                vm *m11) {
  if (mode == BWD_AVG) {
    *m00 = *m01 = *m10 = *m11 = vm_eq_i(tap, tap);
    return;
  }
  *m00 = vm_eq_i(tap, vi_set1(0));
  *m01 = vm_eq_i(tap, vi_set1(1));
  *m10 = vm_eq_i(tap, vi_set1(2));
  *m11 = vm_eq_i(tap, vi_set1(3));
}

static inline vf bwd2x2_share(int mode, vf dy) {
  if (mode == BWD_UNPOOL)
    return dy;
  const divisor four = divisor_const(4.0f);
  const vf s = mode == BWD_AVG ? div_by(dy, &four) : dy;
  return vcanon(vf_add(vf_zero(), s));
}

/* One block of cnt outputs at (oy, ox): r0 is x's row 2oy (BWD_MAX), d0 and
 * d1 dx's rows 2oy and 2oy + 1, o the block's first output. */
SP_HOT void bwd2x2_nchw_block(const sp_geom *g, const sp_io *io, int mode,
                              const float *r0, float *d0, float *d1, size_t o,
                              size_t oy, size_t ox, size_t cnt, int rows) {
  vi tap = vi_set1(0);
  if (mode == BWD_MAX) {
    vf a00, a01, a10, a11;
    load_pairs(r0 + 2 * ox, cnt, &a00, &a01);
    load_pairs(r0 + g->w + 2 * ox, cnt, &a10, &a11);
    max2x2(a00, a01, a10, a11, &tap);
  } else if (mode == BWD_MAX_IDX || mode == BWD_UNPOOL) {
    const vi base = vi_ramp((int32_t)(g->fbase + 2 * oy * g->w + 2 * ox), 2);
    tap = index_to_tap(g, load_index(io->indices, g->index_type, o, cnt), base);
  }
  const vf share = bwd2x2_share(mode, load_lanes(io->dy + o, cnt));
  vm m00, m01, m10, m11;
  bwd2x2_masks(mode, tap, &m00, &m01, &m10, &m11);
  const vf z = vf_zero();
  if (rows & 1)
    store_pairs(d0 + 2 * ox, cnt, vf_select(m00, z, share),
                vf_select(m01, z, share));
  if (rows & 2)
    store_pairs(d1 + 2 * ox, cnt, vf_select(m10, z, share),
                vf_select(m11, z, share));
}

SP_HOT void bwd2x2_nchw_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t cov_w = 2 * g->ow, cov_h = 2 * g->oh;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->oh, g->ow);
      float *dxp = io->dx + px.base;
      for (size_t oy = 0; oy < g->oh; oy++) {
        const float *r0 =
            mode == BWD_MAX ? io->x + px.base + 2 * oy * g->w : NULL;
        float *d0 = dxp + 2 * oy * g->w, *d1 = d0 + g->w;
        const size_t orow = py.base + oy * g->ow;
        /* dx elements are stored here, not added to. */
        /* Beyond L2, dx row 2oy first, then row 2oy + 1 (each block done
         * twice, the second time from L1): one sequential store stream,
         * where two interleaved runs of a row each (VGG: 896 bytes) left
         * the stores waiting. In L2 the redone work costs more. */
        if (g->beyond_l2) {
          FOR_EACH_ROW_BLOCK(g->ow, {
            bwd2x2_nchw_block(g, io, mode, r0, d0, d1, orow + ox, oy, ox, cnt,
                              1);
          });
          if (cov_w < g->w)
            zero_tensor(d0 + cov_w, g->w - cov_w);
          FOR_EACH_ROW_BLOCK(g->ow, {
            bwd2x2_nchw_block(g, io, mode, r0, d0, d1, orow + ox, oy, ox, cnt,
                              2);
          });
        } else {
          FOR_EACH_ROW_BLOCK(g->ow, {
            bwd2x2_nchw_block(g, io, mode, r0, d0, d1, orow + ox, oy, ox, cnt,
                              3);
          });
          if (cov_w < g->w)
            zero_tensor(d0 + cov_w, g->w - cov_w);
        }
        if (cov_w < g->w) /* (a memset call per row costs) */
          zero_tensor(d1 + cov_w, g->w - cov_w);
      }
      zero_tensor(dxp + cov_h * g->w, (g->h - cov_h) * g->w);
    }
  }
}

SP_HOT void bwd2x2_nhwc_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t C = g->c, XS = g->xs, cov_w = 2 * g->ow, cov_h = 2 * g->oh;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x ? io->x + n * g->h * g->w * XS : NULL;
    float *dxn = io->dx + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t f00 = 2 * oy * g->w + 2 * ox;
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        const float *dyp = io->dy + px * g->ys;
        const vi base = vi_set1((int32_t)(g->fbase + f00));
        float *d00 = dxn + f00 * XS, *d10 = d00 + g->w * XS;
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi tap = vi_set1(0);
          if (mode == BWD_MAX) {
            const float *p00 = xn + f00 * XS + c, *p10 = p00 + g->w * XS;
            max2x2(load_lanes(p00, cn), load_lanes(p00 + XS, cn),
                   load_lanes(p10, cn), load_lanes(p10 + XS, cn), &tap);
          } else if (mode == BWD_MAX_IDX || mode == BWD_UNPOOL) {
            tap = index_to_tap(
                g, load_index(io->indices, g->index_type, o + c, cn), base);
          }
          const vf share = bwd2x2_share(mode, load_lanes(dyp + c, cn));
          vm m00, m01, m10, m11;
          bwd2x2_masks(mode, tap, &m00, &m01, &m10, &m11);
          const vf z = vf_zero();
          store_lanes(d00 + c, vf_select(m00, z, share), cn);
          store_lanes(d00 + XS + c, vf_select(m01, z, share), cn);
          store_lanes(d10 + c, vf_select(m10, z, share), cn);
          store_lanes(d10 + XS + c, vf_select(m11, z, share), cn);
        }
      }
      if (cov_w < g->w) {
        zero_px(dxn + (2 * oy * g->w + cov_w) * XS, g->w - cov_w, C, XS);
        zero_px(dxn + ((2 * oy + 1) * g->w + cov_w) * XS, g->w - cov_w, C, XS);
      }
    }
    zero_px(dxn + cov_h * g->w * XS, (g->h - cov_h) * g->w, C, XS);
  }
}

/* NHWC 2x2x2/s2 backward (BWD_MAX, BWD_MAX_IDX, BWD_UNPOOL), lanes over
 * channels: each covered dx element gets one store, as in NCHW. */
SP_HOT void bwd2x2x2_nhwc_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t C = g->c, XS = g->xs, hw = g->h * g->w;
  const size_t cov_w = 2 * g->ow, cov_h = 2 * g->oh, cov_d = 2 * g->od;
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  int32_t off[8], lab[8]; /* the taps' element offsets, their index values */
  taps2x2x2(0, g->w, hw, off);
  taps2x2x2(u8, g->w, hw, lab);
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x ? io->x + n * sp_in_plane(g) * XS : NULL;
    float *dxn = io->dx + n * sp_in_plane(g) * XS;
    for (size_t od = 0; od < g->od; od++) {
      float *s0 = dxn + 2 * od * hw * XS; /* the window's first slice */
      for (size_t oy = 0; oy < g->oh; oy++) {
        for (size_t ox = 0; ox < g->ow; ox++) {
          const size_t f00 = (2 * od * g->h + 2 * oy) * g->w + 2 * ox;
          const size_t px = ((n * g->od + od) * g->oh + oy) * g->ow + ox;
          const size_t o = px * C; /* indices: dense */
          const float *dyp = io->dy + px * g->ys;
          vi l[8];            /* the pixel's taps as index values */
          const float *xp[8]; /* where they are in x (BWD_MAX) */
          float *dp[8];       /* and in dx */
          for (int t = 0; t < 8; t++) {
            l[t] = vi_set1((u8 ? 0 : (int32_t)(g->fbase + f00)) + lab[t]);
            xp[t] = mode == BWD_MAX ? xn + (f00 + (size_t)off[t]) * XS : NULL;
            dp[t] = dxn + (f00 + (size_t)off[t]) * XS;
          }
          for (size_t c = 0; c < C; c += SP_VL) {
            const size_t cn = C - c < SP_VL ? C - c : SP_VL;
            vm m[8];
            if (mode == BWD_MAX) {
              /* The winner as in forward, as a tap number. */
              vf a[8];
              for (int t = 0; t < 8; t++)
                a[t] = load_lanes(xp[t] + c, cn);
              vi tf, tb;
              const vf front = max2x2(a[0], a[1], a[2], a[3], &tf);
              const vf back = max2x2(a[4], a[5], a[6], a[7], &tb);
              const vi tap = vi_select(mx_replaces(back, front), tf,
                                       vi_add(tb, vi_set1(4)));
              for (int t = 0; t < 8; t++)
                m[t] = vm_eq_i(tap, vi_set1(t));
            } else {
              const vi idx = load_index(io->indices, g->index_type, o + c, cn);
              for (int t = 0; t < 8; t++)
                m[t] = vm_eq_i(idx, l[t]);
            }
            const vf share = bwd2x2_share(mode, load_lanes(dyp + c, cn));
            const vf z = vf_zero();
            for (int t = 0; t < 8; t++)
              store_lanes(dp[t] + c, vf_select(m[t], z, share), cn);
          }
        }
        if (cov_w < g->w)
          for (size_t s = 0; s < 2; s++)
            for (size_t r = 0; r < 2; r++)
              zero_px(s0 + (s * hw + (2 * oy + r) * g->w + cov_w) * XS,
                      g->w - cov_w, C, XS);
      }
      for (size_t s = 0; s < 2; s++)
        zero_px(s0 + (s * hw + cov_h * g->w) * XS, (g->h - cov_h) * g->w, C,
                XS);
    }
    zero_px(dxn + cov_d * hw * XS, (g->d - cov_d) * hw, C, XS);
  }
}

/* Backward 2x2x2/s2 (BWD_MAX, BWD_MAX_IDX, BWD_UNPOOL): as in 2D, windows
 * do not overlap, so each covered dx element gets one store: the share
 * where its window's winner is, +0.0f elsewhere; elements no window covers
 * (an odd last slice, row or column) get +0.0f. */
SP_HOT void bwd2x2x2_nchw_block(const sp_geom *g, const sp_io *io, int mode,
                                const float *r0, float *d0, size_t hw, size_t o,
                                size_t od, size_t oy, size_t ox, size_t cnt) {
  vm m[8];
  if (mode == BWD_MAX) {
    /* The winner as in forward: front tree, back tree, back against front. */
    vf a[8];
    const float *p = r0 + 2 * ox;
    load_pairs(p, cnt, &a[0], &a[1]);
    load_pairs(p + g->w, cnt, &a[2], &a[3]);
    load_pairs(p + hw, cnt, &a[4], &a[5]);
    load_pairs(p + hw + g->w, cnt, &a[6], &a[7]);
    vi tf, tb;
    const vf front = max2x2(a[0], a[1], a[2], a[3], &tf);
    const vf back = max2x2(a[4], a[5], a[6], a[7], &tb);
    const vi tap =
        vi_select(mx_replaces(back, front), tf, vi_add(tb, vi_set1(4)));
    for (int t = 0; t < 8; t++)
      m[t] = vm_eq_i(tap, vi_set1(t));
  } else {
    /* The index names one of the window's 8 taps (dispatch checked it):
     * its flat position, or its tap number (U8). */
    const vi idx = load_index(io->indices, g->index_type, o, cnt);
    const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
    const vi base =
        u8 ? vi_set1(0)
           : vi_ramp(
                 (int32_t)(g->fbase + (2 * od * g->h + 2 * oy) * g->w + 2 * ox),
                 2);
    int32_t off[8];
    taps2x2x2(u8, g->w, hw, off);
    for (int t = 0; t < 8; t++)
      m[t] = vm_eq_i(idx, vi_add(base, vi_set1(off[t])));
  }
  const vf share = bwd2x2_share(mode, load_lanes(io->dy + o, cnt));
  const vf z = vf_zero();
  float *rows[4] = {d0, d0 + g->w, d0 + hw, d0 + hw + g->w};
  for (int r = 0; r < 4; r++)
    store_pairs(rows[r] + 2 * ox, cnt, vf_select(m[2 * r], z, share),
                vf_select(m[2 * r + 1], z, share));
}

SP_HOT void bwd2x2x2_nchw_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t hw = g->h * g->w, cov_w = 2 * g->ow, cov_h = 2 * g->oh;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->d * g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->od * g->oh, g->ow);
      float *dxp = io->dx + px.base;
      for (size_t od = 0; od < g->od; od++) {
        float *s0 = dxp + 2 * od * hw; /* the front slice of the pair */
        for (size_t oy = 0; oy < g->oh; oy++) {
          const size_t at = 2 * oy * g->w;
          const float *r0 =
              mode == BWD_MAX ? io->x + px.base + 2 * od * hw + at : NULL;
          const size_t orow = py.base + (od * g->oh + oy) * g->ow;
          FOR_EACH_ROW_BLOCK(g->ow, {
            bwd2x2x2_nchw_block(g, io, mode, r0, s0 + at, hw, orow + ox, od, oy,
                                ox, cnt);
          });
          if (cov_w < g->w)
            for (size_t r = 0; r < 4; r++)
              zero_tensor(s0 + at + (r & 1) * g->w + (r >> 1) * hw + cov_w,
                          g->w - cov_w);
        }
        zero_tensor(s0 + cov_h * g->w, (g->h - cov_h) * g->w);
        zero_tensor(s0 + hw + cov_h * g->w, (g->h - cov_h) * g->w);
      }
      zero_tensor(dxp + 2 * g->od * hw, (g->d - 2 * g->od) * hw);
    }
  }
}

void SP_FN(sp_maxpool_bwd_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nchw_body(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_idx_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nchw_body(g, io, BWD_MAX_IDX);
}
void SP_FN(sp_unpool_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nchw_body(g, io, BWD_UNPOOL);
}
void SP_FN(sp_maxpool_bwd_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nhwc_body(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_idx_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nhwc_body(g, io, BWD_MAX_IDX);
}
void SP_FN(sp_unpool_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nhwc_body(g, io, BWD_UNPOOL);
}

/* Backward through the scratch (fwd2x2_nchw_lop's reasons): BWD_MAX (x
 * too), BWD_MAX_IDX (indices as int32 or U8) or BWD_AVG, in groups of gw
 * planes. */
SP_HOT void bwd2x2_nchw_lop(const sp_geom *g, const sp_io *io, int mode,
                            size_t gw) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t P = g->h * g->w, Q = g->oh * g->ow, planes = g->n * g->c;
  float *const dxs = scratch, *const dys = dxs + P * gw;
  float *const xs = dys + Q * gw; /* x (BWD_MAX), or the indices */
  const sp_geom gs = lop_geom(g, mode == BWD_MAX_IDX, gw);
  for (size_t p0 = 0; p0 < planes; p0 += gw) {
    const size_t np = planes - p0 < gw ? planes - p0 : gw;
    lop_gather(dys, gw, io->dy + p0 * Q, Q, Q, np);
    sp_io ios = {NULL, NULL, NULL, dys, dxs};
    if (mode == BWD_MAX_IDX) {
      lop_indices(g, io->indices, xs, gw, p0, np, 0);
      lop_unused_lanes(g, xs, gw, Q, np);
      ios.indices = xs;
    } else if (mode == BWD_MAX) {
      lop_gather(xs, gw, io->x + p0 * P, P, P, np);
      ios.x = xs;
    }
    bwd2x2_nhwc_body(&gs, &ios, mode);
    lop_scatter(io->dx + p0 * P, dxs, gw, P, P, np);
  }
}

/* The NCHW backward entry (not unpooling): through the scratch where rows
 * are short and a group fits, else by rows. */
SP_HOT void bwd2x2_nchw(const sp_geom *g, const sp_io *io, int mode) {
  const size_t gw = p2_lop_width(g, 1 + (size_t)(mode == BWD_MAX),
                                 1 + (size_t)(mode == BWD_MAX_IDX));
  if (gw)
    bwd2x2_nchw_lop(g, io, mode, gw);
  else
    bwd2x2_nchw_body(g, io, mode);
}

void SP_FN(sp_maxpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_idx_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw(g, io, BWD_MAX_IDX);
}
void SP_FN(sp_maxpool_bwd_idx_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_MAX_IDX);
}
void SP_FN(sp_unpool_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw_body(g, io, BWD_UNPOOL);
}
void SP_FN(sp_unpool_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_UNPOOL);
}
void SP_FN(sp_avgpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw(g, io, BWD_AVG);
}
void SP_FN(sp_avgpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_AVG);
}
