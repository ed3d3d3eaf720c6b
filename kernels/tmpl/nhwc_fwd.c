/* SPDX-License-Identifier: MIT */
/* nhwc_fwd.c — NHWC forward kernels (lanes over channels) of MAX, AVG and
 * LP; compiled once per SIMD ISA and element type (kernels/meson.build,
 * tmpl/elem.h). */
#include "tmpl/vec.h"

#include "tmpl/nhwc.h"

/* Channels [c0, C) of output pixel (oy, ox) of image n (x at xn). */
SP_HOT void max_nhwc_px(const sp_geom *g, const sp_io *io, const el_t *xn,
                        size_t n, size_t oy, size_t ox, size_t c0, int track) {
  const size_t C = g->c;
  const int k3win = g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1;
  const window win = window_at(g, oy, ox);
  const size_t px = (n * g->oh + oy) * g->ow + ox;
  const size_t o = px * C; /* indices: dense */
  el_t *y = EL_Y(io) + px * g->ys;
  const int k3 =
      k3win && win.ki0 == 0 && win.ki1 == 3 && win.kj0 == 0 && win.kj1 == 3;
  size_t c = c0;
  while (c + NHWC_UNROLL * SP_VL <= C &&
         (k3 ? max4_nhwc(g, xn, &win, c, y + c, track, io->indices, o + c, 1)
             : max4_nhwc(g, xn, &win, c, y + c, track, io->indices, o + c, 0)))
    c += NHWC_UNROLL * SP_VL;
  for (; c < C; c += SP_VL) {
    const size_t cn = C - c < SP_VL ? C - c : SP_VL;
    vi t;
    const vf m = max_block_nhwc(g, xn, &win, c, cn, track, g->index_type, &t);
    el_store_lanes_x(y + c, yclamp(g, m), cn, !g->clamp);
    if (track)
      store_index(io->indices, g->index_type, o + c, t, cn);
  }
}

SP_HOT void maxpool_fwd_nhwc_body(const sp_geom *g, const sp_io *io,
                                  int track) {
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * g->xs;
    for (size_t oy = 0; oy < g->oh; oy++)
      for (size_t ox = 0; ox < g->ow; ox++)
        max_nhwc_px(g, io, xn, n, oy, ox, 0, track);
  }
}

void SP_KFN(sp_maxpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  if (el_bmax_if(g, io)) /* S8/U8: byte lanes */
    return;
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    maxpool_fwd_nhwc_body(g, io, 0);
  else
    maxpool_fwd_nhwc_body(g, io, 1);
}

/* ==================================================== MAX 3x3/s2, 3x3/s1, NHWC
 * Per window the MAX step runs over the taps in row-major order; without
 * NaN its winner is the first tap holding the maximum, which is also what
 * folding each window row left to right and then the three row results top
 * to bottom gives (the first row holding the maximum, and in it the first
 * column). Columns first would not: ties between rows and columns would
 * resolve differently. So a group of R output rows folds each of its input
 * rows once per output column and combines three folds per output: rows
 * 2h .. 2h + 2 for output h at stride 2 (R = 2: 7 tracked steps an output
 * instead of 8), rows h .. h + 2 at stride 1 (R = 4: 5 steps). (1x3 rows,
 * one fold an output, measured slower than the general kernel with I64 on
 * audio_max1d, 797 against 399 us, for reasons not found: not taken.) Every
 * input vector is tested for NaN once a column (column a at the first); a row
 * group that met a NaN is redone by the exact blocks. Lanes over channels:
 * output columns outer, channel vectors inner (a whole row per channel vector
 * instead measured 1.3x slower on the stem, from its strided walk). Windows
 * touching padding, and the channels of a partial vector, take the general
 * kernel's blocks. */

/* One input row's fold over columns a, b, c (in that order): the maximum
 * and the winner's column (0, 1, 2) when track. */
