/* SPDX-License-Identifier: MIT */
/* unpool.c — max unpooling and its backward for every window class that
 * has no fast path of its own (any rank, adaptive windows, any index
 * inside its plane): x zeroed with vector stores, then each output's bits
 * stored where its index points, in output order (the last of two equal
 * indices wins); the backward gathers. The 2x2/s2 fast paths are in
 * pool_2x2s2.c. Compiled once per SIMD ISA (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/common.h"

/* One element's bits, never through a floating-point operation. */
static inline void copy_bits(float *d, const float *s) {
  memcpy(d, s, sizeof *d);
}

/* bwd 0: dx = 0, then dx_plane[index] = dy; bwd 1: y = x_plane[index].
 * Planes are n*c (NCHW) or n (NHWC, c lanes per pixel). Flat I32/I64
 * indices are positions as they are; U8 tap numbers need their window. */
SP_HOT void unpool_walk(const sp_geom *g, const sp_io *io, int bwd) {
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t planes = nhwc ? g->n : g->n * g->c;
  const size_t lanes = nhwc ? g->c : 1;
  const size_t xstep = nhwc ? g->xs : 1, ystep = nhwc ? g->ys : 1;
  const size_t in_px = sp_in_plane(g), out_px = sp_out_plane(g);
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  for (size_t p = 0; p < planes; p++) {
    const size_t xb = p * in_px * xstep, yb = p * out_px * ystep;
    const size_t ib = p * out_px * lanes;
    if (!bwd) {
      if (nhwc)
        zero_px(io->dx + xb, in_px, g->c, g->xs);
      else
        zero_tensor(io->dx + xb, in_px);
    }
    size_t o = 0; /* output pixel of the plane */
    for (size_t od = 0; od < g->od; od++)
      for (size_t oy = 0; oy < g->oh; oy++)
        for (size_t ox = 0; ox < g->ow; ox++, o++)
          for (size_t l = 0; l < lanes; l++) {
            const size_t e = ib + o * lanes + l;
            const size_t pos =
                u8 ? sp_index_pos(g, io->indices, e, od, oy, ox)
                   : sp_load_flat_index(io->indices, g->index_type, e);
            const size_t xe = xb + pos * xstep + l, ye = yb + o * ystep + l;
            if (bwd)
              copy_bits(io->y + ye, io->x + xe);
            else
              copy_bits(io->dx + xe, io->dy + ye);
          }
  }
}

void SP_FN(sp_unpool)(const sp_geom *g, const sp_io *io) {
  unpool_walk(g, io, 0);
}

void SP_FN(sp_unpool_bwd)(const sp_geom *g, const sp_io *io) {
  unpool_walk(g, io, 1);
}
