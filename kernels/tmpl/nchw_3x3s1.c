/* SPDX-License-Identifier: MIT */
/* nchw_3x3s1.c — the 3x3/stride-1 forward kernels of AVG and MAX, NCHW
 * (the NHWC AVG one is tmpl/nhwc_fwd.c's, per element type); compiled once
 * per SIMD ISA (kernels/meson.build), and for bf16 and f16 (tmpl/dt/) the
 * 2D AVG alone, whose input rows the f32 blocks read widened (band3). */
#include "tmpl/vec.h"

#include "tmpl/nchw.h"

/* The part's general AVG kernel (tmpl/nchw_fwd.c), for rows too long. */
void SP_KFN(sp_avgpool_fwd_nchw)(const sp_geom *g, const sp_io *io);

/* ================================================================ 3x3/s1
 * AVG 3x3, stride 1 (Inception), any padding (SP_SHAPE_3X3S1). Each output
 * adds its nine taps in row-major order as the reference does, but from
 * the first tap on instead of from +0 (avg_result makes up for it), and
 * padding taps come in as +0, which changes no such sum. The divisors of a
 * call, d = ny * nx, are few: s3->dv[3 - ny][k] (k: the kind of block). */
typedef struct sums3 {
  const sp_geom *g; /* its output clamp */
  divisor dv[3][3];
  vm first[3], last[3]; /* the lanes where tap kj is inside the row */
  /* MAX (nchw3x3s1): y and indices, the value of taps outside the
   * input (-inf; +0 for AVG), index tracking, the group's first output row
   * and the lanes to redo (NaN met, or with track a max of -inf). */
  el_t *y;
  void *ind;
  vf pad;
  int track;
  size_t oy;
  vm bad;
} sums3;

/* (float)nx per lane for the cnt outputs from ox0 (1 in the other lanes). */
static inline vf cols3_factor(const sp_geom *g, size_t ox0, size_t cnt) {
  float lane[SP_VL];
  for (size_t i = 0; i < SP_VL; i++)
    lane[i] = i < cnt ? (float)sp_avg_taps_w(g, ox0 + i) : 1.0f;
  return vf_load(lane);
}

/* P3_SUM: AVG's sums without the division, +0 + sum with NaN canonical
 * (3x3x3 backward's gather of shares, depth 3 only). */
enum { P3_AVG, P3_MAX, P3_SUM };

/* NCHW: output rows go in groups of ROWS3, lanes over output columns. A
 * group reads ROWS3 + 2 input rows; rows outside the input read a row of
 * the pad value (+0 for AVG, -inf for MAX). Blocks of SP_VL columns: the
 * first (kind 0) and the last, which ends at ow and overlaps its neighbour
 * (kind 2; outputs are stored, so twice is harmless), load only their taps
 * inside the row (masks made once per call), the others the pad value; the
 * ones between (kind 1) read inside it. AVG and MAX share all but the
 * block (nchw3x3s1_block). */
#define ROWS3 4

/* Taps kj = 0, 1, 2 of a block of input row p (at the block's first tap):
 * kind 0 and 2 masked (s3->first, s3->last; s3->pad elsewhere), kind 1
 * plain. */
SP_HOT void taps3_nchw(const sums3 *s3, const float *p, int kind, int method,
                       vf *t0, vf *t1, vf *t2) {
  if (kind == 1) {
    *t0 = vf_load(p);
    *t1 = vf_load(p + 1);
    *t2 = vf_load(p + 2);
  } else {
    const vm *m = kind == 0 ? s3->first : s3->last;
    *t0 = vf_load_mask(p, m[0]);
    *t1 = vf_load_mask(p + 1, m[1]);
    *t2 = vf_load_mask(p + 2, m[2]);
    if (method == P3_MAX) {
      *t0 = vf_select(m[0], s3->pad, *t0);
      *t1 = vf_select(m[1], s3->pad, *t1);
      *t2 = vf_select(m[2], s3->pad, *t2);
    }
  }
}

/* AVG: one block (outputs ox0 .. ox0 + cnt - 1, kind) of a group of nr
 * rows: p[i] is input row i of the group at the block's first tap, dv[r]
 * the divisors of row r's kind-0..2 blocks, y its first output. Each output
 * row reads one new input row; the other two come from the row above. */
#define P3_ROWS (ROWS3 + 2)
/* 3x3x3 groups: each output row's chain is 27 ordered adds, so more rows
 * side by side where the registers hold them (8 sums and 9 taps of 32). */
