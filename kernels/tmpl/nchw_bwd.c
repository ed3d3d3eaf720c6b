/* SPDX-License-Identifier: MIT */
/* nchw_bwd.c — NCHW backward kernels: the general bodies, the
 * gathered MAX and AVG paths and the 3x3/stride-2/pad-1 MAX; compiled once
 * per SIMD ISA (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/nchw.h"

/* ---------------------------------------------------------- NCHW backward
 * Each dx element must receive its contributions in output order: rows go
 * in order, and within a row outputs left to right.
 * MAX: a block's winners come from one vector pass (or from the indices);
 * each lane then adds its dy to its one winner, lanes in order, so even
 * overlapping windows accumulate exactly as the reference does.
 * AVG, LP: when windows do not overlap along the row (stride_w >= dilated
 * kernel width) the lanes of a block touch disjoint dx and add as vectors;
 * overlapping rows go one output at a time. */

/* The contribution of one output, scalar, in the reference's order. */
static inline void bwd_one_output(const sp_geom *g, const sp_io *io, int mode,
                                  sp_plane px, size_t o, size_t oy, size_t ox) {
  const float dy = io->dy[o];
  if (mode == BWD_MAX || mode == BWD_MAX_IDX) {
    size_t flat;
    if (mode == BWD_MAX) {
      flat = sp_max_window(g, io->x, px, oy, ox).flat;
    } else if (g->index_type == SIMDPOOL_INDEX_U8) {
      const size_t tap = ((const uint8_t *)io->indices)[o];
      flat = (size_t)sp_tap_pos(oy, g->sh, g->pt, tap / g->kw, g->dh) * g->w +
             (size_t)sp_tap_pos(ox, g->sw, g->pl, tap % g->kw, g->dw);
    } else {
      flat = sp_load_flat_index(io->indices, g->index_type, o);
    }
    io->dx[px.base + flat] += dy;
    return;
  }
  float gr = 0.0f;
  const int kind = lp_kind(g->p);
  if (mode == BWD_AVG) {
    gr = dy / sp_avg_divisor(g, oy, ox);
  } else if (kind == LP_ONE) {
    gr = dy;
  } else {
    const float y = sp_lp_window(g, io->x, px, oy, ox);
    gr = y == 0.0f        ? 0.0f
         : kind == LP_TWO ? dy / y
                          : dy * sp_powf(y, 1.0f - g->p);
  }
  size_t ki0, ki1, kj0, kj1;
  sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
  sp_tap_range(ox, g->sw, g->pl, g->kw, g->dw, g->w, &kj0, &kj1);
  for (size_t ki = ki0; ki < ki1; ki++) {
    for (size_t kj = kj0; kj < kj1; kj++) {
      const size_t e = px.base +
                       (size_t)sp_tap_pos(oy, g->sh, g->pt, ki, g->dh) * g->w +
                       (size_t)sp_tap_pos(ox, g->sw, g->pl, kj, g->dw);
      float q = gr;
      if (mode == BWD_LP) {
        const float v = io->x[e];
        q = kind == LP_ONE ? gr * sp_lp_sign(v)
            : kind == LP_TWO
                ? gr * v
                : (gr * sp_lp_sign(v)) * sp_powf(fabsf(v), g->p - 1.0f);
      }
      io->dx[e] += q;
    }
  }
}

/* MAX: winners of a block as flat positions, then one add per lane. */
/* U8 backward: a tap number's offset from its window's top-left position,
 * (t / kernel_w) * dilation_h * w + (t % kernel_w) * dilation_w, built once
 * per call so the lanes need no division. */
typedef struct tap_offsets {
  int32_t off[256];
} tap_offsets;

static inline void tap_offsets_init(const sp_geom *g, tap_offsets *t) {
  const size_t taps = g->index_type == SIMDPOOL_INDEX_U8 ? g->kh * g->kw : 0;
  for (size_t i = 0, ki = 0, kj = 0; i < taps; i++) {
    t->off[i] = (int32_t)(ki * g->dh * g->w + kj * g->dw);
    if (++kj == g->kw) {
      kj = 0;
      ki++;
    }
  }
}

/* MAX: winners of a block as flat positions, then one add per lane. */
static inline void bwd_max_block_nchw(const sp_geom *g, const sp_io *io,
                                      int mode, sp_plane px, size_t orow,
                                      const block *b, const tap_offsets *taps) {
  const float *dy = io->dy + orow + b->ox0;
  float *dxp = io->dx + px.base;
  const size_t o = orow + b->ox0;
  /* Indices straight from memory: a vector of positions stored to the stack
   * and reloaded lane by lane stalls on the store forwarding. */
  if (mode == BWD_MAX_IDX && g->index_type != SIMDPOOL_INDEX_U8) {
    for (size_t i = 0; i < b->cnt; i++)
      dxp[sp_load_flat_index(io->indices, g->index_type, o + i)] += dy[i];
  } else if (mode == BWD_MAX_IDX) {
    /* U8: lane i's tap offset from the top-left of its window (which may
     * lie in the padding). */
    const uint8_t *tap = (const uint8_t *)io->indices + o;
    const ptrdiff_t corner =
        ((ptrdiff_t)(b->oy * g->sh) - (ptrdiff_t)g->pt) * (ptrdiff_t)g->w +
        (ptrdiff_t)(b->ox0 * g->sw) - (ptrdiff_t)g->pl;
    for (size_t i = 0; i < b->cnt; i++)
      dxp[corner + (ptrdiff_t)(i * g->sw) + taps->off[tap[i]]] += dy[i];
  } else {
    int32_t flat[SP_VL];
    vi t;
    max_block_nchw(g, io->x + px.base, b, 1, SIMDPOOL_INDEX_I32, &t);
    vi_store_i32(flat, t);
    for (size_t i = 0; i < b->cnt; i++)
      dxp[flat[i]] += dy[i];
  }
}

/* AVG and LP: a block whose lanes touch disjoint dx (non-overlapping rows);
 * AVG divides by *dv, the divisor of the row's interior columns. */
static inline void bwd_sum_block_nchw(const sp_geom *g, const sp_io *io,
                                      int mode, sp_plane px, size_t orow,
                                      const block *b, const divisor *dv) {
  const float *xp = mode == BWD_LP ? io->x + px.base : NULL;
  float *dxp = io->dx + px.base;
  const vf dy = load_lanes(io->dy + orow + b->ox0, b->cnt);
  const int kind = lp_kind(g->p);
  vf gr = dy;
  if (mode == BWD_AVG) {
    gr = div_by(dy, dv);
  } else if (kind != LP_ONE) {
    const vf acc = sum_block_nchw(g, xp, b, 1, kind);
    gr = lp_grad_v(kind, g->p, dy, lp_root_v(kind, 1.0f / g->p, acc));
  }
  for (size_t ki = b->ki0; ki < b->ki1; ki++) {
    const size_t iy = b->oy * g->sh + ki * g->dh - g->pt;
    for (size_t kj = 0; kj < g->kw; kj++) {
      const size_t e = (size_t)((ptrdiff_t)(iy * g->w) + block_col(g, b, kj));
      vf q = gr;
      if (mode == BWD_LP)
        q = lp_share_v(kind, g->p, gr,
                       load_cols(xp + e, g->sw, b->cnt, b->pairs));
      add_cols(dxp + e, g->sw, q, b->cnt);
    }
  }
}

