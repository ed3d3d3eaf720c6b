/* SPDX-License-Identifier: MIT */
/* nchw_fwd.c — NCHW forward kernels of the general shapes and of
 * global pooling, and the AVG division and output clamp over arrays;
 * compiled once per SIMD ISA (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/nchw.h"

#if SP_EL_F32
/* The AVG division (div_lanes, tmpl/common.h) over an array, for its proof
 * (sp_divide_fn): one divisor d[0] (d_stride 0), or one per element
 * (d_stride 1), with the unused lanes of a short last vector dividing by 1
 * as in the kernels; avg_result with `sum`, else div_by. */
int SP_FN(sp_divide)(const float *x, const float *d, size_t d_stride, float *y,
                     size_t n, int sum) {
  divisor v = divisor_set1(d[0]);
  for (size_t i = 0; i < n; i += SP_VL) {
    const size_t cnt = n - i < SP_VL ? n - i : SP_VL;
    if (d_stride)
      v = divisor_of(
          vf_select(vm_range(0, cnt), vf_set1(1.0f), load_lanes(d + i, cnt)));
    const vf xv = load_lanes(x + i, cnt);
    store_lanes(y + i, sum ? avg_result(xv, &v) : div_by(xv, &v), cnt);
  }
  return SP_DIV_EXACT;
}
#endif

void SP_KFN(sp_maxpool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  if (el_bmax_if(g, io)) /* S8/U8: byte lanes */
    return;
  const int track = g->index_type != SIMDPOOL_INDEX_NONE;
  const size_t gw = lop_fits(g, 1, 1 + (size_t)track);
  if (gw)
    lop_run(g, io, gw, 1, -1, track, SP_FN(sp_maxpool_fwd_nhwc));
  else if (!track)
    maxpool_fwd_nchw_body(g, io, 0);
  else
    maxpool_fwd_nchw_body(g, io, 1);
}

/* SP_SHAPE_3X3S2P1 (the ResNet stem), every index type. */
void SP_KFN(sp_maxpool_fwd_3x3s2p1_nchw)(const sp_geom *g, const sp_io *io) {
  if (el_bmax_if(g, io)) /* S8/U8: byte lanes */
    return;
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    max3x3s2_nchw_direct(g, io, 0);
  else
    max3x3s2_nchw_direct(g, io, 1);
}

#if !SP_EL_INT8 /* S8/U8: MAX only (their AVG is tmpl/qavg.c's) */
/* sw_c: the column stride when it is a compile-time 1 or 2, else 0; k3: a
 * compile-time 3x3 kernel without dilation. cd: the AVG column factors
 * (cd->ok). */
SP_HOT void sumpool_fwd_nchw_padded(const sp_geom *g, const sp_io *io, int lp,
                                    const pad_plan *pp, const col_divs *cd,
                                    size_t sw_c, int k3) {
  const size_t sw = sw_c ? sw_c : g->sw;
  const size_t kh = k3 ? 3 : g->kh, kw = k3 ? 3 : g->kw;
  const size_t dh = k3 ? 1 : g->dh, dw = k3 ? 1 : g->dw;
  el_t scratch[PAD_SCRATCH + SP_VL] __attribute__((aligned(64)));
  const int kind = lp_kind(g->p);
  const float inv_p = lp ? 1.0f / g->p : 1.0f;
  const size_t rs = pp->rs, gs = g->sh * rs; /* between output rows */
  FOR_EACH_PAD_TILE(g, io, pp, scratch, vf_zero(), {
    for (size_t oy = oy0; oy < oy0 + by && oy < g->oh; oy += PAD_ROWS) {
      const size_t nr = g->oh - oy < PAD_ROWS ? g->oh - oy : PAD_ROWS;
      size_t ny[PAD_ROWS]; /* each row's counted kernel rows (AVG) */
      for (size_t r = 0; r < PAD_ROWS; r++)
        ny[r] = lp || r >= nr ? g->kh : sp_avg_taps_h(g, oy + r);
      const el_t *srow = scratch + (oy - oy0) * gs;
      for (size_t bx = 0; bx < tc; bx += SP_VL) {
        const size_t cnt = tc - bx < SP_VL ? tc - bx : SP_VL;
        vf acc[PAD_ROWS];
        for (size_t r = 0; r < PAD_ROWS; r++)
          acc[r] = vf_zero();
        for (size_t ki = 0; ki < kh; ki++) {
          const el_t *p = srow + ki * dh * rs + bx * sw;
          for (size_t kj = 0; kj < kw; kj++, p += dw) {
            for (size_t r = 0; r < PAD_ROWS; r++) {
              const vf v = load_cols(p + r * gs, sw, SP_VL, 1);
              acc[r] = vf_add(acc[r], lp ? lp_term_v(kind, g->p, v) : v);
            }
          }
        }
        const size_t bi = (ox0 + bx) / SP_VL, slot = lp ? 0 : col_slot(cd, bi);
        for (size_t r = 0; r < PAD_ROWS && r < nr; r++) {
          const vf y = lp ? lp_root_v(kind, inv_p, acc[r])
                          : col_div(g, cd, bi, slot, ny[r], acc[r]);
          el_store_lanes(yp + (oy + r) * g->ow + ox0 + bx,
                         yclamp(g, lp ? vcanon(y) : y), cnt);
        }
      }
    }
  });
}