SP_HOT vf fold3_nhwc(vf a, vf b, vf c, int track, vi one, vi two, vi *col) {
  if (!track)
    return vf_max_x86(c, vf_max_x86(b, a));
  const vm r1 = vm_gt(b, a);
  vf m = vf_select(r1, a, b);
  const vi i = vi_select(r1, vi_set1(0), one);
  const vm r2 = vm_gt(c, m);
  m = vf_select(r2, m, c);
  *col = vi_select(r2, i, two);
  return m;
}

/* The output of rows f[0..2] (folds and winners' columns), top to bottom:
 * the winner's index less the window's base (ki * k + kj, k the flat row
 * step or 3 for tap numbers). */
SP_HOT vf down3_nhwc(const vf f[3], const vi col[3], int track, vi k1, vi k2,
                     vi *idx) {
  if (!track)
    return vf_max_x86(f[2], vf_max_x86(f[1], f[0]));
  vm r = vm_gt(f[1], f[0]);
  vf m = vf_select(r, f[0], f[1]);
  vi i = vi_select(r, col[0], vi_add(col[1], k1));
  r = vm_gt(f[2], m);
  *idx = vi_select(r, i, vi_add(col[2], k2));
  return vf_select(r, m, f[2]);
}

/* Most output rows a group takes, and the input rows it reads. */
#define ROWS3_R 4
#define ROWS3_NR 6

/* Output column ox of R output rows (R and sy compile-time constants)
 * whose windows are whole: three rows each, sy apart, output h reading
 * row[h * sy ..]; the window's column a at element
 * offset xa of each row; every full channel vector. y[h] and o[h] locate
 * output pixel ox of row h (its first element, its dense index position),
 * base the flat index of row 0's window corner. Clears in *ok the lanes
 * that met a NaN in columns b and c (column a is tested by the caller
 * where it is not an earlier column's b or c); those outputs then hold
 * garbage for the caller to redo. */
SP_HOT void max3_nhwc_col(const sp_geom *g, const el_t *const row[ROWS3_NR],
                          size_t sy, size_t R, size_t xa,
                          el_t *const y[ROWS3_R], const size_t o[ROWS3_R],
                          void *ind, int32_t base, int track,
                          const yclamp_t *cl, vm *ok) {
  const size_t xs = g->xs, cv = g->c / SP_VL * SP_VL, nr = (R - 1) * sy + 3;
  const simdpool_index_type it = g->index_type;
  const int32_t k = it == SIMDPOOL_INDEX_U8 ? 3 : (int32_t)g->w;
  const vi one = vi_set1(1), two_ = vi_set1(2), k1 = vi_set1(k),
           k2 = vi_set1(2 * k);
  vi bv[ROWS3_R];
  for (size_t h = 0; h < R; h++) /* tap numbers: 0 */
    bv[h] = vi_set1(
        it == SIMDPOOL_INDEX_U8 ? 0 : base + (int32_t)(h * sy) * (int32_t)g->w);
  vm good = *ok;
  /* One pointer a row, columns b and c at xs and 2 xs from it: x86
   * addresses those as pointer + xs * scale, where a pointer per column
   * ran out of registers. */
  const el_t *q[ROWS3_NR];
  for (size_t r = 0; r < nr; r++)
    q[r] = row[r] + xa;
  for (size_t c = 0; c < cv; c += SP_VL) {
    vf f[ROWS3_NR];
    vi col[ROWS3_NR];
    for (size_t r = 0; r < nr; r++) {
      const el_t *p = q[r];
      q[r] = p + SP_VL;
      const vf a = el_load_ord(p), b = el_load_ord(p + xs),
               cc = el_load_ord(p + 2 * xs);
      good = vm_andnot(vm_unord(b, cc), good);
      f[r] = fold3_nhwc(a, b, cc, track, one, two_, &col[r]);
    }
    for (size_t h = 0; h < R; h++) {
      vi idx;
      const vf m = down3_nhwc(f + h * sy, col + h * sy, track, k1, k2, &idx);
      el_store_x(y[h] + c, yclamp_v(cl, m), !cl->on);
      if (track)
        store_index(ind, it, o[h] + c, vi_add(idx, bv[h]), SP_VL);
    }
  }
  *ok = good;
}