SP_HOT void bwd_nchw_body(const sp_geom *g, const sp_io *io, int mode) {
  /* dx rows are zeroed just before the first output row whose windows
   * reach them (and the rest at the plane's end), so the zeros are still
   * in cache when the adds come, instead of a separate pass over dx. */
  size_t zeroed = 0; /* rows of the current plane zeroed so far */
  tap_offsets taps;
  tap_offsets_init(g, &taps);
  const size_t ew = g->dw * (g->kw - 1) + 1;
  const int is_max = mode == BWD_MAX || mode == BWD_MAX_IDX;
  const int disjoint = g->sw >= ew; /* AVG/LP rows vectorise only then */
  size_t row_d = 0; /* AVG: the divisor of interior columns, 0: none yet */
  divisor inner = divisor_plain(vf_set1(1.0f));
  FOR_EACH_ROW(g, {
    if (oy == 0)
      zeroed = 0;
    const size_t last = oy * g->sh + (ki1 - 1) * g->dh - g->pt + 1;
    if (last > zeroed) {
      zero_tensor(io->dx + px.base + zeroed * g->w, (last - zeroed) * g->w);
      zeroed = last;
    }
    size_t ox = 0;
    while (ox < g->ow) {
      if (is_max) {
        const size_t cnt = block_len(&in_, ox, g->ow);
        const block b = block_at(g, &in_, oy, ki0, ki1, ox, cnt);
        bwd_max_block_nchw(g, io, mode, px, orow, &b, &taps);
        ox += cnt;
      } else if (disjoint && ox >= in_.lo && ox < in_.hi) {
        const size_t cnt = in_.hi - ox < SP_VL ? in_.hi - ox : SP_VL;
        const block b = block_at(g, &in_, oy, ki0, ki1, ox, cnt);
        const size_t d = mode == BWD_AVG ? sp_avg_taps_h(g, oy) * g->kw : 0;
        if (d != row_d) {
          inner = divisor_set1((float)d);
          row_d = d;
        }
        bwd_sum_block_nchw(g, io, mode, px, orow, &b, &inner);
        ox += cnt;
      } else {
        bwd_one_output(g, io, mode, px, orow + ox, oy, ox);
        ox++;
      }
    }
    if (oy + 1 == g->oh && zeroed < g->h)
      zero_tensor(io->dx + px.base + zeroed * g->w, (g->h - zeroed) * g->w);
  });
  /* LP can make a NaN from finite inputs (0 * inf); MAX and AVG cannot. */
  if (mode == BWD_LP || !all_finite(io->dy, out_count(g)))
    canonicalize(io->dx, in_count(g));
}

/* MAX backward from flat I32/I64 indices by scatter, NCHW, any window:
 * plane by plane, output row by output row, dx[winner] += dy in output
 * order, the reference's own loop. Each dx row is zeroed just before the
 * first output row whose windows reach it, so the zeros are in cache when
 * the adds come (no separate pass over dx), and a dx row hears from at most
 * kernel_h output rows, so the adds hit lines still in L1 (a small plane
 * is zeroed at once: a call per row cost more than its adds; alex_adapt6's
 * 13x13 planes). One index load,
 * two loads and a store per output: as fast as the gathered 3x3/s2 kernel
 * (bwd3x3s2_nchw_body) from I64 and I32 with AVX2, faster with SSE4.1 and
 * NEON (SP_FLAT_GATHER). The indices were checked by dispatch. i64: the index
 * type, a compile-time constant. */
#define SCATTER_PLANE 1024 /* planes of at most this many elements (4 KiB) */
#define SCATTER_WAYS 4     /* small planes at a time (alex_adapt6: 1.15x) */
SP_HOT void bwd_scatter_nchw(const sp_geom *g, const sp_io *io, int i64) {
  const size_t hw = g->h * g->w, ohw = g->oh * g->ow;
  size_t p = 0;
  if (hw <= SCATTER_PLANE) {
    /* Small planes SCATTER_WAYS at a time: independent chains of adds,
     * where one plane's consecutive outputs often add to the same dx
     * element (a store, then a load of it). */
    for (; p + SCATTER_WAYS <= g->n * g->c; p += SCATTER_WAYS) {
      float *d = io->dx + p * hw;
      const float *gp = io->dy + p * ohw;
      zero_tensor(d, SCATTER_WAYS * hw);
      if (i64) {
        const int64_t *ip = (const int64_t *)io->indices + p * ohw;
        for (size_t o = 0; o < ohw; o++)
          for (size_t k = 0; k < SCATTER_WAYS; k++)
            d[k * hw + (size_t)ip[k * ohw + o]] += gp[k * ohw + o];
      } else {
        const int32_t *ip = (const int32_t *)io->indices + p * ohw;
        for (size_t o = 0; o < ohw; o++)
          for (size_t k = 0; k < SCATTER_WAYS; k++)
            d[k * hw + (size_t)ip[k * ohw + o]] += gp[k * ohw + o];
      }
      if (!all_finite(gp, SCATTER_WAYS * ohw))
        canonicalize(d, SCATTER_WAYS * hw);
    }
  }
  for (; p < g->n * g->c; p++) {
    float *d = io->dx + p * hw;
    const float *dy = io->dy + p * ohw;
    size_t zeroed = 0; /* dx rows of this plane zeroed so far */
    if (hw <= SCATTER_PLANE) {
      zero_tensor(d, hw); /* one call, not one per output row */
      zeroed = g->h;
    }
    for (size_t oy = 0; oy < g->oh; oy++) {
      size_t ki0, ki1;
      sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
      const size_t last = oy * g->sh + (ki1 - 1) * g->dh - g->pt + 1;
      if (last > zeroed) {
        zero_tensor(d + zeroed * g->w, (last - zeroed) * g->w);
        zeroed = last;
      }
      const float *gr = dy + oy * g->ow;
      const size_t o = p * ohw + oy * g->ow;
      if (i64) {
        const int64_t *ir = (const int64_t *)io->indices + o;
        for (size_t ox = 0; ox < g->ow; ox++)
          d[ir[ox]] += gr[ox];
      } else {
        const int32_t *ir = (const int32_t *)io->indices + o;
        for (size_t ox = 0; ox < g->ow; ox++)
          d[ir[ox]] += gr[ox];
      }
    }
    if (zeroed < g->h)
      zero_tensor(d + zeroed * g->w, (g->h - zeroed) * g->w);
    if (!all_finite(dy, ohw))
      canonicalize(d, hw);
  }
}

