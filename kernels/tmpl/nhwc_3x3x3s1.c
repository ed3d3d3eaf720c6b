/* SPDX-License-Identifier: MIT */
/* nhwc_3x3x3s1.c — AVG over 3x3x3 windows with stride 1, channels-last
 * (SP_SHAPE_3X3X3S1), forward and backward; compiled once per SIMD ISA
 * (kernels/meson.build).
 *
 * Every output adds its window's valid taps from +0 in the reference's
 * order: slice, row, column. That fixed order leaves no sum to share
 * between windows, so the work is 27 ordered additions per output vector
 * and the kernel is bound by the adds, not by memory. What it can save is
 * loads and latency: NO adjacent outputs of a row take their taps from
 * NO + 2 columns, each loaded once per window row and added to the (up to
 * three) outputs whose windows hold it, in column order; NO * NB
 * independent chains (NB vectors of channels) keep the adders busy.
 *
 * Backward: with stride 1 the outputs whose windows cover input element
 * (id, iy, ix) are the 3x3x3 window of the output volume at (id + pf - 2,
 * iy + pt - 2, ix + pl - 2), and the reference adds their shares
 * dy / divisor to dx in output order, which is that window's tap order.
 * So dx = +0 + the sum of the shares over that window (pads 2 - pad),
 * NaN canonical: the forward's sums over a volume of shares. The shares
 * of a tile of rows live in a ring of three output slices on the stack,
 * a slab of channels at a time. */
#include "tmpl/vec.h"

#include "tmpl/common.h"

/* The rows a window row of outputs reads: its valid rows in the
 * reference's order (slice, then row), each at column 0 of the source. */
typedef struct s1_src {
  const float *row[9];
  size_t nr;
  size_t ps; /* pixel step */
  size_t w;  /* columns of a source row */
  size_t pl; /* the windows' left pad: output ox starts at column ox - pl */
} s1_src;

/* Where sums go: forward, y = the sum divided (dv[nx]: nx counted columns)
 * and clamped; backward, dx = the sum, NaN canonical. */
typedef struct s1_sink {
  float *row; /* the output row, at column 0 */
  size_t ps;  /* its pixel step */
  const sp_geom *g;
  divisor dv[4];
} s1_sink;

SP_HOT void s1_put(const s1_sink *k, int fwd, size_t ox, size_t nx, size_t c,
                   size_t cn, vf sum) {
  const vf v = fwd ? yclamp(k->g, avg_result(sum, &k->dv[nx])) : vcanon(sum);
  store_lanes(k->row + ox * k->ps + c, v, cn);
}

/* s1_put of a run's no outputs, nb vectors each (acc[o * nb + j], channels
 * from c, the last vector cn lanes); the forward's divisions of a run
 * inside the row, all by one divisor, tested once. */
SP_HOT void s1_put_run(const s1_sink *k, int fwd, int edge, size_t ox,
                       const size_t *nx, size_t c, size_t cn, int no, int nb,
                       vf *acc) {
  if (fwd && !edge) {
    div_lanes_n(acc, no * nb, &k->dv[3], 1);
    for (int o = 0; o < no; o++)
      for (int j = 0; j < nb; j++)
        store_lanes(k->row + (ox + (size_t)o) * k->ps + c + (size_t)j * SP_VL,
                    yclamp(k->g, acc[o * nb + j]), j + 1 == nb ? cn : SP_VL);
    return;
  }
  for (int o = 0; o < no; o++)
    for (int j = 0; j < nb; j++)
      s1_put(k, fwd, ox + (size_t)o, nx[o], c + (size_t)j * SP_VL,
             j + 1 == nb ? cn : SP_VL, acc[o * nb + j]);
}

/* The sums of outputs ox .. ox + no - 1 for nb vectors of channels from c
 * (the last one cn lanes): acc[o * nb + j]. Without `edge` every window
 * column is inside the row; with it, columns outside add +0, which changes
 * no such sum (it starts from +0, so it is never -0). no, nb and edge are
 * compile-time constants. */
