/* SPDX-License-Identifier: MIT */
/* pool_2x2s2.c — the 2x2/stride-2 kernels (no padding), forward and
 * backward, NCHW and NHWC; compiled once per SIMD ISA and element type
 * (kernels/meson.build, tmpl/elem.h). */
#include "tmpl/vec.h"

#include "tmpl/nchw.h"
#include "tmpl/nhwc.h"

/* The f32 NHWC entries that the NCHW entries run on groups of planes
 * through the f32 scratch (lop_run; defined below in the f32 build, whose
 * symbols the other element types' builds call). */
void SP_FN(sp_maxpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_avgpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_lppool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_maxpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_maxpool_bwd_idx_2x2s2_nhwc)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_avgpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io);

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

/* MAX of one 2x2 block holding no NaN: max(b, a) = b > a ? b : a is then
 * each MAX step exactly (ties keep a), in the same tree. */
static inline vf max2x2_plain(vf a00, vf a01, vf a10, vf a11) {
  return vf_max_x86(vf_max_x86(a11, a10), vf_max_x86(a01, a00));
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
static inline void load_pairs(const el_t *p, size_t n, vf *even, vf *odd,
                              int ord) {
  el_load_elems_x(p, 2 * n, even, odd, ord);
}
static inline void store_pairs(el_t *p, size_t n, vf even, vf odd, int exact) {
  el_store_elems(p, 2 * n, even, odd, exact);
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

/* Forward 2x2/s2 of any method on one block of lanes; MAX with track puts
 * in *tap the winner's entry of labels (the four taps' index values). */
static inline vf fwd2x2(int method, int kind, int track, float pv, float inv_p,
                        vf a00, vf a01, vf a10, vf a11, const vi *labels,
                        vi *tap) {
  if (method == P2_MAX) {
    /* A block holding a NaN takes the full compare-and-select. */
    if (!track && !vm_any(vm_or(vm_unord(a00, a01), vm_unord(a10, a11))))
      return max2x2_plain(a00, a01, a10, a11);
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

/* The same with blocks that never overlap: full ones, then one short
 * block for the rest, for outputs read back after they are stored. */
#define FOR_EACH_DISJOINT_BLOCK(ow, ...)                                       \
  do {                                                                         \
    size_t ox_ = 0;                                                            \
    for (; ox_ + SP_VL <= (ow); ox_ += SP_VL) {                                \
      const size_t ox = ox_, cnt = SP_VL;                                      \
      __VA_ARGS__                                                              \
    }                                                                          \
    if (ox_ < (ow)) {                                                          \
      const size_t ox = ox_, cnt = (ow)-ox_;                                   \
      __VA_ARGS__                                                              \
    }                                                                          \
  } while (0)

/* One block of cnt outputs at (oy, ox) from input rows r0, r1 (at ox's
 * first input); cnt == SP_VL is a compile-time constant in the row loop, so
 * full blocks load and store whole vectors. */
SP_HOT void fwd2x2_nchw_block(const sp_geom *g, const sp_io *io, int method,
                              int track, int pf, int kind, float pv,
                              float inv_p, const el_t *r0, const el_t *r1,
                              size_t o, size_t oy, size_t ox, size_t cnt) {
  vf a00, a01, a10, a11;
  if (pf) {
    el_prefetch_ahead(r0, 2 * cnt);
    el_prefetch_ahead(r1, 2 * cnt);
  }
  /* el_load_ord's loads (a NaN as some NaN) where no NaN's bits are kept:
   * sums write theirs canonical, and MAX without indices tests for NaN
   * and reloads exactly if it met one. */
  const int ord =
      method == P2_AVG || method == P2_LP || (method == P2_MAX && !track);
  load_pairs(r0, cnt, &a00, &a01, ord);
  load_pairs(r1, cnt, &a10, &a11, ord);
  if (method == P2_MAX && !track) {
    if (!vm_any(vm_or(vm_unord(a00, a01), vm_unord(a10, a11)))) {
      el_store_lanes_x(EL_Y(io) + o,
                       yclamp(g, max2x2_plain(a00, a01, a10, a11)), cnt,
                       !g->clamp);
      return;
    }
    load_pairs(r0, cnt, &a00, &a01, 0); /* a NaN: its exact bits */
    load_pairs(r1, cnt, &a10, &a11, 0);
  }
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
    el_store_lanes_x(EL_Y(io) + o, select2x2(tap, a00, a01, a10, a11), cnt, 1);
    return;
  }
  const vf y =
      fwd2x2(method, kind, track, pv, inv_p, a00, a01, a10, a11, l, &won);
  el_store_lanes_x(EL_Y(io) + o, yclamp(g, y), cnt,
                   method == P2_MAX && !g->clamp);
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
        const el_t *r0 = EL_X(io) + px.base + 2 * oy * g->w;
        const el_t *r1 = r0 + g->w;
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

#define P2_NV 4
/* The four taps of nv vectors: exactly (el_load) or as el_load_ord (a NaN
 * as some NaN). */
SP_HOT void load_taps_nhwc(const el_t *p00, const el_t *p10, size_t XS,
                           size_t nv, int exact, vf a00[], vf a01[], vf a10[],
                           vf a11[]) {
  for (size_t u = 0; u < nv; u++) {
    const el_t *q00 = p00 + u * SP_VL, *q10 = p10 + u * SP_VL;
    a00[u] = exact ? el_load(q00) : el_load_ord(q00);
    a01[u] = exact ? el_load(q00 + XS) : el_load_ord(q00 + XS);
    a10[u] = exact ? el_load(q10) : el_load_ord(q10);
    a11[u] = exact ? el_load(q10 + XS) : el_load_ord(q10 + XS);
  }
}

/* NHWC: nv (a compile-time 1, 2 or 4) full vectors of channels of one
 * output pixel, the taps at p00 (row 0) and p10 (row 1). MAX without
 * indices tests the nv blocks for NaN at once (one branch, not one per
 * vector); a NaN sends them all to fwd2x2's exact path. */
SP_HOT void fwd2x2_nhwc_vecs(const sp_geom *g, int method, int track, int kind,
                             float pv, float inv_p, const el_t *p00,
                             const el_t *p10, el_t *yp, void *ind, size_t o,
                             const vi l[4], size_t nv) {
  const size_t XS = g->xs;
  const int exact = method == P2_MAX && !g->clamp;
  vf a00[P2_NV], a01[P2_NV], a10[P2_NV], a11[P2_NV];
  /* Sums write their NaN canonical; MAX without indices tests for NaN and
   * reloads exactly if it met one; MAX with indices (no test) loads
   * exactly. */
  load_taps_nhwc(p00, p10, XS, nv, method == P2_MAX && track, a00, a01, a10,
                 a11);
  if (method == P2_MAX && !track) {
    vm bad = vm_range(0, 0);
    for (size_t u = 0; u < nv; u++)
      bad =
          vm_or(bad, vm_or(vm_unord(a00[u], a01[u]), vm_unord(a10[u], a11[u])));
    if (!vm_any(bad)) {
      for (size_t u = 0; u < nv; u++)
        el_store_x(yp + u * SP_VL,
                   yclamp(g, max2x2_plain(a00[u], a01[u], a10[u], a11[u])),
                   exact);
      return;
    }
    load_taps_nhwc(p00, p10, XS, nv, 1, a00, a01, a10, a11); /* NaN bits */
  }
  for (size_t u = 0; u < nv; u++) {
    vi won = vi_set1(0); /* set by MAX with track */
    const vf y = fwd2x2(method, kind, track, pv, inv_p, a00[u], a01[u], a10[u],
                        a11[u], l, &won);
    el_store_x(yp + u * SP_VL, yclamp(g, y), exact);
    if (method == P2_MAX && track)
      store_index(ind, g->index_type, o + u * SP_VL, won, SP_VL);
  }
}

/* NHWC: lanes over channels, output pixel by pixel; `track` (MAX: indices)
 * a compile-time constant. Full vectors go four, two or one at a time
 * (fwd2x2_nhwc_vecs); a channel tail shorter than a vector last. */
SP_HOT void fwd2x2_nhwc_body(const sp_geom *g, const sp_io *io, int method,
                             int track) {
  const size_t C = g->c, XS = g->xs;
  const int kind = lp_kind(g->p);
  const float pv = g->p, inv_p = 1.0f / g->p;
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t f00 = 2 * oy * g->w + 2 * ox;
        const el_t *p00 = xn + f00 * XS, *p10 = p00 + g->w * XS;
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        el_t *yp = EL_Y(io) + px * g->ys;
        /* The pixel's four taps as index values (U8: tap numbers). */
        const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
        const int32_t b = u8 ? 0 : (int32_t)(g->fbase + f00),
                      w1 = u8 ? 2 : (int32_t)g->w;
        const vi l[4] = {vi_set1(b), vi_set1(b + 1), vi_set1(b + w1),
                         vi_set1(b + w1 + 1)};
        size_t c = 0;
        /* With indices one vector at a time: four vectors' loads ahead
         * of their index stores ran 20% slower (vgg_max2, I64). */
        if (method == P2_MAX && track) {
          for (; c + SP_VL <= C; c += SP_VL)
            fwd2x2_nhwc_vecs(g, method, track, kind, pv, inv_p, p00 + c,
                             p10 + c, yp + c, io->indices, o + c, l, 1);
        } else if (method != P2_GATHER) {
          for (; c + P2_NV * SP_VL <= C; c += P2_NV * SP_VL)
            fwd2x2_nhwc_vecs(g, method, track, kind, pv, inv_p, p00 + c,
                             p10 + c, yp + c, io->indices, o + c, l, P2_NV);
          if (c + 2 * SP_VL <= C) {
            fwd2x2_nhwc_vecs(g, method, track, kind, pv, inv_p, p00 + c,
                             p10 + c, yp + c, io->indices, o + c, l, 2);
            c += 2 * SP_VL;
          }
          if (c + SP_VL <= C) {
            fwd2x2_nhwc_vecs(g, method, track, kind, pv, inv_p, p00 + c,
                             p10 + c, yp + c, io->indices, o + c, l, 1);
            c += SP_VL;
          }
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          if (method == P2_GATHER) {
            const vi tap = index_to_tap(
                g, load_index(io->indices, g->index_type, o + c, cn), l[0]);
            el_store_lanes_x(yp + c,
                             select2x2(tap, el_load_lanes(p00 + c, cn),
                                       el_load_lanes(p00 + XS + c, cn),
                                       el_load_lanes(p10 + c, cn),
                                       el_load_lanes(p10 + XS + c, cn)),
                             cn, 1);
            continue;
          }
          vi won = vi_set1(0); /* set by MAX with track */
          const vf y = fwd2x2(
              method, kind, track, pv, inv_p, el_load_lanes(p00 + c, cn),
              el_load_lanes(p00 + XS + c, cn), el_load_lanes(p10 + c, cn),
              el_load_lanes(p10 + XS + c, cn), l, &won);
          el_store_lanes_x(yp + c, yclamp(g, y), cn,
                           method == P2_MAX && !g->clamp);
          if (method == P2_MAX && track)
            store_index(io->indices, g->index_type, o + c, won, cn);
        }
      }
    }
  }
}

/* ================================================================ 2x2x2/s2
 * 3D MAX, 2x2x2 windows, stride 2, no padding (SP_SHAPE_2X2X2S2), NCHW:
 * lanes over output columns as in 2D. Each window is the 2x2 tree of its
 * front slice, the same of its back slice, then back against front: taps
 * stay in scan order (depth, row, column), hence the reference's bits.
 *
 * Read in one pass, a window's two slices are two input streams a slice
 * apart, and beyond L2 the hardware prefetchers serve such a pair poorly
 * (c3d_max222, 29 MB: 24 GB/s, against 35-40 GB/s for a sequential read of
 * the same bytes). There a band of output rows goes in two passes instead
 * (P3_FRONT, then P3_BACK): the front slice's trees are stored in y (and
 * their winners in the indices), then the back slice's are set against
 * them, read back from L1: each pass is one sequential input stream. The
 * values compared and their order are the same, hence the same bits. */
enum { P3_BOTH, P3_FRONT, P3_BACK, P3_DX_FRONT };

/* Output rows per two-pass band: as many as keep the band's outputs (y and
 * indices, pixel_bytes per output pixel) within 16 KiB, so that the second
 * pass finds them in L1. */
static inline size_t p3_band_rows(const sp_geom *g, size_t pixel_bytes) {
  const size_t row = g->ow * pixel_bytes;
  const size_t r = row ? (16384 / row) : g->oh;
  return r < 1 ? 1 : r > g->oh ? g->oh : r;
}

/* The bytes of one output element and its index. */
static inline size_t p3_out_bytes(const sp_geom *g, int with_index) {
  return sizeof(el_t) + (with_index ? sp_index_size(g->index_type) : 0);
}

/* The eight taps of a window as lanes, the first `half` leaves out
 * unloaded: a[t] for t in [t0, t1). l: their index values (base plus
 * the offsets of taps2x2x2). P2_MAX (track: with indices) or P2_GATHER
 * (unpooling's backward: the tap each index names); y + o and the
 * indices at o are the block's outputs. */
SP_HOT void fwd2x2x2_taps(const sp_geom *g, const sp_io *io, int method,
                          int track, int half, const vf *a, const vi *l,
                          size_t o, el_t *yo, size_t cnt) {
  const int t0 = half == P3_BACK ? 4 : 0, t1 = half == P3_FRONT ? 4 : 8;
  if (method == P2_GATHER) {
    /* Exactly one tap of the eight matches; a lane whose tap is in the
     * other half takes that half's pass's value. */
    const vi idx = load_index(io->indices, g->index_type, o, cnt);
    vf v = half == P3_BACK ? el_load_lanes(yo, cnt) : a[t0];
    for (int t = t0 + 1 - (half == P3_BACK); t < t1; t++)
      v = vf_select(vm_eq_i(idx, l[t]), v, a[t]);
    el_store_lanes_x(yo, v, cnt, 1);
    return;
  }
  if (!track && half == P3_BOTH &&
      !vm_any(vm_or(vm_or(vm_unord(a[0], a[1]), vm_unord(a[2], a[3])),
                    vm_or(vm_unord(a[4], a[5]), vm_unord(a[6], a[7]))))) {
    /* No NaN among the eight (tested once for the window): plain trees,
     * and the back replaces the front where greater. */
    const vf f = max2x2_plain(a[0], a[1], a[2], a[3]);
    const vf b = max2x2_plain(a[4], a[5], a[6], a[7]);
    el_store_lanes_x(yo, yclamp(g, vf_max_x86(b, f)), cnt, !g->clamp);
    return;
  }
  vi wf = vi_set1(0), wb = vi_set1(0); /* set with track */
  vf front;
  if (half == P3_BACK) { /* the front as P3_FRONT left it */
    front = el_load_lanes(yo, cnt);
    if (track)
      wf = load_index(io->indices, g->index_type, o, cnt);
  } else {
    front =
        fwd2x2(P2_MAX, 0, track, 0.0f, 0.0f, a[0], a[1], a[2], a[3], l, &wf);
  }
  if (half == P3_FRONT) { /* unclamped: P3_BACK compares it */
    el_store_lanes_x(yo, front, cnt, 1);
    if (track)
      store_index(io->indices, g->index_type, o, wf, cnt);
    return;
  }
  const vf back =
      fwd2x2(P2_MAX, 0, track, 0.0f, 0.0f, a[4], a[5], a[6], a[7], l + 4, &wb);
  const vm later = mx_replaces(back, front);
  el_store_lanes_x(yo, yclamp(g, vf_select(later, front, back)), cnt,
                   !g->clamp);
  if (track)
    store_index(io->indices, g->index_type, o, vi_select(later, wf, wb), cnt);
}

/* NHWC 2x2x2/s2 (SP_SHAPE_2X2X2S2), MAX (P2_MAX) or unpooling's backward
 * (P2_GATHER: the tap each index names), lanes over channels, one output
 * pixel's eight taps at a time: its front slice's tree, its back slice's,
 * then back against front as in NCHW. Its input runs are whole rows of
 * pixels (c3d_max222: 28 KiB), which the prefetchers follow: the two-pass
 * order of NCHW below measured 1.3-1.4x slower here (bands of 1 to 18 output
 * rows). (Folding the 2D window into this body as its front four taps
 * measured 1.2-1.4x slower on in-cache 2D planes than the 2D body above.) */
SP_HOT void fwd2x2x2_nhwc_rows(const sp_geom *g0, const sp_io *io0, int method,
                               int track) {
  /* Local copies: the vector stores (which may alias anything) then leave
   * the geometry and pointers in registers. */
  const sp_geom gl = *g0, *const g = &gl;
  const sp_io iol = *io0, *const io = &iol;
  const size_t C = g->c, XS = g->xs, hw = g->h * g->w;
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  int32_t off[8], lab[8]; /* the taps' element offsets, their index values */
  taps2x2x2(0, g->w, hw, off);
  taps2x2x2(u8, g->w, hw, lab);
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * sp_in_plane(g) * XS;
    for (size_t od = 0; od < g->od; od++) {
      for (size_t oy = 0; oy < g->oh; oy++) {
        for (size_t ox = 0; ox < g->ow; ox++) {
          const size_t f00 = (2 * od * g->h + 2 * oy) * g->w + 2 * ox;
          const size_t px = ((n * g->od + od) * g->oh + oy) * g->ow + ox;
          const size_t o = px * C; /* indices: dense */
          const el_t *p = xn + f00 * XS;
          el_t *yp = EL_Y(io) + px * g->ys;
          vi l[8];           /* the pixel's taps as index values */
          const el_t *tp[8]; /* and where they are */
          for (int t = 0; t < 8; t++) {
            l[t] = vi_set1((u8 ? 0 : (int32_t)(g->fbase + f00)) + lab[t]);
            tp[t] = p + (size_t)off[t] * XS;
          }
          for (size_t c = 0; c < C; c += SP_VL) {
            const size_t cn = C - c < SP_VL ? C - c : SP_VL;
            vf a[8];
            for (int t = 0; t < 8; t++)
              a[t] = el_load_lanes(tp[t] + c, cn);
            fwd2x2x2_taps(g, io, method, track, P3_BOTH, a, l, o + c, yp + c,
                          cn);
          }
        }
      }
    }
  }
}