/* Whether output row oy's windows span three whole input rows. */
static inline int rows3_whole(const sp_geom *g, size_t oy) {
  return oy * g->sh >= g->pt && oy * g->sh - g->pt + 3 <= g->h;
}

/* Where a row group's outputs go. */
typedef struct rows3_out {
  el_t *y;            /* y of the plan */
  void *ind;          /* its indices (track) */
  size_t px[ROWS3_R]; /* output pixel of column 0 of each row */
  int32_t iyw;        /* flat index of the group's first window row */
} rows3_out;

/* Output columns [ox0, ox1) of a group of R rows (sy and R compile-time
 * constants). */
SP_HOT void max3_nhwc_run(const sp_geom *g, const el_t *const row[ROWS3_NR],
                          size_t sy, size_t R, size_t ox0, size_t ox1,
                          const rows3_out *out, int track, const yclamp_t *cl,
                          vm *ok) {
  for (size_t ox = ox0; ox < ox1; ox++) {
    el_t *y[ROWS3_R];
    size_t o[ROWS3_R];
    for (size_t h = 0; h < R; h++) {
      y[h] = out->y + (out->px[h] + ox) * g->ys;
      o[h] = (out->px[h] + ox) * g->c;
    }
    const size_t ix = ox * g->sw - g->pl;
    max3_nhwc_col(g, row, sy, R, ix * g->xs, y, o, out->ind,
                  out->iyw + (int32_t)ix, track, cl, ok);
  }
}

/* 3x3 windows, strides sh = sw (1 or 2), undilated (SP_SHAPE_3X3S2,
 * 3X3S1), any padding. */
SP_HOT void max3_nhwc_body(const sp_geom *g, const sp_io *io, int track) {
  const size_t C = g->c, cv = C / SP_VL * SP_VL, xs = g->xs;
  const size_t sy = g->sh, sx = g->sw;
  /* Groups of R output rows: stride-2 rows share one input row per pair,
   * stride-1 rows two per neighbour (four at a time with 32 vector
   * registers). */
  const size_t rmax = sy == 2 ? 2 : SP_VL == 16 ? 4 : 2;
  const yclamp_t cl = yclamp_of(g);
  /* Output columns [ox0, ox1) have whole windows. */
  const size_t ox0 = (g->pl + sx - 1) / sx;
  size_t ox1 = g->w + g->pl >= 3 ? (g->w + g->pl - 3) / sx + 1 : 0;
  if (ox1 > g->ow)
    ox1 = g->ow;
  if (ox1 < ox0 || cv == 0)
    ox1 = ox0;
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * xs;
    for (size_t oy = 0; oy < g->oh;) {
      if (!rows3_whole(g, oy) || ox0 == ox1) {
        for (size_t ox = 0; ox < g->ow; ox++)
          max_nhwc_px(g, io, xn, n, oy, ox, 0, track);
        oy++;
        continue;
      }
      size_t R = 1;
      while (R < rmax && oy + R < g->oh && rows3_whole(g, oy + R))
        R++;
      const size_t iy = oy * sy - g->pt, nr = (R - 1) * sy + 3;
      const el_t *row[ROWS3_NR];
      for (size_t r = 0; r < ROWS3_NR; r++)
        row[r] = xn + (iy + (r < nr ? r : 0)) * g->w * xs;
      /* Column a of the first whole window; every later a is a b or c. */
      const vm all = vm_range(0, SP_VL);
      vm ok = all;
      const size_t xa0 = (ox0 * sx - g->pl) * xs;
      for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < cv; c += SP_VL) {
          const vf a = el_load_ord(row[r] + xa0 + c);
          ok = vm_andnot(vm_unord(a, a), ok);
        }
      rows3_out out = {EL_Y(io), io->indices, {0}, (int32_t)(iy * g->w)};
      for (size_t h = 0; h < R; h++)
        out.px[h] = (n * g->oh + oy + h) * g->ow;
      /* One loop per group shape (compile-time sy and R). */
      if (sy == 2 && R == 2)
        max3_nhwc_run(g, row, 2, 2, ox0, ox1, &out, track, &cl, &ok);
      else if (sy == 2)
        max3_nhwc_run(g, row, 2, 1, ox0, ox1, &out, track, &cl, &ok);
      else if (R == 4)
        max3_nhwc_run(g, row, 1, 4, ox0, ox1, &out, track, &cl, &ok);
      else if (R == 3)
        max3_nhwc_run(g, row, 1, 3, ox0, ox1, &out, track, &cl, &ok);
      else if (R == 2)
        max3_nhwc_run(g, row, 1, 2, ox0, ox1, &out, track, &cl, &ok);
      else
        max3_nhwc_run(g, row, 1, 1, ox0, ox1, &out, track, &cl, &ok);
      const int bad = vm_any(vm_andnot(ok, all));
      for (size_t h = 0; h < R; h++)
        for (size_t ox = 0; ox < g->ow; ox++)
          if (ox < ox0 || ox >= ox1 || bad) /* NaN: the exact blocks */
            max_nhwc_px(g, io, xn, n, oy + h, ox, 0, track);
          else if (cv < C)
            max_nhwc_px(g, io, xn, n, oy + h, ox, cv, track);
      oy += R;
    }
  }
}

