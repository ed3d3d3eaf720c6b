/* SPDX-License-Identifier: MIT */
/* pool_nd.c — channels-last (NDHWC, NHWC, NWC) kernels of the plans the 2D
 * families do not take: windows with a depth axis and adaptive windows
 * (SP_SHAPE_ND; 2D-in-disguise plans were already rewritten as 2D ones by
 * sp_simplify_geom). Lanes run over channels, one output pixel at a time,
 * its window's valid taps in the reference's order (depth, rows, columns),
 * so every lane sees exactly the scalar reference's operations. Compiled
 * once per SIMD ISA (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/common.h"
#include "tmpl/lop.h"

/* The valid taps [i0, i1) of one window axis over an input of `in`
 * positions, and where tap 0 sits. */
typedef struct nd_axis {
  size_t i0, i1, dil;
  ptrdiff_t start;
} nd_axis;

static inline nd_axis nd_axis_of(sp_win a, size_t in) {
  nd_axis r = {0, a.k, a.dil, a.start};
  const ptrdiff_t d = (ptrdiff_t)a.dil;
  if (a.start < 0)
    r.i0 = (size_t)((-a.start + d - 1) / d);
  const ptrdiff_t room = (ptrdiff_t)in - a.start; /* > 0: the window holds
                                                     input */
  const size_t end = (size_t)((room + d - 1) / d);
  if (end < r.i1)
    r.i1 = end;
  return r;
}

static inline size_t nd_pos(const nd_axis *a, size_t i) {
  return (size_t)(a->start + (ptrdiff_t)(i * a->dil));
}

/* One output pixel's window: its three axes. */
typedef struct nd_window {
  nd_axis ad, ah, aw;
} nd_window;

static inline nd_window nd_window_at(const sp_geom *g, size_t od, size_t oy,
                                     size_t ox) {
  nd_window w = {nd_axis_of(sp_win_d(g, od), g->d),
                 nd_axis_of(sp_win_h(g, oy), g->h),
                 nd_axis_of(sp_win_w(g, ox), g->w)};
  return w;
}

/* Runs BODY for each valid tap of window win in the reference's order, with
 * size_t `flat` (its position in the plane) and `tap` (its number in a
 * fixed window). */
#define ND_FOR_TAPS(g, win, flat, tap, ...)                                    \
  for (size_t a_ = (win).ad.i0; a_ < (win).ad.i1; a_++)                        \
    for (size_t b_ = (win).ah.i0; b_ < (win).ah.i1; b_++)                      \
      for (size_t c_ = (win).aw.i0; c_ < (win).aw.i1; c_++) {                  \
        const size_t flat =                                                    \
            (nd_pos(&(win).ad, a_) * (g)->h + nd_pos(&(win).ah, b_)) *         \
                (g)->w +                                                       \
            nd_pos(&(win).aw, c_);                                             \
        const size_t tap = (a_ * (g)->kh + b_) * (g)->kw + c_;                 \
        (void)tap;                                                             \
        __VA_ARGS__                                                            \
      }

/* The AVG division of one output pixel's sums (or, backward, of its dy):
 * by the product of the counted taps per axis, or, adaptive, by each
 * extent in turn ((v / kd) / kh) / kw. Made once per pixel. */
typedef struct nd_div {
  divisor dd, dh, dw; /* adaptive; else dd alone */
  int adaptive;
} nd_div;

SP_HOT nd_div nd_div_at(const sp_geom *g, size_t od, size_t oy, size_t ox) {
  nd_div r;
  r.adaptive = g->adaptive;
  if (g->adaptive) {
    r.dd = divisor_count(sp_win_d(g, od).k);
    r.dh = divisor_count(sp_win_h(g, oy).k);
    r.dw = divisor_count(sp_win_w(g, ox).k);
  } else {
    r.dd = divisor_count(sp_avg_taps_d(g, od) * sp_avg_taps_h(g, oy) *
                         sp_avg_taps_w(g, ox)); /* < 2^31: simd_geom_ok */
    r.dh = r.dw = r.dd;
  }
  return r;
}