SP_HOT void fwd2x2x2_nhwc_body(const sp_geom *g, const sp_io *io, int method) {
  if (method != P2_GATHER && g->index_type != SIMDPOOL_INDEX_NONE)
    fwd2x2x2_nhwc_rows(g, io, method, 1);
  else
    fwd2x2x2_nhwc_rows(g, io, method, 0);
}

/* NCHW: one block of cnt outputs at (od, oy, ox); r0 is the window's first
 * input row (front slice), hw the elements of one slice. */
SP_HOT void fwd2x2x2_nchw_block(const sp_geom *g, const sp_io *io, int method,
                                int track, int half, const el_t *r0, size_t hw,
                                size_t o, size_t od, size_t oy, size_t ox,
                                size_t cnt) {
  vf a[8];
  if (half != P3_BACK) {
    load_pairs(r0, cnt, &a[0], &a[1], 0);
    load_pairs(r0 + g->w, cnt, &a[2], &a[3], 0);
  }
  if (half != P3_FRONT) {
    load_pairs(r0 + hw, cnt, &a[4], &a[5], 0);
    load_pairs(r0 + hw + g->w, cnt, &a[6], &a[7], 0);
  }
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
  fwd2x2x2_taps(g, io, method, track, half, a, l, o, EL_Y(io) + o, cnt);
}

