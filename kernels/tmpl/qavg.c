/* SPDX-License-Identifier: MIT */
/* qavg.c — the quantized average (S8/U8 AVG forward,
 * docs/semantics.md#quantized-avg) for every rank, fixed and adaptive
 * windows, both layouts. 2D fixed windows go by rows: NHWC pixels with
 * lanes over channels, NCHW rows with lanes over output columns (stride
 * 2 through pair sums). NCHW whole planes (global pooling) sum each
 * plane's bytes. The rest (adaptive and 3D windows, NCHW rows shorter
 * than a vector) takes one body whose lanes run over channels (NHWC) or
 * over planes (NCHW: bytes a plane apart, gathered).
 * Each lane sums its window's valid taps in int32 (the order does not
 * matter: integer sums are exact; plan creation bounds windows to 2^23
 * taps, so sum and count * x_zero_point fit), subtracts count *
 * x_zero_point (the sum of q - x_zero_point), and finishes as the scalar
 * reference does: (float)acc * m with m = ratio / divisor, the same float
 * (sp_qavg_m, or qavg_m2 from the axes' counts), clamped to the output range
 * less y_zero_point, rounded to nearest even (the default environment's
 * conversion), plus y_zero_point. Compiled once per SIMD ISA
 * (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/common.h"

void SP_FN(sp_qavgpool_fwd_nchw)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_qavgpool_fwd_nhwc)(const sp_geom *g, const sp_io *io);

/* n <= SP_VL 8-bit elements at p as int32 lanes (the rest zero). */
SP_HOT vi qload(int s8, const uint8_t *p, size_t n) {
  if (n == SP_VL)
    return s8 ? vi_load_s8((const int8_t *)p) : vi_load_u8(p);
  uint8_t lane[SP_VL] = {0};
  memcpy(lane, p, n);
  return s8 ? vi_load_s8((const int8_t *)lane) : vi_load_u8(lane);
}

/* n <= SP_VL lanes of x[2i] + x[2i+1] from the 2n bytes at p. */
SP_HOT vi qpair(int s8, const uint8_t *p, size_t n) {
  if (n == SP_VL)
    return s8 ? vi_pairsum_s8((const int8_t *)p) : vi_pairsum_u8(p);
  uint8_t lane[2 * SP_VL] = {0};
  memcpy(lane, p, 2 * n);
  return s8 ? vi_pairsum_s8((const int8_t *)lane) : vi_pairsum_u8(lane);
}

/* n lanes of 8-bit elements at p, p + s, p + 2s, ... as int32 (the rest
 * zero). */
SP_HOT vi load8(int s8, const uint8_t *p, size_t s, size_t n) {
  if (s == 1)
    return qload(s8, p, n);
  uint8_t lane[SP_VL] = {0};
  for (size_t i = 0; i < n; i++)
    lane[i] = p[i * s];
  return s8 ? vi_load_s8((const int8_t *)lane) : vi_load_u8(lane);
}

/* n lanes of v (values of the type) to p, p + s, ... */
SP_HOT void store8(int s8, uint8_t *p, size_t s, vi v, size_t n) {
  if (s == 1 && n == SP_VL) {
    if (s8)
      vi_store_s8((int8_t *)p, v);
    else
      vi_store_u8(p, v);
    return;
  }
  uint8_t lane[SP_VL];
  if (s8)
    vi_store_s8((int8_t *)lane, v);
  else
    vi_store_u8(lane, v);
  for (size_t i = 0; i < n; i++)
    p[i * s] = lane[i];
}

/* Units are images (NHWC: lanes over channels, groups of SP_VL) or groups
 * of SP_VL planes (NCHW). Element (unit, pixel, lane) of x is at
 * xb + pixel * xp + lane * xl; of y likewise. */
/* The finish of the sums acc (of q - x_zero_point): (float)acc * m,
 * clamped to [lo, hi] (no NaN here, so max/min are the clamp), rounded to
 * nearest even, plus y_zero_point. */
SP_HOT vi qavg_finish(vi acc, vf m, vf lo, vf hi, vi yzp) {
  const vf v = vf_mul(vf_from_vi(acc), m);
  return vi_add(vi_round(vf_min_x86(hi, vf_max_x86(lo, v))), yzp);
}

/* Taps listed per output (qavg_body) up to this many (3x3x3): longer
 * windows (global ones) ran slower from the list than walked. */