/* AVG (lp = 0) and LP (lp = 1) forward, NCHW. */
SP_HOT void sumpool_fwd_nchw_body(const sp_geom *g, const sp_io *io, int lp) {
  pad_plan pp;
  col_divs cd;
  const row_span in = interior_cols(g);
  col_divs_init(g, &in, &cd);
  if (pad_plan_of(g, &pp) && (lp || cd.ok)) {
    const int k3 = g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1;
    if (g->sw == 1 && k3)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 1, 1);
    else if (g->sw == 1)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 1, 0);
    else if (g->sw == 2 && k3)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 2, 1);
    else if (g->sw == 2)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 2, 0);
    else
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 0, 0);
    return;
  }
  /* Kernels too tall for the scratch, or (AVG) rows with too many border
   * blocks for col_divs: blocks read the input directly. */
  const int kind = lp_kind(g->p);
  const float inv_p = lp ? 1.0f / g->p : 1.0f;
  size_t row_ny = 0; /* the interior divisor's rows, 0: none yet */
  divisor inner = divisor_plain(vf_set1(1.0f));
  FOR_EACH_ROW(g, {
    const size_t ny = sp_avg_taps_h(g, oy);
    if (!lp && ny != row_ny) {
      inner = divisor_set1((float)(ny * g->kw));
      row_ny = ny;
    }
    for (size_t ox = 0, cnt; ox < g->ow; ox += cnt) {
      cnt = block_len(&in_, ox, g->ow);
      const block b = block_at(g, &in_, oy, ki0, ki1, ox, cnt);
      const vf acc = sum_block_nchw(g, EL_X(io) + px.base, &b, lp, kind);
      vf y;
      if (lp) {
        y = lp_root_v(kind, inv_p, acc);
      } else {
        /* Border blocks: per-lane divisors that change too often for r. */
        const divisor bd =
            b.border ? divisor_plain(cols_divisor(g, &in_, ny, ox, cnt))
                     : inner;
        y = avg_result(acc, &bd);
      }
      el_store_lanes(EL_Y(io) + orow + ox, yclamp(g, lp ? vcanon(y) : y), cnt);
    }
  });
}

void SP_KFN(sp_avgpool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  sumpool_fwd_nchw_body(g, io, 0);
}

#if SP_EL_F32 /* LP of bf16/f16: on widened copies */
void SP_FN(sp_lppool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  sumpool_fwd_nchw_body(g, io, 1);
}
#endif
#endif

/* ================================================================ global
 * NCHW global pooling (one window per plane, the whole plane: any rank,
 * fixed or adaptive windows): a plane has one output, so lanes run over
 * planes instead. A full group of SP_VL planes
 * reads SP_VL taps of each at once and transposes them (vf_load_transposed),
 * so each tap is one vector; the last taps, and a group of fewer planes,
 * read tap t of every plane at stride h*w. Each lane still scans its plane
 * in row-major order. */

enum { G_MAX, G_AVG, G_LP };
#define GLOBAL_GROUPS 4

/* Tap t (values v) of every lane's plane into the running result; MAX
 * starts from -inf with index 0 (mx_step). */
