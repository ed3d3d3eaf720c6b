/* SPDX-License-Identifier: MIT */
/* pool_scalar.c — the scalar reference: plain C that defines every bit of every
 * op (docs/semantics.md#numerics) in every element type
 * (docs/semantics.md#element-types). Each op is one body over the storage
 * type, instantiated per dtype (BY_DTYPE): elements widen to f32 as they are
 * read (sp_elem) and results are rounded once as they are stored (sp_put). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel.h"
#include "kernel_util.h"

/* ---------------------------------------------------------------- helpers */

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

/* Each body is instantiated once per element type, so that t is a constant
 * in it and f32 code stays what it was. */
#define SP_BODY static inline __attribute__((always_inline))

/* Runs fn(g, io, t) with the plan's floating-point dtype as a constant. */
#define BY_FLOAT_DTYPE(fn, g, io)                                              \
  do {                                                                         \
    switch ((g)->dtype) {                                                      \
    case SIMDPOOL_BF16:                                                        \
      fn(g, io, SIMDPOOL_BF16);                                                \
      break;                                                                   \
    case SIMDPOOL_F16:                                                         \
      fn(g, io, SIMDPOOL_F16);                                                 \
      break;                                                                   \
    default:                                                                   \
      fn(g, io, SIMDPOOL_F32);                                                 \
      break;                                                                   \
    }                                                                          \
  } while (0)

/* The same for every dtype (the ops S8 and U8 have too). */
#define BY_DTYPE(fn, g, io)                                                    \
  do {                                                                         \
    if ((g)->dtype == SIMDPOOL_S8)                                             \
      fn(g, io, SIMDPOOL_S8);                                                  \
    else if ((g)->dtype == SIMDPOOL_U8)                                        \
      fn(g, io, SIMDPOOL_U8);                                                  \
    else                                                                       \
      BY_FLOAT_DTYPE(fn, g, io);                                               \
  } while (0)

/* Stores a float forward result: clamped (when the plan clamps), then
 * rounded to t. */
SP_BODY void put_y(const sp_geom *g, void *y, size_t i, float r,
                   simdpool_dtype t) {
  sp_put(y, i, g->clamp ? sp_clamp_value(g, r) : r, t);
}

/* ---------------------------------------------------------------- backward
 * Backward accumulates each dx element in f32, in output order, and rounds
 * it once (docs/semantics.md#bf16-and-f16). An f32 dx is its own
 * accumulator: the whole plane is one box and dx is added to in place. A
 * bf16/f16 dx is accumulated box by box in an f32 tile of at most
 * TILE_ELEMS elements: for each box, every output whose window reaches into
 * it adds its contributions that land in the box, in output order, so each
 * dx element sees the same additions in the same order as the f32 scatter
 * over the whole plane, and is then rounded once. */
#define TILE_ELEMS 4096

/* A box of one input plane: slices [d0, d1), rows [y0, y1), columns
 * [x0, x1). */
typedef struct box {
  size_t d0, d1, y0, y1, x0, x1;
} box;

/* Box number k of the plane's tiling into boxes of at most TILE_ELEMS
 * elements; 0 when k is past the last. */
static int box_of(const sp_geom *g, size_t k, box *b) {
  const size_t hw = g->h * g->w;
  if (hw <= TILE_ELEMS) { /* whole slices */
    const size_t per = TILE_ELEMS / hw;
    if (k * per >= g->d)
      return 0;
    *b = (box){k * per, k * per + per < g->d ? k * per + per : g->d, 0, g->h, 0,
               g->w};
  } else if (g->w <= TILE_ELEMS) { /* rows of one slice */
    const size_t per = TILE_ELEMS / g->w, nb = (g->h + per - 1) / per;
    if (k >= g->d * nb)
      return 0;
    const size_t y0 = k % nb * per;
    *b = (box){k / nb, k / nb + 1, y0, y0 + per < g->h ? y0 + per : g->h,
               0,      g->w};
  } else { /* pieces of one row */
    const size_t nb = (g->w + TILE_ELEMS - 1) / TILE_ELEMS;
    if (k >= g->d * g->h * nb)
      return 0;
    const size_t x0 = k % nb * TILE_ELEMS, row = k / nb;
    *b = (box){row / g->h, row / g->h + 1,
               row % g->h, row % g->h + 1,
               x0,         x0 + TILE_ELEMS < g->w ? x0 + TILE_ELEMS : g->w};
  }
  return 1;
}