#if SP_VL == 16
#define ROWS3D 8
#else
#define ROWS3D ROWS3
#endif
#define P3D_ROWS (ROWS3D + 2)
SP_HOT void avg3x3s1_nchw_block(const sums3 *s3, const float *const p[],
                                size_t off, const divisor *const dv[],
                                size_t nr, int kind, size_t cnt, size_t ow,
                                el_t *y) {
  vf a0, a1, a2, b0, b1, b2, c0, c1, c2, sum[ROWS3];
  taps3_nchw(s3, p[0] + off, kind, P3_AVG, &a0, &a1, &a2);
  taps3_nchw(s3, p[1] + off, kind, P3_AVG, &b0, &b1, &b2);
  for (size_t r = 0; r < nr; r++) {
    taps3_nchw(s3, p[r + 2] + off, kind, P3_AVG, &c0, &c1, &c2);
    sum[r] = sum3x3(a0, a1, a2, b0, b1, b2, c0, c1, c2);
    a0 = b0;
    a1 = b1;
    a2 = b2;
    b0 = c0;
    b1 = c1;
    b2 = c2;
  }
  /* All sums first: the rows' chains of additions overlap, and no
   * division waits in the middle of them. Rows of one divisor (all but a
   * group at a padded edge) share one range test (div_lanes_n). */
  const yclamp_t yc = yclamp_of(s3->g);
  int same = 1;
  for (size_t r = 1; r < nr; r++)
    same &= dv[r] == dv[0];
  if (same) {
    const divisor d = dv[0][kind];
    div_lanes_n(sum, (int)nr, &d, 1);
  } else {
    for (size_t r = 0; r < nr; r++)
      sum[r] = avg_result(sum[r], &dv[r][kind]);
  }
  for (size_t r = 0; r < nr; r++)
    el_store_lanes(y + r * ow, yclamp_v(&yc, sum[r]), cnt);
}

#if SP_EL_F32
/* The same for 3x3x3 windows: p[s * P3D_ROWS + i] is input row i of the
 * group in the window's slice s, and the same row reuse slice by slice.
 * Each output row's chain runs from +0 through its 27 taps in the
 * reference's order (slice, row, column), the nr rows' chains side by
 * side; divide: AVG's division, else (P3_SUM) the sum, NaN canonical. (One
 * block for both ranks, the 2D one the depth-1 case, measured the same
 * forward but 1.1-1.4x slower in the 3x3x3 backward's gather.) */
SP_HOT void avg3x3x3s1_nchw_block(const sums3 *s3, const float *const p[],
                                  size_t off, const divisor *const dv[],
                                  size_t nr, int kind, size_t cnt, size_t ow,
                                  float *y, int divide) {
  vf sum[ROWS3D];
  for (size_t r = 0; r < nr; r++)
    sum[r] = vf_zero();
  for (size_t sl = 0; sl < 3; sl++) {
    const float *const *ps = p + sl * P3D_ROWS;
    vf a0, a1, a2, b0, b1, b2, c0, c1, c2;
    taps3_nchw(s3, ps[0] + off, kind, P3_AVG, &a0, &a1, &a2);
    taps3_nchw(s3, ps[1] + off, kind, P3_AVG, &b0, &b1, &b2);
    for (size_t r = 0; r < nr; r++) {
      taps3_nchw(s3, ps[r + 2] + off, kind, P3_AVG, &c0, &c1, &c2);
      sum[r] = sum3x3(vf_add(sum[r], a0), a1, a2, b0, b1, b2, c0, c1, c2);
      a0 = b0;
      a1 = b1;
      a2 = b2;
      b0 = c0;
      b1 = c1;
      b2 = c2;
    }
  }
  for (size_t r = 0; r < nr; r++)
    store_lanes(y + r * ow,
                divide ? yclamp(s3->g, avg_result(sum[r], &dv[r][kind]))
                       : vcanon(sum[r]),
                cnt);
}

/* MAX: the same block. The MAX step that keeps the first of equal maxima
 * is associative, so each input row's three taps fold once (value and
 * winning column) and an output row takes the first max of its three
 * rows' folds: the reference's bits, taps in scan order. Without NaN:
 * a lane that loads one is redone (s3->bad), as is with track a lane whose
 * max is -inf, whose winner may be a pad tap (a valid tap of -inf must
 * win). Index values: tap numbers (U8) or flat positions from the window
 * corner (oy + r - pt, ox - pl). */