/* SP_SHAPE_3X3S2 (the ResNet stem's 3x3/s2/p1, and the unpadded or ceil-mode
 * 3x3/s2 of AlexNet, GoogLeNet, Inception and SqueezeNet) and SP_SHAPE_3X3S1,
 * every index type. */
void SP_KFN(sp_maxpool_fwd_3x3_nhwc)(const sp_geom *g, const sp_io *io) {
  if (el_bmax_if(g, io)) /* S8/U8 without indices: byte lanes */
    return;
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    max3_nhwc_body(g, io, 0);
  else
    max3_nhwc_body(g, io, 1);
}

#if !SP_EL_INT8 /* S8/U8: MAX only (their AVG is tmpl/qavg.c's) */
/* nv (a compile-time constant) full channel blocks of one output pixel:
 * their sums, then one division test for all of them (div_lanes_n). */
SP_HOT void avg_nhwc_vecs(const sp_geom *g, const el_t *xn, const window *win,
                          const divisor *div, size_t c, el_t *y, size_t nv) {
  vf acc[NHWC_SUM_NV];
  sumn_nhwc(g, xn, win, c, 0, 0, acc, nv);
  div_lanes_n(acc, (int)nv, div, 1);
  for (size_t u = 0; u < nv; u++)
    el_store(y + c + u * SP_VL, yclamp(g, acc[u]));
}

void SP_KFN(sp_avgpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, XS = g->xs;
  const divisor full = divisor_set1((float)(g->kh * g->kw));
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const divisor div = window_divisor(g, &win, oy, ox, &full);
        el_t *y = EL_Y(io) + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        size_t c = 0;
        for (; c + NHWC_SUM_NV * SP_VL <= C; c += NHWC_SUM_NV * SP_VL)
          avg_nhwc_vecs(g, xn, &win, &div, c, y, NHWC_SUM_NV);
        if (c + 4 * SP_VL <= C) {
          avg_nhwc_vecs(g, xn, &win, &div, c, y, 4);
          c += 4 * SP_VL;
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vf acc = vf_zero();
          for (size_t ki = win.ki0; ki < win.ki1; ki++)
            for (size_t kj = win.kj0; kj < win.kj1; kj++)
              acc =
                  vf_add(acc, el_load_lanes_ord(
                                  xn + tap_flat(g, &win, ki, kj) * XS + c, cn));
          el_store_lanes(y + c, yclamp(g, avg_result(acc, &div)), cn);
        }
      }
    }
  }
}

