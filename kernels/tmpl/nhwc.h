/* SPDX-License-Identifier: MIT */
/* nhwc.h — the NHWC window blocks (lanes over channels) that the forward
 * kernels (tmpl/nhwc_fwd.c, per element type) and the backward ones
 * (tmpl/nhwc.c, which recompute winners and LP norms) share. */
#ifndef SP_TMPL_NHWC_H
#define SP_TMPL_NHWC_H

#include "tmpl/elem.h"

/* ================================================================ NHWC
 * Lanes over channels: every lane shares the window, so tap validity and
 * the AVG divisor are uniform and no lane ever needs a bounds check. */

/* Running max of one channel block over a window; *t receives the winner's
 * index value (flat or tap number per index type `it`; tap numbers when
 * it == NONE and track is set). */
static inline vf max_block_nhwc(const sp_geom *g, const el_t *xn,
                                const window *win, size_t c, size_t cn,
                                int track, simdpool_index_type it, vi *t) {
  const size_t C = g->xs; /* the x pixel step */
  if (!track) {
    /* Without NaN, max(v, m) is the MAX step exactly; a lane that met one
     * (the first tap's too: the loads are el_load_ord's) reruns the block
     * with compare-and-select from exact loads. */
    vf m = el_load_lanes_ord(xn + tap_flat(g, win, win->ki0, win->kj0) * C + c,
                             cn);
    vm bad = vm_unord(m, m);
    for (size_t ki = win->ki0; ki < win->ki1; ki++) {
      for (size_t kj = ki == win->ki0 ? win->kj0 + 1 : win->kj0; kj < win->kj1;
           kj++) {
        const vf v =
            el_load_lanes_ord(xn + tap_flat(g, win, ki, kj) * C + c, cn);
        bad = vm_or(bad, vm_unord(v, v));
        m = vf_max_x86(v, m);
      }
    }
    if (!vm_any(bad)) {
      *t = vi_set1(0);
      return m;
    }
  } else {
    /* "Greater replaces" from the first tap, the index in the same select:
     * the MAX step exactly unless a tap is NaN (el_load_ord's loads). */
    const size_t f0 = tap_flat(g, win, win->ki0, win->kj0);
    vf m = el_load_lanes_ord(xn + f0 * C + c, cn);
    vi idx = vi_set1(index_value(it, win->ki0 * g->kw + win->kj0, f0));
    vm bad = vm_unord(m, m);
    for (size_t ki = win->ki0; ki < win->ki1; ki++) {
      for (size_t kj = ki == win->ki0 ? win->kj0 + 1 : win->kj0; kj < win->kj1;
           kj++) {
        const size_t flat = tap_flat(g, win, ki, kj);
        const vf v = el_load_lanes_ord(xn + flat * C + c, cn);
        bad = vm_or(bad, vm_unord(v, v));
        const vm r = vm_gt(v, m);
        m = vf_select(r, m, v);
        idx =
            vi_select(r, idx, vi_set1(index_value(it, ki * g->kw + kj, flat)));
      }
    }
    if (!vm_any(bad)) {
      *t = idx;
      return m;
    }
  }
  vf m = vf_zero();
  vi idx = vi_set1(0);
  int first = 1;
  for (size_t ki = win->ki0; ki < win->ki1; ki++) {
    for (size_t kj = win->kj0; kj < win->kj1; kj++) {
      const size_t flat = tap_flat(g, win, ki, kj);
      const vf v = el_load_lanes(xn + flat * C + c, cn);
      const int32_t val = track ? index_value(it, ki * g->kw + kj, flat) : 0;
      if (first) {
        m = v;
        idx = vi_set1(val);
        first = 0;
        continue;
      }
      mx_step(v, val, track, &m, &idx);
    }
  }
  *t = idx;
  return m;
}

/* Four full channel blocks of one window at once (C >= 4 * SP_VL): one
 * tap address feeds four loads, and four independent chains hide latency.
 * Each lane still sees its window's taps in row-major order. */
#define NHWC_UNROLL 4

/* MAX of four channel blocks, with the winners' index values when track
 * (written to ind at element o as the plan's index type). Without NaN,
 * "greater replaces" from the first tap is the MAX step exactly (every tap
 * of an NHWC window is valid); returns 0, having written nothing, when a
 * NaN needs the exact path. */