/* bwd_scatter_nchw on the plan's flat index type (I32 or I64). */
SP_HOT void bwd_scatter_nchw_flat(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_I64)
    bwd_scatter_nchw(g, io, 1);
  else
    bwd_scatter_nchw(g, io, 0);
}

/* AVG backward, NCHW, overlapping rows with stride 1 along them,
 * undilated (3x3/s1/pad 1 planes that fit take the plane gather below):
 * gathered. Each output row's shares
 * dy / divisor are computed once, as vectors, into a ring of the output rows
 * that cover the current input row (each row padded with +0.0f where an
 * output column falls outside [0, ow)); then each dx vector sums, in output
 * order, the shares of the outputs covering its lanes and is stored once: no
 * zeroing pass and no per-tap read-modify-write of dx. Lane ix of output row
 * oy adds the shares of columns ox = ix + pad_left - kj, kj from kernel_w - 1
 * down to 0 (ascending ox). The reference adds the same shares in the same
 * order to a +0.0f; a padding +0.0f changes no bits, the sum never being
 * -0.0f. The divisor of (oy, ox) is taps_h(oy) * taps_w(ox), exact in
 * float (at most kernel_h * kernel_w <= 2^24). */
#define AVG_GATHER_SCRATCH 8192 /* floats: 32 KiB of stack */
#define AVG_GATHER_ROWS 4

typedef struct gather_ring {
  size_t rows, lead, len; /* slots, padding before ox = 0, floats per slot */
} gather_ring;

/* The ring of a stride-1-along-rows gather (AVG and MAX backward): slots
 * of `len` elements for the output rows that cover AVG_GATHER_ROWS
 * consecutive input rows; `per` slots' worth of other scratch must fit
 * beside them in `cap` elements. */
static inline int gather_ring_of(const sp_geom *g, gather_ring *r, size_t per,
                                 size_t cap) {
  if (g->sw != 1 || g->dh != 1 || g->dw != 1 || g->kw < 2)
    return 0;
  r->rows = (g->kh + AVG_GATHER_ROWS - 2) / g->sh + 1;
  /* A group's covering rows m <= r->rows index the kernels' per-group
   * tables of GATHER_MAX entries. */
  if (r->rows > GATHER_MAX)
    return 0;
  r->lead = g->kw - 1;
  /* Lane ix of a block starting below w reads slot index ix + pl - kj +
   * lead; the shares sit at [lead, lead + ow). */
  const size_t need = g->w + SP_VL + g->pl + r->lead;
  const size_t have = r->lead + g->ow + SP_VL;
  r->len = round_up(need > have ? need : have, SP_VL);
  return (r->rows + per) * r->len <= cap;
}

static inline int avg_ring_of(const sp_geom *g, gather_ring *r) {
  return g->kh * g->kw <= ((size_t)1 << 24) &&
         gather_ring_of(g, r, 1, AVG_GATHER_SCRATCH);
}

/* The next group of a ring gather: up to AVG_GATHER_ROWS input rows from iy
 * that have the same number m of covering output rows (the first of them
 * in lo[]), the cover *rv advanced to its last row. Returns its rows. */
SP_HOT size_t gather_group(const sp_geom *g, size_t iy, cover *rv, size_t *m,
                           size_t lo[AVG_GATHER_ROWS]) {
  size_t rows = 0;
  for (; rows < AVG_GATHER_ROWS && iy + rows < g->h; rows++) {
    cover cv = *rv;
    cover_advance(&cv, iy + rows, g->pt, g->sh, g->kh, 1, g->oh);
    if (rows && cv.hi - cv.lo != *m)
      break;
    *m = cv.hi - cv.lo;
    *rv = cv;
    lo[rows] = cv.lo;
  }
  return rows;
}

/* The shares of output row oy into slot s: dy / (taps_h(oy) * taps_w). */
SP_HOT void avg_share_row(const sp_geom *g, const float *dy, const float *tw,
                          float *s, size_t oy) {
  const vf th = vf_set1((float)sp_avg_taps_h(g, oy));
  for (size_t ox = 0; ox < g->ow; ox += SP_VL) {
    const size_t cnt = g->ow - ox < SP_VL ? g->ow - ox : SP_VL;
    const vf d = vf_mul(th, vf_load(tw + ox));
    store_lanes(s + ox, vf_div(load_lanes(dy + ox, cnt), d), cnt);
  }
}

/* Lanes [ix, ix + cnt) of R dx rows from D (row stride W), each the sum of
 * its m covering share rows S[r][0..m) (slot pointers), R independent chains
 * to hide the adds' latency. Full-width loads: the slots have SP_VL floats of
 * slack. */
#define AVG_GATHER_BLOCK(S, D, R)                                              \
  do {                                                                         \
    vf acc[R];                                                                 \
    for (int r_ = 0; r_ < (R); r_++)                                           \
      acc[r_] = vf_zero();                                                     \
    for (size_t t_ = 0; t_ < m; t_++)                                          \
      for (size_t kj = g->kw; kj-- > 0;)                                       \
        for (int r_ = 0; r_ < (R); r_++)                                       \
          acc[r_] = vf_add(acc[r_], vf_load((S)[r_][t_] + ix - kj));           \
    for (int r_ = 0; r_ < (R); r_++)                                           \
      store_lanes((D) + (size_t)r_ * W + ix, acc[r_], cnt);                    \
  } while (0)

SP_HOT void avgpool_bwd_nchw_gather(const sp_geom *g, const sp_io *io,
                                    const gather_ring *r) {
  _Alignas(64) float scratch[AVG_GATHER_SCRATCH];
  float *tw = scratch + r->rows * r->len;
  memset(scratch, 0, r->rows * r->len * sizeof *scratch);
  for (size_t i = 0; i < r->len; i++)
    tw[i] = i < g->ow ? (float)sp_avg_taps_w(g, i) : 1.0f;
  const size_t W = g->w;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      float *dxp = io->dx + sp_plane_of(g, n, c, g->h, g->w).base;
      const float *dyp = io->dy + sp_plane_of(g, n, c, g->oh, g->ow).base;
      cover rv = {0, 0};
      size_t filled = 0; /* output rows [0, filled) have had their shares */
      size_t iy = 0;
      while (iy < g->h) {
        const float *s[AVG_GATHER_ROWS][GATHER_MAX];
        size_t lo[AVG_GATHER_ROWS], m = 0;
        const size_t rows = gather_group(g, iy, &rv, &m, lo);
        for (; filled < rv.hi; filled++)
          avg_share_row(g, dyp + filled * g->ow, tw,
                        scratch + (filled % r->rows) * r->len + r->lead,
                        filled);
        for (size_t r0 = 0; r0 < rows; r0++)
          for (size_t t = 0; t < m; t++)
            s[r0][t] =
                scratch + ((lo[r0] + t) % r->rows) * r->len + r->lead + g->pl;
        for (size_t ix = 0; ix < W; ix += SP_VL) {
          const size_t cnt = W - ix < SP_VL ? W - ix : SP_VL;
          if (rows == AVG_GATHER_ROWS) {
            AVG_GATHER_BLOCK(s, dxp, AVG_GATHER_ROWS);
          } else {
            for (size_t r0 = 0; r0 < rows; r0++)
              AVG_GATHER_BLOCK(s + r0, dxp + r0 * W, 1);
          }
        }
        dxp += rows * W;
        iy += rows;
      }
    }
  }
  if (!all_finite(io->dy, out_count(g)))
    canonicalize(io->dx, in_count(g));
}

