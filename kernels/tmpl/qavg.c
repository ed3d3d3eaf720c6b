/* SPDX-License-Identifier: MIT */
/* qavg.c — the quantized average (S8/U8 AVG forward,
 * docs/semantics.md#quantized-avg) for every rank, fixed and adaptive
 * windows, both layouts: one body whose lanes run over channels (NHWC:
 * contiguous bytes) or over planes (NCHW: bytes a plane apart, gathered),
 * and for NCHW rows of fixed windows lanes over output columns.
 * Each lane sums its window's valid taps in int32 (the order does not
 * matter: integer sums are exact; plan creation bounds windows to 2^23
 * taps, so sum and count * x_zero_point fit), subtracts count *
 * x_zero_point (the sum of q - x_zero_point), and finishes as the scalar
 * reference does: (float)acc * m with m = ratio / divisor computed by the
 * same expression (sp_qavg_m), clamped to the output range less
 * y_zero_point, rounded to nearest even (the default environment's
 * conversion), plus y_zero_point. Compiled once per SIMD ISA
 * (kernels/meson.build). */
#include "tmpl/vec.h"

#include "tmpl/common.h"

void SP_FN(sp_qavgpool_fwd_nchw)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_qavgpool_fwd_nhwc)(const sp_geom *g, const sp_io *io);

/* n lanes of 8-bit elements at p, p + s, p + 2s, ... as int32 (the rest
 * zero). */
SP_HOT vi load8(int s8, const uint8_t *p, size_t s, size_t n) {
  if (s == 1 && n == SP_VL)
    return s8 ? vi_load_s8((const int8_t *)p) : vi_load_u8(p);
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

/* NCHW with fixed windows: lanes over the output columns of a row whose
 * windows lie whole inside it, [lo, hi) (the same taps, count and divisor
 * for all); the border columns one at a time, as one lane. Bytes of one
 * tap are contiguous for stride 1. */
SP_HOT void qavg_nchw_cols(const sp_geom *g, const sp_io *io, int s8, size_t lo,
                           size_t hi) {
  const size_t in_px = sp_in_plane(g), out_px = sp_out_plane(g);
  const float lo_f = (float)(g->q_lo - g->q_yzp);
  const float hi_f = (float)(g->q_hi - g->q_yzp);
  const vf vlo = vf_set1(lo_f), vhi = vf_set1(hi_f);
  const vi yzp = vi_set1(g->q_yzp);
  const uint8_t *const x = io->xv;
  uint8_t *const y = io->yv;
  for (size_t p = 0; p < g->n * g->c; p++) {
    const uint8_t *const xp = x + p * in_px;
    uint8_t *const yp = y + p * out_px;
    size_t o = 0;
    for (size_t od = 0; od < g->od; od++) {
      size_t d0, d1;
      const sp_win wd = sp_win_d(g, od);
      sp_win_valid(wd, g->d, &d0, &d1);
      for (size_t oy = 0; oy < g->oh; oy++, o += g->ow) {
        size_t h0, h1;
        const sp_win wh = sp_win_h(g, oy);
        sp_win_valid(wh, g->h, &h0, &h1);
        for (size_t ox = 0; ox < g->ow; ox++) {
          if (ox == lo && lo < hi) {
            ox = hi - 1;
            continue;
          }
          /* One lane of the vector code below: the same sum, the same
           * finish (lrintf: nearest even in the default environment). */
          size_t w0, w1;
          const sp_win ww = sp_win_w(g, ox);
          sp_win_valid(ww, g->w, &w0, &w1);
          int32_t acc =
              -(int32_t)((d1 - d0) * (h1 - h0) * (w1 - w0)) * g->q_xzp;
          for (size_t a = d0; a < d1; a++) {
            const size_t id = (size_t)sp_win_at(wd, a);
            for (size_t b = h0; b < h1; b++) {
              const uint8_t *const r =
                  xp + (id * g->h + (size_t)sp_win_at(wh, b)) * g->w;
              for (size_t k = w0; k < w1; k++) {
                const uint8_t q = r[sp_win_at(ww, k)];
                acc += s8 ? (int32_t)(int8_t)q : (int32_t)q;
              }
            }
          }
          float v = (float)acc * sp_qavg_m(g, od, oy, ox);
          v = v < lo_f ? lo_f : v > hi_f ? hi_f : v;
          const int32_t r = (int32_t)lrintf(v) + g->q_yzp;
          yp[o + ox] = s8 ? (uint8_t)(int8_t)r : (uint8_t)r;
        }
        if (lo >= hi)
          continue;
        const size_t count = (d1 - d0) * (h1 - h0) * g->kw;
        const vf m = vf_set1(sp_qavg_m(g, od, oy, lo));
        const vi bias = vi_set1(-(int32_t)count * g->q_xzp);
        /* Whole vectors only (hi - lo >= SP_VL): the last one overlaps
         * the one before and stores the same values again (a partial
         * vector through a lane buffer stalled on store forwarding: half
         * of incep_avg3's time). */
        for (size_t ox0 = lo;; ox0 += SP_VL) {
          if (ox0 + SP_VL > hi)
            ox0 = hi - SP_VL;
          const size_t n = SP_VL, col = ox0 * g->sw - g->pl;
          vi acc = bias;
          for (size_t a = d0; a < d1; a++) {
            const size_t id = (size_t)sp_win_at(wd, a);
            for (size_t b = h0; b < h1; b++) {
              const uint8_t *const r =
                  xp + (id * g->h + (size_t)sp_win_at(wh, b)) * g->w + col;
              for (size_t k = 0; k < g->kw; k++)
                acc = vi_add(acc, load8(s8, r + k * g->dw, g->sw, n));
            }
          }
          store8(s8, yp + o + ox0, 1, qavg_finish(acc, m, vlo, vhi, yzp), n);
          if (ox0 + SP_VL == hi)
            break;
        }
      }
    }
  }
}

/* The bodies with the dtype a constant (s8), so that each loads and
 * stores its bytes without a test per tap. */
SP_HOT void qavg_nchw(const sp_geom *g, const sp_io *io, int s8) {
  if (!g->adaptive) {
    /* The columns whose windows lie whole inside the row. */
    const size_t ext = g->dw * (g->kw - 1) + 1;
    const size_t lo = (g->pl + g->sw - 1) / g->sw;
    const size_t end =
        g->w + g->pl >= ext ? (g->w + g->pl - ext) / g->sw + 1 : 0;
    const size_t hi = end < g->ow ? end : g->ow;
    if (hi > lo && hi - lo >= SP_VL) {
      qavg_nchw_cols(g, io, s8, lo, hi);
      return;
    }
  }
  qavg_body(g, io, 0, s8);
}

void SP_FN(sp_qavgpool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->dtype == SIMDPOOL_S8)
    qavg_nchw(g, io, 1);
  else
    qavg_nchw(g, io, 0);
}

void SP_FN(sp_qavgpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  if (g->dtype == SIMDPOOL_S8)
    qavg_body(g, io, 1, 1);
  else
    qavg_body(g, io, 1, 0);
}