/* Output rows [oy0, oy1) of slice od of the plane at px (x), py (y). */
SP_HOT void fwd2x2x2_nchw_rows(const sp_geom *g, const sp_io *io, int method,
                               int track, int half, const sp_plane *px,
                               const sp_plane *py, size_t od, size_t oy0,
                               size_t oy1) {
  const size_t hw = g->h * g->w;
  for (size_t oy = oy0; oy < oy1; oy++) {
    const el_t *r0 = EL_X(io) + px->base + (2 * od * g->h + 2 * oy) * g->w;
    const size_t orow = py->base + (od * g->oh + oy) * g->ow;
    if (half == P3_BOTH)
      FOR_EACH_ROW_BLOCK(g->ow, {
        fwd2x2x2_nchw_block(g, io, method, track, half, r0 + 2 * ox, hw,
                            orow + ox, od, oy, ox, cnt);
      });
    else /* P3_BACK reads what P3_FRONT left: no output twice */
      FOR_EACH_DISJOINT_BLOCK(g->ow, {
        fwd2x2x2_nchw_block(g, io, method, track, half, r0 + 2 * ox, hw,
                            orow + ox, od, oy, ox, cnt);
      });
  }
}

SP_HOT void fwd2x2x2_nchw_body(const sp_geom *g, const sp_io *io, int method,
                               int track) {
  const size_t band =
      p3_band_rows(g, p3_out_bytes(g, track || method == P2_GATHER));
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->d * g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->od * g->oh, g->ow);
      for (size_t od = 0; od < g->od; od++)
        for (size_t oy = 0; oy < g->oh; oy += band) {
          const size_t oy1 = g->oh - oy < band ? g->oh : oy + band;
          if (g->beyond_l2) {
            fwd2x2x2_nchw_rows(g, io, method, track, P3_FRONT, &px, &py, od, oy,
                               oy1);
            fwd2x2x2_nchw_rows(g, io, method, track, P3_BACK, &px, &py, od, oy,
                               oy1);
          } else {
            fwd2x2x2_nchw_rows(g, io, method, track, P3_BOTH, &px, &py, od, oy,
                               oy1);
          }
        }
    }
  }
}

