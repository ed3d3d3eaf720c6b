/* SPDX-License-Identifier: MIT */
/* elem.h — the element type of the tensors a part reads and writes. A part
 * is compiled for f32, and the parts listed in kernels/meson.build's
 * dtype_parts once more per element type (-DSP_EL_BF16, _F16, _S8, _U8:
 * the wrappers under tmpl/dt/). Their bodies are the f32 ones: they load
 * elements as f32 lanes, widened exactly, compute with the f32 rules and
 * store each result narrowed once (docs/semantics.md#element-types), in
 * registers, with no f32 copy of a tensor. The narrowing is MAX's (a NaN
 * keeps its payload), which for every other result is the plain one: their
 * NaNs are canonical in f32 already, and the canonical f32 NaN narrows to
 * the type's canonical NaN either way. 8-bit integers take only the ops
 * whose f32 results are their inputs' values (MAX and unpooling), so they
 * narrow by truncating an integer-valued float. */
#ifndef SP_TMPL_ELEM_H
#define SP_TMPL_ELEM_H

#include "tmpl/common.h"

#include "dtype.h"

#if defined(SP_EL_BF16) || defined(SP_EL_F16)
typedef uint16_t el_t;
#elif defined(SP_EL_S8)
typedef int8_t el_t;
#define SP_EL_INT8 1
#elif defined(SP_EL_U8)
typedef uint8_t el_t;
#define SP_EL_INT8 1
#else
typedef float el_t;
#define SP_EL_F32 1
#endif

/* The name of a kernel entry point of this part: name_<isa> for f32,
 * name_<dtype>_<isa> for the others (registry.inc's SP_DTYPE_KERNELS). */
#if defined(SP_EL_BF16)
#define SP_KFN(name) SP_FN(name##_bf16)
#elif defined(SP_EL_F16)
#define SP_KFN(name) SP_FN(name##_f16)
#elif defined(SP_EL_S8)
#define SP_KFN(name) SP_FN(name##_s8)
#elif defined(SP_EL_U8)
#define SP_KFN(name) SP_FN(name##_u8)
#else
#define SP_KFN(name) SP_FN(name)
#endif

/* S8/U8 MAX forward without indices runs tmpl/bmax.c's byte lanes where
 * they apply: 1 when they ran the plan, else 0 (and always for the
 * other types). */
SP_HOT int el_bmax_if(const sp_geom *g, const sp_io *io) {
#if SP_EL_INT8
  return SP_FN(sp_bmax_fwd)(g, io);
#else
  (void)g, (void)io;
  return 0;
#endif
}

/* The tensors of io as elements of this part's type. */
#define EL_X(io) ((const el_t *)(io)->xv)
#define EL_Y(io) ((el_t *)(io)->yv)
#define EL_DY(io) ((const el_t *)(io)->dyv)
#define EL_DX(io) ((el_t *)(io)->dxv)

/* SP_VL elements at p as f32 lanes, and back. */
SP_HOT vf el_load(const el_t *p) {
#if defined(SP_EL_BF16)
  return vf_load_bf16(p);
#elif defined(SP_EL_F16)
  return vf_load_f16(p);
#elif defined(SP_EL_S8)
  return vf_from_vi(vi_load_s8(p));
#elif defined(SP_EL_U8)
  return vf_from_vi(vi_load_u8(p));
#else
  return vf_load(p);
#endif
}

/* el_load for MAX bodies that test their lanes for NaN and redo those
 * from el_load, and for sums (AVG, LP), whose NaN results are written
 * canonical: exact for every number; a NaN loads as some NaN (f16 skips
 * its NaN fix-up, a test and a branch per load). */
SP_HOT vf el_load_ord(const el_t *p) {
#if defined(SP_EL_F16)
  return vf_load_f16_ord(p);
#else
  return el_load(p);
#endif
}