/* Does a window axis reach into [lo, hi)? */
static inline int axis_meets(sp_win a, size_t lo, size_t hi) {
  const ptrdiff_t last = sp_win_at(a, a.k - 1);
  return a.start < (ptrdiff_t)hi && last >= (ptrdiff_t)lo;
}

/* Does window (od, oy, ox) reach into box b? */
static inline int window_meets(const sp_geom *g, const box *b, size_t od,
                               size_t oy, size_t ox) {
  return axis_meets(sp_win_d(g, od), b->d0, b->d1) &&
         axis_meets(sp_win_h(g, oy), b->y0, b->y1) &&
         axis_meets(sp_win_w(g, ox), b->x0, b->x1);
}

/* The accumulator of the input-plane position flat inside box b, or NULL
 * when flat lies outside it. f32: the element of dx itself. */
SP_BODY float *acc_at(const sp_geom *g, float *dx, sp_plane px, float *tile,
                      const box *b, size_t flat, simdpool_dtype t) {
  if (t == SIMDPOOL_F32)
    return &dx[px.base + flat * px.step];
  const size_t ix = flat % g->w, iy = flat / g->w % g->h,
               id = flat / (g->w * g->h);
  if (id < b->d0 || id >= b->d1 || iy < b->y0 || iy >= b->y1 || ix < b->x0 ||
      ix >= b->x1)
    return NULL;
  return &tile[((id - b->d0) * (b->y1 - b->y0) + (iy - b->y0)) *
                   (b->x1 - b->x0) +
               (ix - b->x0)];
}

/* The elements of box b of plane px: runs BODY with `flat` (the position
 * in the input plane) and `local` (the tile position). */
#define FOR_EACH_IN_BOX(g, b, flat, local, ...)                                \
  do {                                                                         \
    size_t local = 0;                                                          \
    for (size_t id_ = (b)->d0; id_ < (b)->d1; id_++)                           \
      for (size_t iy_ = (b)->y0; iy_ < (b)->y1; iy_++)                         \
        for (size_t ix_ = (b)->x0; ix_ < (b)->x1; ix_++, local++) {            \
          const size_t flat = (id_ * (g)->h + iy_) * (g)->w + ix_;             \
          __VA_ARGS__                                                          \
        }                                                                      \
  } while (0)

/* The elements of an f32 dx (NHWC: the c channels of each pixel, xs
 * apart), in memory order. */
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

/* One backward op over every plane: starts the accumulators at +0.0f,
 * runs ADD (which sees g, io, px, py, pi, o, od, oy, ox, b, tile and adds
 * through acc_at) for every output whose window reaches the box, in output
 * order, and stores each accumulator once (NaN canonical). f32: dx is
 * zeroed and canonicalized in memory order, around one box per plane. */
#define BACKWARD(g, io, t, ...)                                                \
  do {                                                                         \
    float tile_[TILE_ELEMS];                                                   \
    float *tile = tile_;                                                       \
    (void)tile;                                                                \
    if ((t) == SIMDPOOL_F32)                                                   \
      FOR_EACH_DX(g, i_, (io)->dx[i_] = 0.0f;);                                \
    for (size_t n = 0; n < (g)->n; n++) {                                      \
      for (size_t c = 0; c < (g)->c; c++) {                                    \
        const sp_plane px = sp_plane_x(g, n, c);                               \
        const sp_plane py = sp_plane_y(g, n, c);                               \
        const sp_plane pi = sp_plane_i(g, n, c);                               \
        (void)py, (void)pi;                                                    \
        box bx_ = {0, (g)->d, 0, (g)->h, 0, (g)->w};                           \
        const box *b = &bx_;                                                   \
        for (size_t k_ = 0;                                                    \
             (t) == SIMDPOOL_F32 ? k_ == 0 : box_of(g, k_, &bx_); k_++) {      \
          if ((t) != SIMDPOOL_F32)                                             \
            FOR_EACH_IN_BOX(g, b, f_, l_, { (void)f_, tile[l_] = 0.0f; });     \
          for (size_t od = 0; od < (g)->od; od++)                              \
            for (size_t oy = 0; oy < (g)->oh; oy++)                            \
              for (size_t ox = 0; ox < (g)->ow; ox++) {                        \
                if ((t) != SIMDPOOL_F32 && !window_meets(g, b, od, oy, ox))    \
                  continue;                                                    \
                const size_t o = (od * (g)->oh + oy) * (g)->ow + ox;           \
                __VA_ARGS__                                                    \
              }                                                                \
          if ((t) != SIMDPOOL_F32)                                             \
            FOR_EACH_IN_BOX(g, b, f_, l_, {                                    \
              sp_put((io)->dxv, px.base + f_ * px.step, tile[l_], t);          \
            });                                                                \
        }                                                                      \
      }                                                                        \
    }                                                                          \
    if ((t) == SIMDPOOL_F32)                                                   \
      FOR_EACH_DX(g, i_, (io)->dx[i_] = sp_canonical((io)->dx[i_]););          \
  } while (0)