void SP_KFN(sp_maxpool_fwd_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    fwd2x2x2_nchw_body(g, io, P2_MAX, 0);
  else
    fwd2x2x2_nchw_body(g, io, P2_MAX, 1);
}
void SP_KFN(sp_maxpool_fwd_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2x2_nhwc_body(g, io, P2_MAX);
}
void SP_KFN(sp_unpool_bwd_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2x2_nchw_body(g, io, P2_GATHER, 0);
}
void SP_KFN(sp_unpool_bwd_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
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

/* The NCHW forward entry: through the scratch where rows are short and a
 * group fits, else by rows. */
SP_HOT void fwd2x2_nchw(const sp_geom *g, const sp_io *io, int method,
                        int track) {
  const size_t gw = p2_lop_width(g, 1, 1 + (size_t)track);
  if (gw)
    lop_run(g, io, gw, 1, -1, track,
            method == P2_MAX   ? SP_FN(sp_maxpool_fwd_2x2s2_nhwc)
            : method == P2_AVG ? SP_FN(sp_avgpool_fwd_2x2s2_nhwc)
                               : SP_FN(sp_lppool_fwd_2x2s2_nhwc));
  else
    fwd2x2_nchw_body(g, io, method, track);
}

void SP_KFN(sp_maxpool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  if (el_bmax_if(g, io)) /* S8/U8: byte lanes */
    return;
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    fwd2x2_nchw(g, io, P2_MAX, 0);
  else
    fwd2x2_nchw(g, io, P2_MAX, 1);
}
void SP_KFN(sp_maxpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  if (el_bmax_if(g, io)) /* S8/U8: byte lanes */
    return;
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    fwd2x2_nhwc_body(g, io, P2_MAX, 0);
  else
    fwd2x2_nhwc_body(g, io, P2_MAX, 1);
}
#if !SP_EL_INT8 /* S8/U8: MAX forward and unpooling only */
void SP_KFN(sp_avgpool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw(g, io, P2_AVG, 0);
}
void SP_KFN(sp_avgpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_AVG, 0);
}
void SP_KFN(sp_lppool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw(g, io, P2_LP, 0);
}
void SP_KFN(sp_lppool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_LP, 0);
}
#endif
void SP_KFN(sp_unpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw_body(g, io, P2_GATHER, 0);
}
void SP_KFN(sp_unpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_GATHER, 0);
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
                              const el_t *r0, el_t *d0, el_t *d1, size_t o,
                              size_t oy, size_t ox, size_t cnt, int rows) {
  vi tap = vi_set1(0);
  if (mode == BWD_MAX) {
    vf a00, a01, a10, a11;
    load_pairs(r0 + 2 * ox, cnt, &a00, &a01, 0);
    load_pairs(r0 + g->w + 2 * ox, cnt, &a10, &a11, 0);
    max2x2(a00, a01, a10, a11, &tap);
  } else if (mode == BWD_MAX_IDX || mode == BWD_UNPOOL) {
    const vi base = vi_ramp((int32_t)(g->fbase + 2 * oy * g->w + 2 * ox), 2);
    tap = index_to_tap(g, load_index(io->indices, g->index_type, o, cnt), base);
  }
  const vf share = bwd2x2_share(mode, el_load_lanes(EL_DY(io) + o, cnt));
  vm m00, m01, m10, m11;
  bwd2x2_masks(mode, tap, &m00, &m01, &m10, &m11);
  const vf z = vf_zero();
  const int exact = mode != BWD_AVG; /* dy's values, +0 */
  if (rows & 1)
    store_pairs(d0 + 2 * ox, cnt, vf_select(m00, z, share),
                vf_select(m01, z, share), exact);
  if (rows & 2)
    store_pairs(d1 + 2 * ox, cnt, vf_select(m10, z, share),
                vf_select(m11, z, share), exact);
}