#define QAVG_LIST 27

SP_HOT void qavg_body(const sp_geom *g, const sp_io *io, int nhwc, int s8) {
  const size_t in_px = sp_in_plane(g), out_px = sp_out_plane(g);
  const size_t units = nhwc ? g->n : 1;
  const size_t lanes_all = nhwc ? g->c : g->n * g->c;
  const size_t xp = nhwc ? g->xs : 1, xl = nhwc ? 1 : in_px;
  const size_t yp = nhwc ? g->ys : 1, yl = nhwc ? 1 : out_px;
  const vf lo = vf_set1((float)(g->q_lo - g->q_yzp));
  const vf hi = vf_set1((float)(g->q_hi - g->q_yzp));
  const vi yzp = vi_set1(g->q_yzp);
  const uint8_t *const x = io->xv;
  uint8_t *const y = io->yv;
  for (size_t u = 0; u < units; u++) {
    const uint8_t *const xu = x + u * in_px * xp;
    uint8_t *const yu = y + u * out_px * yp;
    size_t o = 0;
    for (size_t od = 0; od < g->od; od++) {
      size_t d0, d1;
      const sp_win wd = sp_win_d(g, od);
      sp_win_valid(wd, g->d, &d0, &d1);
      for (size_t oy = 0; oy < g->oh; oy++) {
        size_t h0, h1;
        const sp_win wh = sp_win_h(g, oy);
        sp_win_valid(wh, g->h, &h0, &h1);
        for (size_t ox = 0; ox < g->ow; ox++, o++) {
          size_t w0, w1;
          const sp_win ww = sp_win_w(g, ox);
          sp_win_valid(ww, g->w, &w0, &w1);
          const size_t count = (d1 - d0) * (h1 - h0) * (w1 - w0);
          const vf m = vf_set1(sp_qavg_m(g, od, oy, ox));
          /* sum (q - zp) = sum q - count * zp; |count * zp| < 2^31 */
          const vi bias = vi_set1(-(int32_t)count * g->q_xzp);
          /* The taps' element offsets, listed once for every vector of
           * lanes when there are few (windows of networks), else walked. */
          size_t tap[QAVG_LIST];
          const int listed = count <= QAVG_LIST;
          if (listed) {
            size_t t = 0;
            for (size_t a = d0; a < d1; a++) {
              const size_t id = (size_t)sp_win_at(wd, a);
              for (size_t b = h0; b < h1; b++) {
                const size_t row = id * g->h + (size_t)sp_win_at(wh, b);
                for (size_t k = w0; k < w1; k++)
                  tap[t++] = (row * g->w + (size_t)sp_win_at(ww, k)) * xp;
              }
            }
          }
          /* With at least a vector of lanes, whole vectors only: the last
           * overlaps the one before (the same values stored again). */
          for (size_t l0 = 0; l0 < lanes_all; l0 += SP_VL) {
            if (l0 + SP_VL > lanes_all && lanes_all >= SP_VL)
              l0 = lanes_all - SP_VL;
            const size_t n = lanes_all - l0 < SP_VL ? lanes_all - l0 : SP_VL;
            const uint8_t *const xl0 = xu + l0 * xl;
            vi acc = bias;
            if (listed && n == SP_VL && xl == 1) {
              for (size_t t = 0; t < count; t++)
                acc = vi_add(acc, load8(s8, xl0 + tap[t], 1, SP_VL));
            } else {
              for (size_t a = d0; a < d1; a++) {
                const size_t id = (size_t)sp_win_at(wd, a);
                for (size_t b = h0; b < h1; b++) {
                  const size_t row = id * g->h + (size_t)sp_win_at(wh, b);
                  for (size_t k = w0; k < w1; k++) {
                    const size_t px = row * g->w + (size_t)sp_win_at(ww, k);
                    acc = vi_add(acc, load8(s8, xl0 + px * xp, xl, n));
                  }
                }
              }
            }
            store8(s8, yu + o * yp + l0 * yl, yl,
                   qavg_finish(acc, m, lo, hi, yzp), n);
          }
        }
      }
    }
  }
}

/* One output of a 2D plan whose window rows start at r0 (nr of them,
 * rstep apart), as one lane of the vector code: the same sum and finish
 * (lrintf: nearest even in the default environment). NCHW border
 * columns. */