/* The AVG division of the n (<= 8) vectors at v, in place, with one test
 * of the rare lanes per division step (div_lanes_n). sum: the forward form
 * (+0 + v, NaN canonical; the adaptive sums start from +0). */
SP_HOT void nd_div_apply_n(const nd_div *d, vf *v, int n, int sum) {
  if (!d->adaptive) {
    div_lanes_n(v, n, &d->dd, sum);
    return;
  }
  div_axes_n(v, n, &d->dd, &d->dh, &d->dw);
  if (sum)
    for (int j = 0; j < n; j++)
      v[j] = vcanon(v[j]);
}

/* Channels go through a window ND_NB vectors at a time: one walk of the
 * window's taps serves ND_NB * SP_VL channels, and the ND_NB independent
 * accumulators hide the latency of the adds and compare-selects (a chain
 * of ordered adds per vector). As many as the registers hold with their
 * index vectors: 8 of AVX-512's 32, 4 of 16 elsewhere. A chunk's vector
 * count is a compile-time constant (nd_pixel's switch), so that its
 * accumulators live in registers. */
#if SP_VL == 16
#define ND_NB 8
#else
#define ND_NB 4
#endif

/* Where lane (channel) c of pixel o lives. Channels-last: lanes over
 * channels, contiguous; images one after another (o counts every image's
 * pixels). Channels-first: lanes over the n*c planes, one image of that
 * many "channels", every lane a strided access (planes apart). cf is a
 * compile-time constant in every entry point. */
typedef struct nd_lay {
  int cf;
  size_t lanes, images;
  size_t xl, xp, xn; /* x and dx: between lanes, pixels, images */
  size_t yl, yp;     /* y and dy: between lanes and pixels */
  size_t il, ip;     /* indices: between lanes and pixels */
} nd_lay;

SP_HOT nd_lay nd_lay_of(const sp_geom *g, int cf) {
  const size_t plane = g->d * g->h * g->w, oplane = g->od * g->oh * g->ow;
  nd_lay l;
  l.cf = cf;
  if (cf) {
    l.lanes = g->n * g->c;
    l.images = 1;
    l.xl = plane;
    l.xp = 1;
    l.xn = 0;
    l.yl = l.il = oplane;
    l.yp = l.ip = 1;
  } else {
    l.lanes = g->c;
    l.images = g->n;
    l.xl = l.yl = l.il = 1;
    l.xp = g->xs;
    l.xn = plane * g->xs;
    l.yp = g->ys;
    l.ip = g->c;
  }
  return l;
}

/* Vector j of a chunk of nb from p (lane stride s when channels-first):
 * SP_VL lanes, or `last` in the chunk's last vector (the lanes' tail). */
SP_HOT vf nd_load(const nd_lay *l, const float *p, size_t s, size_t j,
                  size_t nb, size_t last) {
  const size_t cnt = j + 1 == nb ? last : SP_VL;
  if (l->cf)
    return gather_lanes(p + j * SP_VL * s, s, cnt);
  return cnt == SP_VL ? vf_load(p + j * SP_VL) : load_lanes(p + j * SP_VL, cnt);
}

/* p[i * s] (+)= lane i of v, cnt lanes (add: += ). */
SP_HOT void nd_put(const nd_lay *l, float *p, size_t s, vf v, size_t cnt,
                   int add) {
  if (!l->cf) {
    store_lanes(p, add ? vf_add(load_lanes(p, cnt), v) : v, cnt);
    return;
  }
  float lane[SP_VL];
  vf_store(lane, v);
  for (size_t i = 0; i < cnt; i++)
    p[i * s] = add ? p[i * s] + lane[i] : lane[i];
}

/* One tap of a MAX window (value index val) into the nb running maxima;
 * the first tap is taken as it is. Unrolled: the maxima stay in registers. */
SP_HOT void nd_max_tap(const nd_lay *l, const float *p, size_t nb, size_t last,
                       int32_t val, int first, vf *m, vi *idx) {
#pragma GCC unroll 8
  for (size_t j = 0; j < nb; j++) {
    const vf v = nd_load(l, p, l->xl, j, nb, last);
    if (first) {
      m[j] = v;
      idx[j] = vi_set1(val);
    } else {
      mx_step(v, val, 1, &m[j], &idx[j]);
    }
  }
}

