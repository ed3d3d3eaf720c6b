/* SPDX-License-Identifier: MIT */
/* pool_scalar.c — the scalar reference: plain C that defines every bit of every
 * op (docs/semantics.md#numerics). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel.h"
#include "kernel_util.h"

/* ---------------------------------------------------------------- helpers */

/* The elements of dx (NHWC: the c channels of each pixel, xs apart). */
#define FOR_EACH_DX(g, i, ...)                                                 \
  do {                                                                         \
    const size_t px_ =                                                         \
        (g)->layout == SIMDPOOL_NHWC ? (g)->n * sp_in_plane(g) : 1;            \
    const size_t run_ = (g)->layout == SIMDPOOL_NHWC                           \
                            ? (g)->c                                           \
                            : (g)->n * (g)->c * sp_in_plane(g);                \
    for (size_t p_ = 0; p_ < px_; p_++)                                        \
      for (size_t i = p_ * (g)->xs; i < p_ * (g)->xs + run_; i++) {            \
        __VA_ARGS__                                                            \
      }                                                                        \
  } while (0)

/* Every output (od, oy, ox) of every plane (n, c), in output order, with
 * the planes of x/dx (px), y/dy (py) and indices (pi) and the output's
 * offset o inside a dense output plane. */
#define FOR_EACH_OUTPUT(g, ...)                                                \
  do {                                                                         \
    for (size_t n = 0; n < (g)->n; n++) {                                      \
      for (size_t c = 0; c < (g)->c; c++) {                                    \
        const sp_plane px = sp_plane_x(g, n, c);                               \
        const sp_plane py = sp_plane_y(g, n, c);                               \
        const sp_plane pi = sp_plane_i(g, n, c);                               \
        (void)px, (void)py, (void)pi;                                          \
        for (size_t od = 0; od < (g)->od; od++) {                              \
          for (size_t oy = 0; oy < (g)->oh; oy++) {                            \
            for (size_t ox = 0; ox < (g)->ow; ox++) {                          \
              const size_t o = (od * (g)->oh + oy) * (g)->ow + ox;             \
              __VA_ARGS__                                                      \
            }                                                                  \
          }                                                                    \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* dx = +0.0f over the whole tensor. */
static void zero_dx(const sp_geom *g, float *dx) {
  FOR_EACH_DX(g, i, dx[i] = 0.0f;);
}

/* Every NaN that arithmetic left in dx becomes the canonical NaN. */
static void canonicalize_dx(const sp_geom *g, float *dx) {
  FOR_EACH_DX(g, i, dx[i] = sp_canonical(dx[i]););
}

void sp_clamp_scalar(float *y, size_t pixels, size_t c, size_t stride, float lo,
                     float hi) {
  for (size_t p = 0; p < pixels; p++)
    for (size_t i = p * stride; i < p * stride + c; i++)
      y[i] = y[i] < lo ? lo : y[i] > hi ? hi : y[i];
}

/* ---------------------------------------------------------------- MAX */

void sp_maxpool_fwd_scalar(const sp_geom *g, const sp_io *io) {
  FOR_EACH_OUTPUT(g, {
    const sp_winner best = sp_max_window3(g, io->x, px, od, oy, ox);
    io->y[py.base + o * py.step] = io->x[px.base + best.flat * px.step];
    sp_store_index(io->indices, g->index_type, pi.base + o * pi.step, best.flat,
                   best.tap);
  });
}

void sp_maxpool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  zero_dx(g, io->dx);
  FOR_EACH_OUTPUT(g, {
    const sp_winner best = sp_max_window3(g, io->x, px, od, oy, ox);
    io->dx[px.base + best.flat * px.step] += io->dy[py.base + o * py.step];
  });
  canonicalize_dx(g, io->dx);
}

void sp_maxpool_bwd_idx_scalar(const sp_geom *g, const sp_io *io) {
  zero_dx(g, io->dx);
  FOR_EACH_OUTPUT(g, {
    const size_t flat =
        sp_index_pos(g, io->indices, pi.base + o * pi.step, od, oy, ox);
    io->dx[px.base + flat * px.step] += io->dy[py.base + o * py.step];
  });
  canonicalize_dx(g, io->dx);
}

/* 2x2/stride-2 without padding: every tap is valid. The reduction keeps taps
 * in scan order as a tree: each row's pair first, then row 0 with row 1
 * (associative over the ordered taps: docs/semantics.md#max-forward). */
void sp_maxpool_fwd_2x2s2_scalar(const sp_geom *g, const sp_io *io) {
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      sp_plane px = sp_plane_x(g, n, c);
      sp_plane py = sp_plane_y(g, n, c);
      sp_plane pi = sp_plane_of(g, n, c, g->oh, g->ow);
      for (size_t oy = 0; oy < g->oh; oy++) {
        for (size_t ox = 0; ox < g->ow; ox++) {
          size_t f00 = (2 * oy) * g->w + 2 * ox, f01 = f00 + 1;
          size_t f10 = f00 + g->w, f11 = f10 + 1;
          float a00 = io->x[px.base + f00 * px.step];
          float a01 = io->x[px.base + f01 * px.step];
          float a10 = io->x[px.base + f10 * px.step];
          float a11 = io->x[px.base + f11 * px.step];
          int top_right = sp_max_replaces(a01, a00);
          int bottom_right = sp_max_replaces(a11, a10);
          float top = top_right ? a01 : a00;
          float bottom = bottom_right ? a11 : a10;
          int lower = sp_max_replaces(bottom, top);
          io->y[py.base + (oy * g->ow + ox) * py.step] = lower ? bottom : top;
          size_t tap = lower ? 2 + (size_t)bottom_right : (size_t)top_right;
          size_t flat = f00 + (tap >> 1) * g->w + (tap & 1);
          sp_store_index(io->indices, g->index_type,
                         pi.base + (oy * g->ow + ox) * pi.step, flat, tap);
        }
      }
    }
  }
}

/* ---------------------------------------------------------------- unpooling */

/* One element's bits from s to d (unpooling copies, it never computes: a
 * float assignment could quieten a signalling NaN on some targets). */
static inline void copy_bits(float *d, const float *s) {
  memcpy(d, s, sizeof *d);
}

/* Max unpooling: dx = +0.0f, then for each output in order
 * dx_plane[index] = dy (the last of equal indices wins). */
void sp_unpool_scalar(const sp_geom *g, const sp_io *io) {
  zero_dx(g, io->dx);
  FOR_EACH_OUTPUT(g, {
    const size_t flat =
        sp_index_pos(g, io->indices, pi.base + o * pi.step, od, oy, ox);
    copy_bits(&io->dx[px.base + flat * px.step],
              &io->dy[py.base + o * py.step]);
  });
}

/* Its gradient: y = x_plane[index]. */
void sp_unpool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  FOR_EACH_OUTPUT(g, {
    const size_t flat =
        sp_index_pos(g, io->indices, pi.base + o * pi.step, od, oy, ox);
    copy_bits(&io->y[py.base + o * py.step], &io->x[px.base + flat * px.step]);
  });
}