SP_HOT void s1_sums(const s1_src *s, size_t ox, size_t c, size_t cn, int no,
                    int nb, int edge, vf *acc) {
#pragma GCC unroll 8
  for (int i = 0; i < no * nb; i++)
    acc[i] = vf_zero();
  for (size_t k = 0; k < s->nr; k++) {
    const float *q = s->row[k] + c;
#pragma GCC unroll 2
    for (int j = 0; j < nb; j++) {
#pragma GCC unroll 10
      for (int t = 0; t < no + 2; t++) {
        /* Column t of the run: tap t - o of output o. */
        const size_t col = ox + (size_t)t - s->pl; /* wraps if before 0 */
        vf v = vf_zero();
        if (!edge || col < s->w)
          v = load_lanes(q + col * s->ps + (size_t)j * SP_VL,
                         j + 1 == nb ? cn : SP_VL);
        VF_PIN(v); /* one load for its (up to) three adds */
        const int o_hi = t < no ? t : no - 1;
#pragma GCC unroll 3
        for (int o = t < 2 ? 0 : t - 2; o <= o_hi; o++)
          acc[o * nb + j] = vf_add(acc[o * nb + j], v);
      }
    }
  }
}

/* One output whose window may reach past either end of the row: its
 * valid columns only, one vector of channels (rows shorter than a run). */
SP_HOT vf s1_one(const s1_src *s, size_t ox, size_t c, size_t cn) {
  const size_t j0 = ox < s->pl ? s->pl - ox : 0;
  const size_t j1 = s->w + s->pl - ox < 3 ? s->w + s->pl - ox : 3;
  vf acc = vf_zero();
  for (size_t k = 0; k < s->nr; k++)
    for (size_t j = j0; j < j1; j++)
      acc =
          vf_add(acc, load_lanes(s->row[k] + (ox + j - s->pl) * s->ps + c, cn));
  return acc;
}

/* NO outputs from ox, all C channels: NB vectors at a time, then one. nx:
 * each output's counted columns (forward's divisor). */
SP_HOT void s1_run(const s1_src *s, const s1_sink *k, const sp_geom *g, int fwd,
                   size_t ox, size_t C, int no, int nb, int edge) {
  vf acc[8];
  size_t nx[8];
  for (int o = 0; o < no; o++)
    nx[o] = fwd && edge ? sp_avg_taps_w(g, ox + (size_t)o) : 3;
  size_t c = 0;
  for (; c + (size_t)nb * SP_VL <= C; c += (size_t)nb * SP_VL) {
    s1_sums(s, ox, c, SP_VL, no, nb, edge, acc);
    s1_put_run(k, fwd, edge, ox, nx, c, SP_VL, no, nb, acc);
  }
  for (; c < C; c += SP_VL) {
    const size_t cn = C - c < SP_VL ? C - c : SP_VL;
    if (cn == SP_VL) {
      s1_sums(s, ox, c, SP_VL, no, 1, edge, acc);
      s1_put_run(k, fwd, edge, ox, nx, c, SP_VL, no, 1, acc);
    } else {
      s1_sums(s, ox, c, cn, no, 1, edge, acc);
      s1_put_run(k, fwd, edge, ox, nx, c, cn, no, 1, acc);
    }
  }
}

/* Outputs [0, ow) of one row, C channels, NO at a time (the last run
 * overlapping its neighbour if need be: outputs are stored, so twice is
 * harmless); runs with every window column inside the row (columns
 * [pl, w + pl - 2)) load without checks. Rows shorter than a run go one
 * output at a time. fwd, no, nb: compile-time constants (no * nb <= 8). */
SP_HOT void s1_row(const s1_src *s, const s1_sink *k, const sp_geom *g, int fwd,
                   size_t ow, size_t C, int no, int nb) {
  if (ow < (size_t)no) {
    for (size_t ox = 0; ox < ow; ox++) {
      const size_t nx = fwd ? sp_avg_taps_w(g, ox) : 0;
      for (size_t c = 0; c < C; c += SP_VL) {
        const size_t cn = C - c < SP_VL ? C - c : SP_VL;
        s1_put(k, fwd, ox, nx, c, cn, s1_one(s, ox, c, cn));
      }
    }
    return;
  }
  const size_t hi = s->w + s->pl >= 2 ? s->w + s->pl - 2 : 0;
  for (size_t ox = 0; ox < ow; ox += (size_t)no) {
    const size_t at = ox + (size_t)no <= ow ? ox : ow - (size_t)no;
    if (at >= s->pl && at + (size_t)no <= hi)
      s1_run(s, k, g, fwd, at, C, no, nb, 0);
    else
      s1_run(s, k, g, fwd, at, C, no, nb, 1);
  }
}

/* The forward: y of every output row, a slab of S1_SLAB channels at a
 * time through the whole volume, so that the rows a window row reads stay
 * in L1 and the slices in L2 (x3d_avg333's 96 channels in one pass ran
 * 1.4x slower, its loads missing both). */