/* One tap of a sum (LP: of its terms) into the nb accumulators. */
SP_HOT void nd_sum_tap(const sp_geom *g, const nd_lay *l, const float *p,
                       size_t nb, size_t last, int lp, int kind, vf *acc) {
#pragma GCC unroll 8
  for (size_t j = 0; j < nb; j++) {
    const vf v = nd_load(l, p, l->xl, j, nb, last);
    acc[j] = vf_add(acc[j], lp ? lp_term_v(kind, g->p, v) : v);
  }
}

/* MAX over window w of the nb vectors of lanes from c0 (the last with
 * `last` lanes) of image xn: the running max m[j] and its index value
 * idx[j] (the flat position for I32/I64 and for backward (type NONE), the
 * tap number for U8). The first valid tap is the running max, whatever it
 * holds (-inf included) and whatever its index; later taps replace it by
 * mx_step. */
SP_HOT void nd_max_window(const sp_geom *g, const nd_lay *l, const nd_window *w,
                          const float *xn, size_t c0, size_t nb, size_t last,
                          simdpool_index_type type, vf *m, vi *idx) {
  int first = 1;
  for (size_t j = 0; j < nb; j++) { /* every window has a valid tap */
    m[j] = vf_zero();
    idx[j] = vi_set1(0);
  }
  ND_FOR_TAPS(g, *w, flat, tap, {
    nd_max_tap(l, xn + flat * l->xp + c0 * l->xl, nb, last,
               type == SIMDPOOL_INDEX_U8 ? (int32_t)tap : (int32_t)flat, first,
               m, idx);
    first = 0;
  });
}

/* Sum over window w (AVG) or of its LP terms, nb vectors of lanes. */
SP_HOT void nd_sum_window(const sp_geom *g, const nd_lay *l, const nd_window *w,
                          const float *xn, size_t c0, size_t nb, size_t last,
                          int lp, int kind, vf *acc) {
  for (size_t j = 0; j < nb; j++)
    acc[j] = vf_zero();
  ND_FOR_TAPS(g, *w, flat, tap, {
    nd_sum_tap(g, l, xn + flat * l->xp + c0 * l->xl, nb, last, lp, kind, acc);
  });
}

/* Forward of output pixel o (window w, AVG divisor dv), the nb vectors of
 * lanes from c0. */
SP_HOT void nd_fwd_chunk(const sp_geom *g, const sp_io *io, const nd_lay *l,
                         int meth, const float *xn, const nd_window *w,
                         const nd_div *dv, size_t o, size_t c0, size_t nb,
                         size_t last) {
  vf acc[ND_NB];
  vi idx[ND_NB];
  const int lp = meth == SIMDPOOL_LP, kind = lp_kind(g->p);
  if (meth == SIMDPOOL_MAX)
    nd_max_window(g, l, w, xn, c0, nb, last, g->index_type, acc, idx);
  else
    nd_sum_window(g, l, w, xn, c0, nb, last, lp, kind, acc);
  if (meth == SIMDPOOL_AVG)
    nd_div_apply_n(dv, acc, (int)nb, 1);
  for (size_t j = 0; j < nb; j++) {
    const size_t cn = j + 1 == nb ? last : SP_VL, c = c0 + j * SP_VL;
    vf y = acc[j];
    if (lp)
      y = vcanon(lp_root_v(kind, 1.0f / g->p, y));
    nd_put(l, io->y + o * l->yp + c * l->yl, l->yl, yclamp(g, y), cn, 0);
    if (meth != SIMDPOOL_MAX || g->index_type == SIMDPOOL_INDEX_NONE)
      continue;
    if (!l->cf) {
      store_index(io->indices, g->index_type, o * l->ip + c, idx[j], cn);
    } else {
      int32_t v[SP_VL];
      vi_store_i32(v, idx[j]);
      for (size_t i = 0; i < cn; i++)
        sp_store_index(io->indices, g->index_type, o + (c + i) * l->il,
                       (size_t)v[i], (size_t)v[i]);
    }
  }
}

