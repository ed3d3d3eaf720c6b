/* SPDX-License-Identifier: MIT */
/* lop.h — lanes over planes through a stack scratch: a group of SP_VL
 * channels-first planes transposed into one channels-last image and back,
 * for the NCHW families (tmpl/nchw.h) and the channels-first ND kernels
 * (tmpl/pool_nd.c). */
#ifndef SP_TMPL_LOP_H
#define SP_TMPL_LOP_H

#include "tmpl/elem.h"

/* ================================================ NCHW small planes, lanes
 * over planes. Rows of a few outputs (7x7, 14x14 planes) leave most lanes
 * of an NCHW row block idle and every block a border block. A group of
 * planes is instead transposed into a stack scratch laid out as one NHWC
 * image of that many channels (lane l = plane p0 + l), the NHWC kernel
 * runs on it, and its results are transposed back. Each lane still sees
 * exactly its plane's taps in the reference's order, and flat indices and
 * U8 taps are the same in both layouts, so the bits are the NCHW ones. */
#define LOP_ELEMS 10240 /* floats of scratch: 40 KiB of stack */

/* The widest group, a multiple of SP_VL lanes and at most `most`, whose
 * `big` arrays of plane size (d*h*w) and `small` of output plane size
 * (od*oh*ow) fit the scratch; 0 when SP_VL lanes do not. */
static inline size_t lop_width(const sp_geom *g, size_t big, size_t small,
                               size_t most) {
  const size_t hw = sp_in_plane(g), ohw = sp_out_plane(g);
  if (hw > LOP_ELEMS || ohw > LOP_ELEMS)
    return 0;
  size_t lanes = LOP_ELEMS / (big * hw + small * ohw);
  if (lanes > most)
    lanes = most;
  return lanes / SP_VL * SP_VL;
}

/* The group width for g's n*c planes: as wide as the scratch holds, up to
 * LOP_MOST lanes and no wider than the planes need (the kernel's work per
 * output pixel -- window, divisors, taps' addresses -- is shared by the
 * group's lanes: groups of SP_VL planes left SSE4.1 4x slower than its
 * strided walk on adaptive plans); 0 when no group fits. */
#define LOP_MOST 64
static inline size_t lop_group(const sp_geom *g, size_t big, size_t small) {
  const size_t planes = g->n * g->c;
  const size_t need = (planes + SP_VL - 1) / SP_VL * SP_VL;
  return lop_width(g, big, small, need < LOP_MOST ? need : LOP_MOST);
}

/* s[e * gw + l] = src[l * plane + e] for e < ne, l < np (zero for the
 * lanes past np); gw, the group's width, a multiple of SP_VL >= np. The
 * scratch is f32: src's elements widened (tmpl/elem.h). */
SP_HOT void lop_gather(float *s, size_t gw, const el_t *src, size_t plane,
                       size_t ne, size_t np) {
  for (size_t l0 = 0; l0 < gw; l0 += SP_VL) {
    const size_t nl = np > l0 ? (np - l0 < SP_VL ? np - l0 : SP_VL) : 0;
    const el_t *sp = src + l0 * plane;
    float *d = s + l0;
    size_t e = 0;
    if (nl == SP_VL)
      for (; e + SP_VL <= ne; e += SP_VL) {
        vf v[SP_VL];
        el_load_transposed(sp + e, plane, v);
        for (size_t j = 0; j < SP_VL; j++)
          vf_store(d + (e + j) * gw, v[j]);
      }
    for (; e < ne; e++)
      for (size_t l = 0; l < SP_VL; l++)
        d[e * gw + l] = l < nl ? el_to_f32(sp[l * plane + e]) : 0.0f;
  }
}

/* The inverse: dst[l * plane + e] = s[e * gw + l] for l < np, narrowed
 * (tmpl/elem.h). */
SP_HOT void lop_scatter(el_t *dst, const float *s, size_t gw, size_t plane,
                        size_t ne, size_t np) {
  for (size_t l0 = 0; l0 < np; l0 += SP_VL) {
    const size_t nl = np - l0 < SP_VL ? np - l0 : SP_VL;
    el_t *dp = dst + l0 * plane;
    const float *sp = s + l0;
    size_t e = 0;
    if (nl == SP_VL)
      for (; e + SP_VL <= ne; e += SP_VL) {
        vf v[SP_VL];
        vf_load_transposed(sp + e * gw, gw, v);
        for (size_t j = 0; j < SP_VL; j++)
          el_store(dp + j * plane + e, v[j]);
      }
    for (; e < ne; e++)
      for (size_t l = 0; l < nl; l++)
        dp[l * plane + e] = el_from_f32(sp[e * gw + l]);
  }
}

/* The group's scratch geometry: one NHWC image of gw channels, indices as
 * int32 flat positions (I32, I64) or U8 taps. */