/* dx of output o's contribution v at input-plane position flat. */
#define ADD_AT(flat, v)                                                        \
  do {                                                                         \
    float *a_ = acc_at(g, io->dx, px, tile, b, flat, t);                       \
    if (a_)                                                                    \
      *a_ += (v);                                                              \
  } while (0)

/* ---------------------------------------------------------------- MAX */

SP_BODY void max_fwd(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  FOR_EACH_OUTPUT(g, {
    const sp_winner best = sp_max_window3(g, io->xv, t, px, od, oy, ox);
    const size_t yi = py.base + o * py.step, xi = px.base + best.flat * px.step;
    /* The winner's own bits, unless the clamp moves it (then the bound,
     * rounded to t). */
    const float v = g->clamp ? sp_elem(io->xv, xi, t) : 0.0f;
    if (g->clamp && (v < g->clamp_lo || v > g->clamp_hi))
      sp_put(io->yv, yi, sp_clamp_value(g, v), t);
    else
      sp_copy_elem(io->yv, yi, io->xv, xi, t);
    sp_store_index(io->indices, g->index_type, pi.base + o * pi.step, best.flat,
                   best.tap);
  });
}

void sp_maxpool_fwd_scalar(const sp_geom *g, const sp_io *io) {
  BY_DTYPE(max_fwd, g, io);
}

SP_BODY void max_bwd(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  BACKWARD(g, io, t, {
    const sp_winner best = sp_max_window3(g, io->xv, t, px, od, oy, ox);
    ADD_AT(best.flat, sp_elem(io->dyv, py.base + o * py.step, t));
  });
}

void sp_maxpool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  BY_FLOAT_DTYPE(max_bwd, g, io);
}

SP_BODY void max_bwd_idx(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  BACKWARD(g, io, t, {
    const size_t flat =
        sp_index_pos(g, io->indices, pi.base + o * pi.step, od, oy, ox);
    ADD_AT(flat, sp_elem(io->dyv, py.base + o * py.step, t));
  });
}

void sp_maxpool_bwd_idx_scalar(const sp_geom *g, const sp_io *io) {
  BY_FLOAT_DTYPE(max_bwd_idx, g, io);
}

/* 2x2/stride-2 without padding: every tap is valid. The reduction keeps taps
 * in scan order as a tree: each row's pair first, then row 0 with row 1
 * (associative over the ordered taps: docs/semantics.md#max-forward). */
SP_BODY void max_fwd_2x2s2(const sp_geom *g, const sp_io *io, int clamp) {
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
          const float best = lower ? bottom : top;
          io->y[py.base + (oy * g->ow + ox) * py.step] =
              clamp ? sp_clamp_value(g, best) : best;
          size_t tap = lower ? 2 + (size_t)bottom_right : (size_t)top_right;
          size_t flat = f00 + (tap >> 1) * g->w + (tap & 1);
          sp_store_index(io->indices, g->index_type,
                         pi.base + (oy * g->ow + ox) * pi.step, flat, tap);
        }
      }
    }
  }
}

/* The clamp as a constant of each instance, so that the unclamped loop is
 * the one it was before the clamp moved into the kernels. */
void sp_maxpool_fwd_2x2s2_scalar(const sp_geom *g, const sp_io *io) {
  if (g->clamp)
    max_fwd_2x2s2(g, io, 1);
  else
    max_fwd_2x2s2(g, io, 0);
}

/* ---------------------------------------------------------------- unpooling */

/* Max unpooling: dx = zero (all bits 0: +0 of every dtype), then for each
 * output in order dx_plane[index] = dy, bits copied (the last of equal
 * indices wins). */
SP_BODY void unpool(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  const size_t es = sp_dtype_size(t);
  for (size_t n = 0; n < g->n; n++)
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_x(g, n, c);
      for (size_t i = 0; i < sp_in_plane(g); i++)
        memset((char *)io->dxv + (px.base + i * px.step) * es, 0, es);
    }
  FOR_EACH_OUTPUT(g, {
    const size_t flat =
        sp_index_pos(g, io->indices, pi.base + o * pi.step, od, oy, ox);
    sp_copy_elem(io->dxv, px.base + flat * px.step, io->dyv,
                 py.base + o * py.step, t);
  });
}