/* ================================================================ 3x3/s1
 * AVG 3x3, stride 1 (Inception), any padding (SP_SHAPE_3X3S1): lanes over
 * channels, windows sliding along each output row. Each output adds its
 * nine taps in row-major order as the reference does, but from the first
 * tap on instead of from +0 (avg_result makes up for it), and padding taps
 * come in as +0, which changes no such sum. */
/* NHWC: tap k of a window column at input column ix (+0 outside the input)
 * for the cn channels from c. */
SP_HOT vf tap3_nhwc(const sp_geom *g, const el_t *const r[3], size_t k,
                    ptrdiff_t ix, size_t c, size_t cn) {
  return r[k] && ix >= 0 && (size_t)ix < g->w
             ? el_load_lanes_ord(r[k] + (size_t)ix * g->xs + c, cn)
             : vf_zero();
}

/* Output columns [ox, end) of row oy of one batch (input rows r[], NULL
 * outside) for the cn channels from c, with the window's first two columns
 * in a*, b*: windows slide along the row, each step loading one new column
 * of three taps. `in`: every window column inside the input and every row
 * there (then dv is the interior's divisor), a compile-time constant. */
/* Outputs per step of the interior's slide (AVX-512). */
#define AVG3_STEP 2

SP_HOT void avg3x3s1_nhwc_run(const sp_geom *g, const divisor *dv,
                              const el_t *const r[3], size_t ox, size_t end,
                              size_t c, size_t cn, int in, vf *a0, vf *a1,
                              vf *a2, vf *b0, vf *b1, vf *b2, el_t *yrow) {
  const size_t C = g->xs, YS = g->ys; /* x and y pixel steps */
#if SP_VL == 16
  if (in && ox < end) {
    /* AVX-512: two outputs a step, their sums independent, one range test
     * for both divisions (div_lanes_n); the divisor and the clamp are
     * local copies, kept in registers across the stores of y. With 16
     * vector registers the second window's spills cost more than that
     * saves (bench: bf16, f16 on AVX2, SSE4.1), and the loop below runs. */
    const divisor d = *dv;
    const yclamp_t yc = yclamp_of(g);
    const el_t *p0 =
        r[0] + ((size_t)((ptrdiff_t)ox - (ptrdiff_t)g->pl) + 2) * C + c;
    const el_t *p1 = p0 + (r[1] - r[0]), *p2 = p0 + (r[2] - r[0]);
    el_t *y = yrow + ox * YS + c;
    /* w[i][k]: window column i of tap row k, columns 0 and 1 carried in. */
    vf w[AVG3_STEP + 2][3] = {{*a0, *a1, *a2}, {*b0, *b1, *b2}};
    for (; ox + AVG3_STEP <= end; ox += AVG3_STEP) {
      for (size_t i = 0; i < AVG3_STEP; i++) {
        w[i + 2][0] = el_load_lanes_ord(p0 + i * C, cn);
        w[i + 2][1] = el_load_lanes_ord(p1 + i * C, cn);
        w[i + 2][2] = el_load_lanes_ord(p2 + i * C, cn);
      }
      vf s[AVG3_STEP];
      for (size_t i = 0; i < AVG3_STEP; i++)
        s[i] = sum3x3(w[i][0], w[i + 1][0], w[i + 2][0], w[i][1], w[i + 1][1],
                      w[i + 2][1], w[i][2], w[i + 1][2], w[i + 2][2]);
      div_lanes_n(s, AVG3_STEP, &d, 1);
      for (size_t i = 0; i < AVG3_STEP; i++)
        el_store_lanes(y + i * YS, yclamp_v(&yc, s[i]), cn);
      for (size_t k = 0; k < 3; k++) {
        w[0][k] = w[AVG3_STEP][k];
        w[1][k] = w[AVG3_STEP + 1][k];
      }
      p0 += AVG3_STEP * C;
      p1 += AVG3_STEP * C;
      p2 += AVG3_STEP * C;
      y += AVG3_STEP * YS;
    }
    for (; ox < end; ox++, p0 += C, p1 += C, p2 += C, y += YS) {
      w[2][0] = el_load_lanes_ord(p0, cn);
      w[2][1] = el_load_lanes_ord(p1, cn);
      w[2][2] = el_load_lanes_ord(p2, cn);
      const vf sum = sum3x3(w[0][0], w[1][0], w[2][0], w[0][1], w[1][1],
                            w[2][1], w[0][2], w[1][2], w[2][2]);
      el_store_lanes(y, yclamp_v(&yc, avg_result(sum, &d)), cn);
      for (size_t k = 0; k < 3; k++) {
        w[0][k] = w[1][k];
        w[1][k] = w[2][k];
      }
    }
    *a0 = w[0][0];
    *a1 = w[0][1];
    *a2 = w[0][2];
    *b0 = w[1][0];
    *b1 = w[1][1];
    *b2 = w[1][2];
    return;
  }
#else
  if (in && ox < end) {
    /* Software-pipelined: each step sums its window, then divides the one
     * before, whose sum is ready, so divisions do not wait on additions. */
    const el_t *p0 =
        r[0] + ((size_t)((ptrdiff_t)ox - (ptrdiff_t)g->pl) + 2) * C + c;
    const el_t *p1 = p0 + (r[1] - r[0]), *p2 = p0 + (r[2] - r[0]);
    el_t *y = yrow + ox * YS + c;
    vf t0 = el_load_lanes_ord(p0, cn), t1 = el_load_lanes_ord(p1, cn),
       t2 = el_load_lanes_ord(p2, cn);
    vf prev = sum3x3(*a0, *b0, t0, *a1, *b1, t1, *a2, *b2, t2);
    for (ox++; ox < end; ox++) {
      *a0 = *b0;
      *a1 = *b1;
      *a2 = *b2;
      *b0 = t0;
      *b1 = t1;
      *b2 = t2;
      p0 += C;
      p1 += C;
      p2 += C;
      t0 = el_load_lanes_ord(p0, cn);
      t1 = el_load_lanes_ord(p1, cn);
      t2 = el_load_lanes_ord(p2, cn);
      const vf sum = sum3x3(*a0, *b0, t0, *a1, *b1, t1, *a2, *b2, t2);
      el_store_lanes(y, yclamp(g, avg_result(prev, dv)), cn);
      prev = sum;
      y += YS;
    }
    el_store_lanes(y, yclamp(g, avg_result(prev, dv)), cn);
    *a0 = *b0;
    *a1 = *b1;
    *a2 = *b2;
    *b0 = t0;
    *b1 = t1;
    *b2 = t2;
    return;
  }
#endif
  for (; ox < end; ox++) {
    const ptrdiff_t ix = (ptrdiff_t)ox - (ptrdiff_t)g->pl + 2;
    vf t0, t1, t2;
    if (in) {
      const size_t e = (size_t)ix * C + c;
      t0 = el_load_lanes_ord(r[0] + e, cn);
      t1 = el_load_lanes_ord(r[1] + e, cn);
      t2 = el_load_lanes_ord(r[2] + e, cn);
    } else {
      t0 = tap3_nhwc(g, r, 0, ix, c, cn);
      t1 = tap3_nhwc(g, r, 1, ix, c, cn);
      t2 = tap3_nhwc(g, r, 2, ix, c, cn);
    }
    const vf sum = sum3x3(*a0, *b0, t0, *a1, *b1, t1, *a2, *b2, t2);
    const divisor *v = in ? dv : &dv[3 - sp_avg_taps_w(g, ox)];
    el_store_lanes(yrow + ox * YS + c, yclamp(g, avg_result(sum, v)), cn);
    *a0 = *b0;
    *a1 = *b1;
    *a2 = *b2;
    *b0 = t0;
    *b1 = t1;
    *b2 = t2;
  }
}

