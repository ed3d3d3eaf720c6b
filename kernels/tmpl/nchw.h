/* SPDX-License-Identifier: MIT */
/* nchw.h — the NCHW row machinery every NCHW part shares: interior
 * columns, the row blocks of MAX and sums, the per-column AVG divisors,
 * the padded-row tiles of the forward sweeps, and the lanes-over-planes
 * path for small planes. */
#ifndef SP_TMPL_NCHW_H
#define SP_TMPL_NCHW_H

#include "tmpl/common.h"
#include "tmpl/lop.h"

/* ================================================================ NCHW
 * Lanes over output columns of one row. Columns [lo, hi) are the interior:
 * all kernel_w taps inside the input, so blocks of up to SP_VL of them run
 * without checks (a short block at the end of the interior too); border
 * columns use the scalar helpers, the reference's own per-output code. */

/* row_span and interior_cols: tmpl/common.h. */

/* A block: cnt (1..SP_VL) outputs of row oy starting at ox0, whose valid
 * kernel rows are [ki0, ki1). An interior block's lanes have every kernel
 * column inside the input; a border block's lanes may not, and each tap
 * then loads only the lanes where it is valid (lane_range). */
typedef struct block {
  size_t oy, ki0, ki1, ox0, cnt;
  int border;
  int pairs; /* stride 2 may read 2*SP_VL inputs per tap (see load_cols) */
} block;

SP_HOT block block_at(const sp_geom *g, const row_span *in, size_t oy,
                      size_t ki0, size_t ki1, size_t ox0, size_t cnt) {
  block b = {oy, ki0, ki1, ox0, cnt, 0, 0};
  b.border = ox0 < in->lo || ox0 + cnt > in->hi;
  /* Padded position just past the last lane's last tap must be inside. */
  const size_t last = (ox0 + SP_VL - 1) * g->sw + g->dw * (g->kw - 1) + 1;
  b.pairs = !b.border && cnt == SP_VL && last < g->w + g->pl;
  return b;
}

/* The length of the block starting at output column ox: blocks never mix
 * border and interior columns, so interior blocks stay check-free and the
 * per-lane border work covers only border columns. */
SP_HOT size_t block_len(const row_span *in, size_t ox, size_t ow) {
  const size_t end = ox < in->lo ? in->lo : ox < in->hi ? in->hi : ow;
  return end - ox < SP_VL ? end - ox : SP_VL;
}

/* Inputs p[0], p[s], ..., p[(cnt-1)*s], unused lanes zero. Reads nothing
 * else, except that stride 2 with `pairs` reads two whole vectors and
 * de-interleaves them. */
SP_HOT vf load_cols(const el_t *p, size_t s, size_t cnt, int pairs) {
  if (s == 1)
    return el_load_lanes(p, cnt);
  if (s == 2) {
    vf even, odd;
    el_load_elems(p, pairs ? 2 * SP_VL : 2 * cnt - 1, &even, &odd);
    return even;
  }
  return el_gather_lanes(p, s, cnt);
}

/* Border blocks: the lanes [*l0, *l1) of a block of cnt whose tap lies in
 * [0, w), when lane 0's tap sits at input column col (may be negative) and
 * lanes step by s columns. */
SP_HOT void lane_range(ptrdiff_t col, size_t s, size_t w, size_t cnt,
                       size_t *l0, size_t *l1) {
  const ptrdiff_t ss = (ptrdiff_t)s, end = (ptrdiff_t)w - col;
  /* Strides 1 and 2 without a division: this runs per tap and row. */
  if (s <= 2) {
    *l0 = col < 0 ? (size_t)((-col + ss - 1) >> (s - 1)) : 0;
    *l1 = end <= 0 ? 0 : (size_t)((end + ss - 1) >> (s - 1));
  } else {
    *l0 = col < 0 ? (size_t)((-col + ss - 1) / ss) : 0;
    *l1 = end <= 0 ? 0 : (size_t)((end + ss - 1) / ss);
  }
  if (*l1 > cnt)
    *l1 = cnt;
  if (*l0 > *l1)
    *l0 = *l1;
}

/* Lanes [l0, l1) of row[col + l*s], the rest zero; touches nothing else. */
SP_HOT vf load_cols_range(const el_t *row, ptrdiff_t col, size_t s, size_t l0,
                          size_t l1) {
  if (s == 1)
    return el_load_range(row + col, l0, l1);
  if (s == 2) {
    /* Elements [2*l0, 2*l1 - 1) of row + col, then the even ones. */
    const size_t e0 = 2 * l0, e1 = 2 * l1 - 1;
    vf even, odd;
    vf_deinterleave(el_load_range(row + col, e0 < SP_VL ? e0 : SP_VL,
                                  e1 < SP_VL ? e1 : SP_VL),
                    el_load_range(row + col + SP_VL,
                                  e0 > SP_VL ? e0 - SP_VL : 0,
                                  e1 > SP_VL ? e1 - SP_VL : 0),
                    &even, &odd);
    return even;
  }
  el_t lane[SP_VL];
  memset(lane, 0, sizeof lane);
  for (size_t i = l0; i < l1; i++)
    lane[i] = row[col + (ptrdiff_t)(i * s)];
  return el_load(lane);
}