/* ---------------------------------------------------------------- AVG */

void sp_avgpool_fwd_scalar(const sp_geom *g, const sp_io *io) {
  FOR_EACH_OUTPUT(g, {
    io->y[py.base + o * py.step] = sp_avg_window3(g, io->x, px, od, oy, ox);
  });
}

void sp_avgpool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  zero_dx(g, io->dx);
  FOR_EACH_OUTPUT(g, {
    const float share =
        sp_avg_share(g, io->dy[py.base + o * py.step], od, oy, ox);
    SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap,
                    { io->dx[px.base + flat * px.step] += share; });
  });
  canonicalize_dx(g, io->dx);
}

/* 2x2/stride-2 without padding: acc = ((0 + a00) + a01) + a10) + a11, / 4. */
void sp_avgpool_fwd_2x2s2_scalar(const sp_geom *g, const sp_io *io) {
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      sp_plane px = sp_plane_x(g, n, c);
      sp_plane py = sp_plane_y(g, n, c);
      for (size_t oy = 0; oy < g->oh; oy++) {
        for (size_t ox = 0; ox < g->ow; ox++) {
          size_t f00 = (2 * oy) * g->w + 2 * ox;
          float acc = 0.0f;
          acc += io->x[px.base + f00 * px.step];
          acc += io->x[px.base + (f00 + 1) * px.step];
          acc += io->x[px.base + (f00 + g->w) * px.step];
          acc += io->x[px.base + (f00 + g->w + 1) * px.step];
          io->y[py.base + (oy * g->ow + ox) * py.step] =
              sp_canonical(acc / 4.0f);
        }
      }
    }
  }
}

/* ---------------------------------------------------------------- LP */

void sp_lppool_fwd_scalar(const sp_geom *g, const sp_io *io) {
  FOR_EACH_OUTPUT(g, {
    io->y[py.base + o * py.step] =
        sp_canonical(sp_lp_window3(g, io->x, px, od, oy, ox));
  });
}

void sp_lppool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  const float p = g->p;
  zero_dx(g, io->dx);
  FOR_EACH_OUTPUT(g, {
    const float dy = io->dy[py.base + o * py.step];
    float gr;
    if (p == 1.0f) {
      gr = dy;
    } else {
      const float y = sp_lp_window3(g, io->x, px, od, oy, ox);
      if (y == 0.0f)
        gr = 0.0f;
      else if (p == 2.0f)
        gr = dy / y;
      else
        gr = dy * sp_powf(y, 1.0f - p);
    }
    SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap, {
      const size_t e = px.base + flat * px.step;
      const float v = io->x[e];
      float q;
      if (p == 1.0f)
        q = gr * sp_lp_sign(v);
      else if (p == 2.0f)
        q = gr * v;
      else
        q = (gr * sp_lp_sign(v)) * sp_powf(fabsf(v), p - 1.0f);
      io->dx[e] += q;
    });
  });
  canonicalize_dx(g, io->dx);
}