#define S1_SLAB (2 * SP_VL)

SP_HOT void avg333_nhwc_fwd(const sp_geom *g, const sp_io *io) {
  const size_t XS = g->xs, W = g->w;
  s1_src s;
  s.ps = XS;
  s.w = W;
  s.pl = g->pl;
  s1_sink k;
  k.ps = g->ys;
  k.g = g;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c0 = 0; c0 < g->c; c0 += S1_SLAB) {
      const size_t cs = g->c - c0 < S1_SLAB ? g->c - c0 : S1_SLAB;
      for (size_t od = 0; od < g->od; od++) {
        const size_t nz = sp_avg_taps_d(g, od);
        for (size_t oy = 0; oy < g->oh; oy++) {
          s.nr = 0;
          for (size_t sl = 0; sl < 3; sl++) {
            const ptrdiff_t id = (ptrdiff_t)(od + sl) - (ptrdiff_t)g->pf;
            if (id < 0 || (size_t)id >= g->d)
              continue;
            for (size_t i = 0; i < 3; i++) {
              const ptrdiff_t iy = (ptrdiff_t)(oy + i) - (ptrdiff_t)g->pt;
              if (iy >= 0 && (size_t)iy < g->h)
                s.row[s.nr++] =
                    io->x +
                    ((n * g->d + (size_t)id) * g->h + (size_t)iy) * W * XS + c0;
            }
          }
          const size_t nzy = nz * sp_avg_taps_h(g, oy);
          for (size_t nx = 1; nx <= 3; nx++)
            k.dv[nx] = divisor_count(nzy * nx);
          k.row = io->y + ((n * g->od + od) * g->oh + oy) * g->ow * g->ys + c0;
          s1_row(&s, &k, g, 1, g->ow, cs, 4, 2);
        }
      }
    }
  }
}

void SP_FN(sp_avgpool_fwd_3x3x3s1_nhwc)(const sp_geom *g, const sp_io *io) {
  avg333_nhwc_fwd(g, io);
}

/* ---------------------------------------------------------------- backward
 * The ring: three output slices' shares for the output rows a tile of dx
 * rows hears from, cb channels (a multiple of SP_VL) per pixel. */
#define S1_RING 8192 /* floats: 32 KiB of stack */

/* The channel slab cb, the output columns sw a ring row holds, and the dx
 * rows per tile (returned). Tiles of t dx rows read t + 2 output rows, so
 * shares are made (t + 2) / t times: the widest slab that keeps t >= 4
 * with whole rows (sw = ow), else one vector; rows too long for that go
 * in column tiles of sw - 2 dx columns (sw output columns), 4 rows each. */
static inline size_t s1_tile(const sp_geom *g, size_t *cb, size_t *sw) {
  const size_t full = (g->c + SP_VL - 1) / SP_VL * SP_VL;
  for (size_t w = 2 * SP_VL; w >= SP_VL; w -= SP_VL) {
    const size_t c = w < full ? w : full;
    const size_t rows = S1_RING / (3 * g->ow * c);
    if (rows >= 3 && (rows >= 6 || w == SP_VL)) {
      *cb = c;
      *sw = g->ow;
      return rows - 2;
    }
  }
  *cb = SP_VL;
  *sw = S1_RING / (3 * 6 * SP_VL); /* >= 28 columns */
  return 4;
}

/* The shares of output rows [oy0, oy1), columns [a0, a1), of output slice
 * od, channels [c0, c0 + cs), into s (rows of rs floats: a1 - a0 pixels
 * of cb floats; lanes past cs +0). */
SP_HOT void s1_shares(const sp_geom *g, const sp_io *io, size_t n, size_t od,
                      size_t oy0, size_t oy1, size_t a0, size_t a1, size_t c0,
                      size_t cs, size_t cb, size_t rs, float *s) {
  const size_t nz = sp_avg_taps_d(g, od);
  for (size_t oy = oy0; oy < oy1; oy++, s += rs) {
    const size_t nzy = nz * sp_avg_taps_h(g, oy);
    divisor dv[4];
    for (size_t nx = 1; nx <= 3; nx++)
      dv[nx] = divisor_count(nzy * nx);
    const float *dy =
        io->dy + (((n * g->od + od) * g->oh + oy) * g->ow + a0) * g->ys + c0;
    float *p = s;
    for (size_t ox = a0; ox < a1; ox++, dy += g->ys, p += cb) {
      const divisor *d = &dv[sp_avg_taps_w(g, ox)];
      for (size_t c = 0; c < cb; c += SP_VL) {
        const size_t cn = c >= cs ? 0 : cs - c < SP_VL ? cs - c : SP_VL;
        const vf v = cn ? load_lanes(dy + c, cn) : vf_zero();
        vf_store(p + c, div_by(v, d));
      }
    }
  }
}