/* AVG backward, 3x3/s1/pad 1 on same-size planes (Inception's pools), a
 * plane at a time as one flat row: the window of output p is centred on
 * input position p, so dx element p sums the shares dy / divisor of the
 * outputs p + d for d in {-w, 0, w} + {-1, 0, 1}, ascending d being output
 * order. A d with -1 at column 0 wraps to the last column of the
 * row above, one with +1 at column w - 1 to the first of the row below,
 * so the values go into the scratch three times: as they are (for the d
 * of column offset 0), with their last column +0 (read by offset -1) and
 * with their first column +0 (offset +1); lead floats of +0 before and
 * after stand for the rows outside the plane. A +0 changes no sum that is
 * not -0, and the sums are made +0-first as the reference's. Each share is
 * computed once, each dx vector stored once. Divisors are per position,
 * sp_avg_divisor's, with their reciprocals for the exact fast division.
 * On Inception's planes it measured 1.6x (35x35) to 5.3x (2048 planes of
 * 8x8) faster than the ring gather above, whose per-row work dominates
 * short rows. (The forward on the same scratch measured 0.85x the row
 * kernel of tmpl/nchw_3x3s1.c: this is backward only.) */
#define PLANE3_AVG 1536 /* floats per array: 36 KiB of stack in all */

typedef struct avgp3 {
  _Alignas(64) float s[3][PLANE3_AVG]; /* as is; last column +0; first +0 */
  _Alignas(64) float d[PLANE3_AVG];    /* each position's divisor */
  _Alignas(64) float r[PLANE3_AVG];    /* RN(1 / d) */
  _Alignas(64) int32_t col[PLANE3_AVG];
} avgp3;

/* The plane gathers' geometry (AVG here, MAX below): 3x3/s1/pad 1 with
 * same-size planes; lead elements before and after a plane in the scratch
 * (the rows outside it), and whether a plane with them fits cap. */
static inline int plane3_shape(const sp_geom *g) {
  return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 &&
         g->dw == 1 && g->pt == 1 && g->pl == 1 && g->oh == g->h &&
         g->ow == g->w;
}

static inline size_t plane3_lead(const sp_geom *g) {
  return round_up(g->w + 1, SP_VL);
}

static inline int plane3_room(const sp_geom *g, size_t cap) {
  return 2 * plane3_lead(g) + g->h * g->w + SP_VL <= cap;
}

static inline int avgp3_fits(const sp_geom *g) {
  return plane3_shape(g) && plane3_room(g, PLANE3_AVG);
}

/* The scratch as plain pointers, at position 0 of the plane: the vector
 * stores into it may alias anything in memory, so the loops read their
 * addresses from here (registers), not from the scratch's struct. */
typedef struct avgp3_at {
  float *m, *l, *r; /* as is; last column +0; first column +0 */
  const float *d, *rc;
  const int32_t *col;
  size_t w;
} avgp3_at;

/* Once per call: +0 scratch, the divisors and the columns; the view of
 * them the loops use. */
static inline avgp3_at avgp3_init(const sp_geom *g, avgp3 *a) {
  const size_t hw = g->h * g->w, lead = plane3_lead(g);
  for (size_t k = 0; k < 3; k++)
    for (size_t i = 0; i < 2 * lead + hw + SP_VL; i++)
      a->s[k][i] = 0.0f;
  for (size_t p = 0; p < hw + SP_VL; p++) {
    const int in = p < hw;
    a->d[p] = in ? sp_avg_divisor(g, p / g->w, p % g->w) : 1.0f;
    a->r[p] = 1.0f / a->d[p];
    a->col[p] = in ? (int32_t)(p % g->w) : -1;
  }
  const avgp3_at v = {
      a->s[0] + lead, a->s[1] + lead, a->s[2] + lead, a->d, a->r, a->col, g->w};
  return v;
}

/* The divisors of positions [o, o + SP_VL): integers of 1 to 9. */
static inline divisor avgp3_divisor(const avgp3_at *a, size_t o) {
  const divisor v = {vf_load(a->d + o), vf_load(a->rc + o), SP_DIV_EXACT, 0, 0};
  return v;
}

/* Values v of positions [o, o + cnt) into the three copies. */
SP_HOT void avgp3_put(const avgp3_at *a, size_t o, vf v, size_t cnt) {
  const vi c = vi_load_i32(a->col + o);
  const vf z = vf_zero();
  store_lanes(a->m + o, v, cnt);
  store_lanes(a->l + o, vf_select(vm_eq_i(c, vi_set1((int32_t)a->w - 1)), v, z),
              cnt);
  store_lanes(a->r + o, vf_select(vm_eq_i(c, vi_set1(0)), v, z), cnt);
}

/* The nine values' sum at positions [p, p + SP_VL), ascending d, from the
 * first term on (not +0-first). */
SP_HOT vf avgp3_sum(const avgp3_at *a, size_t p) {
  const size_t W = a->w;
  const float *const m = a->m + p, *const l = a->l + p - 1,
                     *const r = a->r + p + 1;
  vf acc = vf_add(vf_load(l - W), vf_load(m - W));
  acc = vf_add(acc, vf_load(r - W));
  acc = vf_add(acc, vf_load(l));
  acc = vf_add(acc, vf_load(m));
  acc = vf_add(acc, vf_load(r));
  acc = vf_add(acc, vf_load(l + W));
  acc = vf_add(acc, vf_load(m + W));
  return vf_add(acc, vf_load(r + W));
}

SP_HOT void avgpool_bwd_plane3(const sp_geom *g, const sp_io *io) {
  avgp3 scratch;
  const avgp3_at a = avgp3_init(g, &scratch);
  const size_t hw = g->h * g->w;
  const vf z = vf_zero();
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const float *dyp = io->dy + sp_plane_of(g, n, c, g->oh, g->ow).base;
      float *dxp = io->dx + sp_plane_of(g, n, c, g->h, g->w).base;
      vm bad = vm_range(0, 0); /* dy tested as it is loaded */
      for (size_t o = 0; o < hw; o += SP_VL) {
        const size_t cnt = hw - o < SP_VL ? hw - o : SP_VL;
        const divisor dv = avgp3_divisor(&a, o);
        const vf v = load_lanes(dyp + o, cnt);
        bad = vm_or(bad, vf_nonfinite(v));
        avgp3_put(&a, o, div_by(v, &dv), cnt);
      }
      for (size_t p = 0; p < hw; p += SP_VL) {
        const size_t cnt = hw - p < SP_VL ? hw - p : SP_VL;
        store_lanes(dxp + p, vf_add(z, avgp3_sum(&a, p)), cnt);
      }
      if (vm_any(bad))
        canonicalize(dxp, hw);
    }
  }
}

