/* SPDX-License-Identifier: MIT */
/* nhwc_fwd.c — NHWC forward kernels (lanes over channels) of MAX, AVG and
 * LP; compiled once per SIMD ISA and element type (kernels/meson.build,
 * tmpl/elem.h). */
#include "tmpl/vec.h"

#include "tmpl/nhwc.h"

SP_HOT void maxpool_fwd_nhwc_body(const sp_geom *g, const sp_io *io,
                                  int track) {
  const size_t C = g->c;
  const int k3win = g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1;
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * g->xs;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        el_t *y = EL_Y(io) + px * g->ys;
        const int k3 = k3win && win.ki0 == 0 && win.ki1 == 3 && win.kj0 == 0 &&
                       win.kj1 == 3;
        size_t c = 0;
        while (
            c + NHWC_UNROLL * SP_VL <= C &&
            (k3 ? max4_nhwc(g, xn, &win, c, y + c, track, io->indices, o + c, 1)
                : max4_nhwc(g, xn, &win, c, y + c, track, io->indices, o + c,
                            0)))
          c += NHWC_UNROLL * SP_VL;
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi t;
          const vf m =
              max_block_nhwc(g, xn, &win, c, cn, track, g->index_type, &t);
          el_store_lanes_x(y + c, yclamp(g, m), cn, !g->clamp);
          if (track)
            store_index(io->indices, g->index_type, o + c, t, cn);
        }
      }
    }
  }
}

void SP_KFN(sp_maxpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  if (el_bmax_if(g, io)) /* S8/U8: byte lanes */
    return;
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    maxpool_fwd_nhwc_body(g, io, 0);
  else
    maxpool_fwd_nhwc_body(g, io, 1);
}

#if !SP_EL_INT8 /* S8/U8: MAX only (their AVG is tmpl/qavg.c's) */
/* nv (a compile-time constant) full channel blocks of one output pixel:
 * their sums, then one division test for all of them (div_lanes_n). */
SP_HOT void avg_nhwc_vecs(const sp_geom *g, const el_t *xn, const window *win,
                          const divisor *div, size_t c, el_t *y, size_t nv) {
  vf acc[NHWC_SUM_NV];
  sumn_nhwc(g, xn, win, c, 0, 0, acc, nv);
  div_lanes_n(acc, (int)nv, div, 1);
  for (size_t u = 0; u < nv; u++)
    el_store(y + c + u * SP_VL, yclamp(g, acc[u]));
}

void SP_KFN(sp_avgpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, XS = g->xs;
  const divisor full = divisor_set1((float)(g->kh * g->kw));
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const divisor div = window_divisor(g, &win, oy, ox, &full);
        el_t *y = EL_Y(io) + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        size_t c = 0;
        for (; c + NHWC_SUM_NV * SP_VL <= C; c += NHWC_SUM_NV * SP_VL)
          avg_nhwc_vecs(g, xn, &win, &div, c, y, NHWC_SUM_NV);
        if (c + 4 * SP_VL <= C) {
          avg_nhwc_vecs(g, xn, &win, &div, c, y, 4);
          c += 4 * SP_VL;
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vf acc = vf_zero();
          for (size_t ki = win.ki0; ki < win.ki1; ki++)
            for (size_t kj = win.kj0; kj < win.kj1; kj++)
              acc = vf_add(
                  acc,
                  el_load_lanes(xn + tap_flat(g, &win, ki, kj) * XS + c, cn));
          el_store_lanes(y + c, yclamp(g, avg_result(acc, &div)), cn);
        }
      }
    }
  }
}

#endif

#if SP_EL_F32 /* LP of bf16/f16: on widened copies */
void SP_FN(sp_lppool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c;
  const int kind = lp_kind(g->p);
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * g->xs;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        el_t *y = EL_Y(io) + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        size_t c = 0;
        for (; c + NHWC_UNROLL * SP_VL <= C; c += NHWC_UNROLL * SP_VL) {
          vf acc[NHWC_SUM_NV];
          sumn_nhwc(g, xn, &win, c, 1, kind, acc, NHWC_UNROLL);
          for (int u = 0; u < NHWC_UNROLL; u++)
            el_store(y + c + (size_t)u * SP_VL,
                     yclamp(g, vcanon(lp_root_v(kind, 1.0f / g->p, acc[u]))));
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          el_store_lanes(
              y + c, yclamp(g, vcanon(lp_block_nhwc(g, xn, &win, c, cn, kind))),
              cn);
        }
      }
    }
  }
}
#endif