SP_HOT int max4_nhwc(const sp_geom *g, const el_t *xn, const window *win,
                     size_t c, el_t *y, int track, void *ind, size_t o,
                     int k3) {
  const size_t C = g->xs; /* the x pixel step */
  const simdpool_index_type it = g->index_type;
  vf m[NHWC_UNROLL];
  vi t[NHWC_UNROLL];
  for (size_t u = 0; u < NHWC_UNROLL; u++) { /* every window has a tap */
    m[u] = vf_zero();
    t[u] = vi_set1(0);
  }
  vm bad = vm_range(0, 0);
  int first = 1;
  /* k3 (a compile-time constant): a whole undilated 3x3 window, so the
   * nine taps unroll with constant offsets. */
  const size_t ki0 = k3 ? 0 : win->ki0, ki1 = k3 ? 3 : win->ki1;
  const size_t kj0 = k3 ? 0 : win->kj0, kj1 = k3 ? 3 : win->kj1;
  const size_t corner = k3 ? tap_flat(g, win, 0, 0) : 0;
  for (size_t ki = ki0; ki < ki1; ki++) {
    for (size_t kj = kj0; kj < kj1; kj++) {
      const size_t flat =
          k3 ? corner + ki * g->w + kj : tap_flat(g, win, ki, kj);
      const el_t *p = xn + flat * C + c;
      vf v[NHWC_UNROLL];
      for (size_t u = 0; u < NHWC_UNROLL; u++)
        v[u] = el_load_ord(p + u * SP_VL); /* NaN: bad */
      bad = vm_or(bad, vm_or(vm_unord(v[0], v[1]), vm_unord(v[2], v[3])));
      const vi val =
          vi_set1(track ? index_value(it, ki * g->kw + kj, flat) : 0);
      for (size_t u = 0; u < NHWC_UNROLL; u++) {
        if (first) {
          m[u] = v[u];
          t[u] = val;
        } else if (track) {
          const vm r = vm_gt(v[u], m[u]);
          m[u] = vf_select(r, m[u], v[u]);
          t[u] = vi_select(r, t[u], val);
        } else {
          m[u] = vf_max_x86(v[u], m[u]);
        }
      }
      first = 0;
    }
  }
  if (vm_any(bad))
    return 0;
  for (size_t u = 0; u < NHWC_UNROLL; u++) {
    el_store_x(y + u * SP_VL, yclamp(g, m[u]), !g->clamp);
    if (track)
      store_index(ind, it, o + u * SP_VL, t[u], SP_VL);
  }
  return 1;
}

/* The sum of AVG (lp = 0) or of the LP terms of nv (a compile-time
 * constant <= NHWC_SUM_NV) channel blocks: nv independent chains. Four
 * leave the adders idle part of the time (4 chains of 3-4 cycles' latency
 * against 2 additions a cycle); AVG takes 8 where the channels allow. */
#define NHWC_SUM_NV 8
SP_HOT void sumn_nhwc(const sp_geom *g, const el_t *xn, const window *win,
                      size_t c, int lp, int kind, vf acc[NHWC_SUM_NV],
                      size_t nv) {
  const size_t C = g->xs; /* the x pixel step */
  vf a[NHWC_SUM_NV];
  for (size_t u = 0; u < nv; u++)
    a[u] = vf_zero();
  for (size_t ki = win->ki0; ki < win->ki1; ki++) {
    for (size_t kj = win->kj0; kj < win->kj1; kj++) {
      const el_t *p = xn + tap_flat(g, win, ki, kj) * C + c;
      for (size_t u = 0; u < nv; u++) {
        vf v = el_load_ord(p + u * SP_VL); /* NaN: canonical */
        if (lp)
          v = lp_term_v(kind, g->p, v);
        a[u] = vf_add(a[u], v);
      }
    }
  }
  for (size_t u = 0; u < nv; u++)
    acc[u] = a[u];
}

/* y of one LP channel block, before canonicalization. */
static inline vf lp_block_nhwc(const sp_geom *g, const el_t *xn,
                               const window *win, size_t c, size_t cn,
                               int kind) {
  const float pv = g->p, inv_p = 1.0f / g->p;
  vf acc = vf_zero();
  for (size_t ki = win->ki0; ki < win->ki1; ki++)
    for (size_t kj = win->kj0; kj < win->kj1; kj++)
      acc = vf_add(
          acc, lp_term_v(kind, pv,
                         el_load_lanes(
                             xn + tap_flat(g, win, ki, kj) * g->xs + c, cn)));
  return lp_root_v(kind, inv_p, acc);
}

#endif /* SP_TMPL_NHWC_H */