/* MAX backward of output pixel o, nb vectors of lanes from c0: dy added at
 * each lane's winner, read from the indices (from_idx) or recomputed from
 * x. */
SP_HOT void nd_bwd_max_chunk(const sp_geom *g, const sp_io *io, const nd_lay *l,
                             const float *xn, float *dxn, const nd_window *w,
                             size_t o, size_t c0, size_t nb, size_t last,
                             int from_idx) {
  const size_t cn = (nb - 1) * SP_VL + last;
  const float *dy = io->dy + o * l->yp + c0 * l->yl;
  float *dxc = dxn + c0 * l->xl;
  if (!from_idx) {
    int32_t win[ND_NB * SP_VL] = {0}; /* (gcc cannot see nb lanes filled) */
    vf m[ND_NB];
    vi idx[ND_NB];
    nd_max_window(g, l, w, xn, c0, nb, last, SIMDPOOL_INDEX_NONE, m, idx);
    for (size_t j = 0; j < nb; j++)
      vi_store_i32(win + j * SP_VL, idx[j]);
    for (size_t i = 0; i < cn; i++)
      dxc[(size_t)win[i] * l->xp + i * l->xl] += dy[i * l->yl];
  } else if (g->index_type != SIMDPOOL_INDEX_U8) {
    for (size_t i = 0; i < cn; i++)
      dxc[sp_load_flat_index(io->indices, g->index_type,
                             o * l->ip + (c0 + i) * l->il) *
              l->xp +
          i * l->xl] += dy[i * l->yl];
  } else {
    const uint8_t *tap = (const uint8_t *)io->indices;
    const size_t t2 = g->kh * g->kw;
    for (size_t i = 0; i < cn; i++) {
      /* tap -> flat: dispatch checked it is a valid tap */
      const size_t t = tap[o * l->ip + (c0 + i) * l->il];
      const size_t flat =
          (nd_pos(&w->ad, t / t2) * g->h + nd_pos(&w->ah, t % t2 / g->kw)) *
              g->w +
          nd_pos(&w->aw, t % g->kw);
      dxc[flat * l->xp + i * l->xl] += dy[i * l->yl];
    }
  }
}

/* One tap's shares added to dx at p (LP: of x at xp), nb vectors. */
SP_HOT void nd_share_tap(const sp_geom *g, const nd_lay *l, float *p,
                         const float *xp, size_t nb, size_t last, int lp,
                         int kind, const vf *gr) {
#pragma GCC unroll 8
  for (size_t j = 0; j < nb; j++) {
    const size_t cn = j + 1 == nb ? last : SP_VL;
    const vf q =
        lp ? lp_share_v(kind, g->p, gr[j], nd_load(l, xp, l->xl, j, nb, last))
           : gr[j];
    nd_put(l, p + j * SP_VL * l->xl, l->xl, q, cn, 1);
  }
}

/* AVG and LP backward of output pixel o, nb vectors of lanes from c0: each
 * tap's share added to dx. */
SP_HOT void nd_bwd_sum_chunk(const sp_geom *g, const sp_io *io, const nd_lay *l,
                             int meth, const float *xn, float *dxn,
                             const nd_window *w, const nd_div *dv, size_t o,
                             size_t c0, size_t nb, size_t last) {
  const int lp = meth == SIMDPOOL_LP, kind = lp_kind(g->p);
  vf gr[ND_NB];
  for (size_t j = 0; j < nb; j++)
    gr[j] = nd_load(l, io->dy + o * l->yp + c0 * l->yl, l->yl, j, nb, last);
  if (!lp)
    nd_div_apply_n(dv, gr, (int)nb, 0);
  if (lp && kind != LP_ONE) {
    vf acc[ND_NB];
    nd_sum_window(g, l, w, xn, c0, nb, last, 1, kind, acc);
    for (size_t j = 0; j < nb; j++)
      gr[j] =
          lp_grad_v(kind, g->p, gr[j], lp_root_v(kind, 1.0f / g->p, acc[j]));
  }
  ND_FOR_TAPS(g, *w, flat, tap, {
    const size_t e = flat * l->xp + c0 * l->xl;
    nd_share_tap(g, l, dxn + e, lp ? xn + e : NULL, nb, last, lp, kind, gr);
  });
}