void SP_FN(sp_avgpool_bwd_nchw)(const sp_geom *g, const sp_io *io) {
  gather_ring r;
  if (avgp3_fits(g))
    avgpool_bwd_plane3(g, io);
  else if (avg_ring_of(g, &r)) /* stride 1 along overlapping rows */
    avgpool_bwd_nchw_gather(g, io, &r);
  else
    bwd_nchw_body(g, io, BWD_AVG);
}
void SP_FN(sp_lppool_bwd_nchw)(const sp_geom *g, const sp_io *io) {
  bwd_nchw_body(g, io, BWD_LP);
}

/* AVG backward of global pooling (SP_SHAPE_GLOBAL: one window, the whole
 * plane of any rank): every element of a plane gets +0 + its plane's
 * share, dy / (d*h*w) or, adaptive, ((dy / d) / h) / w, NaN canonical.
 * Shares are divided SP_VL planes at a time, then each fills its plane. */
void SP_FN(sp_avgpool_bwd_global_nchw)(const sp_geom *g, const sp_io *io) {
  const size_t hw = sp_in_plane(g), planes = g->n * g->c;
  const divisor dv = divisor_count(hw), dd = divisor_count(g->d),
                dh = divisor_count(g->h), dw = divisor_count(g->w);
  _Alignas(64) float share[SP_VL];
  for (size_t p0 = 0; p0 < planes; p0 += SP_VL) {
    const size_t cnt = planes - p0 < SP_VL ? planes - p0 : SP_VL;
    const vf dy = load_lanes(io->dy + p0, cnt);
    const vf q = g->adaptive ? div_axes(dy, &dd, &dh, &dw) : div_by(dy, &dv);
    vf_store(share, vcanon(vf_add(vf_zero(), q)));
    for (size_t i = 0; i < cnt; i++) {
      const vf v = vf_set1(share[i]);
      float *dx = io->dx + (p0 + i) * hw;
      size_t t = 0;
      for (; t + SP_VL <= hw; t += SP_VL)
        vf_store(dx + t, v);
      if (t < hw)
        store_lanes(dx + t, v, hw - t);
    }
  }
}

/* MAX backward, NCHW, stride 1 along rows, undilated, gathered on the AVG
 * gather's ring: each output row's keys (its indices as int32 lanes: flat
 * positions, or U8 tap numbers; -1 outside [0, ow)) and its dy go into a
 * slot once; then each dx vector sums, in output order (covering rows
 * ascending, then columns ascending), the dy of the covering outputs whose
 * key names it, and is stored once: no zeroing pass, no read-modify-write,
 * every index type through the same body. A key names lane ix of dx row iy
 * when it is iy * w + ix (flat) or the tap (iy + pt - oy * sh) * kw + kj
 * that output's window has there (U8). A lane whose key names another
 * pixel adds +0.0f, which changes no bits (dx is never -0.0f), so each sum
 * is the reference's. */
#define MAX_GATHER_SCRATCH 4096 /* keys and dy each: 32 KiB of stack */

static inline int max_ring_of(const sp_geom *g, gather_ring *r) {
  /* Flat keys and lane positions (up to h * w + SP_VL) as int32. */
  return (g->index_type == SIMDPOOL_INDEX_U8 ||
          g->h * g->w <= (size_t)INT32_MAX - SP_VL) &&
         gather_ring_of(g, r, 0, MAX_GATHER_SCRATCH);
}

/* Output row orow's keys and dy (cnt-limited: the slot's padding stays). */
SP_HOT void max_key_row(const sp_geom *g, const sp_io *io,
                        simdpool_index_type it, size_t orow, int32_t *k,
                        float *d) {
  for (size_t ox = 0; ox < g->ow; ox += SP_VL) {
    const size_t cnt = g->ow - ox < SP_VL ? g->ow - ox : SP_VL;
    store_index(k, SIMDPOOL_INDEX_I32, ox,
                load_index(io->indices, it, orow + ox, cnt), cnt);
    store_lanes(d + ox, load_lanes(io->dy + orow + ox, cnt), cnt);
  }
}

/* Lanes [ix, ix + cnt) of R dx rows from row Y (dxp, row stride W): row r_
 * sums the m covering slots at offsets E[r_][0..m) (already shifted by
 * lead + pl) whose kernel rows are KY[r_][0..m); R independent chains. */
#define MAX_GATHER_BLOCK(E, KY, Y, R)                                          \
  do {                                                                         \
    vf acc[R];                                                                 \
    vi pos[R];                                                                 \
    for (int r_ = 0; r_ < (R); r_++) {                                         \
      acc[r_] = z;                                                             \
      pos[r_] = vi_ramp((int32_t)(((Y) + (size_t)r_) * W + ix), 1);            \
    }                                                                          \
    for (size_t t_ = 0; t_ < m; t_++)                                          \
      for (size_t kj = KW; kj-- > 0;)                                          \
        for (int r_ = 0; r_ < (R); r_++) {                                     \
          const size_t e_ = (E)[r_][t_] + ix - kj;                             \
          const vi tg_ =                                                       \
              u8 ? vi_set1((int32_t)((KY)[r_][t_] * KW + kj)) : pos[r_];       \
          acc[r_] =                                                            \
              vf_add_where(acc[r_], vm_eq_i(vi_load_i32(keys + e_), tg_),      \
                           vf_load(dys + e_));                                 \
        }                                                                      \
    for (int r_ = 0; r_ < (R); r_++)                                           \
      store_lanes(dxp + ((Y) + (size_t)r_) * W + ix, acc[r_], cnt);            \
  } while (0)

/* it: the key type (U8 or flat), a compile-time constant. */
SP_HOT void maxpool_bwd_nchw_gather(const sp_geom *g, const sp_io *io,
                                    const gather_ring *r,
                                    simdpool_index_type it) {
  _Alignas(64) int32_t keys[MAX_GATHER_SCRATCH];
  _Alignas(64) float dys[MAX_GATHER_SCRATCH];
  for (size_t i = 0; i < r->rows * r->len; i++) {
    keys[i] = -1;
    dys[i] = 0.0f;
  }
  const size_t W = g->w, KW = g->kw;
  const int u8 = it == SIMDPOOL_INDEX_U8;
  const vf z = vf_zero();
  int finite = 1; /* every dy so far */
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      float *dxp = io->dx + sp_plane_of(g, n, c, g->h, g->w).base;
      const size_t obase = sp_plane_of(g, n, c, g->oh, g->ow).base;
      cover rv = {0, 0};
      size_t filled = 0; /* output rows [0, filled) are in the ring */
      size_t iy = 0;
      while (iy < g->h) {
        size_t e[AVG_GATHER_ROWS][GATHER_MAX], ky[AVG_GATHER_ROWS][GATHER_MAX];
        size_t lo[AVG_GATHER_ROWS], m = 0;
        const size_t rows = gather_group(g, iy, &rv, &m, lo);
        for (; filled < rv.hi; filled++) {
          const size_t sl = (filled % r->rows) * r->len + r->lead;
          max_key_row(g, io, it, obase + filled * g->ow, keys + sl, dys + sl);
          finite &= all_finite(dys + sl, g->ow); /* in L1, not a second pass */
        }
        for (size_t r0 = 0; r0 < rows; r0++)
          for (size_t t = 0; t < m; t++) {
            const size_t oy = lo[r0] + t;
            e[r0][t] = (oy % r->rows) * r->len + r->lead + g->pl;
            ky[r0][t] = iy + r0 + g->pt - oy * g->sh;
          }
        for (size_t ix = 0; ix < W; ix += SP_VL) {
          const size_t cnt = W - ix < SP_VL ? W - ix : SP_VL;
          if (rows == AVG_GATHER_ROWS) {
            MAX_GATHER_BLOCK(e, ky, iy, AVG_GATHER_ROWS);
          } else {
            for (size_t r0 = 0; r0 < rows; r0++)
              MAX_GATHER_BLOCK(e + r0, ky + r0, iy + r0, 1);
          }
        }
        iy += rows;
      }
    }
  }
  if (!finite)
    canonicalize(io->dx, in_count(g));
}