/* Output row oy (input rows r[]; dv: the divisors of its ny rows, by nx)
 * for the cn channels from c. */
SP_HOT void avg3x3s1_nhwc_row(const sp_geom *g, const divisor *dv,
                              const el_t *const r[3], const row_span *in,
                              size_t c, size_t cn, el_t *yrow) {
  const ptrdiff_t pl = (ptrdiff_t)g->pl;
  vf a0 = tap3_nhwc(g, r, 0, -pl, c, cn),
     b0 = tap3_nhwc(g, r, 0, 1 - pl, c, cn);
  vf a1 = tap3_nhwc(g, r, 1, -pl, c, cn),
     b1 = tap3_nhwc(g, r, 1, 1 - pl, c, cn);
  vf a2 = tap3_nhwc(g, r, 2, -pl, c, cn),
     b2 = tap3_nhwc(g, r, 2, 1 - pl, c, cn);
  if (r[0] && r[1] && r[2]) {
    avg3x3s1_nhwc_run(g, dv, r, 0, in->lo, c, cn, 0, &a0, &a1, &a2, &b0, &b1,
                      &b2, yrow);
    avg3x3s1_nhwc_run(g, dv, r, in->lo, in->hi, c, cn, 1, &a0, &a1, &a2, &b0,
                      &b1, &b2, yrow);
    avg3x3s1_nhwc_run(g, dv, r, in->hi, g->ow, c, cn, 0, &a0, &a1, &a2, &b0,
                      &b1, &b2, yrow);
  } else {
    avg3x3s1_nhwc_run(g, dv, r, 0, g->ow, c, cn, 0, &a0, &a1, &a2, &b0, &b1,
                      &b2, yrow);
  }
}