/* One chunk of nb vectors of lanes from c0 (the last with `last` lanes) of
 * output pixel o: forward (bwd < 0) or backward (bwd: from_idx). */
SP_HOT void nd_chunk(const sp_geom *g, const sp_io *io, const nd_lay *l,
                     int meth, const float *xn, float *dxn, const nd_window *w,
                     const nd_div *dv, size_t o, size_t c0, size_t nb,
                     size_t last, int bwd) {
  if (bwd < 0)
    nd_fwd_chunk(g, io, l, meth, xn, w, dv, o, c0, nb, last);
  else if (meth == SIMDPOOL_MAX)
    nd_bwd_max_chunk(g, io, l, xn, dxn, w, o, c0, nb, last, bwd);
  else
    nd_bwd_sum_chunk(g, io, l, meth, xn, dxn, w, dv, o, c0, nb, last);
}

/* One output pixel, ND_NB vectors of lanes at a time; the tail chunk's
 * vector count made a constant by the switch. */
SP_HOT void nd_pixel(const sp_geom *g, const sp_io *io, const nd_lay *l,
                     int meth, const float *xn, float *dxn, size_t o, size_t od,
                     size_t oy, size_t ox, int bwd) {
  const nd_window w = nd_window_at(g, od, oy, ox);
  nd_div dv;
  if (meth == SIMDPOOL_AVG)
    dv = nd_div_at(g, od, oy, ox);
  const size_t C = l->lanes, chunk = ND_NB * SP_VL;
  size_t c0 = 0;
  if (l->cf) {
    /* The strided walk, the fallback of planes too large for nd_run_lop's
     * groups, is bound by its lane gathers: its vector counts stay run-time
     * values (one instantiation instead of ND_NB + 1). */
    for (; c0 < C; c0 += chunk) {
      const size_t lanes = C - c0 < chunk ? C - c0 : chunk;
      const size_t nb = (lanes + SP_VL - 1) / SP_VL;
      nd_chunk(g, io, l, meth, xn, dxn, &w, &dv, o, c0, nb,
               lanes - (nb - 1) * SP_VL, bwd);
    }
    return;
  }
  for (; c0 + chunk <= C; c0 += chunk)
    nd_chunk(g, io, l, meth, xn, dxn, &w, &dv, o, c0, ND_NB, SP_VL, bwd);
  if (c0 == C)
    return;
  const size_t nb = (C - c0 + SP_VL - 1) / SP_VL;
  const size_t last = C - c0 - (nb - 1) * SP_VL;
#define ND_TAIL(k)                                                             \
  case k:                                                                      \
    nd_chunk(g, io, l, meth, xn, dxn, &w, &dv, o, c0, k, last, bwd);           \
    break;
  switch (nb) { /* 1 .. ND_NB (a short last vector in a chunk of ND_NB) */
    ND_TAIL(1)
    ND_TAIL(2)
    ND_TAIL(3)
    ND_TAIL(4)
#if ND_NB > 4
    ND_TAIL(5)
    ND_TAIL(6)
    ND_TAIL(7)
    ND_TAIL(8)
#endif
  default:
    break;
  }
#undef ND_TAIL
}

/* Channels-first plans with lanes over planes without strided lane loads:
 * each group of gw planes (nd_lop_width) is transposed into the stack
 * scratch as one channels-last image of gw channels (tmpl/lop.h), the
 * channels-last walk runs on it, and its results are transposed back. Every
 * lane sees its plane's taps in the reference's order, and flat indices and U8
 * taps are the same in both layouts, so the bits are those of the strided walk
 * (whose AVX-512 gathers made it slower than SSE4.1's on some CPUs). The
 * scratch: x (forward; MAX from x and LP backward), dx (backward), y or dy,
 * indices as int32 or U8 (MAX with indices, forward or backward from
 * them). */