/* dx += v at p[0], p[s], ... for cnt lanes: distinct elements. */
SP_HOT void add_cols(float *p, size_t s, vf v, size_t cnt) {
  if (s == 1) {
    store_lanes(p, vf_add(load_lanes(p, cnt), v), cnt);
    return;
  }
  float lane[SP_VL];
  vf_store(lane, v);
  for (size_t i = 0; i < cnt; i++)
    p[i * s] += lane[i];
}

/* The input column of tap kj of the block's first lane (negative or past
 * the row in border blocks). */
SP_HOT ptrdiff_t block_col(const sp_geom *g, const block *b, size_t kj) {
  return (ptrdiff_t)(b->ox0 * g->sw + kj * g->dw) - (ptrdiff_t)g->pl;
}

/* One tap of a block: its values (zero in lanes where the tap is padding)
 * and the lanes where it is valid; returns 0 when no lane has it. */
SP_HOT int block_tap(const sp_geom *g, const block *b, const el_t *row,
                     size_t kj, vf *v, vm *valid) {
  const ptrdiff_t col = block_col(g, b, kj);
  if (!b->border) {
    *v = load_cols(row + col, g->sw, b->cnt, b->pairs);
    *valid = vm_range(0, SP_VL);
    return 1;
  }
  size_t l0, l1;
  lane_range(col, g->sw, g->w, b->cnt, &l0, &l1);
  if (l0 == l1)
    return 0;
  *v = load_cols_range(row, col, g->sw, l0, l1);
  *valid = vm_range(l0, l1);
  return 1;
}

/* The input row that kernel row ki of the block reads. */
SP_HOT const el_t *block_row(const sp_geom *g, const el_t *xp, const block *b,
                             size_t ki) {
  return xp + (b->oy * g->sh + ki * g->dh - g->pt) * g->w;
}

/* Runs the body (the last argument) for every valid tap of block b in row-major
 * order, with ki, kj, v (the tap's inputs, zero in padding lanes) and valid
 * (its lanes) in scope. Full interior blocks at stride 1, the common case, take
 * plain loads without the per-tap border machinery. */
#define FOR_EACH_BLOCK_TAP(g, xp, b, ...)                                      \
  do {                                                                         \
    const int plain_ = !(b)->border && (g)->sw == 1 && (b)->cnt == SP_VL;      \
    for (size_t ki = (b)->ki0; ki < (b)->ki1; ki++) {                          \
      const el_t *row_ = block_row(g, xp, b, ki);                              \
      for (size_t kj = 0; kj < (g)->kw; kj++) {                                \
        vf v;                                                                  \
        vm valid;                                                              \
        if (plain_) {                                                          \
          v = el_load(row_ + block_col(g, b, kj));                             \
          valid = vm_range(0, SP_VL);                                          \
        } else if (!block_tap(g, b, row_, kj, &v, &valid)) {                   \
          continue;                                                            \
        }                                                                      \
        __VA_ARGS__                                                            \
      }                                                                        \
    }                                                                          \
  } while (0)

/* Running max of a block; *t receives the winners' index values (flat, or
 * tap number for U8) when track is set. */
static inline vf max_block_nchw(const sp_geom *g, const el_t *xp,
                                const block *b, int track,
                                simdpool_index_type it, vi *t) {
  const vf ninf = vf_set1(-INFINITY);
  if (!track) {
    /* Without NaN, max(v, m) from m = -inf is the MAX step exactly, and a
     * padding lane loaded as -inf never changes m's bits; a lane that met
     * a NaN reruns the block with compare-and-select. */
    vf m = ninf;
    vm bad = vm_range(0, 0);
    FOR_EACH_BLOCK_TAP(g, xp, b, {
      v = vf_select(valid, ninf, v);
      bad = vm_or(bad, vm_unord(v, v));
      m = vf_max_x86(v, m);
    });
    if (!vm_any(bad)) {
      *t = vi_set1(0);
      return m;
    }
  }
  /* Compare and select; `found` marks lanes that have met a valid tap (the
   * first one is taken as it is). */
  vf m = vf_zero();
  vi idx = vi_set1(0);
  vm found = vm_range(0, 0);
  FOR_EACH_BLOCK_TAP(g, xp, b, {
    const vm r =
        vm_or(vm_andnot(found, valid), vm_and(valid, mx_replaces(v, m)));
    found = vm_or(found, valid);
    m = vf_select(r, m, v);
    if (track) {
      const ptrdiff_t iy = (ptrdiff_t)(b->oy * g->sh + ki * g->dh - g->pt);
      const vi val =
          it == SIMDPOOL_INDEX_U8
              ? vi_set1((int32_t)(ki * g->kw + kj))
              : vi_ramp((int32_t)(iy * (ptrdiff_t)g->w + block_col(g, b, kj)),
                        (int32_t)g->sw);
      idx = vi_select(r, idx, val);
    }
  });
  *t = idx;
  return m;
}

/* Sum of a block (AVG) or of its LP terms, before the divisor or root.
 * Padding lanes load zero, and 0 adds nothing (acc is never -0.0f), as
 * t(0) = 0 adds nothing for LP. */
static inline vf sum_block_nchw(const sp_geom *g, const el_t *xp,
                                const block *b, int lp, int kind) {
  vf acc = vf_zero();
  FOR_EACH_BLOCK_TAP(g, xp, b, {
    (void)valid;
    acc = vf_add(acc, lp ? lp_term_v(kind, g->p, v) : v);
  });
  return acc;
}

