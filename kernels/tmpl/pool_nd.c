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

/* The AVG division of window w's sum (or, backward, of its dy): by the
 * product of the counted taps per axis, or, adaptive, by each extent in
 * turn ((v / kd) / kh) / kw. sum: the forward form (+0 + v, NaN
 * canonical). */
SP_HOT vf nd_avg_div(const sp_geom *g, size_t od, size_t oy, size_t ox, vf v,
                     int sum) {
  if (g->adaptive) {
    const divisor dd = divisor_count(sp_win_d(g, od).k);
    const divisor dh = divisor_count(sp_win_h(g, oy).k);
    const divisor dw = divisor_count(sp_win_w(g, ox).k);
    const vf q = div_by(div_by(div_by(v, &dd), &dh), &dw);
    return sum ? vcanon(q) : q;
  }
  const size_t k = sp_avg_taps_d(g, od) * sp_avg_taps_h(g, oy) *
                   sp_avg_taps_w(g, ox); /* < 2^31: simd_geom_ok */
  const divisor dv = divisor_count(k);
  return div_lanes(v, &dv, sum);
}

/* MAX over window w, lanes [c0, c0 + cn) of image xn: the running max
 * (*m) and its index value (*idx: the flat position for I32/I64 and for
 * backward (type NONE), the tap number for U8). The first valid tap is
 * the running max, whatever it holds (-inf included) and whatever its
 * index; later taps replace it by mx_step. */
SP_HOT void nd_max_window(const sp_geom *g, const nd_window *w, const float *xn,
                          size_t c0, size_t cn, simdpool_index_type type, vf *m,
                          vi *idx) {
  int first = 1;
  ND_FOR_TAPS(g, *w, flat, tap, {
    const vf v = load_lanes(xn + flat * g->xs + c0, cn);
    const int32_t val =
        type == SIMDPOOL_INDEX_U8 ? (int32_t)tap : (int32_t)flat;
    if (first) {
      *m = v;
      *idx = vi_set1(val);
      first = 0;
    } else {
      mx_step(v, val, 1, m, idx);
    }
  });
}

/* Forward, every method: y (and indices, MAX) of every output pixel. */
SP_HOT void nd_fwd_nhwc(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, plane = g->d * g->h * g->w;
  const int kind = lp_kind(g->p);
  const float inv_p = g->method == SIMDPOOL_LP ? 1.0f / g->p : 1.0f;
  const int track = g->index_type != SIMDPOOL_INDEX_NONE;
  size_t o = 0; /* output pixel */
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * plane * g->xs;
    for (size_t od = 0; od < g->od; od++)
      for (size_t oy = 0; oy < g->oh; oy++)
        for (size_t ox = 0; ox < g->ow; ox++, o++) {
          const nd_window w = nd_window_at(g, od, oy, ox);
          for (size_t c0 = 0; c0 < C; c0 += SP_VL) {
            const size_t cn = C - c0 < SP_VL ? C - c0 : SP_VL;
            vf acc = vf_zero(), y;
            vi idx = vi_set1(0);
            if (g->method == SIMDPOOL_MAX)
              nd_max_window(g, &w, xn, c0, cn, g->index_type, &acc, &idx);
            else
              ND_FOR_TAPS(g, w, flat, tap, {
                const vf v = load_lanes(xn + flat * g->xs + c0, cn);
                acc = vf_add(acc, g->method == SIMDPOOL_LP
                                      ? lp_term_v(kind, g->p, v)
                                      : v);
              });
            if (g->method == SIMDPOOL_MAX)
              y = acc;
            else if (g->method == SIMDPOOL_LP)
              y = vcanon(lp_root_v(kind, inv_p, acc));
            else
              y = nd_avg_div(g, od, oy, ox, acc, 1);
            store_lanes(io->y + o * g->ys + c0, yclamp(g, y), cn);
            if (track)
              store_index(io->indices, g->index_type, o * C + c0, idx, cn);
          }
        }
  }
}

/* Backward, every method: dx = +0, then each output pixel's shares added
 * to its taps in output order (the reference's loop, lanes over channels),
 * then NaN canonical. MAX adds dy at the winner, read from the indices
 * (from_idx) or recomputed from x. */