SP_HOT void bwd2x2_nchw_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t cov_w = 2 * g->ow, cov_h = 2 * g->oh;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->oh, g->ow);
      el_t *dxp = EL_DX(io) + px.base;
      for (size_t oy = 0; oy < g->oh; oy++) {
        const el_t *r0 =
            mode == BWD_MAX ? EL_X(io) + px.base + 2 * oy * g->w : NULL;
        el_t *d0 = dxp + 2 * oy * g->w, *d1 = d0 + g->w;
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
            el_zero(d0 + cov_w, g->w - cov_w);
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
            el_zero(d0 + cov_w, g->w - cov_w);
        }
        if (cov_w < g->w) /* (a memset call per row costs) */
          el_zero(d1 + cov_w, g->w - cov_w);
      }
      el_zero(dxp + cov_h * g->w, (g->h - cov_h) * g->w);
    }
  }
}

SP_HOT void bwd2x2_nhwc_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t C = g->c, XS = g->xs, cov_w = 2 * g->ow, cov_h = 2 * g->oh;
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = io->xv ? EL_X(io) + n * g->h * g->w * XS : NULL;
    el_t *dxn = EL_DX(io) + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t f00 = 2 * oy * g->w + 2 * ox;
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        const el_t *dyp = EL_DY(io) + px * g->ys;
        const vi base = vi_set1((int32_t)(g->fbase + f00));
        el_t *d00 = dxn + f00 * XS, *d10 = d00 + g->w * XS;
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi tap = vi_set1(0);
          if (mode == BWD_MAX) {
            const el_t *p00 = xn + f00 * XS + c, *p10 = p00 + g->w * XS;
            max2x2(el_load_lanes(p00, cn), el_load_lanes(p00 + XS, cn),
                   el_load_lanes(p10, cn), el_load_lanes(p10 + XS, cn), &tap);
          } else if (mode == BWD_MAX_IDX || mode == BWD_UNPOOL) {
            tap = index_to_tap(
                g, load_index(io->indices, g->index_type, o + c, cn), base);
          }
          const vf share = bwd2x2_share(mode, el_load_lanes(dyp + c, cn));
          vm m00, m01, m10, m11;
          bwd2x2_masks(mode, tap, &m00, &m01, &m10, &m11);
          const vf z = vf_zero();
          const int exact = mode != BWD_AVG; /* dy's values, +0 */
          el_store_lanes_x(d00 + c, vf_select(m00, z, share), cn, exact);
          el_store_lanes_x(d00 + XS + c, vf_select(m01, z, share), cn, exact);
          el_store_lanes_x(d10 + c, vf_select(m10, z, share), cn, exact);
          el_store_lanes_x(d10 + XS + c, vf_select(m11, z, share), cn, exact);
        }
      }
      if (cov_w < g->w) {
        el_zero_px(dxn + (2 * oy * g->w + cov_w) * XS, g->w - cov_w, C, XS);
        el_zero_px(dxn + ((2 * oy + 1) * g->w + cov_w) * XS, g->w - cov_w, C,
                   XS);
      }
    }
    el_zero_px(dxn + cov_h * g->w * XS, (g->h - cov_h) * g->w, C, XS);
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
    const el_t *xn = io->xv ? EL_X(io) + n * sp_in_plane(g) * XS : NULL;
    el_t *dxn = EL_DX(io) + n * sp_in_plane(g) * XS;
    for (size_t od = 0; od < g->od; od++) {
      el_t *s0 = dxn + 2 * od * hw * XS; /* the window's first slice */
      for (size_t oy = 0; oy < g->oh; oy++) {
        for (size_t ox = 0; ox < g->ow; ox++) {
          const size_t f00 = (2 * od * g->h + 2 * oy) * g->w + 2 * ox;
          const size_t px = ((n * g->od + od) * g->oh + oy) * g->ow + ox;
          const size_t o = px * C; /* indices: dense */
          const el_t *dyp = EL_DY(io) + px * g->ys;
          vi l[8];           /* the pixel's taps as index values */
          const el_t *xp[8]; /* where they are in x (BWD_MAX) */
          el_t *dp[8];       /* and in dx */
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
                a[t] = el_load_lanes(xp[t] + c, cn);
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
            const vf share = bwd2x2_share(mode, el_load_lanes(dyp + c, cn));
            const vf z = vf_zero();
            for (int t = 0; t < 8; t++) /* dy's values, +0: exact */
              el_store_lanes_x(dp[t] + c, vf_select(m[t], z, share), cn, 1);
          }
        }
        if (cov_w < g->w)
          for (size_t s = 0; s < 2; s++)
            for (size_t r = 0; r < 2; r++)
              el_zero_px(s0 + (s * hw + (2 * oy + r) * g->w + cov_w) * XS,
                         g->w - cov_w, C, XS);
      }
      for (size_t s = 0; s < 2; s++)
        el_zero_px(s0 + (s * hw + cov_h * g->w) * XS, (g->h - cov_h) * g->w, C,
                   XS);
    }
    el_zero_px(dxn + cov_d * hw * XS, (g->d - cov_d) * hw, C, XS);
  }
}