static inline sp_geom lop_geom(const sp_geom *g, int has_idx, size_t gw) {
  sp_geom gs = *g;
  gs.layout = SIMDPOOL_NHWC;
  gs.n = 1;
  gs.c = gw;
  gs.xs = gs.ys = gw;      /* dense */
  gs.dtype = SIMDPOOL_F32; /* the scratch's elements */
  if (has_idx && g->index_type != SIMDPOOL_INDEX_U8)
    gs.index_type = SIMDPOOL_INDEX_I32;
  return gs;
}

/* Indices between the scratch (is: int32 or U8 lanes) and the tensor, for
 * the np planes from p0. */
SP_HOT void lop_indices(const sp_geom *g, void *ind, void *is, size_t gw,
                        size_t p0, size_t np, int to_tensor) {
  const size_t ohw = sp_out_plane(g);
  const simdpool_index_type it = g->index_type;
  for (size_t l = 0; l < np; l++) {
    const size_t base = (p0 + l) * ohw;
    for (size_t o = 0; o < ohw; o++) {
      const size_t k = o * gw + l;
      if (it == SIMDPOOL_INDEX_U8) {
        uint8_t *a = (uint8_t *)ind + base + o, *b = (uint8_t *)is + k;
        *(to_tensor ? a : b) = *(to_tensor ? b : a);
      } else if (to_tensor) {
        const int32_t v = ((const int32_t *)is)[k];
        if (it == SIMDPOOL_INDEX_I64)
          ((int64_t *)ind)[base + o] = v;
        else
          ((int32_t *)ind)[base + o] = v;
      } else {
        /* Checked before the kernel runs: valid positions fit in int32. */
        ((int32_t *)is)[k] = it == SIMDPOOL_INDEX_I64
                                 ? (int32_t)((const int64_t *)ind)[base + o]
                                 : ((const int32_t *)ind)[base + o];
      }
    }
  }
}

/* The scratch indices of lanes np..gw-1 (planes past the last): lane 0's,
 * a valid tap of the same window, whose dy there is 0 (+0 added in their
 * own scratch column). Index 0 would not do: with padding, tap 0 of a
 * window can lie outside the plane. */
SP_HOT void lop_unused_lanes(const sp_geom *g, void *is, size_t gw, size_t ohw,
                             size_t np) {
  for (size_t o = 0; o < ohw && np < gw; o++)
    for (size_t l = np; l < gw; l++) {
      if (g->index_type == SIMDPOOL_INDEX_U8)
        ((uint8_t *)is)[o * gw + l] = ((const uint8_t *)is)[o * gw];
      else
        ((int32_t *)is)[o * gw + l] = ((const int32_t *)is)[o * gw];
    }
}

/* A channels-last function (an op's f32 NHWC entry point) run on each
 * group. */
typedef void (*lop_fn)(const sp_geom *g, const sp_io *io);

/* The channels-first planes of g in groups of gw (a lop_group width for the
 * arrays below) through the stack scratch, each group transposed into one
 * channels-last image of gw channels that fn runs on, its results transposed
 * back: forward (bwd < 0) reads x and writes y, and the indices with idx;
 * backward (bwd 0: from x when need_x, 1: from the indices with idx) reads
 * dy and writes dx. Scratch: x (need_x), dx (backward), y or dy, indices
 * (int32 or U8 lanes, idx). Each lane sees its plane's taps in the plane's
 * order and flat indices are the same in both layouts, so the bits are
 * those of the plane walked alone. */
SP_HOT void lop_run(const sp_geom *g, const sp_io *io, size_t gw, int need_x,
                    int bwd, int idx, lop_fn fn) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t P = sp_in_plane(g), Q = sp_out_plane(g), planes = g->n * g->c;
  float *const xs = scratch;
  float *const dxs = xs + (need_x ? P * gw : 0);
  float *const ys = dxs + (bwd >= 0 ? P * gw : 0); /* y, or dy */
  void *const is = ys + Q * gw;
  const sp_geom gs = lop_geom(g, idx, gw);
  for (size_t p0 = 0; p0 < planes; p0 += gw) {
    const size_t np = planes - p0 < gw ? planes - p0 : gw;
    if (need_x)
      lop_gather(xs, gw, EL_X(io) + p0 * P, P, P, np);
    if (bwd >= 0)
      lop_gather(ys, gw, EL_DY(io) + p0 * Q, Q, Q, np);
    if (idx && bwd > 0) {
      lop_indices(g, io->indices, is, gw, p0, np, 0);
      lop_unused_lanes(g, is, gw, Q, np);
    }
    const sp_io ios = {.x = need_x ? xs : NULL,
                       .y = bwd < 0 ? ys : NULL,
                       .indices = idx ? is : NULL,
                       .dy = bwd >= 0 ? ys : NULL,
                       .dx = bwd >= 0 ? dxs : NULL};
    fn(&gs, &ios);
    if (bwd >= 0) {
      lop_scatter(EL_DX(io) + p0 * P, dxs, gw, P, P, np);
      continue;
    }
    lop_scatter(EL_Y(io) + p0 * Q, ys, gw, Q, Q, np);
    if (idx)
      lop_indices(g, io->indices, is, gw, p0, np, 1);
  }
}

#endif /* SP_TMPL_LOP_H */