SP_HOT uint8_t qavg_one(int s8, const sp_geom *g, const uint8_t *r0,
                        size_t rstep, size_t nr, float m, size_t ox) {
  size_t kj0, kj1;
  sp_tap_range(ox, g->sw, g->pl, g->kw, g->dw, g->w, &kj0, &kj1);
  const uint8_t *const p = r0 + ox * g->sw + kj0 * g->dw - g->pl;
  int32_t acc = -(int32_t)(nr * (kj1 - kj0)) * g->q_xzp;
  for (size_t r = 0; r < nr; r++)
    for (size_t k = 0; k < kj1 - kj0; k++) {
      const uint8_t q = p[r * rstep + k * g->dw];
      acc += s8 ? (int32_t)(int8_t)q : (int32_t)q;
    }
  const float lo = (float)(g->q_lo - g->q_yzp);
  const float hi = (float)(g->q_hi - g->q_yzp);
  float v = (float)acc * m;
  v = v < lo ? lo : v > hi ? hi : v;
  const int32_t r = (int32_t)lrintf(v) + g->q_yzp;
  return s8 ? (uint8_t)(int8_t)r : (uint8_t)r;
}

/* sp_qavg_m of a 2D fixed window from its axes' divisor counts th and
 * tw: the same float (the product is exact either way), without the wide
 * arithmetic that made sp_qavg_m a third of incep_avg3's time. */
SP_HOT float qavg_m2(const sp_geom *g, size_t th, size_t tw) {
  return g->q_ratio / (float)(th * tw);
}

/* The finish of a plan's sums: its clamp and zero point. */
typedef struct qfin {
  vf lo, hi;
  vi yzp;
} qfin;

SP_HOT qfin qfin_of(const sp_geom *g) {
  const qfin f = {vf_set1((float)(g->q_lo - g->q_yzp)),
                  vf_set1((float)(g->q_hi - g->q_yzp)), vi_set1(g->q_yzp)};
  return f;
}

/* NCHW, 2D fixed windows: the inner columns [0, inner) of one output row
 * (windows inside the row, all with the divisor behind m and bias = -taps
 * * x_zero_point), lanes over columns; col0 is the first one's first input
 * column. Stride 1 loads each tap's columns whole, stride 2 with an even
 * kw the sums of their pairs, other strides gather. Called with constants
 * for the common windows, so that the loops unroll. */
SP_HOT void qavg_nchw_row(int s8, const uint8_t *r0, size_t rstep, size_t nr,
                          size_t kw, size_t sw, size_t dw, size_t col0,
                          size_t inner, uint8_t *y, vf m, vi bias, qfin f) {
  const size_t n = inner < SP_VL ? inner : SP_VL;
  for (size_t i = 0; i < inner; i = vec_next(i, inner, SP_VL)) {
    vi acc = bias;
    for (size_t r = 0; r < nr; r++) {
      const uint8_t *const q = r0 + r * rstep + col0 + i * sw;
      if (sw == 1)
        for (size_t k = 0; k < kw; k++)
          acc = vi_add(acc, qload(s8, q + k * dw, n));
      else if (sw == 2 && dw == 1 && kw % 2 == 0)
        for (size_t t = 0; t < kw; t += 2)
          acc = vi_add(acc, qpair(s8, q + t, n));
      else
        for (size_t k = 0; k < kw; k++)
          acc = vi_add(acc, load8(s8, q + k * dw, sw, n));
    }
    store8(s8, y + i, 1, qavg_finish(acc, m, f.lo, f.hi, f.yzp), n);
  }
}