/* AVG divisors of outputs ox0.. (cnt of them) of a row whose windows have ny
 * valid kernel rows: sp_avg_divisor's own factors, with the column's counted
 * per lane only outside the interior [in.lo, in.hi), where every column has
 * all kw taps under either count_include_pad rule. */
SP_HOT vf cols_divisor(const sp_geom *g, const row_span *in, size_t ny,
                       size_t ox0, size_t cnt) {
  if (ox0 >= in->lo && ox0 + cnt <= in->hi)
    return vf_set1((float)(ny * g->kw));
  float lane[SP_VL];
  size_t i = 0;
  for (; i < cnt && ox0 + i < in->lo; i++)
    lane[i] = (float)(ny * sp_avg_taps_w(g, ox0 + i));
  for (; i < cnt && ox0 + i < in->hi; i++)
    lane[i] = (float)(ny * g->kw);
  for (; i < cnt; i++)
    lane[i] = (float)(ny * sp_avg_taps_w(g, ox0 + i));
  for (; i < SP_VL; i++)
    lane[i] = 1.0f;
  return vf_load(lane);
}

/* The column factors of the AVG divisors of a row's vector-aligned blocks,
 * built once per call: (float)taps_w per lane in the few border blocks (the
 * row's first ones, before in.lo, and its last ones, from in.hi on), kw in
 * every interior block. Building a factor vector lane by lane costs a store
 * forwarding stall, far too much per block and row. */
#define COL_DIV_MAX 8

/* AVG also keeps the divisors (div_by) of rows with kh - j counted kernel
 * rows, j < COL_NY (interior rows and the usual border rows), for each
 * border block (slot k < COL_DIV_MAX) and for the interior blocks (slot
 * COL_DIV_MAX, col_slot). */
#define COL_NY 4

typedef struct col_divs {
  size_t left, right; /* blocks [0, left) and [right, nb) are border */
  int ok;             /* 0: too many border blocks, use cols_divisor */
  vf f[COL_DIV_MAX];
  divisor dv[COL_NY][COL_DIV_MAX + 1];
} col_divs;

static inline void col_divs_init(const sp_geom *g, const row_span *in,
                                 col_divs *cd) {
  const size_t nb = (g->ow + SP_VL - 1) / SP_VL;
  cd->left = (in->lo + SP_VL - 1) / SP_VL;
  cd->right = in->hi / SP_VL;
  if (cd->right < cd->left)
    cd->right = cd->left;
  if (cd->right > nb)
    cd->right = nb;
  /* ny * nx is exact in float when kh * kw < 2^24. */
  cd->ok =
      cd->left + (nb - cd->right) <= COL_DIV_MAX && g->kh <= (1u << 24) / g->kw;
  if (!cd->ok)
    return;
  size_t k = 0;
  for (size_t b = 0; b < nb; b = b + 1 == cd->left ? cd->right : b + 1) {
    if (b >= cd->left && b < cd->right)
      continue;
    float lane[SP_VL];
    for (size_t i = 0; i < SP_VL; i++) {
      const size_t ox = b * SP_VL + i;
      lane[i] = ox < g->ow ? (float)sp_avg_taps_w(g, ox) : 1.0f;
    }
    cd->f[k++] = vf_load(lane);
  }
  for (size_t j = 0; g->method == SIMDPOOL_AVG && j < COL_NY && j < g->kh;
       j++) {
    const vf ny = vf_set1((float)(g->kh - j));
    for (size_t i = 0; i <= COL_DIV_MAX; i++) {
      if (i < COL_DIV_MAX && i >= k)
        continue;
      cd->dv[j][i] = divisor_of(
          vf_mul(ny, i < COL_DIV_MAX ? cd->f[i] : vf_set1((float)g->kw)));
    }
  }
}

/* The column factors of block bi (outputs bi*SP_VL..); cd->ok. A row with
 * ny valid kernel rows divides by ny times them, exactly (col_divs_init). */
SP_HOT vf col_factor(const sp_geom *g, const col_divs *cd, size_t bi) {
  if (bi >= cd->left && bi < cd->right)
    return vf_set1((float)g->kw);
  return cd->f[bi < cd->left ? bi : cd->left + (bi - cd->right)];
}

/* The slot of block bi in cd->dv. */
SP_HOT size_t col_slot(const col_divs *cd, size_t bi) {
  return bi >= cd->left && bi < cd->right ? COL_DIV_MAX
         : bi < cd->left                  ? bi
                                          : cd->left + (bi - cd->right);
}

/* x / (ny * col_factor(bi)): the AVG division of block bi (in slot) of a
 * row with ny counted kernel rows, from the kept divisors where it has
 * them. */
SP_HOT vf col_div(const sp_geom *g, const col_divs *cd, size_t bi, size_t slot,
                  size_t ny, vf x) {
  if (g->kh - ny < COL_NY)
    return avg_result(x, &cd->dv[g->kh - ny][slot]);
  const divisor v =
      divisor_plain(vf_mul(vf_set1((float)ny), col_factor(g, cd, bi)));
  return avg_result(x, &v);
}

/* Runs the body (the last argument) for every output row of every plane, in
 * memory order, with in_ (the interior columns), px/py (the plane), oy, the
 * valid kernel rows [ki0, ki1) and orow (the row's first output element) in
 * scope. */