SP_HOT void nd_bwd_nhwc(const sp_geom *g, const sp_io *io, int from_idx) {
  const size_t C = g->c, plane = g->d * g->h * g->w;
  const int kind = lp_kind(g->p);
  const float inv_p = g->method == SIMDPOOL_LP ? 1.0f / g->p : 1.0f;
  zero_px(io->dx, g->n * plane, C, g->xs);
  size_t o = 0;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x ? io->x + n * plane * g->xs : NULL;
    float *dxn = io->dx + n * plane * g->xs;
    for (size_t od = 0; od < g->od; od++)
      for (size_t oy = 0; oy < g->oh; oy++)
        for (size_t ox = 0; ox < g->ow; ox++, o++) {
          const nd_window w = nd_window_at(g, od, oy, ox);
          for (size_t c0 = 0; c0 < C; c0 += SP_VL) {
            const size_t cn = C - c0 < SP_VL ? C - c0 : SP_VL;
            const vf dy = load_lanes(io->dy + o * g->ys + c0, cn);
            if (g->method == SIMDPOOL_MAX) {
              int32_t win[SP_VL];
              float d[SP_VL];
              vf_store(d, dy);
              if (from_idx) {
                vi_store_i32(win, load_index(io->indices, g->index_type,
                                             o * C + c0, cn));
                if (g->index_type == SIMDPOOL_INDEX_U8)
                  for (size_t l = 0; l < cn; l++) {
                    /* tap -> flat: dispatch checked it is a valid tap */
                    const size_t t = (size_t)win[l], t2 = g->kh * g->kw;
                    win[l] = (int32_t)((nd_pos(&w.ad, t / t2) * g->h +
                                        nd_pos(&w.ah, t % t2 / g->kw)) *
                                           g->w +
                                       nd_pos(&w.aw, t % g->kw));
                  }
              } else {
                vf m = vf_zero();
                vi idx = vi_set1(0);
                nd_max_window(g, &w, xn, c0, cn, SIMDPOOL_INDEX_NONE, &m, &idx);
                vi_store_i32(win, idx);
              }
              for (size_t l = 0; l < cn; l++)
                dxn[(size_t)win[l] * g->xs + c0 + l] += d[l];
              continue;
            }
            vf share, gr = dy;
            if (g->method == SIMDPOOL_AVG) {
              share = nd_avg_div(g, od, oy, ox, dy, 0);
            } else {
              if (kind != LP_ONE) {
                vf acc = vf_zero();
                ND_FOR_TAPS(g, w, flat, tap, {
                  acc = vf_add(
                      acc, lp_term_v(kind, g->p,
                                     load_lanes(xn + flat * g->xs + c0, cn)));
                });
                gr = lp_grad_v(kind, g->p, dy, lp_root_v(kind, inv_p, acc));
              }
              share = gr;
            }
            ND_FOR_TAPS(g, w, flat, tap, {
              float *p = dxn + flat * g->xs + c0;
              const vf q =
                  g->method == SIMDPOOL_AVG
                      ? share
                      : lp_share_v(kind, g->p, gr,
                                   load_lanes(xn + flat * g->xs + c0, cn));
              store_lanes(p, vf_add(load_lanes(p, cn), q), cn);
            });
          }
        }
  }
  canonicalize_px(io->dx, g->n * plane, C, g->xs);
}

void SP_FN(sp_maxpool_fwd_nd_nhwc)(const sp_geom *g, const sp_io *io) {
  nd_fwd_nhwc(g, io);
}
void SP_FN(sp_avgpool_fwd_nd_nhwc)(const sp_geom *g, const sp_io *io) {
  nd_fwd_nhwc(g, io);
}
void SP_FN(sp_lppool_fwd_nd_nhwc)(const sp_geom *g, const sp_io *io) {
  nd_fwd_nhwc(g, io);
}
void SP_FN(sp_maxpool_bwd_nd_nhwc)(const sp_geom *g, const sp_io *io) {
  nd_bwd_nhwc(g, io, 0);
}
void SP_FN(sp_maxpool_bwd_idx_nd_nhwc)(const sp_geom *g, const sp_io *io) {
  nd_bwd_nhwc(g, io, 1);
}
void SP_FN(sp_avgpool_bwd_nd_nhwc)(const sp_geom *g, const sp_io *io) {
  nd_bwd_nhwc(g, io, 0);
}
void SP_FN(sp_lppool_bwd_nd_nhwc)(const sp_geom *g, const sp_io *io) {
  nd_bwd_nhwc(g, io, 0);
}