SP_HOT void max3x3s1_nchw_block(sums3 *s3, const float *const p[], size_t off,
                                size_t nr, int kind, size_t cnt, size_t ow,
                                size_t o, size_t ox0) {
  const sp_geom *g = s3->g;
  const int track = s3->track;
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  const int32_t kr = u8 ? 3 : (int32_t)g->w;
  vf f[ROWS3 + 2];
  vi kc[ROWS3 + 2];
  vm bad = s3->bad;
  for (size_t i = 0; i < nr + 2; i++) {
    vf t0, t1, t2;
    taps3_nchw(s3, p[i] + off, kind, P3_MAX, &t0, &t1, &t2);
    bad = vm_or(bad, vm_or(vm_unord(t0, t1), vm_unord(t2, t2)));
    if (track)
      f[i] = max3_track(t0, vi_set1(0), t1, vi_set1(1), t2, vi_set1(2), &kc[i]);
    else
      f[i] = vf_max_x86(t2, vf_max_x86(t1, t0));
  }
  for (size_t r = 0; r < nr; r++) {
    const size_t orow = o + r * ow;
    if (!track) {
      store_lanes(s3->y + orow,
                  yclamp(g, vf_max_x86(f[r + 2], vf_max_x86(f[r + 1], f[r]))),
                  cnt);
      continue;
    }
    vi tap;
    const vf m =
        max3_track(f[r], kc[r], f[r + 1], vi_add(kc[r + 1], vi_set1(kr)),
                   f[r + 2], vi_add(kc[r + 2], vi_set1(2 * kr)), &tap);
    bad = vm_or(bad, vm_and(vm_eq(m, vf_set1(-INFINITY)), vm_range(0, cnt)));
    store_lanes(s3->y + orow, yclamp(g, m), cnt);
    if (!u8) /* + the flat position of each lane's window corner */
      tap = vi_add(tap, vi_ramp((int32_t)(s3->oy + r) * (int32_t)g->w -
                                    (int32_t)g->pt * (int32_t)g->w +
                                    (int32_t)ox0 - (int32_t)g->pl,
                                1));
    store_index(s3->ind, g->index_type, orow, tap, cnt);
  }
  s3->bad = bad;
}

#endif

#if !SP_EL_F32
/* bf16, f16: the f32 rows the blocks read. A band of whole input rows is
 * widened at once, as one run (a plane's rows are contiguous), when a
 * group of rows reaches past it; el_load_ord's widening, exact for every
 * number (the sums write every NaN canonical). buf has SP_VL floats before
 * it and 2 SP_VL after, for the masked loads of the border blocks. */
#define BAND3_CAP 8192 /* floats (32 KiB): at least 16 rows of ZERO3 */
typedef struct band3 {
  float *buf;
  size_t r0, r1; /* the input rows held: [r0, r1) */
} band3;

/* Holds input rows [lo, hi) of the plane xp (h rows of w) after the call:
 * hi - lo <= ROWS3 + 2, fewer than a band holds. */
SP_HOT void band3_need(band3 *b, const el_t *xp, size_t w, size_t h, size_t lo,
                       size_t hi) {
  if (lo >= b->r0 && hi <= b->r1)
    return;
  const size_t r1 = lo + BAND3_CAP / w < h ? lo + BAND3_CAP / w : h;
  const el_t *x = xp + lo * w;
  const size_t n = (r1 - lo) * w;
  size_t e = 0;
  for (; e + SP_VL <= n; e += SP_VL)
    vf_store(b->buf + e, el_load_ord(x + e));
  if (e < n)
    store_lanes(b->buf + e, el_load_lanes_ord(x + e, n - e), n - e);
  b->r0 = lo;
  b->r1 = r1;
}

SP_HOT const float *band3_row(const band3 *b, size_t w, size_t iy) {
  return b->buf + (iy - b->r0) * w;
}
#endif

/* One block of the method's (depth: AVG's slices, 1 for MAX), its input
 * rows at p[i] + ox0 (ox0: the block's first output column). */