/* Backward 2x2x2/s2 (BWD_MAX, BWD_MAX_IDX, BWD_UNPOOL): as in 2D, windows
 * do not overlap, so each covered dx element gets one store: the share
 * where its window's winner is, +0.0f elsewhere; elements no window covers
 * (an odd last slice, row or column) get +0.0f. Beyond L2 a band of output
 * rows goes in two passes as in forward, P3_FRONT storing the front slice's
 * dx rows, P3_BACK the back slice's: one store stream at a time. BWD_MAX
 * finds the winners in P3_FRONT and keeps their tap numbers in `taps` (the
 * band's, row by row) for P3_BACK. */
#define P3_TAPS 4096 /* bytes of tap numbers: a band's outputs at most */

/* A band row's entries in that scratch: whole vectors are stored there, and
 * one row's must not run into the next's (P3_BACK reads, then rewrites). */
static inline size_t p3_scratch_row(const sp_geom *g) {
  return g->ow < SP_VL ? SP_VL : g->ow;
}

/* The dx rows of a window that stage `half` writes, [*r0, *r1) of front
 * rows 0, 1 and back rows 2, 3: BWD_MAX's P3_FRONT only finds winners, and
 * its P3_DX_FRONT writes the front rows. */
static inline void p3_dx_rows(int mode, int half, int *r0, int *r1) {
  *r0 = half == P3_BACK ? 2 : 0;
  *r1 = half == P3_BOTH || half == P3_BACK    ? 4
        : half == P3_FRONT && mode == BWD_MAX ? 0
                                              : 2;
}

