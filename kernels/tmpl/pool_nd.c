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

/* Channels-last AVG forward of output pixel o over all its channels, the
 * sums kept in y's row (in L1) instead of registers: taps outer, channels
 * inner, so each tap's channels are read as one contiguous run (PyTorch's
 * loop order). A window of many taps walked chunk by chunk instead reads
 * from as many pixels at once, more streams than the prefetchers follow
 * (psp_adapt6: 132 pixels 8 KiB apart). Each lane's sum is still +0 and
 * then its taps in order, divided and stored as nd_fwd_chunk does. */
#define ND_ROW_TAPS 16 /* windows of at least this many taps */

/* dst = the AVG division of the n lanes at src, ND_NB vectors at a time:
 * forward (fwd) the sums' form, clamped as y is stored; else dy's shares. */
SP_HOT void nd_div_run(const sp_geom *g, const nd_div *dv, const float *src,
                       float *dst, size_t n, int fwd) {
  for (size_t c0 = 0; c0 < n; c0 += ND_NB * SP_VL) {
    const size_t lanes = n - c0 < ND_NB * SP_VL ? n - c0 : ND_NB * SP_VL;
    const size_t nb = (lanes + SP_VL - 1) / SP_VL;
    vf v[ND_NB];
    for (size_t j = 0; j < nb; j++)
      v[j] = load_lanes(src + c0 + j * SP_VL,
                        j + 1 == nb ? lanes - j * SP_VL : SP_VL);
    nd_div_apply_n(dv, v, (int)nb, fwd);
    for (size_t j = 0; j < nb; j++)
      store_lanes(dst + c0 + j * SP_VL, fwd ? yclamp(g, v[j]) : v[j],
                  j + 1 == nb ? lanes - j * SP_VL : SP_VL);
  }
}

SP_HOT void nd_avg_row(const sp_geom *g, const sp_io *io, const nd_lay *l,
                       const float *xn, const nd_window *w, const nd_div *dv,
                       size_t o) {
  const size_t C = l->lanes, full = C / SP_VL * SP_VL, tail = C - full;
  float *const y = io->y + o * l->yp;
  int first = 1;
  ND_FOR_TAPS(g, *w, flat, tap, {
    const float *p = xn + flat * l->xp;
    size_t c = 0;
    if (first) {
      for (; c < full; c += SP_VL)
        vf_store(y + c, vf_add(vf_zero(), vf_load(p + c)));
    } else {
      for (; c < full; c += SP_VL)
        vf_store(y + c, vf_add(vf_load(y + c), vf_load(p + c)));
    }
    if (tail)
      store_lanes(y + c,
                  vf_add(first ? vf_zero() : load_lanes(y + c, tail),
                         load_lanes(p + c, tail)),
                  tail);
    first = 0;
  });
  nd_div_run(g, dv, y, y, C, 1);
}

/* Its backward: output pixel o's shares (dy / divisor) made once per block
 * of channels into a stack row, then added to each tap's channels as one
 * contiguous run (taps outer, channels inner). Each dx element still gets
 * dx + share from the outputs in order, as nd_bwd_sum_chunk adds them. */