static inline int nd_lop_need_x(int meth, int bwd) {
  return bwd < 0 || (meth == SIMDPOOL_MAX && bwd == 0) || meth == SIMDPOOL_LP;
}
static inline int nd_lop_idx(const sp_geom *g, int meth, int bwd) {
  return meth == SIMDPOOL_MAX && g->index_type != SIMDPOOL_INDEX_NONE &&
         bwd != 0;
}
SP_HOT void nd_walk(const sp_geom *g, const sp_io *io, int cf, int meth,
                    int bwd);

/* The group width (lop_group) for the arrays the op needs. */
static inline size_t nd_lop_width(const sp_geom *g, int meth, int bwd) {
  return lop_group(g, (size_t)nd_lop_need_x(meth, bwd) + (bwd >= 0),
                   1 + (size_t)nd_lop_idx(g, meth, bwd));
}

SP_HOT void nd_run_lop(const sp_geom *g, const sp_io *io, int bwd, size_t gw,
                       int meth) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t P = sp_in_plane(g), Q = sp_out_plane(g), planes = g->n * g->c;
  const int need_x = nd_lop_need_x(meth, bwd), idx = nd_lop_idx(g, meth, bwd);
  float *const xs = scratch;
  float *const dxs = xs + (need_x ? P * gw : 0);
  float *const ys = dxs + (bwd >= 0 ? P * gw : 0); /* y, or dy */
  void *const is = ys + Q * gw;
  const sp_geom gs = lop_geom(g, idx, gw);
  for (size_t p0 = 0; p0 < planes; p0 += gw) {
    const size_t np = planes - p0 < gw ? planes - p0 : gw;
    if (need_x)
      lop_gather(xs, gw, io->x + p0 * P, P, P, np);
    if (bwd >= 0)
      lop_gather(ys, gw, io->dy + p0 * Q, Q, Q, np);
    if (idx && bwd > 0) {
      lop_indices(g, io->indices, is, gw, p0, np, 0);
      lop_unused_lanes(g, is, gw, Q, np);
    }
    const sp_io ios = {need_x ? xs : NULL, bwd < 0 ? ys : NULL, idx ? is : NULL,
                       bwd >= 0 ? ys : NULL, bwd >= 0 ? dxs : NULL};
    nd_walk(&gs, &ios, 0, meth, bwd);
    if (bwd >= 0) {
      lop_scatter(io->dx + p0 * P, dxs, gw, P, P, np);
      continue;
    }
    lop_scatter(io->y + p0 * Q, ys, gw, Q, Q, np);
    if (idx)
      lop_indices(g, io->indices, is, gw, p0, np, 1);
  }
}

/* Forward (bwd < 0), every method: y (and indices, MAX) of every output
 * pixel. Backward (bwd = from_idx): dx = +0, then each output pixel's
 * shares added to its taps in output order (the reference's loop, lanes
 * over channels or planes), then NaN canonical; MAX adds dy at the winner,
 * read from the indices (from_idx) or recomputed from x. */
SP_HOT void nd_walk(const sp_geom *g, const sp_io *io, int cf, int meth,
                    int bwd) {
  const nd_lay l = nd_lay_of(g, cf);
  const size_t plane = g->d * g->h * g->w;
  if (bwd >= 0) {
    if (cf)
      zero_tensor(io->dx, g->n * g->c * plane);
    else
      zero_px(io->dx, g->n * plane, g->c, g->xs);
  }
  size_t o = 0; /* output pixel (channels-last: of every image) */
  for (size_t n = 0; n < l.images; n++) {
    const float *xn = io->x ? io->x + n * l.xn : NULL;
    float *dxn = bwd >= 0 ? io->dx + n * l.xn : NULL;
    for (size_t od = 0; od < g->od; od++)
      for (size_t oy = 0; oy < g->oh; oy++)
        for (size_t ox = 0; ox < g->ow; ox++, o++)
          nd_pixel(g, io, &l, meth, xn, dxn, o, od, oy, ox, bwd);
  }
  if (bwd < 0)
    return;
  if (cf)
    canonicalize(io->dx, g->n * g->c * plane);
  else
    canonicalize_px(io->dx, g->n * plane, g->c, g->xs);
}