SP_HOT void bwd2x2x2_nchw_block(const sp_geom *g, const sp_io *io, int mode,
                                int half, const el_t *r0, el_t *d0, size_t hw,
                                size_t o, size_t od, size_t oy, size_t ox,
                                size_t cnt, uint8_t *taps, float *fronts) {
  vm m[8];
  int r0_, r1_;
  p3_dx_rows(mode, half, &r0_, &r1_);
  if (mode == BWD_MAX) {
    /* The winner as in forward: front tree, back tree, back against
     * front. Split (P3_FRONT, P3_BACK, P3_DX_FRONT): the front's tree and
     * tap kept in fronts and taps, the back's set against them, dx's back
     * rows stored with the winner's tap kept, then dx's front rows. */
    vi tap;
    if (half == P3_DX_FRONT) {
      tap = vi_load_u8(taps + ox);
    } else {
      vf a[8];
      const el_t *p = r0 + 2 * ox;
      vi tf = vi_set1(0), tb;
      vf front;
      if (half != P3_BACK) {
        load_pairs(p, cnt, &a[0], &a[1], 0);
        load_pairs(p + g->w, cnt, &a[2], &a[3], 0);
        front = max2x2(a[0], a[1], a[2], a[3], &tf);
        if (half == P3_FRONT) { /* whole vectors: the scratch has room */
          vf_store(fronts + ox, front);
          vi_store_u8(taps + ox, tf);
          return;
        }
      } else {
        front = vf_load(fronts + ox);
        tf = vi_load_u8(taps + ox);
      }
      load_pairs(p + hw, cnt, &a[4], &a[5], 0);
      load_pairs(p + hw + g->w, cnt, &a[6], &a[7], 0);
      const vf back = max2x2(a[4], a[5], a[6], a[7], &tb);
      tap = vi_select(mx_replaces(back, front), tf, vi_add(tb, vi_set1(4)));
      /* An overlapping last block reads back this winner as its front's
       * tap: where the back won it is tb + 4 either way, elsewhere tf. */
      if (half == P3_BACK)
        vi_store_u8(taps + ox, tap);
    }
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
  const vf share = bwd2x2_share(mode, el_load_lanes(EL_DY(io) + o, cnt));
  const vf z = vf_zero();
  el_t *rows[4] = {d0, d0 + g->w, d0 + hw, d0 + hw + g->w};
  for (int r = r0_; r < r1_; r++)
    store_pairs(rows[r] + 2 * ox, cnt, vf_select(m[2 * r], z, share),
                vf_select(m[2 * r + 1], z, share), 1); /* dy's values, +0 */
}

/* Output rows [oy0, oy1) of slice pair od of the plane at px (x, dx) and
 * py (dy, indices): the stage `half` of each block, dx's uncovered columns
 * included with the rows it writes. taps, fronts: the band's scratch. */
SP_HOT void bwd2x2x2_nchw_rows(const sp_geom *g, const sp_io *io, int mode,
                               int half, const sp_plane *px, const sp_plane *py,
                               size_t od, size_t oy0, size_t oy1, uint8_t *taps,
                               float *fronts) {
  const size_t hw = g->h * g->w, cov_w = 2 * g->ow;
  el_t *s0 = EL_DX(io) + px->base + 2 * od * hw; /* the front slice */
  int r0_, r1_;
  p3_dx_rows(mode, half, &r0_, &r1_);
  for (size_t oy = oy0; oy < oy1; oy++) {
    const size_t at = 2 * oy * g->w;
    const el_t *r0 =
        mode == BWD_MAX ? EL_X(io) + px->base + 2 * od * hw + at : NULL;
    const size_t orow = py->base + (od * g->oh + oy) * g->ow;
    const size_t ro = half == P3_BOTH ? 0 : (oy - oy0) * p3_scratch_row(g);
    FOR_EACH_ROW_BLOCK(g->ow, {
      bwd2x2x2_nchw_block(g, io, mode, half, r0, s0 + at, hw, orow + ox, od, oy,
                          ox, cnt, taps + ro, fronts + ro);
    });
    if (cov_w < g->w)
      for (int r = r0_; r < r1_; r++)
        el_zero(s0 + at + (size_t)(r & 1) * g->w + (size_t)(r >> 1) * hw +
                    cov_w,
                g->w - cov_w);
  }
}

SP_HOT void bwd2x2x2_nchw_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t hw = g->h * g->w, cov_h = 2 * g->oh;
  /* Two passes (BWD_MAX: three) where a band's scratch holds a row. */
  const size_t rs = p3_scratch_row(g);
  const int split = g->beyond_l2 && (mode != BWD_MAX || rs <= P3_TAPS);
  size_t band = p3_band_rows(g, p3_out_bytes(g, mode != BWD_MAX));
  if (mode == BWD_MAX && split && band * rs > P3_TAPS)
    band = P3_TAPS / rs;
  uint8_t taps[P3_TAPS + SP_VL];
  float fronts[mode == BWD_MAX ? P3_TAPS + SP_VL : 1];
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->d * g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->od * g->oh, g->ow);
      el_t *dxp = EL_DX(io) + px.base;
      for (size_t od = 0; od < g->od; od++) {
        el_t *s0 = dxp + 2 * od * hw; /* the front slice of the pair */
        for (size_t oy = 0; oy < g->oh; oy += band) {
          const size_t oy1 = g->oh - oy < band ? g->oh : oy + band;
          if (split) {
            bwd2x2x2_nchw_rows(g, io, mode, P3_FRONT, &px, &py, od, oy, oy1,
                               taps, fronts);
            bwd2x2x2_nchw_rows(g, io, mode, P3_BACK, &px, &py, od, oy, oy1,
                               taps, fronts);
            if (mode == BWD_MAX)
              bwd2x2x2_nchw_rows(g, io, mode, P3_DX_FRONT, &px, &py, od, oy,
                                 oy1, taps, fronts);
          } else {
            bwd2x2x2_nchw_rows(g, io, mode, P3_BOTH, &px, &py, od, oy, oy1,
                               taps, fronts);
          }
        }
        el_zero(s0 + cov_h * g->w, (g->h - cov_h) * g->w);
        el_zero(s0 + hw + cov_h * g->w, (g->h - cov_h) * g->w);
      }
      el_zero(dxp + 2 * g->od * hw, (g->d - 2 * g->od) * hw);
    }
  }
}