SP_HOT void nchw3x3s1_block(sums3 *s3, int method, const float *const p[],
                            const divisor *const dv[], size_t nr, size_t depth,
                            int kind, size_t cnt, size_t ow, size_t o,
                            size_t ox0) {
  (void)method; /* bf16, f16: 2D AVG only */
  (void)depth;
#if SP_EL_F32
  if (method != P3_MAX && depth > 1)
    avg3x3x3s1_nchw_block(s3, p, ox0, dv, nr, kind, cnt, ow, s3->y + o,
                          method == P3_AVG);
  else if (method == P3_MAX)
    max3x3s1_nchw_block(s3, p, ox0, nr, kind, cnt, ow, o, ox0);
  else
#endif
    avg3x3s1_nchw_block(s3, p, ox0, dv, nr, kind, cnt, ow, s3->y + o);
}

/* The blocks of a group of nr rows (p, dv as for the block; o the group's
 * first output). */
SP_HOT void nchw3x3s1_row(sums3 *s3, int method, const float *const p[],
                          const divisor *const dv[], size_t nr, size_t depth,
                          size_t ow, size_t mid_end, size_t extra, size_t o) {
  if (ow <= SP_VL) {
    nchw3x3s1_block(s3, method, p, dv, nr, depth, 0, ow, ow, o, 0);
    return;
  }
  nchw3x3s1_block(s3, method, p, dv, nr, depth, 0, SP_VL, ow, o, 0);
  for (size_t ox0 = SP_VL; ox0 < mid_end; ox0 += SP_VL)
    nchw3x3s1_block(s3, method, p, dv, nr, depth, 1, SP_VL, ow, o + ox0, ox0);
  if (extra)
    nchw3x3s1_block(s3, method, p, dv, nr, depth, 1, SP_VL, ow, o + extra,
                    extra);
  nchw3x3s1_block(s3, method, p, dv, nr, depth, 2, SP_VL, ow, o + ow - SP_VL,
                  ow - SP_VL);
}

/* The AVG divisors of the blocks of output slices whose windows count nz
 * slices: dv[3 - ny][kind] = nz * ny * (each lane's nx), nz = 1 in 2D
 * (exact: small integers). */
SP_HOT void avg3_divisors(const sp_geom *g, divisor dv[3][3], size_t nz,
                          size_t first, size_t olast) {
  const vf f0 = cols3_factor(g, 0, first), f2 = cols3_factor(g, olast, first);
  for (size_t j = 0; j < 3; j++) {
    const vf nzy = vf_set1((float)(nz * (3 - j)));
    dv[j][0] = divisor_of(vf_mul(nzy, f0));
    dv[j][1] = divisor_of(vf_mul(nzy, vf_set1(3.0f)));
    dv[j][2] = divisor_of(vf_mul(nzy, f2));
  }
}

/* method, track, depth: compile-time constants (track: MAX with indices;
 * depth: 3 for AVG's 3x3x3 windows, stride 1 on every axis, else 1). */