SP_HOT void global_step(int method, int track, int kind, float pv, size_t t,
                        vf v, vf *acc, vi *idx) {
  if (method == G_MAX) {
    mx_step(v, (int32_t)t, track, acc, idx);
  } else {
    *acc = vf_add(*acc, method == G_LP ? lp_term_v(kind, pv, v) : v);
  }
}

/* ng groups of SP_VL planes from plane p0 (ng == 1 when fewer remain): ng
 * independent chains of h*w steps hide the latency of each. */
SP_HOT void global_nchw_groups(const sp_geom *g, const sp_io *io, int method,
                               int track, size_t p0, size_t ng) {
  const size_t hw = sp_in_plane(g), planes = g->n * g->c;
  const int kind = lp_kind(g->p);
  const float pv = g->p;
  const size_t cnt = planes - p0 < SP_VL ? planes - p0 : SP_VL;
  const el_t *xp = EL_X(io) + p0 * hw;
  vf acc[GLOBAL_GROUPS];
  vi idx[GLOBAL_GROUPS];
  for (size_t k = 0; k < ng; k++) {
    acc[k] = method == G_MAX ? vf_set1(-INFINITY) : vf_zero();
    idx[k] = vi_set1(0);
  }
  const size_t tb = cnt == SP_VL ? hw / SP_VL * SP_VL : 0;
  for (size_t t0 = 0; t0 < tb; t0 += SP_VL) {
    for (size_t k = 0; k < ng; k++) {
      vf v[SP_VL];
      el_load_transposed(xp + k * SP_VL * hw + t0, hw, v);
      for (size_t j = 0; j < SP_VL; j++)
        global_step(method, track, kind, pv, t0 + j, v[j], &acc[k], &idx[k]);
    }
  }
  for (size_t t = tb; t < hw; t++)
    for (size_t k = 0; k < ng; k++)
      global_step(method, track, kind, pv, t,
                  load_cols(xp + k * SP_VL * hw + t, hw, cnt, 0), &acc[k],
                  &idx[k]);
  for (size_t k = 0; k < ng; k++) {
    const size_t o = p0 + k * SP_VL;
    if (method == G_MAX) {
      el_store_lanes_x(EL_Y(io) + o, yclamp(g, acc[k]), cnt, !g->clamp);
      /* The window is the plane: tap number and flat position coincide. */
      if (track)
        store_index(io->indices, g->index_type, o, idx[k], cnt);
    } else if (method == G_AVG && g->adaptive) {
      /* ((acc / d) / h) / w: the window's extents are the axes'. */
      const divisor dd = divisor_count(g->d), dh = divisor_count(g->h),
                    dw = divisor_count(g->w);
      const vf y = vcanon(div_axes(acc[k], &dd, &dh, &dw));
      el_store_lanes(EL_Y(io) + o, yclamp(g, y), cnt);
    } else {
      const divisor dv = divisor_set1((float)hw);
      const vf y = method == G_LP ? lp_root_v(kind, 1.0f / g->p, acc[k])
                                  : avg_result(acc[k], &dv);
      el_store_lanes(EL_Y(io) + o, yclamp(g, method == G_LP ? vcanon(y) : y),
                     cnt);
    }
  }
}

SP_HOT void global_nchw_body(const sp_geom *g, const sp_io *io, int method,
                             int track) {
  const size_t planes = g->n * g->c;
  size_t p0 = 0;
  for (; planes - p0 >= GLOBAL_GROUPS * SP_VL; p0 += GLOBAL_GROUPS * SP_VL)
    global_nchw_groups(g, io, method, track, p0, GLOBAL_GROUPS);
  for (; p0 < planes; p0 += SP_VL)
    global_nchw_groups(g, io, method, track, p0, 1);
}

void SP_KFN(sp_maxpool_fwd_global_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    global_nchw_body(g, io, G_MAX, 0);
  else
    global_nchw_body(g, io, G_MAX, 1);
}
#if !SP_EL_INT8
void SP_KFN(sp_avgpool_fwd_global_nchw)(const sp_geom *g, const sp_io *io) {
  global_nchw_body(g, io, G_AVG, 0);
}
#endif
#if SP_EL_F32
void SP_FN(sp_lppool_fwd_global_nchw)(const sp_geom *g, const sp_io *io) {
  global_nchw_body(g, io, G_LP, 0);
}
#endif