SP_HOT void el_store(el_t *p, vf v) {
#if defined(SP_EL_BF16)
  vf_store_bf16_keep(p, v);
#elif defined(SP_EL_F16)
  vf_store_f16_keep(p, v);
#elif defined(SP_EL_S8)
  vi_store_s8(p, vi_from_vf(v));
#elif defined(SP_EL_U8)
  vi_store_u8(p, vi_from_vf(v));
#else
  vf_store(p, v);
#endif
}

/* One element, the same conversions in scalar code (kernels/dtype.h). */
static inline float el_to_f32(el_t e) {
#if defined(SP_EL_BF16) || defined(SP_EL_F16)
#if defined(SP_EL_BF16)
  const uint32_t b = sp_bf16_widen_bits(e);
#else
  const uint32_t b = sp_f16_widen_bits(e);
#endif
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
#else
  return (float)e;
#endif
}

static inline el_t el_from_f32(float f) {
#if defined(SP_EL_BF16) || defined(SP_EL_F16)
  uint32_t b;
  memcpy(&b, &f, sizeof b);
#if defined(SP_EL_BF16)
  return sp_bf16_keep_bits(b);
#else
  return sp_f16_keep_bits(b);
#endif
#elif defined(SP_EL_F32)
  return f;
#else
  return (el_t)(int)f;
#endif
}

/* n <= SP_VL elements at p as lanes, the rest zero, by el_load (or by
 * el_load_ord, with ord), and back (only n elements written). */
SP_HOT vf el_load_lanes_x(const el_t *p, size_t n, int ord) {
#if defined(SP_EL_F32)
  (void)ord;
  return load_lanes(p, n);
#else
  el_t t[SP_VL];
  if (n < SP_VL) {
    memset(t, 0, sizeof t);
    memcpy(t, p, n * sizeof *p);
    p = t;
  }
  return ord ? el_load_ord(p) : el_load(p);
#endif
}

SP_HOT vf el_load_lanes(const el_t *p, size_t n) {
  return el_load_lanes_x(p, n, 0);
}

SP_HOT vf el_load_lanes_ord(const el_t *p, size_t n) {
  return el_load_lanes_x(p, n, 1);
}

/* Lanes [l0, l1) from p[l0..l1), the rest zero; reads nothing else. */
SP_HOT vf el_load_range(const el_t *p, size_t l0, size_t l1) {
#if defined(SP_EL_F32)
  return vf_load_range(p, l0, l1);
#else
  if (l0 == 0 && l1 == SP_VL)
    return el_load(p);
  el_t t[SP_VL];
  memset(t, 0, sizeof t);
  if (l1 > l0)
    memcpy(t + l0, p + l0, (l1 - l0) * sizeof *p);
  return el_load(t);
#endif
}

/* n <= SP_VL lanes of p[0], p[s], ..., the rest zero (a strided load). */
SP_HOT vf el_gather_lanes(const el_t *p, size_t s, size_t n) {
#if defined(SP_EL_F32)
  return gather_lanes(p, s, n);
#else
  el_t t[SP_VL];
  memset(t, 0, sizeof t);
  for (size_t i = 0; i < n; i++)
    t[i] = p[i * s];
  return el_load(t);
#endif
}

/* SP_VL elements from p to s, bit for bit. */
SP_HOT void el_copy(el_t *s, const el_t *p) {
#if defined(SP_EL_F32)
  vf_store(s, vf_load(p));
#else
  memcpy(s, p, SP_VL * sizeof *p);
#endif
}

/* s[0..SP_VL) = the n < SP_VL elements at p (bit for bit), then pad. */
SP_HOT void el_copy_lanes_or(el_t *s, const el_t *p, size_t n, vf pad) {
#if defined(SP_EL_F32)
  vf_store(s, vf_select(vm_range(0, n), pad, load_lanes(p, n)));
#else
  el_store(s, pad);
  memcpy(s, p, n * sizeof *p);
#endif
}