SP_HOT void nchw3x3s1(const sp_geom *g, const sp_io *io, int method, int track,
                      size_t depth) {
  const row_span in = interior_cols(g);
  const size_t ow = g->ow, first = ow < SP_VL ? ow : SP_VL;
  const size_t olast = ow < SP_VL ? 0 : ow - SP_VL;
  sums3 s3;
  s3.g = g;
  s3.y = EL_Y(io);
  s3.ind = io->indices;
  s3.track = track;
  const float padv = method == P3_MAX ? -INFINITY : 0.0f;
  s3.pad = vf_set1(padv);
  /* AVG: the divisors of output slices counting nz = 1..depth slices
   * (sp_avg_taps_d), made once per call. */
  divisor dvz[3][3][3];
  for (size_t nz = 1; nz <= depth && method == P3_AVG; nz++)
    avg3_divisors(g, dvz[nz - 1], nz, first, olast);
  for (size_t kj = 0; kj < 3; kj++) {
    size_t l0, l1;
    lane_range((ptrdiff_t)kj - (ptrdiff_t)g->pl, 1, g->w, first, &l0, &l1);
    s3.first[kj] = vm_range(l0, l1);
    lane_range((ptrdiff_t)(olast + kj) - (ptrdiff_t)g->pl, 1, g->w, first, &l0,
               &l1);
    s3.last[kj] = vm_range(l0, l1);
  }
  /* Middle blocks from SP_VL on are interior columns with their taps
   * inside the row (kind 1) up to mid_end. A right pad of 2 can leave a
   * column before the last block: the extra block, ending at in.hi, covers
   * it (ow <= 2 SP_VL needs none: the first and last blocks meet). */
  size_t mid_end = SP_VL;
  while (mid_end + SP_VL < ow && mid_end + SP_VL <= in.hi)
    mid_end += SP_VL;
  const size_t extra =
      ow > 2 * SP_VL && mid_end + SP_VL < ow ? in.hi - SP_VL : 0;
  float pad[ZERO3] __attribute__((aligned(64)));
  for (size_t i = 0; i < g->w + SP_VL + 2; i++)
    pad[i] = padv;
  const size_t hw = g->h * g->w;
#if !SP_EL_F32
  _Alignas(64) float band_buf[BAND3_CAP + 3 * SP_VL];
#endif
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      /* The plane: d slices of h rows (2D: d = od = 1). */
      const el_t *xplane =
          EL_X(io) + sp_plane_of(g, n, c, g->d * g->h, g->w).base;
#if !SP_EL_F32
      band3 band = {band_buf + SP_VL, 0, 0};
#endif
      const size_t yplane = sp_plane_of(g, n, c, g->od * g->oh, g->ow).base;
      for (size_t od = 0; od < g->od; od++) {
        const el_t *slice[3]; /* the window's slices; NULL: padding */
        for (size_t sl = 0; sl < depth; sl++) {
          const ptrdiff_t id = (ptrdiff_t)(od + sl) - (ptrdiff_t)g->pf;
          slice[sl] =
              id >= 0 && (size_t)id < g->d ? xplane + (size_t)id * hw : NULL;
        }
        const divisor(*dvt)[3] =
            dvz[method == P3_AVG && depth > 1 ? sp_avg_taps_d(g, od) - 1 : 0];
        const el_t *xp = xplane + od * hw; /* 2D: the plane */
        const size_t ybase = yplane + od * g->oh * ow;
        const size_t grp = depth > 1 ? ROWS3D : ROWS3; /* rows a group */
        for (size_t oy = 0; oy < g->oh; oy += grp) {
          const size_t nr = g->oh - oy < grp ? g->oh - oy : grp;
          const float *p[3 * P3D_ROWS];
#if !SP_EL_F32
          const ptrdiff_t lo = (ptrdiff_t)oy - (ptrdiff_t)g->pt;
          const size_t hi = oy + grp + 2 - g->pt;
          band3_need(&band, xplane, g->w, g->h, lo < 0 ? 0 : (size_t)lo,
                     hi < g->h ? hi : g->h);
#endif
          for (size_t sl = 0; sl < depth; sl++)
            for (size_t i = 0; i < grp + 2; i++) {
              const ptrdiff_t iy = (ptrdiff_t)(oy + i) - (ptrdiff_t)g->pt;
              p[sl * P3D_ROWS + i] = (slice[sl] && iy >= 0 && (size_t)iy < g->h
#if SP_EL_F32
                                          ? slice[sl] + (size_t)iy * g->w
#else /* 2D: the widened row */
                                          ? band3_row(&band, g->w, (size_t)iy)
#endif
                                          : pad) -
                                     g->pl;
            }
          const divisor *dv[ROWS3D];
          for (size_t r = 0; r < grp; r++)
            dv[r] =
                dvt[r < nr && method == P3_AVG ? 3 - sp_avg_taps_h(g, oy + r)
                                               : 0];
          s3.oy = oy;
          s3.bad = vm_range(0, 0);
          const size_t o = ybase + oy * ow;
          if (depth > 1 && nr == ROWS3D)
            nchw3x3s1_row(&s3, method, p, dv, ROWS3D, depth, ow, mid_end, extra,
                          o);
          else if (nr == ROWS3)
            nchw3x3s1_row(&s3, method, p, dv, ROWS3, depth, ow, mid_end, extra,
                          o);
          else
            nchw3x3s1_row(&s3, method, p, dv, nr, depth, ow, mid_end, extra, o);
          if (method != P3_MAX || !vm_any(s3.bad))
            continue;
          /* Some lane met a NaN or (track) a max of -inf: the general
           * compare-and-select redoes the group's rows. */
          for (size_t r = 0; r < nr; r++) {
            size_t ki0, ki1;
            sp_tap_range(oy + r, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
            max_row_nchw(g, io, xp, &in, oy + r, ki0, ki1, o + r * ow, track);
          }
        }
      }
    }
  }
}

void SP_KFN(sp_avgpool_fwd_3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->w + SP_VL + 2 <= ZERO3)
    nchw3x3s1(g, io, P3_AVG, 0, 1);
  else
    SP_KFN(sp_avgpool_fwd_nchw)(g, io);
}