/* dx rows [row0, row1) of every slice (row_range: the parallel split's
 * bands), tiles of t rows by sw output columns, a slab of cb channels. */
SP_HOT void avg333_nhwc_bwd(const sp_geom *g, const sp_io *io, size_t cb,
                            size_t sw, size_t t) {
  _Alignas(64) float ring[S1_RING];
  const size_t OD = g->od, OH = g->oh, OW = g->ow, H = g->h, W = g->w;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const size_t rs = sw * cb, slot = (t + 2) * rs; /* ring row, slice */
  /* The gather's pads; tiles of tw dx columns (all W with whole rows). */
  const size_t pf = 2 - g->pf, pt = 2 - g->pt, pl = 2 - g->pl;
  const size_t tw = sw == OW ? W : sw - 2;
  s1_src s;
  s.ps = cb;
  s1_sink k;
  k.ps = g->xs;
  k.g = g;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c0 = 0; c0 < g->c; c0 += cb) {
      const size_t cs = g->c - c0 < cb ? g->c - c0 : cb;
      for (size_t x0 = 0; x0 < W; x0 += tw) {
        const size_t x1 = x0 + tw < W ? x0 + tw : W;
        /* Output columns [a0, a1) cover dx columns [x0, x1); dx column
         * x0 + i reads ring column i - s.pl + j. */
        const size_t a0 = x0 >= pl ? x0 - pl : 0;
        const size_t a1 = x1 + 2 - pl < OW ? x1 + 2 - pl : OW;
        s.w = a1 - a0;
        s.pl = pl + a0 - x0;
        for (size_t y0 = R0; y0 < R1; y0 += t) {
          const size_t y1 = y0 + t < R1 ? y0 + t : R1;
          /* Output rows [r0, r1) cover dx rows [y0, y1). */
          const size_t r0 = y0 >= pt ? y0 - pt : 0;
          const size_t r1 = y1 - 1 + 3 - pt < OH ? y1 - 1 + 3 - pt : OH;
          size_t filled = 0; /* output slices [.., filled) made */
          for (size_t z = 0; z < g->d; z++) {
            const size_t d0 = z >= pf ? z - pf : 0;
            const size_t d1 = z + 3 - pf < OD ? z + 3 - pf : OD;
            if (filled < d0)
              filled = d0;
            for (; filled < d1; filled++)
              s1_shares(g, io, n, filled, r0, r1, a0, a1, c0, cs, cb, rs,
                        ring + filled % 3 * slot);
            for (size_t y = y0; y < y1; y++) {
              s.nr = 0;
              const size_t b0 = y >= pt ? y - pt : 0;
              const size_t b1 = y + 3 - pt < OH ? y + 3 - pt : OH;
              for (size_t od = d0; od < d1; od++)
                for (size_t oy = b0; oy < b1; oy++)
                  s.row[s.nr++] = ring + od % 3 * slot + (oy - r0) * rs;
              k.row = io->dx + (((n * g->d + z) * H + y) * W + x0) * g->xs + c0;
              if (s.nr == 0 || a0 >= a1) { /* no window covers the row: +0 */
                for (size_t x = 0; x < x1 - x0; x++)
                  for (size_t c = 0; c < cs; c += SP_VL)
                    s1_put(&k, 0, x, 0, c, cs - c < SP_VL ? cs - c : SP_VL,
                           vf_zero());
              } else if (cb == SP_VL) {
                s1_row(&s, &k, g, 0, x1 - x0, cs, 8, 1);
              } else {
                s1_row(&s, &k, g, 0, x1 - x0, cs, 4, 2);
              }
            }
          }
        }
      }
    }
  }
}

void SP_FN(sp_avgpool_bwd_3x3x3s1_nhwc)(const sp_geom *g, const sp_io *io) {
  size_t cb, sw;
  const size_t t = s1_tile(g, &cb, &sw);
  avg333_nhwc_bwd(g, io, cb, sw, t);
}