/* el_store, where exact says that every lane of v is exactly a value of
 * the type (a widened element, +0, the canonical NaN: MAX without a clamp,
 * unpooling, MAX backward's shares): bf16 then takes the upper halves,
 * which rounding would give them anyway. */
SP_HOT void el_store_x(el_t *p, vf v, int exact) {
#if defined(SP_EL_BF16)
  if (exact) {
    vf_store_bf16_exact(p, v);
    return;
  }
#endif
  (void)exact;
  el_store(p, v);
}

SP_HOT void el_store_lanes_x(el_t *p, vf v, size_t n, int exact) {
#if defined(SP_EL_F32)
  (void)exact;
  store_lanes(p, v, n);
#else
  if (n == SP_VL) {
    el_store_x(p, v, exact);
    return;
  }
  el_t t[SP_VL];
  el_store_x(t, v, exact);
  memcpy(p, t, n * sizeof *p);
#endif
}

SP_HOT void el_store_lanes(el_t *p, vf v, size_t n) {
  el_store_lanes_x(p, v, n, 0);
}

/* m <= 2*SP_VL consecutive elements as their even and odd elements (the
 * rest zero), and back (only m elements written; exact as el_store_x's). */
SP_HOT void el_load_elems_x(const el_t *p, size_t m, vf *even, vf *odd,
                            int ord) {
#if defined(SP_EL_BF16)
  if (m == 2 * SP_VL) { /* one load, a shift and a mask */
    vf_load_bf16_pairs(p, even, odd);
    return;
  }
#endif
  const vf a = el_load_lanes_x(p, m < SP_VL ? m : SP_VL, ord);
  const vf b =
      m > SP_VL ? el_load_lanes_x(p + SP_VL, m - SP_VL, ord) : vf_zero();
  vf_deinterleave(a, b, even, odd);
}

SP_HOT void el_load_elems(const el_t *p, size_t m, vf *even, vf *odd) {
  el_load_elems_x(p, m, even, odd, 0);
}

SP_HOT void el_store_elems(el_t *p, size_t m, vf even, vf odd, int exact) {
#if defined(SP_EL_BF16)
  if (m == 2 * SP_VL) { /* each narrowed in its half of a lane, one store */
    if (exact)
      vf_store_bf16_pairs_exact(p, even, odd);
    else
      vf_store_bf16_pairs_keep(p, even, odd);
    return;
  }
#endif
  vf lo, hi;
  vf_interleave(even, odd, &lo, &hi);
  el_store_lanes_x(p, lo, m < SP_VL ? m : SP_VL, exact);
  if (m > SP_VL)
    el_store_lanes_x(p + SP_VL, hi, m - SP_VL, exact);
}

/* out[j] lane i = p[i*s + j] for i, j < SP_VL, as f32 lanes. */
SP_HOT void el_load_transposed(const el_t *p, size_t s, vf *out) {
#if defined(SP_EL_F32)
  vf_load_transposed(p, s, out);
#else
  float t[SP_VL * SP_VL];
  for (size_t i = 0; i < SP_VL; i++)
    vf_store(t + i * SP_VL, el_load(p + i * s));
  vf_load_transposed(t, SP_VL, out);
#endif
}

/* count elements of +0 (all bits clear in every type). */
static inline void el_zero(el_t *p, size_t count) {
  memset(p, 0, count * sizeof *p);
}

/* The same over `pixels` pixels of c elements, `stride` apart. */
static inline void el_zero_px(el_t *p, size_t pixels, size_t c, size_t stride) {
  zero_px_bytes(p, pixels, c, stride, sizeof *p);
}

/* Prefetch of the elements n ahead of p (tmpl/common.h's prefetch_ahead,
 * in bytes of this type). */
SP_HOT void el_prefetch_ahead(const el_t *p, size_t n) {
  for (size_t k = 0; k < n; k += 64 / sizeof(el_t))
    __builtin_prefetch((const void *)((uintptr_t)(p + k) + SP_PREFETCH_AHEAD));
}

#endif /* SP_TMPL_ELEM_H */