#define ND_ROW_BLOCK 1024 /* channels per block: a 4 KiB row */
SP_HOT void nd_avg_bwd_row(const sp_geom *g, const sp_io *io, const nd_lay *l,
                           float *dxn, const nd_window *w, const nd_div *dv,
                           size_t o) {
  _Alignas(64) float share[ND_ROW_BLOCK];
  const size_t C = l->lanes;
  for (size_t c0 = 0; c0 < C; c0 += ND_ROW_BLOCK) {
    const size_t cn = C - c0 < ND_ROW_BLOCK ? C - c0 : ND_ROW_BLOCK;
    const size_t full = cn / SP_VL * SP_VL;
    nd_div_run(g, dv, io->dy + o * l->yp + c0, share, cn, 0);
    ND_FOR_TAPS(g, *w, flat, tap, {
      float *const p = dxn + flat * l->xp + c0;
      size_t c = 0;
      for (; c < full; c += SP_VL)
        vf_store(p + c, vf_add(vf_load(p + c), vf_load(share + c)));
      if (cn > full)
        store_lanes(p + c,
                    vf_add(load_lanes(p + c, cn - full),
                           load_lanes(share + c, cn - full)),
                    cn - full);
    });
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
    /* The strided walk, the fallback of planes too large for lop_run's
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
  if (meth == SIMDPOOL_AVG && C > chunk &&
      (w.ad.i1 - w.ad.i0) * (w.ah.i1 - w.ah.i0) * (w.aw.i1 - w.aw.i0) >=
          ND_ROW_TAPS) {
    if (bwd < 0)
      nd_avg_row(g, io, l, xn, &w, &dv, o);
    else
      nd_avg_bwd_row(g, io, l, dxn, &w, &dv, o);
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
/* The channels-last walk of one op, the op's NHWC entry point (a lop_fn):
 * one copy serves the channels-first groups and tiles too (not inlined into
 * each). */
SP_HOT void nd_walk(const sp_geom *g, const sp_io *io, int cf, int meth,
                    int bwd);

/* The group width (lop_group) for the arrays the op needs. */
static inline size_t nd_lop_width(const sp_geom *g, int meth, int bwd) {
  return lop_group(g, (size_t)nd_lop_need_x(meth, bwd) + (bwd >= 0),
                   1 + (size_t)nd_lop_idx(g, meth, bwd));
}

/* Forward (bwd < 0), every method: y (and indices, MAX) of every output
 * pixel. Backward (bwd = from_idx): dx = +0, then each output pixel's
 * shares added to its taps in output order (the reference's loop, lanes
 * over channels or planes), then NaN canonical; MAX adds dy at the winner,
 * read from the indices (from_idx) or recomputed from x. */
SP_HOT void nd_walk(const sp_geom *g0, const sp_io *io0, int cf, int meth,
                    int bwd) {
  /* Local copies: the vector stores (which may alias anything) then leave
   * the geometry and pointers in registers. */
  const sp_geom gl = *g0, *const g = &gl;
  const sp_io iol = *io0, *const io = &iol;
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

/* Channels-first plans on planes too large for lop_run's groups
 * (PSPNet's 64x64 planes, 3D volumes): tiles of outputs, each with the
 * box of inputs its windows span, through the same scratch. A tile's
 * geometry is cut from the plane's on every axis (sp_cut_axis: each window
 * keeps its taps, padding and divisor), so each lane computes what the
 * whole plane's walk would. Forward: its flat indices count in the box and
 * are mapped back to the plane's, and U8 tap numbers are the window's own.
 * Backward: the tiles own disjoint boxes of dx (on each axis, from the
 * first window's start of their outputs to the next tile's), and each runs
 * every output whose window reaches its box, in output order, so each dx
 * element it owns gets the adds of the whole plane's walk in the same
 * order; it writes only those (an owned element no window reaches is +0). */

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

/* At most how many outputs before a backward tile's first reach its box:
 * fixed windows, those less than e / s positions back; adaptive ones, one
 * when windows are at least one input apart (OUT <= IN), else fewer than
 * OUT / IN + 1 (windows cover an input each). */
static inline size_t nd_reach(int adaptive, size_t in, size_t out, size_t s,
                              size_t e, const sp_acut *cut) {
  if (!adaptive)
    return (e - 1) / s;
  const size_t IN = cut->i0 + in + cut->i1, OUT = cut->o0 + out + cut->o1;
  return OUT <= IN ? 1 : OUT / IN + 2;
}

/* One axis of a plane's geometry, by number (0 depth, 1 rows, 2 columns). */
typedef struct nd_ax {
  size_t *in, *out, *lead, *trail, s, e, k, dil;
  sp_acut *cut;
} nd_ax;

static inline nd_ax nd_ax_of(sp_geom *g, int ax) {
  nd_ax a;
  if (ax == 0) {
    nd_ax r = {&g->d, &g->od, &g->pf, &g->pk,     g->sd,
               0,     g->kd,  g->dd,  &g->acut[0]};
    a = r;
  } else if (ax == 1) {
    nd_ax r = {&g->h, &g->oh, &g->pt, &g->pb,     g->sh,
               0,     g->kh,  g->dh,  &g->acut[1]};
    a = r;
  } else {
    nd_ax r = {&g->w, &g->ow, &g->pl, &g->pr,     g->sw,
               0,     g->kw,  g->dw,  &g->acut[2]};
    a = r;
  }
  a.e = a.dil * (a.k - 1) + 1;
  return a;
}

/* The window of output o of axis a: its first input (clamped to 0) and the
 * end of its extent. */
static inline void nd_ax_win(int adaptive, const nd_ax *a, size_t o,
                             size_t *first, size_t *end) {
  const sp_win w = sp_axis_win(adaptive, o, *a->in, *a->out, a->k, a->s,
                               *a->lead, a->dil, a->cut);
  *first = w.start > 0 ? (size_t)w.start : 0;
  const ptrdiff_t e = w.start + (ptrdiff_t)((w.k - 1) * w.dil) + 1;
  *end = e > 0 ? (size_t)e : 0;
}

/* Whether a backward tile's box is the dx box it owns, its windows clipped
 * to it: adaptive plans that do not read x (an adaptive divisor is its
 * window's extent, whatever part of the window the box holds). Else the box
 * spans every window of the tile whole. */
static inline int nd_clip(const sp_geom *g, int meth, int bwd) {
  return bwd >= 0 && g->adaptive && !nd_lop_need_x(meth, bwd);
}

/* The group width for tiles of t[0] x t[1] x t[2] outputs (0: none fits);
 * backward, with the outputs before each tile that reach its box. */
static inline size_t nd_tile_width(const sp_geom *g, const size_t t[3],
                                   int meth, int bwd, sp_wide *own,
                                   sp_wide *run) {
  sp_geom p = *g, q = *g;
  *own = *run = 1; /* outputs a tile owns, and runs */
  for (int ax = 0; ax < 3; ax++) {
    const nd_ax a = nd_ax_of(&q, ax), b = nd_ax_of(&p, ax);
    size_t n = t[ax]; /* outputs, then those that reach the box */
    const size_t m = n < *a.out ? n : *a.out;
    if (bwd >= 0)
      n += nd_reach(g->adaptive, *a.in, *a.out, a.s, a.e, a.cut);
    if (n > *a.out)
      n = *a.out;
    *own *= m;
    *run *= n;
    *b.in = nd_span(g->adaptive, *a.in, *a.out, a.s, a.e, a.cut,
                    nd_clip(g, meth, bwd) ? m : n);
    *b.out = n;
  }
  return nd_lop_width(&p, meth, bwd);
}

/* At most this many times its outputs may a backward tile run (the outputs
 * before it whose windows reach its box) when windows are not clipped: each
 * output's whole window is recomputed by every tile it reaches, so windows
 * wide against the tile made the tiles 2-4x slower than the strided walk
 * (LP's powers above all; test_kernels' random 3D LP backward). */
#define ND_TILE_MOST_REDO 2

/* The tile: the whole output, halved on its outermost axis of more than
 * one output until a group fits (rows stay whole longest: their inputs
 * are contiguous). Returns the group width; 0 when not one output does, or
 * when a backward tile would run more than ND_TILE_MOST_REDO times its
 * outputs (halving only adds to that). */
static inline size_t nd_tile(const sp_geom *g, int meth, int bwd, size_t t[3]) {
  t[0] = g->od;
  t[1] = g->oh;
  t[2] = g->ow;
  for (;;) {
    sp_wide own, run;
    const size_t gw = nd_tile_width(g, t, meth, bwd, &own, &run);
    if (gw && !nd_clip(g, meth, bwd) && run > ND_TILE_MOST_REDO * own)
      return 0;
    if (gw)
      return gw;
    const int ax = t[0] > 1 ? 0 : t[1] > 1 ? 1 : 2;
    if (t[ax] == 1)
      return 0;
    t[ax] = (t[ax] + 1) / 2;
  }
}

/* A box of np planes (size P, of ph x pw rows) from t: its d x h rows of w
 * elements from (f[0], f[1], f[2]), between the tensor and the scratch s
 * (rows of w * gw lanes), either way. */
SP_HOT void nd_box_rows(float *t, size_t P, size_t ph, size_t pw, float *s,
                        size_t gw, size_t np, const size_t f[3], size_t d,
                        size_t h, size_t w, int to_tensor) {
  for (size_t a = 0; a < d; a++)
    for (size_t r = 0; r < h; r++) {
      float *tr = t + ((f[0] + a) * ph + f[1] + r) * pw + f[2];
      float *sr = s + (a * h + r) * w * gw;
      if (to_tensor)
        lop_scatter(tr, sr, gw, P, w, np);
      else
        lop_gather(sr, gw, tr, P, w, np);
    }
}

/* dx = +0 over the owned box [a, e) of the np planes from p0 outside the
 * box [i0, i1) the tile computed. */
SP_HOT void nd_zero_rest(const sp_geom *g, float *dx, size_t P, size_t np,
                         const size_t a[3], const size_t e[3],
                         const size_t i0[3], const size_t i1[3]) {
  if (i0[0] == a[0] && i0[1] == a[1] && i0[2] == a[2] && i1[0] == e[0] &&
      i1[1] == e[1] && i1[2] == e[2])
    return; /* (the common case: every owned element computed) */
  for (size_t l = 0; l < np; l++)
    for (size_t z = a[0]; z < e[0]; z++)
      for (size_t y = a[1]; y < e[1]; y++) {
        float *row = dx + l * P + (z * g->h + y) * g->w;
        const int in = z >= i0[0] && z < i1[0] && y >= i0[1] && y < i1[1];
        for (size_t x = a[2]; x < e[2]; x++)
          if (!in || x < i0[2] || x >= i1[2])
            row[x] = 0.0f;
      }
}

/* Where output k of tile b, whose first output is lo, sits in its plane. */
static inline size_t nd_tile_out(const sp_geom *g, const sp_geom *b,
                                 const size_t lo[3], size_t k) {
  const size_t x = k % b->ow, r = k / b->ow % b->oh, a = k / b->ow / b->oh;
  return ((lo[0] + a) * g->oh + lo[1] + r) * g->ow + lo[2] + x;
}

SP_HOT void nd_run_tiles(const sp_geom *g, const sp_io *io, int meth, int bwd,
                         const size_t t[3], size_t gw, lop_fn walk_cl) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t P = sp_in_plane(g), Q = sp_out_plane(g), planes = g->n * g->c;
  const int idx = nd_lop_idx(g, meth, bwd), need_x = nd_lop_need_x(meth, bwd);
  const int clip = nd_clip(g, meth, bwd);
  const simdpool_index_type it = g->index_type;
  sp_geom gg = *g; /* (nd_ax_of takes a writable geometry) */
  const size_t OUT[3] = {g->od, g->oh, g->ow};
  for (size_t p0 = 0; p0 < planes; p0 += gw) {
    const size_t np = planes - p0 < gw ? planes - p0 : gw;
    size_t o0[3];
    for (o0[0] = 0; o0[0] < g->od; o0[0] += t[0])
      for (o0[1] = 0; o0[1] < g->oh; o0[1] += t[1])
        for (o0[2] = 0; o0[2] < g->ow; o0[2] += t[2]) {
          sp_geom b = *g; /* the tile's geometry */
          size_t lo[3], f[3], own0[3], own1[3], i1[3], skip = 0;
          for (int ax = 0; ax < 3; ax++) {
            const size_t o1 =
                OUT[ax] - o0[ax] < t[ax] ? OUT[ax] : o0[ax] + t[ax];
            const nd_ax a = nd_ax_of(&gg, ax);
            lo[ax] = o0[ax];
            if (bwd >= 0) {
              size_t first, end;
              nd_ax_win(g->adaptive, &a, o0[ax], &first, &end);
              own0[ax] = o0[ax] == 0 ? 0 : first;
              own1[ax] = *a.in;
              if (o1 < OUT[ax])
                nd_ax_win(g->adaptive, &a, o1, &own1[ax], &end);
              skip |= own0[ax] >= own1[ax];
              while (lo[ax] > 0) {
                nd_ax_win(g->adaptive, &a, lo[ax] - 1, &first, &end);
                if (end <= own0[ax])
                  break;
                lo[ax]--;
              }
            }
            nd_ax c = nd_ax_of(&b, ax);
            if (clip && !skip) {
              /* The outputs from lo whose windows start in the box. */
              size_t hi = o1, first, end;
              while (hi > lo[ax] + 1) {
                nd_ax_win(1, &a, hi - 1, &first, &end);
                if (first < own1[ax])
                  break;
                hi--;
              }
              *c.in = own1[ax] - own0[ax];
              *c.out = hi - lo[ax];
              c.cut->o0 += lo[ax];
              c.cut->o1 += *a.out - hi;
              c.cut->i0 += own0[ax];
              c.cut->i1 += *a.in - own1[ax];
              f[ax] = own0[ax];
              i1[ax] = own1[ax];
              continue;
            }
            f[ax] = sp_cut_axis(g->adaptive, c.in, c.out, c.lead, c.trail, c.s,
                                c.e, c.cut, lo[ax], o1, SP_CUT_SPAN);
            i1[ax] = f[ax] + *c.in;
          }
          if (skip)
            continue; /* owns no dx element */
          const size_t bp = sp_in_plane(&b), bq = sp_out_plane(&b);
          float *const xs = scratch;
          float *const dxs = xs + (need_x ? bp * gw : 0);
          float *const ys = dxs + (bwd >= 0 ? bp * gw : 0); /* y, or dy */
          void *const is = ys + bq * gw;
          if (need_x)
            nd_box_rows((float *)io->x + p0 * P, P, g->h, g->w, xs, gw, np, f,
                        b.d, b.h, b.w, 0);
          if (bwd >= 0)
            nd_box_rows((float *)io->dy + p0 * Q, Q, g->oh, g->ow, ys, gw, np,
                        lo, b.od, b.oh, b.ow, 0);
          if (idx && bwd > 0) {
            for (size_t l = 0; l < np; l++)
              for (size_t k = 0; k < bq; k++) {
                const size_t e = (p0 + l) * Q + nd_tile_out(g, &b, lo, k);
                if (it == SIMDPOOL_INDEX_U8) {
                  ((uint8_t *)is)[k * gw + l] =
                      ((const uint8_t *)io->indices)[e];
                  continue;
                }
                /* A valid tap of its window (dispatch checked): in the box,
                 * unless the windows are clipped to it. */
                const size_t v = sp_load_flat_index(io->indices, it, e);
                size_t z = v / g->w / g->h - f[0], y = v / g->w % g->h - f[1],
                       c = v % g->w - f[2];
                if (z >= b.d || y >= b.h || c >= b.w) {
                  /* Not this tile's: +0 at the window's first tap here. */
                  const size_t x = k % b.ow, r = k / b.ow % b.oh,
                               a = k / b.ow / b.oh;
                  const ptrdiff_t sd = sp_win_d(&b, a).start,
                                  sh = sp_win_h(&b, r).start,
                                  sw = sp_win_w(&b, x).start;
                  z = sd > 0 ? (size_t)sd : 0;
                  y = sh > 0 ? (size_t)sh : 0;
                  c = sw > 0 ? (size_t)sw : 0;
                  ys[k * gw + l] = 0.0f;
                }
                ((int32_t *)is)[k * gw + l] =
                    (int32_t)((z * b.h + y) * b.w + c);
              }
            lop_unused_lanes(&b, is, gw, bq, np);
          }
          const sp_geom bs = lop_geom(&b, idx, gw);
          if (bwd >= 0) {
            const sp_io ios = {.x = need_x ? xs : NULL,
                               .indices = idx ? is : NULL,
                               .dy = ys,
                               .dx = dxs};
            walk_cl(&bs, &ios);
            size_t c0[3], c1[3]; /* owned and computed */
            for (int ax = 0; ax < 3; ax++) {
              c0[ax] = own0[ax] > f[ax] ? own0[ax] : f[ax];
              c1[ax] = own1[ax] < i1[ax] ? own1[ax] : i1[ax];
              if (c1[ax] < c0[ax])
                c1[ax] = c0[ax];
            }
            for (size_t a = c0[0]; a < c1[0]; a++)
              for (size_t r = c0[1]; r < c1[1]; r++)
                lop_scatter(
                    io->dx + p0 * P + (a * g->h + r) * g->w + c0[2],
                    dxs + (((a - f[0]) * b.h + r - f[1]) * b.w + c0[2] - f[2]) *
                              gw,
                    gw, P, c1[2] - c0[2], np);
            nd_zero_rest(g, io->dx + p0 * P, P, np, own0, own1, c0, c1);
            continue;
          }
          const sp_io ios = {.x = xs, .y = ys, .indices = idx ? is : NULL};
          walk_cl(&bs, &ios);
          nd_box_rows(io->y + p0 * Q, Q, g->oh, g->ow, ys, gw, np, lo, b.od,
                      b.oh, b.ow, 1);
          if (!idx)
            continue;
          for (size_t l = 0; l < np; l++)
            for (size_t k = 0; k < bq; k++) {
              const size_t o = (p0 + l) * Q + nd_tile_out(g, &b, lo, k);
              if (it == SIMDPOOL_INDEX_U8) {
                ((uint8_t *)io->indices)[o] = ((const uint8_t *)is)[k * gw + l];
                continue;
              }
              /* A flat position in the box, as one in the plane. */
              const size_t v = (size_t)((const int32_t *)is)[k * gw + l];
              const size_t c = v % b.w, rr = v / b.w;
              const size_t fl =
                  ((rr / b.h + f[0]) * g->h + rr % b.h + f[1]) * g->w + c +
                  f[2];
              sp_store_index(io->indices, it, o, fl, fl);
            }
        }
  }
}

/* The entry points: method and direction as constants. Channels-last runs
 * nd_walk; channels-first runs its groups of planes through the scratch on
 * the channels-last entry of the same op (walk_cl), where a group fits, and
 * the strided walk where none does. */
#define ND_ENTRY(op, meth, bwd)                                                \
  __attribute__((noinline)) void SP_FN(sp_##op##_nd_nhwc)(const sp_geom *g,    \
                                                          const sp_io *io) {   \
    nd_walk(g, io, 0, SIMDPOOL_##meth, bwd);                                   \
  }                                                                            \
  void SP_FN(sp_##op##_nd_nchw)(const sp_geom *g, const sp_io *io) {           \
    const size_t gw = nd_lop_width(g, SIMDPOOL_##meth, bwd);                   \
    size_t t[3], tw;                                                           \
    if (gw)                                                                    \
      lop_run(g, io, gw, nd_lop_need_x(SIMDPOOL_##meth, bwd), bwd,             \
              nd_lop_idx(g, SIMDPOOL_##meth, bwd), SP_FN(sp_##op##_nd_nhwc));  \
    else if ((tw = nd_tile(g, SIMDPOOL_##meth, bwd, t)) != 0)                  \
      nd_run_tiles(g, io, SIMDPOOL_##meth, bwd, t, tw,                         \
                   SP_FN(sp_##op##_nd_nhwc));                                  \
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