/* The same gather for 3x3/s1/p1 with same-size planes (GoogLeNet's and
 * Inception's pools), a whole plane at a time: with ow == w, output o's
 * window is centred on input position o, so dx element p hears from
 * outputs p + d for the nine d of {-w, 0, w} + {-1, 0, 1}, ascending d
 * being output order, and the plane is one flat row without per-row work.
 * Output p + d names p when its key is p's flat position or, for U8, the
 * tap 8 - j of the j-th d (its window sees p at row 2 - j/3, column 2 -
 * j%3). A d that wraps a row names an output whose window lies in the last
 * (or first) two columns: its key can never name p's column 0 (w - 1) when
 * w >= 3, and the tap 8 - j would be a padding column, which no valid
 * index names. Outputs before and after the plane read the padding: key
 * -1. */
#define PLANE3_SCRATCH 4096 /* keys and dy each: 32 KiB of stack */

static inline int plane3_fits(const sp_geom *g) {
  return plane3_shape(g) && g->w >= 3 && plane3_room(g, PLANE3_SCRATCH);
}

/* it: the key type, a compile-time constant. */
SP_HOT void max3x3s1_plane_gather(const sp_geom *g, const sp_io *io,
                                  simdpool_index_type it) {
  _Alignas(64) int32_t keys[PLANE3_SCRATCH];
  _Alignas(64) float dys[PLANE3_SCRATCH];
  const size_t W = g->w, hw = g->h * W, lead = plane3_lead(g);
  const size_t end = 2 * lead + hw + SP_VL;
  for (size_t i = 0; i < end; i++) {
    keys[i] = -1;
    dys[i] = 0.0f;
  }
  const ptrdiff_t sw = (ptrdiff_t)W;
  const ptrdiff_t d[9] = {-sw - 1, -sw, -sw + 1, -1, 0, 1, sw - 1, sw, sw + 1};
  const vf z = vf_zero();
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      float *dxp = io->dx + sp_plane_of(g, n, c, g->h, g->w).base;
      const size_t ob = sp_plane_of(g, n, c, g->oh, g->ow).base;
      for (size_t o = 0; o < hw; o += SP_VL) {
        const size_t cnt = hw - o < SP_VL ? hw - o : SP_VL;
        const vi k = load_index(io->indices, it, ob + o, cnt);
        store_index(keys + lead, SIMDPOOL_INDEX_I32, o, k, cnt);
        store_lanes(dys + lead + o, load_lanes(io->dy + ob + o, cnt), cnt);
      }
      /* Tested here, in L1, rather than in a second pass over dy. */
      const int finite = all_finite(dys + lead, hw);
      for (size_t p = 0; p < hw; p += SP_VL) {
        const size_t cnt = hw - p < SP_VL ? hw - p : SP_VL;
        const vi pos = vi_ramp((int32_t)p, 1);
        vf acc = z;
        for (int j = 0; j < 9; j++) {
          const size_t e = (size_t)((ptrdiff_t)(lead + p) + d[j]);
          const vi name = it == SIMDPOOL_INDEX_U8 ? vi_set1(8 - j) : pos;
          acc = vf_add_where(acc, vm_eq_i(vi_load_i32(keys + e), name),
                             vf_load(dys + e));
        }
        store_lanes(dxp + p, acc, cnt);
      }
      if (!finite)
        canonicalize(dxp, hw);
    }
  }
}

/* The gather on the plan's index type. */
SP_HOT void maxpool_bwd_nchw_gather_idx(const sp_geom *g, const sp_io *io,
                                        const gather_ring *r) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    maxpool_bwd_nchw_gather(g, io, r, SIMDPOOL_INDEX_U8);
  else if (g->index_type == SIMDPOOL_INDEX_I64)
    maxpool_bwd_nchw_gather(g, io, r, SIMDPOOL_INDEX_I64);
  else
    maxpool_bwd_nchw_gather(g, io, r, SIMDPOOL_INDEX_I32);
}

/* The plane gather on the plan's index type. */
SP_HOT void maxpool_bwd_plane3_idx(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    max3x3s1_plane_gather(g, io, SIMDPOOL_INDEX_U8);
  else if (g->index_type == SIMDPOOL_INDEX_I64)
    max3x3s1_plane_gather(g, io, SIMDPOOL_INDEX_I64);
  else
    max3x3s1_plane_gather(g, io, SIMDPOOL_INDEX_I32);
}