/* Channels-first forward on planes too large for nd_run_lop's groups
 * (PSPNet's 64x64 planes, 3D volumes): tiles of outputs, each with the
 * box of inputs its windows span, through the same scratch. A tile's
 * geometry is cut from the plane's on every axis (sp_cut_axis: each window
 * keeps its taps, padding and divisor), so each lane computes what the
 * whole plane's walk would; its flat indices count in the box and are
 * mapped back to the plane's, and U8 tap numbers are the window's own. */

/* At most how many inputs n consecutive outputs of an axis span: fixed
 * windows (n - 1) * s + e, adaptive ones n * IN / OUT + 2 of the whole
 * axis (each bound rounds by less than one), never more than the axis. */
static inline size_t nd_span(int adaptive, size_t in, size_t out, size_t s,
                             size_t e, const sp_acut *cut, size_t n) {
  size_t r;
  if (adaptive) {
    const size_t IN = cut->i0 + in + cut->i1, OUT = cut->o0 + out + cut->o1;
    r = (size_t)((sp_wide)n * IN / OUT) + 2;
  } else {
    r = (n - 1) * s + e;
  }
  return r < in ? r : in;
}

/* The group width for tiles of t[0] x t[1] x t[2] outputs (0: none fits). */
static inline size_t nd_tile_width(const sp_geom *g, const size_t t[3],
                                   int meth) {
  sp_geom p = *g;
  p.d = nd_span(g->adaptive, g->d, g->od, g->sd, g->dd * (g->kd - 1) + 1,
                &g->acut[0], t[0]);
  p.h = nd_span(g->adaptive, g->h, g->oh, g->sh, g->dh * (g->kh - 1) + 1,
                &g->acut[1], t[1]);
  p.w = nd_span(g->adaptive, g->w, g->ow, g->sw, g->dw * (g->kw - 1) + 1,
                &g->acut[2], t[2]);
  p.od = t[0];
  p.oh = t[1];
  p.ow = t[2];
  return nd_lop_width(&p, meth, -1);
}

/* The tile: the whole output, halved on its outermost axis of more than
 * one output until a group fits (rows stay whole longest: their inputs
 * are contiguous). Returns the group width; 0 when not one output does. */
static inline size_t nd_tile(const sp_geom *g, int meth, size_t t[3]) {
  t[0] = g->od;
  t[1] = g->oh;
  t[2] = g->ow;
  for (;;) {
    const size_t gw = nd_tile_width(g, t, meth);
    if (gw)
      return gw;
    const int ax = t[0] > 1 ? 0 : t[1] > 1 ? 1 : 2;
    if (t[ax] == 1)
      return 0;
    t[ax] = (t[ax] + 1) / 2;
  }
}