#if !SP_EL_INT8 /* S8/U8: MAX forward and unpooling only */
void SP_KFN(sp_maxpool_bwd_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nchw_body(g, io, BWD_MAX);
}
void SP_KFN(sp_maxpool_bwd_idx_2x2x2s2_nchw)(const sp_geom *g,
                                             const sp_io *io) {
  bwd2x2x2_nchw_body(g, io, BWD_MAX_IDX);
}
#endif
void SP_KFN(sp_unpool_2x2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nchw_body(g, io, BWD_UNPOOL);
}
#if !SP_EL_INT8 /* S8/U8: MAX forward and unpooling only */
void SP_KFN(sp_maxpool_bwd_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nhwc_body(g, io, BWD_MAX);
}
void SP_KFN(sp_maxpool_bwd_idx_2x2x2s2_nhwc)(const sp_geom *g,
                                             const sp_io *io) {
  bwd2x2x2_nhwc_body(g, io, BWD_MAX_IDX);
}
#endif
void SP_KFN(sp_unpool_2x2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2x2_nhwc_body(g, io, BWD_UNPOOL);
}

/* The NCHW backward entry (not unpooling): through the scratch where rows
 * are short and a group fits, else by rows. */
SP_HOT void bwd2x2_nchw(const sp_geom *g, const sp_io *io, int mode) {
  const size_t gw = p2_lop_width(g, 1 + (size_t)(mode == BWD_MAX),
                                 1 + (size_t)(mode == BWD_MAX_IDX));
  if (gw)
    lop_run(g, io, gw, mode == BWD_MAX, mode == BWD_MAX_IDX,
            mode == BWD_MAX_IDX,
            mode == BWD_MAX       ? SP_FN(sp_maxpool_bwd_2x2s2_nhwc)
            : mode == BWD_MAX_IDX ? SP_FN(sp_maxpool_bwd_idx_2x2s2_nhwc)
                                  : SP_FN(sp_avgpool_bwd_2x2s2_nhwc));
  else
    bwd2x2_nchw_body(g, io, mode);
}

#if !SP_EL_INT8 /* S8/U8: MAX forward and unpooling only */
void SP_KFN(sp_maxpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw(g, io, BWD_MAX);
}
void SP_KFN(sp_maxpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_MAX);
}
void SP_KFN(sp_maxpool_bwd_idx_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw(g, io, BWD_MAX_IDX);
}
void SP_KFN(sp_maxpool_bwd_idx_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_MAX_IDX);
}
#endif
void SP_KFN(sp_unpool_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw_body(g, io, BWD_UNPOOL);
}
void SP_KFN(sp_unpool_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_UNPOOL);
}
#if !SP_EL_INT8 /* S8/U8: MAX forward and unpooling only */
void SP_KFN(sp_avgpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw(g, io, BWD_AVG);
}
void SP_KFN(sp_avgpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_AVG);
}
#endif