void SP_FN(sp_maxpool_bwd_nchw)(const sp_geom *g, const sp_io *io) {
  const size_t gw = lop_fits(g, 2, 1);
  if (gw)
    lop_run(g, io, gw, 1, 0, 0, SP_FN(sp_maxpool_bwd_nhwc));
  else
    bwd_nchw_body(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_idx_nchw)(const sp_geom *g, const sp_io *io) {
  gather_ring r;
  const size_t gw = lop_fits(g, 1, 2);
  if (plane3_fits(g))
    maxpool_bwd_plane3_idx(g, io);
  else if (max_ring_of(g, &r)) /* stride 1 along overlapping rows */
    maxpool_bwd_nchw_gather_idx(g, io, &r);
  else if (g->index_type != SIMDPOOL_INDEX_U8) /* faster than the scratch */
    bwd_scatter_nchw_flat(g, io);
  else if (gw)
    lop_run(g, io, gw, 0, 1, 1, SP_FN(sp_maxpool_bwd_idx_nhwc));
  else
    bwd_nchw_body(g, io, BWD_MAX_IDX);
}

/* ------------------------------------------- 3x3/stride-2/pad-1 backward
 * NCHW MAX backward, gathered, from U8 or flat I32/I64 indices or from x
 * (winners recomputed, max_block_nchw). Output (oy, ox) covers dx rows
 * 2oy-1 .. 2oy+1 and columns 2ox-1 .. 2ox+1, so dx row 2r hears only from
 * output row r (kernel row 1) and dx row 2r+1 from rows r (kernel row 2)
 * and r+1 (kernel row 0), in that order; along a row, even column 2q from
 * output column q (kj = 1) and odd column 2q+1 from q (kj = 2), then q+1
 * (kj = 0). Each output row's keys go once into a ring of two rows: the
 * winner's tap within its window, as the U8 tap number 3ki+kj or, from a
 * flat index, its offset ki*w+kj from the window's top-left position (a
 * vector subtraction; distinct taps give distinct offsets when w >= 3), a
 * sentinel -1 after the row's last output. Lanes run over output columns:
 * a block's even and odd dx columns are sums, in output order, of the dy
 * of the covering outputs whose key names that tap (else +0.0f, which
 * changes no bits: dx is never -0.0f), the q+1 terms read from the ring
 * one slot further on; interleaved, each dx element is stored once, with
 * no zeroing pass and no read-modify-write. Columns and rows past the last
 * windows are stored as +0.0f. NaNs are stored canonical, as every MAX
 * backward writes them. 1x3 windows (SP_SHAPE_1X3S2P1) are the same with a
 * single kernel row: dx row r hears only from output row r, one slot. */

SP_HOT vi bwd3x3s2_key(const sp_geom *g, const sp_io *io,
                       simdpool_index_type it, const float *xp,
                       const row_span *in, size_t o, size_t oy, size_t ox0,
                       size_t cnt) {
  if (it == SIMDPOOL_INDEX_NONE) {
    /* A full block whose three rows and 2*SP_VL + 1 columns lie inside
     * reads them directly as the forward's fold does (the scan of
     * max_block_nchw, tap by tap in row-major order); the others go
     * through max_block_nchw. */
    const size_t kh = g->kh; /* 3, or 1: a 1x3 row, input row oy */
    const size_t iy0 = kh == 1 ? oy : 2 * oy - 1;
    if (cnt == SP_VL && (kh == 1 || (oy >= 1 && 2 * oy + 1 < g->h)) &&
        ox0 >= 1 && 2 * ox0 + 2 * SP_VL <= g->w) {
      const float *p = xp + iy0 * g->w + 2 * ox0 - 1;
      vf m = vf_set1(-INFINITY);
      vi t = vi_set1(0);
      for (int ki = 0; ki < (int)kh; ki++, p += g->w) {
        vf v[4], tap[3];
        for (size_t i = 0; i < 4; i++)
          v[i] = vf_load(p + fold_off[i]);
        taps3s2(v, tap);
        for (int kj = 0; kj < 3; kj++)
          mx_step(tap[kj], 3 * ki + kj, 1, &m, &t);
      }
      return t;
    }
    size_t ki0, ki1;
    sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
    const block b = block_at(g, in, oy, ki0, ki1, ox0, cnt);
    vi t;
    max_block_nchw(g, xp, &b, 1, SIMDPOOL_INDEX_U8, &t);
    return t;
  }
  return load_index(io->indices, SIMDPOOL_INDEX_U8, o, cnt);
}

/* A ring slot's length: outputs of one column strip, its one extra output
 * and a vector of slack for the unaligned q+1 loads. */
#define S2_STRIP 512
#define S2_SLOT (S2_STRIP + 2 * SP_VL)

/* Keys (as above) and dy of outputs [s, s + ne) of output row oy into a
 * ring slot, the sentinel after them. Returns whether every dy is finite.
 * it: the index type (NONE: from x, plane xp), a compile-time constant. */
SP_HOT int s2_fill(const sp_geom *g, const sp_io *io, simdpool_index_type it,
                   const float *xp, const row_span *in, size_t orow, size_t oy,
                   size_t s, size_t ne, int32_t *k, float *dy) {
  /* The top-left position of output (oy, s)'s window, minus each lane's
   * 2 * lane: a flat index minus this ramp is its tap's offset. */
  const int32_t tl =
      g->kh == 1 ? (int32_t)(oy * g->w + 2 * s) - 1
                 : (int32_t)((2 * oy) * g->w + 2 * s) - (int32_t)g->w - 1;
  for (size_t j = 0; j < ne; j += SP_VL) {
    const size_t cnt = ne - j < SP_VL ? ne - j : SP_VL;
    vi key;
    if (it == SIMDPOOL_INDEX_I32 || it == SIMDPOOL_INDEX_I64)
      key = vi_add(load_index(io->indices, it, orow + s + j, cnt),
                   vi_ramp(-(tl + 2 * (int32_t)j), -2));
    else
      key = bwd3x3s2_key(g, io, it, xp, in, orow + s + j, oy, s + j, cnt);
    vi_store_i32(k + j, key);
    vf_store(dy + j, load_lanes(io->dy + orow + s + j, cnt));
  }
  vi_store_i32(k + ne, vi_set1(-1));
  vf_store(dy + ne, vf_zero());
  return all_finite(dy, ne); /* in L1, not a second pass */
}

/* One dx row's columns [2s, 2s + m) from the ring slots of its covering
 * output rows: A with kernel row ka, then B (NULL: none) with kernel row
 * kb; tg[ki][kj] is the key of tap (ki, kj). nq: the strip's outputs. */
SP_HOT void s2_emit(float *d, size_t m, size_t nq, const int32_t *KA,
                    const float *DA, const int32_t *KB, const float *DB,
                    const vi tg[3][3], size_t ka, size_t kb) {
  const vf z = vf_zero();
  for (size_t j = 0; j < nq; j += SP_VL) {
    const vi k0 = vi_load_i32(KA + j), k1 = vi_load_i32(KA + j + 1);
    const vf d0 = vf_load(DA + j), d1 = vf_load(DA + j + 1);
    vf even = vf_add_where(z, vm_eq_i(k0, tg[ka][1]), d0);
    vf odd = vf_add_where(z, vm_eq_i(k0, tg[ka][2]), d0);
    odd = vf_add_where(odd, vm_eq_i(k1, tg[ka][0]), d1);
    if (KB) {
      const vi b0 = vi_load_i32(KB + j), b1 = vi_load_i32(KB + j + 1);
      const vf e0 = vf_load(DB + j), e1 = vf_load(DB + j + 1);
      even = vf_add_where(even, vm_eq_i(b0, tg[kb][1]), e0);
      odd = vf_add_where(odd, vm_eq_i(b0, tg[kb][2]), e0);
      odd = vf_add_where(odd, vm_eq_i(b1, tg[kb][0]), e1);
    }
    const size_t cols = m - 2 * j < 2 * SP_VL ? m - 2 * j : 2 * SP_VL;
    el_store_elems(d + 2 * j, cols, even, odd, 0);
  }
}

/* Whether the gather takes this plan's flat keys (SP_FLAT_GATHER); their
 * tap offsets are distinct when w >= 3. */
static inline int bwd3x3s2_flat_fits(const sp_geom *g) {
  return SP_FLAT_GATHER && g->w >= 3;
}

/* it: the key source (U8, I32, I64, or NONE: from x), a compile-time
 * constant. */
SP_HOT void bwd3x3s2_nchw_body(const sp_geom *g, const sp_io *io,
                               simdpool_index_type it) {
  _Alignas(64) int32_t keys[2][S2_SLOT];
  _Alignas(64) float dys[2][S2_SLOT];
  const int flat = it == SIMDPOOL_INDEX_I32 || it == SIMDPOOL_INDEX_I64;
  const row_span in = interior_cols(g);
  vi tg[3][3]; /* each tap's key */
  for (size_t ki = 0; ki < 3; ki++)
    for (size_t kj = 0; kj < 3; kj++)
      tg[ki][kj] = vi_set1((int32_t)(flat ? ki * g->w + kj : 3 * ki + kj));
  const size_t H = g->h, W = g->w, OH = g->oh, OW = g->ow;
  /* dx columns past the last windows: [2 * ow, w). */
  const size_t cov_w = 2 * OW < W ? 2 * OW : W;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const size_t xbase = sp_plane_of(g, n, c, H, W).base;
      float *dxp = io->dx + xbase;
      const float *xp = io->x ? io->x + xbase : NULL;
      const size_t obase = sp_plane_of(g, n, c, OH, OW).base;
      int finite = 1;
      for (size_t s = 0; s < OW; s += S2_STRIP) {
        const size_t nq = OW - s < S2_STRIP ? OW - s : S2_STRIP;
        const size_t ne = s + nq < OW ? nq + 1 : nq; /* q + 1 of the last */
        /* dx columns of the strip, [2s, 2s + m). */
        const size_t m = 2 * (s + nq) < cov_w ? 2 * nq : cov_w - 2 * s;
        if (g->kh == 1) { /* 1x3 rows: dx row r hears only from output row r */
          for (size_t r = 0; r < H; r++) {
            finite &= s2_fill(g, io, it, xp, &in, obase + r * OW, r, s, ne,
                              keys[0], dys[0]);
            s2_emit(dxp + r * W + 2 * s, m, nq, keys[0], dys[0], NULL, NULL, tg,
                    0, 0);
          }
          continue;
        }
        finite &= s2_fill(g, io, it, xp, &in, obase, 0, s, ne, keys[0], dys[0]);
        for (size_t r = 0; 2 * r < H && r < OH; r++) {
          const int32_t *KA = keys[r & 1];
          const float *DA = dys[r & 1];
          const int next = r + 1 < OH && 2 * r + 1 < H;
          if (next)
            finite &= s2_fill(g, io, it, xp, &in, obase + (r + 1) * OW, r + 1,
                              s, ne, keys[(r + 1) & 1], dys[(r + 1) & 1]);
          float *d = dxp + 2 * r * W + 2 * s;
          s2_emit(d, m, nq, KA, DA, NULL, NULL, tg, 1, 0);
          if (2 * r + 1 < H)
            s2_emit(d + W, m, nq, KA, DA, next ? keys[(r + 1) & 1] : NULL,
                    dys[(r + 1) & 1], tg, 2, 0);
        }
      }
      const size_t cov_h = g->kh == 1 ? H : 2 * OH < H ? 2 * OH : H;
      if (cov_w < W)
        for (size_t iy = 0; iy < cov_h; iy++)
          zero_tensor(dxp + iy * W + cov_w, W - cov_w);
      zero_tensor(dxp + cov_h * W, (H - cov_h) * W);
      if (!finite)
        canonicalize(dxp, H * W);
    }
  }
}