SP_HOT void nd_run_tiles(const sp_geom *g, const sp_io *io, int meth,
                         const size_t t[3], size_t gw) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t P = sp_in_plane(g), Q = sp_out_plane(g), planes = g->n * g->c;
  const int idx = nd_lop_idx(g, meth, -1);
  const simdpool_index_type it = g->index_type;
  const size_t ed = g->dd * (g->kd - 1) + 1, eh = g->dh * (g->kh - 1) + 1,
               ew = g->dw * (g->kw - 1) + 1;
  for (size_t p0 = 0; p0 < planes; p0 += gw) {
    const size_t np = planes - p0 < gw ? planes - p0 : gw;
    for (size_t od0 = 0; od0 < g->od; od0 += t[0])
      for (size_t oy0 = 0; oy0 < g->oh; oy0 += t[1])
        for (size_t ox0 = 0; ox0 < g->ow; ox0 += t[2]) {
          const size_t od1 = g->od - od0 < t[0] ? g->od : od0 + t[0];
          const size_t oy1 = g->oh - oy0 < t[1] ? g->oh : oy0 + t[1];
          const size_t ox1 = g->ow - ox0 < t[2] ? g->ow : ox0 + t[2];
          sp_geom b = *g; /* the tile's geometry, then its box's origin */
          const size_t f0 =
              sp_cut_axis(g->adaptive, &b.d, &b.od, &b.pf, &b.pk, g->sd, ed,
                          &b.acut[0], od0, od1, SP_CUT_SPAN);
          const size_t f1 =
              sp_cut_axis(g->adaptive, &b.h, &b.oh, &b.pt, &b.pb, g->sh, eh,
                          &b.acut[1], oy0, oy1, SP_CUT_SPAN);
          const size_t f2 =
              sp_cut_axis(g->adaptive, &b.w, &b.ow, &b.pl, &b.pr, g->sw, ew,
                          &b.acut[2], ox0, ox1, SP_CUT_SPAN);
          float *const xs = scratch, *const ys = xs + sp_in_plane(&b) * gw;
          void *const is = ys + sp_out_plane(&b) * gw;
          for (size_t a = 0; a < b.d; a++)
            for (size_t r = 0; r < b.h; r++)
              lop_gather(xs + (a * b.h + r) * b.w * gw, gw,
                         io->x + p0 * P + ((f0 + a) * g->h + f1 + r) * g->w +
                             f2,
                         P, b.w, np);
          const sp_geom bs = lop_geom(&b, idx, gw);
          const sp_io ios = {xs, ys, idx ? is : NULL, NULL, NULL};
          nd_walk(&bs, &ios, 0, meth, -1);
          for (size_t a = 0; a < b.od; a++)
            for (size_t r = 0; r < b.oh; r++) {
              const size_t row = (a * b.oh + r) * b.ow; /* in the tile */
              const size_t at = ((od0 + a) * g->oh + oy0 + r) * g->ow + ox0;
              lop_scatter(io->y + p0 * Q + at, ys + row * gw, gw, Q, b.ow, np);
              if (!idx)
                continue;
              for (size_t l = 0; l < np; l++)
                for (size_t x = 0; x < b.ow; x++) {
                  const size_t k = (row + x) * gw + l,
                               o = (p0 + l) * Q + at + x;
                  if (it == SIMDPOOL_INDEX_U8) {
                    ((uint8_t *)io->indices)[o] = ((const uint8_t *)is)[k];
                    continue;
                  }
                  /* A flat position in the box, as one in the plane. */
                  const size_t v = (size_t)((const int32_t *)is)[k];
                  const size_t col = v % b.w, rr = v / b.w;
                  const size_t f =
                      ((rr / b.h + f0) * g->h + rr % b.h + f1) * g->w + col +
                      f2;
                  sp_store_index(io->indices, it, o, f, f);
                }
            }
        }
  }
}

/* The entry points: method and direction as constants. Channels-last runs
 * nd_walk; channels-first runs its groups of planes through the scratch on
 * the channels-last entry of the same op (walk_cl), where a group fits, and
 * the strided walk where none does. */
#define ND_ENTRY(op, meth, bwd)                                                \
  void SP_FN(sp_##op##_nd_nhwc)(const sp_geom *g, const sp_io *io) {           \
    nd_walk(g, io, 0, SIMDPOOL_##meth, bwd);                                   \
  }                                                                            \
  void SP_FN(sp_##op##_nd_nchw)(const sp_geom *g, const sp_io *io) {           \
    const size_t gw = nd_lop_width(g, SIMDPOOL_##meth, bwd);                   \
    size_t t[3], tw;                                                           \
    if (gw)                                                                    \
      nd_run_lop(g, io, bwd, gw, SIMDPOOL_##meth);                             \
    else if (bwd < 0 && (tw = nd_tile(g, SIMDPOOL_##meth, t)) != 0)            \
      nd_run_tiles(g, io, SIMDPOOL_##meth, t, tw);                             \
    else                                                                       \
      nd_walk(g, io, 1, SIMDPOOL_##meth, bwd);                                 \
  }
ND_ENTRY(maxpool_fwd, MAX, -1)
ND_ENTRY(avgpool_fwd, AVG, -1)
ND_ENTRY(lppool_fwd, LP, -1)
ND_ENTRY(maxpool_bwd, MAX, 0)
ND_ENTRY(maxpool_bwd_idx, MAX, 1)
ND_ENTRY(avgpool_bwd, AVG, 0)
ND_ENTRY(lppool_bwd, LP, 0)