SP_HOT void qavg_nchw2d(const sp_geom *g, const sp_io *io, int s8) {
  const size_t W = g->w, kw = g->kw, sw = g->sw, dw = g->dw, ow = g->ow;
  const size_t rstep = g->dh * W;
  size_t jlo;
  const size_t inner = inner_cols(g, &jlo), jhi = jlo + inner;
  const size_t col0 = jlo * sw - g->pl;
  const int sq = dw == 1 && g->kh == kw; /* square windows */
  const qfin f = qfin_of(g);
  const uint8_t *const x = io->xv;
  uint8_t *y = io->yv;
  for (size_t row = 0; row < g->n * g->c * g->oh; row++, y += ow) {
    size_t oy, nr;
    const uint8_t *const r0 = nchw_row8(g, x, row, &oy, &nr);
    const size_t th = sp_avg_taps_h(g, oy);
    if (inner) {
      const vf m = vf_set1(qavg_m2(g, th, kw));
      const vi bias = vi_set1(-(int32_t)(nr * kw) * g->q_xzp);
      uint8_t *const yi = y + jlo;
      if (sq && nr == 2 && kw == 2 && sw == 2)
        qavg_nchw_row(s8, r0, rstep, 2, 2, 2, 1, col0, inner, yi, m, bias, f);
      else if (sq && nr == 3 && kw == 3 && sw == 1)
        qavg_nchw_row(s8, r0, rstep, 3, 3, 1, 1, col0, inner, yi, m, bias, f);
      else
        qavg_nchw_row(s8, r0, rstep, nr, kw, sw, dw, col0, inner, yi, m, bias,
                      f);
    }
    for (size_t ox = border_next(0, jlo, jhi); ox < ow;
         ox = border_next(ox + 1, jlo, jhi))
      y[ox] = qavg_one(s8, g, r0, rstep, nr,
                       qavg_m2(g, th, sp_avg_taps_w(g, ox)), ox);
  }
}

/* NHWC, 2D fixed windows: one output pixel, lanes over its C channels,
 * the sum of nr x nk taps (rows rstep apart, columns cstep). Called with
 * constants for the common windows. */
SP_HOT void qavg_nhwc_px(int s8, const uint8_t *p0, size_t rstep, size_t cstep,
                         size_t nr, size_t nk, size_t C, uint8_t *y, vf m,
                         vi bias, qfin f) {
  const size_t n = C < SP_VL ? C : SP_VL;
  for (size_t c = 0; c < C; c = vec_next(c, C, SP_VL)) {
    vi acc = bias;
    for (size_t a = 0; a < nr; a++)
      for (size_t k = 0; k < nk; k++)
        acc = vi_add(acc, qload(s8, p0 + a * rstep + k * cstep + c, n));
    store8(s8, y + c, 1, qavg_finish(acc, m, f.lo, f.hi, f.yzp), n);
  }
}

/* The inner pixels [0, cnt) of an output row (windows inside the row:
 * nr x kw taps, all with m and bias), the first one's first tap at p0,
 * the next pixel's sstep further; y the first output pixel, ys apart. */
SP_HOT void qavg_nhwc_inner(int s8, const uint8_t *p0, size_t sstep, size_t cnt,
                            size_t rstep, size_t cstep, size_t nr, size_t kw,
                            size_t C, uint8_t *y, size_t ys, vf m, vi bias,
                            qfin f) {
  for (size_t i = 0; i < cnt; i++)
    qavg_nhwc_px(s8, p0 + i * sstep, rstep, cstep, nr, kw, C, y + i * ys, m,
                 bias, f);
}

SP_HOT void qavg_nhwc2d(const sp_geom *g, const sp_io *io, int s8) {
  const size_t C = g->c, XS = g->xs, kw = g->kw, ys = g->ys;
  const size_t rstep = g->dh * g->w * XS, cstep = g->dw * XS;
  size_t jlo;
  const size_t inner = inner_cols(g, &jlo), jhi = jlo + inner;
  const size_t sstep = g->sw * XS;
  const int sq = g->dw == 1 && g->kh == kw; /* square windows */
  const qfin f = qfin_of(g);
  const uint8_t *const x = io->xv;
  uint8_t *y = io->yv;
  for (size_t b = 0; b < g->n; b++) {
    const uint8_t *const xb = x + b * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++, y += g->ow * ys) {
      size_t nr;
      const uint8_t *const r0 = win_rows8(g, xb, g->w * XS, oy, &nr);
      const size_t th = sp_avg_taps_h(g, oy);
      if (inner) {
        const vf m = vf_set1(qavg_m2(g, th, kw));
        const vi bias = vi_set1(-(int32_t)(nr * kw) * g->q_xzp);
        const uint8_t *const p0 = r0 + (jlo * g->sw - g->pl) * XS;
        uint8_t *const yi = y + jlo * ys;
        if (sq && nr == 2 && kw == 2)
          qavg_nhwc_inner(s8, p0, sstep, inner, rstep, cstep, 2, 2, C, yi, ys,
                          m, bias, f);
        else if (sq && nr == 3 && kw == 3)
          qavg_nhwc_inner(s8, p0, sstep, inner, rstep, cstep, 3, 3, C, yi, ys,
                          m, bias, f);
        else
          qavg_nhwc_inner(s8, p0, sstep, inner, rstep, cstep, nr, kw, C, yi, ys,
                          m, bias, f);
      }
      for (size_t ox = border_next(0, jlo, jhi); ox < g->ow;
           ox = border_next(ox + 1, jlo, jhi)) {
        size_t kj0, kj1;
        sp_tap_range(ox, g->sw, g->pl, kw, g->dw, g->w, &kj0, &kj1);
        const size_t nk = kj1 - kj0;
        qavg_nhwc_px(s8, r0 + (ox * g->sw + kj0 * g->dw - g->pl) * XS, rstep,
                     cstep, nr, nk, C, y + ox * ys,
                     vf_set1(qavg_m2(g, th, sp_avg_taps_w(g, ox))),
                     vi_set1(-(int32_t)(nr * nk) * g->q_xzp), f);
      }
    }
  }
}