void sp_unpool_scalar(const sp_geom *g, const sp_io *io) {
  BY_DTYPE(unpool, g, io);
}

/* Its gradient: y = x_plane[index]. */
SP_BODY void unpool_bwd(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  FOR_EACH_OUTPUT(g, {
    const size_t flat =
        sp_index_pos(g, io->indices, pi.base + o * pi.step, od, oy, ox);
    sp_copy_elem(io->yv, py.base + o * py.step, io->xv,
                 px.base + flat * px.step, t);
  });
}

void sp_unpool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  BY_DTYPE(unpool_bwd, g, io);
}

/* ---------------------------------------------------------------- AVG */

SP_BODY void avg_fwd(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  FOR_EACH_OUTPUT(g, {
    const size_t yi = py.base + o * py.step;
    if (t == SIMDPOOL_S8)
      ((int8_t *)io->yv)[yi] =
          (int8_t)sp_qavg_window3(g, io->xv, t, px, od, oy, ox);
    else if (t == SIMDPOOL_U8)
      ((uint8_t *)io->yv)[yi] =
          (uint8_t)sp_qavg_window3(g, io->xv, t, px, od, oy, ox);
    else
      put_y(g, io->yv, yi, sp_avg_window3(g, io->xv, t, px, od, oy, ox), t);
  });
}

void sp_avgpool_fwd_scalar(const sp_geom *g, const sp_io *io) {
  BY_DTYPE(avg_fwd, g, io);
}

SP_BODY void avg_bwd(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  BACKWARD(g, io, t, {
    const float share =
        sp_avg_share(g, sp_elem(io->dyv, py.base + o * py.step, t), od, oy, ox);
    SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap, { ADD_AT(flat, share); });
  });
}

void sp_avgpool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  BY_FLOAT_DTYPE(avg_bwd, g, io);
}

/* 2x2/stride-2 without padding: acc = ((0 + a00) + a01) + a10) + a11, / 4. */
SP_BODY void avg_fwd_2x2s2(const sp_geom *g, const sp_io *io, int clamp) {
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
          const float r = sp_canonical(acc / 4.0f);
          io->y[py.base + (oy * g->ow + ox) * py.step] =
              clamp ? sp_clamp_value(g, r) : r;
        }
      }
    }
  }
}

/* As for MAX: the clamp a constant of each instance. */
void sp_avgpool_fwd_2x2s2_scalar(const sp_geom *g, const sp_io *io) {
  if (g->clamp)
    avg_fwd_2x2s2(g, io, 1);
  else
    avg_fwd_2x2s2(g, io, 0);
}

/* ---------------------------------------------------------------- LP */

SP_BODY void lp_fwd(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  FOR_EACH_OUTPUT(g, {
    put_y(g, io->yv, py.base + o * py.step,
          sp_canonical(sp_lp_window3(g, io->xv, t, px, od, oy, ox)), t);
  });
}

void sp_lppool_fwd_scalar(const sp_geom *g, const sp_io *io) {
  BY_FLOAT_DTYPE(lp_fwd, g, io);
}

SP_BODY void lp_bwd(const sp_geom *g, const sp_io *io, simdpool_dtype t) {
  const float p = g->p;
  BACKWARD(g, io, t, {
    const float dy = sp_elem(io->dyv, py.base + o * py.step, t);
    float gr;
    if (p == 1.0f) {
      gr = dy;
    } else {
      const float y = sp_lp_window3(g, io->xv, t, px, od, oy, ox);
      if (y == 0.0f)
        gr = 0.0f;
      else if (p == 2.0f)
        gr = dy / y;
      else
        gr = dy * sp_powf(y, 1.0f - p);
    }
    SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap, {
      const float v = sp_elem(io->xv, px.base + flat * px.step, t);
      float q;
      if (p == 1.0f)
        q = gr * sp_lp_sign(v);
      else if (p == 2.0f)
        q = gr * v;
      else
        q = (gr * sp_lp_sign(v)) * sp_powf(fabsf(v), p - 1.0f);
      ADD_AT(flat, q);
    });
  });
}

void sp_lppool_bwd_scalar(const sp_geom *g, const sp_io *io) {
  BY_FLOAT_DTYPE(lp_bwd, g, io);
}