/* From x, planes of at most BWD3_PLANE outputs: each plane's winners come
 * from the forward's direct kernel (U8 taps, the folds with tracking) into
 * a stack scratch, then the from-U8 kernel runs on them; recomputing each
 * window per dx row (bwd3x3s2_key) costs three times as much. */
#define BWD3_PLANE 3328 /* outputs: 16.25 KiB of y and taps */

/* MAX backward from x, plane by plane: the 3x3 forward's U8 taps (s2: the
 * 3x3/s2/p1 direct kernel, else 3x3/s1) into a stack scratch, then the
 * backward from U8. The caller checked ohw <= BWD3_PLANE; s2 a
 * compile-time constant. */
SP_HOT void bwd3x3_from_x_planes(const sp_geom *g, const sp_io *io, int s2) {
  const size_t ohw = g->oh * g->ow, hw = g->h * g->w;
  _Alignas(64) float ys[BWD3_PLANE];
  uint8_t taps[BWD3_PLANE];
  sp_geom g1 = *g;
  g1.n = g1.c = 1;
  g1.index_type = SIMDPOOL_INDEX_U8;
  for (size_t p = 0; p < g->n * g->c; p++) {
    const sp_io fwd = {.x = io->x + p * hw, .y = ys, .indices = taps};
    const sp_io bwd = {
        .indices = taps, .dy = io->dy + p * ohw, .dx = io->dx + p * hw};
    if (s2) {
      max3x3s2_nchw_direct(&g1, &fwd, 1);
      bwd3x3s2_nchw_body(&g1, &bwd, SIMDPOOL_INDEX_U8);
    } else {
      SP_FN(sp_max3x3s1_taps_nchw)(&g1, &fwd);
      gather_ring r;
      if (plane3_fits(&g1))
        max3x3s1_plane_gather(&g1, &bwd, SIMDPOOL_INDEX_U8);
      else if (max_ring_of(&g1, &r))
        maxpool_bwd_nchw_gather(&g1, &bwd, &r, SIMDPOOL_INDEX_U8);
      else
        bwd_nchw_body(&g1, &bwd, BWD_MAX_IDX);
    }
  }
}

/* 3x3/s1: where the general kernel would recompute each window per dx
 * row. Small planes keep lanes over planes; rows too wide for the
 * forward's pad row, the general kernel. */
void SP_FN(sp_maxpool_bwd_3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->oh * g->ow > BWD3_PLANE || g->w + SP_VL + 2 > ZERO3 ||
      lop_fits(g, 2, 1))
    SP_FN(sp_maxpool_bwd_nchw)(g, io);
  else
    bwd3x3_from_x_planes(g, io, 0);
}

void SP_FN(sp_maxpool_bwd_3x3s2p1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->oh * g->ow > BWD3_PLANE)
    bwd3x3s2_nchw_body(g, io, SIMDPOOL_INDEX_NONE);
  else
    bwd3x3_from_x_planes(g, io, 1);
}
void SP_FN(sp_maxpool_bwd_idx_3x3s2p1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    bwd3x3s2_nchw_body(g, io, SIMDPOOL_INDEX_U8);
  else if (!bwd3x3s2_flat_fits(g))
    bwd_scatter_nchw_flat(g, io);
  else if (g->index_type == SIMDPOOL_INDEX_I64)
    bwd3x3s2_nchw_body(g, io, SIMDPOOL_INDEX_I64);
  else
    bwd3x3s2_nchw_body(g, io, SIMDPOOL_INDEX_I32);
}