static inline void avg3x3s1_nhwc(const sp_geom *g, const sp_io *io) {
  const row_span in = interior_cols(g);
  /* The divisors d = ny * nx: dv[3 - ny][3 - nx]. */
  divisor dv[3][3];
  for (size_t j = 0; j < 3; j++)
    for (size_t k = 0; k < 3; k++)
      dv[j][k] = divisor_set1((float)((3 - j) * (3 - k)));
  const size_t C = g->c, XS = g->xs;
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      const el_t *r[3];
      for (size_t i = 0; i < 3; i++) {
        const ptrdiff_t iy = (ptrdiff_t)(oy + i) - (ptrdiff_t)g->pt;
        r[i] =
            iy >= 0 && (size_t)iy < g->h ? xn + (size_t)iy * g->w * XS : NULL;
      }
      const size_t ny = sp_avg_taps_h(g, oy);
      el_t *yrow = EL_Y(io) + (n * g->oh + oy) * g->ow * g->ys;
      size_t c = 0;
      for (; c + SP_VL <= C; c += SP_VL)
        avg3x3s1_nhwc_row(g, dv[3 - ny], r, &in, c, SP_VL, yrow);
      if (c < C)
        avg3x3s1_nhwc_row(g, dv[3 - ny], r, &in, c, C - c, yrow);
    }
  }
}

void SP_KFN(sp_avgpool_fwd_3x3s1_nhwc)(const sp_geom *g, const sp_io *io) {
  avg3x3s1_nhwc(g, io);
}
#endif

#if SP_EL_F32 /* LP of bf16/f16: on widened copies */
void SP_FN(sp_lppool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c;
  const int kind = lp_kind(g->p);
  for (size_t n = 0; n < g->n; n++) {
    const el_t *xn = EL_X(io) + n * g->h * g->w * g->xs;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        el_t *y = EL_Y(io) + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        size_t c = 0;
        for (; c + NHWC_UNROLL * SP_VL <= C; c += NHWC_UNROLL * SP_VL) {
          vf acc[NHWC_SUM_NV];
          sumn_nhwc(g, xn, &win, c, 1, kind, acc, NHWC_UNROLL);
          for (int u = 0; u < NHWC_UNROLL; u++)
            el_store(y + c + (size_t)u * SP_VL,
                     yclamp(g, vcanon(lp_root_v(kind, 1.0f / g->p, acc[u]))));
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          el_store_lanes(
              y + c, yclamp(g, vcanon(lp_block_nhwc(g, xn, &win, c, cn, kind))),
              cn);
        }
      }
    }
  }
}
#endif