#define FOR_EACH_ROW(g, ...)                                                   \
  do {                                                                         \
    const row_span in_ = interior_cols(g);                                     \
    for (size_t n = 0; n < (g)->n; n++) {                                      \
      for (size_t c = 0; c < (g)->c; c++) {                                    \
        const sp_plane px = sp_plane_of(g, n, c, (g)->h, (g)->w);              \
        const sp_plane py = sp_plane_of(g, n, c, (g)->oh, (g)->ow);            \
        for (size_t oy = 0; oy < (g)->oh; oy++) {                              \
          size_t ki0, ki1;                                                     \
          sp_tap_range(oy, (g)->sh, (g)->pt, (g)->kh, (g)->dh, (g)->h, &ki0,   \
                       &ki1);                                                  \
          const size_t orow = py.base + oy * (g)->ow;                          \
          __VA_ARGS__                                                          \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* NCHW AVG/LP forward through padded scratch rows. A band of output rows of
 * one plane (and a tile of its columns, when a whole row is too wide) reads
 * a range of input rows; they are copied once to a stack scratch, with a pad
 * value (+0.0f) wherever a tap falls outside the input (padding, rows above
 * or below). Every tap is then a plain load, the same for border and
 * interior lanes, without per-tap lane ranges or masks, and PAD_ROWS output
 * rows at a time give independent chains that hide the latency. Exact: a
 * padding tap adds +0.0f (t(0) = +0.0f for LP) to a sum that starts at +0.0f
 * and so is never -0.0f, which changes no bits. (The 3x3/s2 MAX below reads
 * its input directly: a fold is cheap enough that the copy would double its
 * time.) */
#define PAD_ROWS 4
#define PAD_SCRATCH 4096 /* floats: 16 KiB of stack */

/* The scratch layout of a call: tiles of `tile` output columns (a multiple
 * of SP_VL), bands of `band` output rows (a multiple of PAD_ROWS), scratch
 * rows `rs` floats apart. */
typedef struct pad_plan {
  size_t tile, band, rs;
} pad_plan;

/* Scratch rows a band of b output rows reads. */
static inline size_t pad_rows(const sp_geom *g, size_t b) {
  return (b - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

/* Scratch columns a tile of t outputs reads (load_cols at stride 2 reads the
 * last lane's odd neighbour too). */
static inline size_t pad_cols(const sp_geom *g, size_t t) {
  return t * g->sw + (g->kw - 1) * g->dw;
}

/* 0 when not even PAD_ROWS rows of one vector fit the scratch. The widest
 * tile comes first (no column overlap), then the tallest band. */
static inline int pad_plan_of(const sp_geom *g, pad_plan *pp) {
  const size_t rows = pad_rows(g, PAD_ROWS), halo = (g->kw - 1) * g->dw;
  if (rows > PAD_SCRATCH / SP_VL)
    return 0;
  const size_t room = PAD_SCRATCH / rows / SP_VL * SP_VL; /* floats per row */
  if (room <= halo)
    return 0;
  size_t t = (room - halo) / g->sw / SP_VL * SP_VL;
  if (t == 0)
    return 0;
  if (t > round_up(g->ow, SP_VL))
    t = round_up(g->ow, SP_VL);
  pp->tile = t;
  pp->rs = round_up(pad_cols(g, t), SP_VL);
  /* (b - 1) * sh + (kh - 1) * dh + 1 <= PAD_SCRATCH / rs */
  const size_t cap = PAD_SCRATCH / pp->rs;
  size_t b = (cap - (rows - (PAD_ROWS - 1) * g->sh)) / g->sh + 1;
  b = b / PAD_ROWS * PAD_ROWS;
  if (b > round_up(g->oh, PAD_ROWS))
    b = round_up(g->oh, PAD_ROWS);
  pp->band = b;
  return 1;
}

/* The columns [*lo, *hi) of a tile's scratch rows that hold input: those c
 * in [0, cols) with 0 <= x0 + c < w. */
static inline void pad_span(ptrdiff_t x0, size_t w, size_t cols, size_t *lo,
                            size_t *hi) {
  const ptrdiff_t a = -x0, b = (ptrdiff_t)w - x0;
  *lo = a <= 0 ? 0 : (size_t)a < cols ? (size_t)a : cols;
  *hi = b <= (ptrdiff_t)*lo ? *lo : (size_t)b < cols ? (size_t)b : cols;
}

/* s[c] = row[x0 + c] for c in [lo, hi) (pad_span), pad elsewhere in
 * [0, cols) (everywhere when row is NULL). Writes up to SP_VL - 1 floats
 * past cols. */
SP_HOT void pad_fill(el_t *s, const el_t *row, ptrdiff_t x0, size_t lo,
                     size_t hi, size_t cols, vf pad) {
  if (!row)
    lo = hi = cols;
  size_t c = 0;
  for (; c < lo; c += SP_VL)
    el_store(s + c, pad);
  for (c = lo; c + SP_VL <= hi; c += SP_VL)
    el_copy(s + c, row + x0 + (ptrdiff_t)c);
  if (c < hi) {
    el_copy_lanes_or(s + c, row + x0 + (ptrdiff_t)c, hi - c, pad);
    c += SP_VL;
  }
  for (; c < cols; c += SP_VL)
    el_store(s + c, pad);
}

/* What a scratch row holds under the current tile: not known, all pad, or
 * pad in every column outside [lo, hi). */
enum { PAD_STALE, PAD_BLANK, PAD_DATA };

/* pad_fill, skipping what the row already holds (*st): a row of the same
 * tile that held input has its pad columns in place, so only its input
 * columns are copied again (in whole vectors, the last one ending at hi),
 * and a row that is all pad stays as it is. Most calls have one tile per
 * band, so after the first band every row is a plain copy. */
SP_HOT void pad_row(el_t *s, unsigned char *st, const el_t *row, ptrdiff_t x0,
                    size_t lo, size_t hi, size_t cols, vf pad) {
  if (!row) {
    if (*st != PAD_BLANK)
      pad_fill(s, NULL, x0, lo, hi, cols, pad);
    *st = PAD_BLANK;
    return;
  }
  if (*st == PAD_DATA && hi - lo >= SP_VL) {
    for (size_t c = lo; c + SP_VL < hi; c += SP_VL)
      el_copy(s + c, row + x0 + (ptrdiff_t)c);
    el_copy(s + hi - SP_VL, row + x0 + (ptrdiff_t)(hi - SP_VL));
    return;
  }
  pad_fill(s, row, x0, lo, hi, cols, pad);
  *st = PAD_DATA;
}

/* Runs the body (the last argument) for every band and tile of every plane
 * after copying the band's input rows into scratch (pad where a tap falls
 * outside the input), with xp, yp (the plane's input and output), oy0, by
 * (the band's first output row and its row count, a multiple of PAD_ROWS
 * that may pass oh), ox0 and tc (the tile's first output column and its
 * column count) in scope. */
#define FOR_EACH_PAD_TILE(g, io, pp, scratch, pad, ...)                        \
  do {                                                                         \
    unsigned char st_[PAD_SCRATCH / SP_VL]; /* pad_row's states */             \
    ptrdiff_t tx0_ = 0;                                                        \
    size_t tcols_ = 0; /* the tile st_ describes; none yet */                  \
    for (size_t n_ = 0; n_ < (g)->n; n_++) {                                   \
      for (size_t c_ = 0; c_ < (g)->c; c_++) {                                 \
        const el_t *xp =                                                       \
            EL_X(io) + sp_plane_of(g, n_, c_, (g)->h, (g)->w).base;            \
        el_t *yp = EL_Y(io) + sp_plane_of(g, n_, c_, (g)->oh, (g)->ow).base;   \
        for (size_t oy0 = 0; oy0 < (g)->oh; oy0 += (pp)->band) {               \
          const size_t by = round_up(                                          \
              (g)->oh - oy0 < (pp)->band ? (g)->oh - oy0 : (pp)->band,         \
              PAD_ROWS);                                                       \
          for (size_t ox0 = 0; ox0 < (g)->ow; ox0 += (pp)->tile) {             \
            const size_t tc =                                                  \
                (g)->ow - ox0 < (pp)->tile ? (g)->ow - ox0 : (pp)->tile;       \
            const size_t cols_ = pad_cols(g, round_up(tc, SP_VL));             \
            const ptrdiff_t x0_ =                                              \
                (ptrdiff_t)(ox0 * (g)->sw) - (ptrdiff_t)(g)->pl;               \
            if (x0_ != tx0_ || cols_ != tcols_) {                              \
              memset(st_, PAD_STALE, sizeof st_);                              \
              tx0_ = x0_;                                                      \
              tcols_ = cols_;                                                  \
            }                                                                  \
            size_t lo_, hi_;                                                   \
            pad_span(x0_, (g)->w, cols_, &lo_, &hi_);                          \
            for (size_t r_ = 0; r_ < pad_rows(g, by); r_++) {                  \
              const ptrdiff_t iy_ =                                            \
                  (ptrdiff_t)(oy0 * (g)->sh + r_) - (ptrdiff_t)(g)->pt;        \
              const int in_ = iy_ >= 0 && (size_t)iy_ < (g)->h;                \
              pad_row((scratch) + r_ * (pp)->rs, &st_[r_],                     \
                      in_ ? xp + (size_t)iy_ * (g)->w : NULL, x0_, lo_, hi_,   \
                      cols_, pad);                                             \
            }                                                                  \
            __VA_ARGS__                                                        \
          }                                                                    \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* One output row oy (outputs at orow, valid kernel rows [ki0, ki1)) of MAX
 * forward, NCHW, plane xp: blocks of compare-and-select, border and
 * interior columns apart (block_len). */
SP_HOT void max_row_nchw(const sp_geom *g, const sp_io *io, const el_t *xp,
                         const row_span *in, size_t oy, size_t ki0, size_t ki1,
                         size_t orow, int track) {
  for (size_t ox = 0, cnt; ox < g->ow; ox += cnt) {
    cnt = block_len(in, ox, g->ow);
    const block b = block_at(g, in, oy, ki0, ki1, ox, cnt);
    vi t;
    const vf m = max_block_nchw(g, xp, &b, track, g->index_type, &t);
    el_store_lanes_x(EL_Y(io) + orow + ox, yclamp(g, m), cnt, !g->clamp);
    if (track)
      store_index(io->indices, g->index_type, orow + ox, t, cnt);
  }
}

/* 3x3/stride-2/pad-1 MAX without indices (the ResNet stem), straight from
 * the input. Lane l of the block at output column ox0 reads input columns
 * 2(ox0 + l) - 1 .. + 1. Each input row folds its three taps once (the
 * ordered max of columns 2ox - 1, 2ox, 2ox + 1), then rows 0, 1, 2 combine
 * in order (docs/semantics.md's ordered tree; a tie keeps the earlier row), and
 * output rows go in pairs that share their middle input row. A tap outside
 * the input is -inf, which never replaces a MAX and, where the first valid
 * tap is -inf itself, has its bits. _mm*_max_ps is exact only without NaNs:
 * a row pair whose inputs hold one is redone with compare-and-select
 * (max_block_nchw). */

/* How a fold reads its row: FOLD_IN, every column inside the input; FOLD_LEFT,
 * the row's first block with only column -1 outside; FOLD_RIGHT, a full
 * last block whose vectors 1 and 3 end in a column or two past the input;
 * FOLD_EDGE, any lanes outside (fold_lanes says which). */
enum { FOLD_IN, FOLD_LEFT, FOLD_RIGHT, FOLD_EDGE };

/* The four vectors a fold reads, at p + fold_off[i] (p at the block's first
 * column, 2ox0 - 1): its columns 0..2SP_VL - 1, then 1..2SP_VL, whose odd
 * lanes are each output's third tap. No vector reads past the last tap. */
static const size_t fold_off[4] = {0, SP_VL, 1, SP_VL + 1};

/* Lanes [l0[i], l1[i]) of vector i lie inside the input. */
typedef struct fold_lanes {
  size_t l0[4], l1[4];
} fold_lanes;

SP_HOT fold_lanes fold_lanes_of(size_t ox0, size_t w) {
  fold_lanes fl;
  for (size_t i = 0; i < 4; i++)
    lane_range(2 * (ptrdiff_t)ox0 - 1 + (ptrdiff_t)fold_off[i], 1, w, SP_VL,
               &fl.l0[i], &fl.l1[i]);
  return fl;
}

/* Lanes [l0, l1) from p, pad elsewhere; reads nothing else. */
SP_HOT vf load_range_or(const float *p, size_t l0, size_t l1, vf pad) {
  return vf_select(vm_range(l0, l1), pad, vf_load_range(p, l0, l1));
}

/* The three taps of every lane of a stride-2 row block from its four vectors
 * (fold_off): t[kj] holds columns 2l + kj. */
SP_HOT void taps3s2(const vf v[4], vf t[3]) {
  vf e2;
  vf_deinterleave(v[0], v[1], &t[0], &t[1]);
  vf_deinterleave(v[2], v[3], &e2, &t[2]);
  (void)e2;
}

/* The ordered MAX of a, b, c with their index values ia, ib, ic: a later
 * one wins only when greater (ties keep the earlier), which is the MAX step
 * exactly when none is NaN; *out receives the winner's index value. */
SP_HOT vf max3_track(vf a, vi ia, vf b, vi ib, vf c, vi ic, vi *out) {
  const vm rb = vm_gt(b, a);
  const vf m = vf_select(rb, a, b);
  const vi t = vi_select(rb, ia, ib);
  const vm rc = vm_gt(c, m);
  *out = vi_select(rc, t, ic);
  return vf_select(rc, m, c);
}

/* One input row's fold for the block at ox0 (-inf for a NULL row), read as
 * `mode` says (fl: for FOLD_RIGHT and FOLD_EDGE). *bad collects NaN tests: of
 * columns 0..2SP_VL - 1, and of 1..2SP_VL too in the row's last block (last); a
 * block's column 2SP_VL is the next block's column 0. With track, *kc gets
 * each lane's winning column 0, 1 or 2. */
SP_HOT vf fold3x3s2(const float *row, size_t ox0, int mode,
                    const fold_lanes *fl, int last, vm *bad, int track,
                    vi *kc) {
  const vf ninf = vf_set1(-INFINITY);
  if (track)
    *kc = vi_set1(0);
  if (!row)
    return ninf;
  const float *p = row + 2 * (ptrdiff_t)ox0 - 1;
  vf v[4];
  for (size_t i = 0; i < 4; i++) {
    if (mode == FOLD_EDGE)
      v[i] = load_range_or(p + fold_off[i], fl->l0[i], fl->l1[i], ninf);
    else if (mode == FOLD_LEFT && i == 0)
      v[i] = load_range_or(p, 1, SP_VL, ninf);
    else if (mode == FOLD_RIGHT && i % 2)
      v[i] = load_range_or(p + fold_off[i], 0, fl->l1[i], ninf);
    else
      v[i] = vf_load(p + fold_off[i]);
  }
  *bad = vm_or(*bad, vm_unord(v[0], v[1]));
  if (last)
    *bad = vm_or(*bad, vm_unord(v[2], v[3]));
  vf t[3];
  taps3s2(v, t);
  if (track)
    return max3_track(t[0], vi_set1(0), t[1], vi_set1(1), t[2], vi_set1(2), kc);
  return vf_max_x86(t[2], vf_max_x86(t[1], t[0]));
}

/* Where a 3x3/s2/p1 block writes: y at output element o (the second row's
 * at o + ow), and with track the indices of type it, the tap numbers (U8)
 * or the flat positions of the pair's first window row, iy0 * w (iy0 =
 * 2oy - 1 may be -1: only a valid tap can win). */
typedef struct out3x3s2 {
  const sp_geom *g; /* its output clamp */
  el_t *y;
  void *ind;
  simdpool_index_type it;
  size_t o;
  int32_t w, iy0w;
} out3x3s2;

/* One output row of a block from its row folds (nr: 3, or 1 for 1x3 rows),
 * in order: the value, and with track the winner's index (row steps kr: 3
 * taps or w elements).
 * A lane whose max is -inf may have taken a padding tap as its winner (it
 * is -inf too), so such lanes count as bad with track: the row pair is
 * redone with compare-and-select, which knows which taps are valid. */
SP_HOT void max3x3s2_out(const vf f[3], const vi kc[3], size_t nr, size_t ox0,
                         size_t cnt, const out3x3s2 *out, size_t o,
                         int32_t rowbase, int track, vm *bad) {
  if (!track) {
    const vf v = nr == 1 ? f[0] : vf_max_x86(f[2], vf_max_x86(f[1], f[0]));
    el_store_lanes_x(out->y + o, yclamp(out->g, v), cnt, !out->g->clamp);
    return;
  }
  const int u8 = out->it == SIMDPOOL_INDEX_U8;
  const int32_t kr = u8 ? 3 : out->w;
  vi tap;
  vf m;
  if (nr == 1) {
    m = f[0];
    tap = kc[0];
  } else {
    m = max3_track(f[0], kc[0], f[1], vi_add(kc[1], vi_set1(kr)), f[2],
                   vi_add(kc[2], vi_set1(2 * kr)), &tap);
  }
  *bad = vm_or(*bad, vm_and(vm_eq(m, vf_set1(-INFINITY)), vm_range(0, cnt)));
  el_store_lanes_x(out->y + o, yclamp(out->g, m), cnt, !out->g->clamp);
  if (!u8) /* + the flat position of each lane's window corner */
    tap = vi_add(tap, vi_ramp(rowbase + 2 * (int32_t)ox0 - 1, 2));
  store_index(out->ind, out->it, o, tap, cnt);
}

/* One block of the row pair: outputs ox0 .. ox0 + cnt - 1 of output rows
 * oy and (two) oy + 1; nr: the window's rows (3, or 1: a 1x3 row, never
 * two). */
SP_HOT void max3x3s2_block(const float *const row[5], size_t nr, size_t ox0,
                           size_t cnt, size_t w, size_t ow, int mode, int last,
                           int two, int track, vm *bad, const out3x3s2 *out) {
  const fold_lanes fl =
      mode >= FOLD_RIGHT ? fold_lanes_of(ox0, w) : (fold_lanes){{0}, {0}};
  vf f[5];
  vi kc[5];
  /* The first output row as soon as its three folds are there (fewer
   * vectors live at once), then the second. */
  for (size_t r = 0; r < nr; r++)
    f[r] = fold3x3s2(row[r], ox0, mode, &fl, last, bad, track, &kc[r]);
  max3x3s2_out(f, kc, nr, ox0, cnt, out, out->o + ox0, out->iy0w, track, bad);
  if (two) {
    for (size_t r = 3; r < 5; r++)
      f[r] = fold3x3s2(row[r], ox0, mode, &fl, last, bad, track, &kc[r]);
    max3x3s2_out(f + 2, kc + 2, 3, ox0, cnt, out, out->o + ow + ox0,
                 out->iy0w + 2 * out->w, track, bad);
  }
}

/* The f32 rows the folds read: the input's own for f32; for the other
 * element types, input rows widened into a ring of ROW3_RING rows as they
 * are first needed, each once per plane (a row pair reads rows 2oy - 1 ..
 * 2oy + 3, the next pair from 2oy + 3 on). Rows longer than ROW3_CAP - 2
 * elements take the blocks of max_row_nchw instead. The widening is
 * el_load_ord's, exact for numbers: the folds test every value they read
 * for NaN, and a NaN reruns the row pair from the elements themselves. */
#define ROW3_RING 5
#define ROW3_CAP 2048 /* floats per ring row: 40 KiB of stack */

typedef struct rows3 {
  const el_t *xp; /* the plane */
  size_t w;
#if !SP_EL_F32
  float *ring;            /* ROW3_RING rows of ROW3_CAP floats */
  size_t held[ROW3_RING]; /* the input row + 1 each holds, 0: none */
#endif
} rows3;

SP_HOT const float *rows3_get(rows3 *r, size_t iy) {
#if SP_EL_F32
  return r->xp + iy * r->w;
#else
  const size_t slot = (iy + 1) % ROW3_RING;
  float *d = r->ring + slot * ROW3_CAP + 1; /* column -1 at d[-1] */
  if (r->held[slot] != iy + 1) {
    const el_t *x = r->xp + iy * r->w;
    size_t c = 0;
    for (; c + SP_VL <= r->w; c += SP_VL)
      vf_store(d + c, el_load_ord(x + c));
    if (c < r->w)
      store_lanes(d + c, el_load_lanes_ord(x + c, r->w - c), r->w - c);
    r->held[slot] = iy + 1;
  }
  return d;
#endif
}

/* The blocks of a row pair: the first (FOLD_LEFT when its columns 0 ..
 * 2SP_VL lie inside), full blocks inside the input, and a last block that
 * ends at ow, overlapping its predecessor (writing the same values twice
 * is harmless; outputs are plain stores): FOLD_IN or FOLD_RIGHT. Rows of at
 * most SP_VL outputs use FOLD_EDGE blocks. 1x3 windows (SP_SHAPE_1X3S2P1:
 * kernel_h 1, output row oy is input row oy) take one row at a time, the
 * same folds without the vertical max. */
SP_HOT void max3x3s2_nchw_rows(const sp_geom *g, const sp_io *io, int track,
                               size_t nr) {
  const row_span in = interior_cols(g);
  const size_t ow = g->ow, w = g->w;
  /* A full block at ox0 reads columns 2ox0 - 1 .. 2ox0 + 2SP_VL - 1. Every
   * window holds an input column (plan.c), so 2(ow - 1) - 1 < w: a block
   * that ends before ow - 1 (ox0 + SP_VL < ow) ends inside the row, and
   * the first one does when ow > SP_VL. The last block, at ow - SP_VL, needs
   * column 2ow - 1: not there when the right padding holds it. */
  const int wide = ow > SP_VL;
  const int tail_in = 2 * ow - 1 < w;
#if !SP_EL_F32
  if (w + 2 > ROW3_CAP) {
    FOR_EACH_ROW(g, {
      max_row_nchw(g, io, EL_X(io) + px.base, &in_, oy, ki0, ki1, orow, track);
    });
    return;
  }
  _Alignas(64) float ring[ROW3_RING * ROW3_CAP];
#endif
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const el_t *xp = EL_X(io) + sp_plane_of(g, n, c, g->h, g->w).base;
      const size_t ybase = sp_plane_of(g, n, c, g->oh, g->ow).base;
#if SP_EL_F32
      rows3 rs = {xp, w};
#else
      rows3 rs = {xp, w, ring, {0}};
#endif
      for (size_t oy = 0; oy < g->oh; oy += nr == 1 ? 1 : 2) {
        const int two = nr == 3 && oy + 1 < g->oh;
        /* 3x3: input rows 2oy - 1 .. 2oy + 3, NULL outside; 1x3: row oy */
        const float *row[5] = {NULL, NULL, NULL, NULL, NULL};
        if (nr == 1)
          row[0] = rows3_get(&rs, oy);
        for (size_t r = 0; r < 5 && nr == 3; r++) {
          const size_t iy1 = 2 * oy + r; /* the row plus one */
          row[r] = iy1 >= 1 && iy1 - 1 < g->h && (two || r < 3)
                       ? rows3_get(&rs, iy1 - 1)
                       : NULL;
        }
        const int32_t iy0w =
            nr == 3 ? (int32_t)(2 * oy * w) - (int32_t)w : (int32_t)(oy * w);
        const out3x3s2 out = {
            g,          EL_Y(io), io->indices, g->index_type, ybase + oy * ow,
            (int32_t)w, iy0w};
        vm bad = vm_range(0, 0);
        size_t ox0 = 0;
        if (wide) {
          max3x3s2_block(row, nr, 0, SP_VL, w, ow, FOLD_LEFT, 0, two, track,
                         &bad, &out);
          for (ox0 = SP_VL; ox0 + SP_VL < ow; ox0 += SP_VL)
            max3x3s2_block(row, nr, ox0, SP_VL, w, ow, FOLD_IN, 0, two, track,
                           &bad, &out);
          max3x3s2_block(row, nr, ow - SP_VL, SP_VL, w, ow,
                         tail_in ? FOLD_IN : FOLD_RIGHT, 1, two, track, &bad,
                         &out);
        } else {
          for (; ox0 < ow; ox0 += SP_VL)
            max3x3s2_block(row, nr, ox0, ow - ox0 < SP_VL ? ow - ox0 : SP_VL, w,
                           ow, FOLD_EDGE, 1, two, track, &bad, &out);
        }
        if (!vm_any(bad))
          continue;
        for (size_t r = 0; r <= (size_t)two; r++) {
          size_t ki0, ki1;
          sp_tap_range(oy + r, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
          max_row_nchw(g, io, xp, &in, oy + r, ki0, ki1, ybase + (oy + r) * ow,
                       track);
        }
      }
    }
  }
}

/* nr = kernel_h, 3 or 1 (a 1x3 row: one output row a step), as a
 * compile-time constant: with a run-time count, GCC turned the folds'
 * zeroed winner columns (kc) into a memset call per block. */
SP_HOT void max3x3s2_nchw_direct(const sp_geom *g, const sp_io *io, int track) {
  if (g->kh == 1)
    max3x3s2_nchw_rows(g, io, track, 1);
  else
    max3x3s2_nchw_rows(g, io, track, 3);
}

/* The group width (lop_group) with which the 2D families take a plan
 * through the scratch: rows of fewer than 2 SP_VL outputs (row blocks would
 * leave most lanes idle) whose groups fit; 0: the rows stay. */
static inline size_t lop_fits(const sp_geom *g, size_t big, size_t small) {
  return g->ow < 2 * SP_VL ? lop_group(g, big, small) : 0;
}

SP_HOT void maxpool_fwd_nchw_body(const sp_geom *g, const sp_io *io,
                                  int track) {
  FOR_EACH_ROW(g, {
    max_row_nchw(g, io, EL_X(io) + px.base, &in_, oy, ki0, ki1, orow, track);
  });
}

/* The pad row of the 3x3 kernels (tmpl/nchw_3x3s1.c, the 3x3/s2 backward):
 * rows up to ZERO3 - SP_VL - 2 floats. */
#define ZERO3 512

#endif /* SP_TMPL_NCHW_H */