/* Whether the plan's one output per plane pools the whole plane (global
 * pooling, fixed or adaptive windows): every input a valid tap. */
SP_HOT int qavg_whole_plane(const sp_geom *g) {
  if (g->od != 1 || g->oh != 1 || g->ow != 1)
    return 0;
  const sp_win a[3] = {sp_win_d(g, 0), sp_win_h(g, 0), sp_win_w(g, 0)};
  const size_t in[3] = {g->d, g->h, g->w};
  for (int i = 0; i < 3; i++) {
    size_t i0, i1;
    sp_win_valid(a[i], in[i], &i0, &i1);
    if (i1 - i0 != in[i] || (a[i].dil != 1 && in[i] != 1))
      return 0;
  }
  return 1;
}

/* NCHW whole-plane windows: each plane's contiguous bytes summed on
 * their own (the compiler's vector code; gathering lanes over planes took
 * a byte per tap per lane), the sums finished as lanes over planes. */
SP_HOT void qavg_nchw_whole(const sp_geom *g, const sp_io *io, int s8) {
  const size_t px = sp_in_plane(g), planes = g->n * g->c;
  const vf m = vf_set1(sp_qavg_m(g, 0, 0, 0));
  const int32_t bias = -(int32_t)px * g->q_xzp;
  const qfin f = qfin_of(g);
  const uint8_t *const x = io->xv;
  uint8_t *const y = io->yv;
  for (size_t p0 = 0; p0 < planes; p0 += SP_VL) {
    const size_t n = planes - p0 < SP_VL ? planes - p0 : SP_VL;
    int32_t sum[SP_VL] = {0};
    for (size_t l = 0; l < n; l++) {
      const uint8_t *const q = x + (p0 + l) * px;
      int32_t acc = bias;
      if (s8)
        for (size_t i = 0; i < px; i++)
          acc += (int8_t)q[i];
      else
        for (size_t i = 0; i < px; i++)
          acc += q[i];
      sum[l] = acc;
    }
    store8(s8, y + p0, 1, qavg_finish(vi_load_i32(sum), m, f.lo, f.hi, f.yzp),
           n);
  }
}

/* Whether NCHW rows have at least a vector of inner columns: shorter
 * ones (small planes, global windows) take lanes over planes. */
SP_HOT int qavg_nchw_rows_ok(const sp_geom *g) {
  size_t jlo;
  return inner_cols(g, &jlo) >= SP_VL;
}

/* The bodies with the dtype a constant (s8), so that each loads and
 * stores its bytes without a test per tap: 2D fixed windows by rows,
 * NCHW whole planes on their own, adaptive windows, depth axes and short
 * NCHW rows by qavg_body. */
SP_HOT void qavg_run(const sp_geom *g, const sp_io *io, int nhwc, int s8) {
  if (!nhwc && qavg_whole_plane(g))
    qavg_nchw_whole(g, io, s8);
  else if (!sp_geom_2d(g) || (!nhwc && !qavg_nchw_rows_ok(g)))
    qavg_body(g, io, nhwc, s8);
  else if (nhwc)
    qavg_nhwc2d(g, io, s8);
  else
    qavg_nchw2d(g, io, s8);
}

void SP_FN(sp_qavgpool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->dtype == SIMDPOOL_S8)
    qavg_run(g, io, 0, 1);
  else
    qavg_run(g, io, 0, 0);
}

void SP_FN(sp_qavgpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  if (g->dtype == SIMDPOOL_S8)
    qavg_run(g, io, 1, 1);
  else
    qavg_run(g, io, 1, 0);
}