#if SP_EL_F32
/* 3x3x3 AVG, stride 1 (SP_SHAPE_3X3X3S1): the 2D body over the window's
 * three slices; rows too long for the pad row take the ND kernel. */
void SP_FN(sp_avgpool_fwd_3x3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->w + SP_VL + 2 <= ZERO3)
    nchw3x3s1(g, io, P3_AVG, 0, 3);
  else
    SP_FN(sp_avgpool_fwd_nd_nchw)(g, io);
}

/* 3x3x3 AVG backward, stride 1 (SP_SHAPE_3X3X3S1), channels-first. With
 * stride 1 the outputs that cover input element (id, iy, ix) are the
 * 3x3x3 window of the output volume from (id + pf - 2, iy + pt - 2,
 * ix + pl - 2), and the reference adds their shares to dx in output
 * order, which is that window's tap order: dx = +0 + the window's sum over
 * the shares, NaN canonical. So each plane's shares dy / divisor go into
 * a scratch volume (vf_div: the reference's division), and the forward
 * body sums its windows (pads 2 - pad on every side; outputs no window
 * covers sum nothing, +0). Volumes over SHARE3_MAX take the ND kernel. */
#define SHARE3_MAX 8192

void SP_FN(sp_avgpool_bwd_3x3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  const size_t vol = g->od * g->oh * g->ow, plane = g->d * g->h * g->w;
  if (vol > SHARE3_MAX || g->ow + SP_VL + 2 > ZERO3) {
    SP_FN(sp_avgpool_bwd_nd_nchw)(g, io);
    return;
  }
  float share[SHARE3_MAX] __attribute__((aligned(64)));
  float nx[ZERO3] __attribute__((aligned(64))); /* counted columns per ox */
  for (size_t ox = 0; ox < g->ow + SP_VL; ox++)
    nx[ox] = ox < g->ow ? (float)sp_avg_taps_w(g, ox) : 1.0f;
  sp_geom s = *g; /* the gather: the share volume in, dx out */
  s.n = s.c = s.xs = s.ys = 1;
  s.d = g->od;
  s.h = g->oh;
  s.w = g->ow;
  s.od = g->d;
  s.oh = g->h;
  s.ow = g->w;
  s.pf = 2 - g->pf;
  s.pk = 2 - g->pk;
  s.pt = 2 - g->pt;
  s.pb = 2 - g->pb;
  s.pl = 2 - g->pl;
  s.pr = 2 - g->pr;
  s.clamp = 0;
  s.index_type = SIMDPOOL_INDEX_NONE;
  for (size_t pl = 0; pl < g->n * g->c; pl++) {
    const float *dy = io->dy + pl * vol;
    for (size_t od = 0; od < g->od; od++) {
      const size_t nz = sp_avg_taps_d(g, od);
      for (size_t oy = 0; oy < g->oh; oy++) {
        const vf f = vf_set1((float)(nz * sp_avg_taps_h(g, oy)));
        const size_t row = (od * g->oh + oy) * g->ow;
        for (size_t ox = 0; ox < g->ow; ox += SP_VL) {
          const size_t cnt = g->ow - ox < SP_VL ? g->ow - ox : SP_VL;
          store_lanes(share + row + ox,
                      vf_div(load_lanes(dy + row + ox, cnt),
                             vf_mul(f, vf_load(nx + ox))),
                      cnt);
        }
      }
    }
    const sp_io gather = {.x = share, .y = io->dx + pl * plane};
    nchw3x3s1(&s, &gather, P3_SUM, 0, 3);
  }
}

void SP_FN(sp_maxpool_fwd_3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  const int track = g->index_type != SIMDPOOL_INDEX_NONE;
  /* Rows of at most half a vector (7x7 planes on AVX-512) leave most lanes
   * idle: lanes over planes do better there (GoogLeNet's 832x7x7: 76 us
   * against 110). */
  if (g->w + SP_VL + 2 > ZERO3 || (2 * g->ow <= SP_VL && lop_fits(g, 1, 2)))
    SP_FN(sp_maxpool_fwd_nchw)(g, io);
  else if (track)
    nchw3x3s1(g, io, P3_MAX, 1, 1);
  else
    nchw3x3s1(g, io, P3_MAX, 0, 1);
}

void SP_FN(sp_max3x3s1_taps_nchw)(const sp_geom *g, const sp_io *io) {
  nchw3x3s1(g, io, P3_MAX, 1, 1);
}
#endif
