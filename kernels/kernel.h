/* SPDX-License-Identifier: MIT */
/* kernel.h — the internal contract between dispatch and kernels: resolved
 * geometry, I/O, registry types. */
#ifndef SIMDPOOL_KERNEL_H
#define SIMDPOOL_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "simdpool.h"

/* One axis of a block of an adaptive plan (sp_geom.acut). */
typedef struct sp_acut {
  size_t o0, o1, i0, i1;
} sp_acut;

/* Everything a kernel needs, resolved and validated once at plan creation.
 * Kernels may rely on: every size >= 1; oh, ow >= 1; every window holds at
 * least one input element; every byte count fits in ptrdiff_t; pads < extent.
 */
typedef struct sp_geom {
  simdpool_method method;
  simdpool_layout layout;
  simdpool_index_type index_type;
  simdpool_dtype dtype;  /* the element type of x, y, dy and dx */
  size_t n, c, h, w;     /* input shape */
  size_t oh, ow;         /* output shape */
  size_t kh, kw;         /* kernel */
  size_t sh, sw;         /* stride */
  size_t dh, dw;         /* dilation */
  size_t pt, pl, pb, pr; /* resolved pads: top, left, bottom, right */
  /* The depth axis (3D), outermost: input d, output od, kernel kd, stride
   * sd, dilation dd, pads pf (front) and pk (back). 1D and 2D plans have
   * d = od = kd = sd = dd = 1 and no depth pads. A plane of x is then
   * d*h*w elements, element (id, iy, ix) at (id*h + iy)*w + ix: the d
   * slices stacked into one plane of d*h rows (sp_plane_x). */
  size_t d, od, kd, sd, dd, pf, pk;
  /* Adaptive windows: output o of an axis with input in and output out
   * pools [floor(o*in/out), ceil((o+1)*in/out)) (sp_window_of); kernel,
   * stride and dilation are then 1 and every pad 0. */
  int adaptive;
  /* A block of an adaptive plan's outputs (the parallel split): per axis
   * (0 depth, 1 rows, 2 columns), how many outputs of the whole axis come
   * before this geometry's first (o0) and after its last (o1), and how many
   * inputs before its first (i0) and after its last (i1). Its windows are
   * the whole axis's, positioned from its own first input. All 0 unless
   * cut (sp_axis_win). */
  sp_acut acut[3];
  int count_include_pad; /* AVG */
  float p;               /* LP */
  /* Backward kernels whose registry entry has row_range: write only dx rows
   * [row0, row1) of each plane, and with a depth axis of each of its
   * slices (reading every output that covers them);
   * row1 == 0 means every row. Plan creation sets both to 0; only the
   * parallel split sets them, and only for such kernels. */
  size_t row0, row1;
  /* The same along the columns: backward kernels whose registry entry has
   * SP_K_COLS write only dx columns [col0, col1) of the rows they write,
   * reading every output that covers them; col1 == 0 means every column.
   * Only the parallel split of 1D plans sets them. */
  size_t col0, col1;
  /* The flat position, in the caller's whole plane, of this geometry's
   * element 0: flat I32/I64 indices that a backward or unpooling kernel
   * reads name position index - fbase of its plane. Plan creation sets 0;
   * the parallel split sets it for blocks of outputs, and only for kernels
   * with SP_K_FBASE. (Forward writes indices from 0; the split adds the
   * block's offset.) */
  size_t fbase;
  /* Pixel strides in elements: from one pixel's channel 0 to the next
   * pixel's, of x and dx (xs) and of y and dy (ys). NHWC kernels step by
   * them and touch only the first c elements of each pixel; always >= c,
   * and c when dense (and always for NCHW). Indices are dense: their pixel
   * step is c. */
  size_t xs, ys;
  /* Forward's output clamp [clamp_lo, clamp_hi] (clamp set): every
   * forward kernel applies it as it stores y, in f32 before a bf16/f16
   * result is rounded (SIMD: yclamp in tmpl/common.h). */
  int clamp;
  float clamp_lo, clamp_hi;
  /* S8/U8 AVG (docs/semantics.md#quantized-avg): the zero points, the
   * output range [q_lo, q_hi] (quant.y_min/y_max, the dtype's ends
   * resolved) and ratio = x_scale / y_scale in f32. Zero otherwise. */
  int32_t q_xzp, q_yzp, q_lo, q_hi;
  float q_ratio;
  /* Set by plan creation when the call's tensors do not fit the per-core
   * L2 cache (sp_cpu_l2_bytes), so that they stream from farther out.
   * Kernels whose access pattern the hardware prefetchers serve poorly
   * (NCHW rows in short runs) then favour sequential access: software
   * prefetch ahead, one store stream instead of two interleaved ones. It
   * never changes a result, only speed; within L2 those cost more work
   * for nothing. */
  int beyond_l2;
} sp_geom;

/* Is t an integer type (S8, U8: forward only, quantized AVG)? */
static inline int sp_dtype_integer(simdpool_dtype t) {
  return t == SIMDPOOL_S8 || t == SIMDPOOL_U8;
}

/* Bytes of one element of a dtype. */
static inline size_t sp_dtype_size(simdpool_dtype t) {
  return t == SIMDPOOL_F32                         ? 4
         : t == SIMDPOOL_BF16 || t == SIMDPOOL_F16 ? 2
                                                   : 1;
}

/* Is g a 2D (or 1D) plan with fixed windows? The other plans (a depth
 * axis or adaptive windows) are SP_SHAPE_ND's. */
static inline int sp_geom_2d(const sp_geom *g) {
  return g->d == 1 && g->od == 1 && g->kd == 1 && !g->adaptive;
}

/* Elements of one input plane (d*h*w) and one output plane (od*oh*ow). */
static inline size_t sp_in_plane(const sp_geom *g) {
  return g->d * g->h * g->w;
}

static inline size_t sp_out_plane(const sp_geom *g) {
  return g->od * g->oh * g->ow;
}

/* Elements a tensor spans: x and dx (sp_x_elems), y and dy (sp_y_elems).
 * Dense: n*c*h*w (n*c*oh*ow); NHWC with a pixel stride s: (pixels - 1) * s
 * + c, the last pixel needing only its c channels. Bounded by plan
 * creation. */
static inline size_t sp_x_elems(const sp_geom *g) {
  if (g->layout == SIMDPOOL_NCHW || g->xs == g->c)
    return g->n * g->c * sp_in_plane(g);
  return (g->n * sp_in_plane(g) - 1) * g->xs + g->c;
}

static inline size_t sp_y_elems(const sp_geom *g) {
  if (g->layout == SIMDPOOL_NCHW || g->ys == g->c)
    return g->n * g->c * sp_out_plane(g);
  return (g->n * sp_out_plane(g) - 1) * g->ys + g->c;
}

/* Bytes x and dx (sp_x_bytes), y and dy (sp_y_bytes) span: their elements
 * times the dtype's size. What a caller's buffer must hold
 * (simdpool_plan_tensor_bytes) and what the overlap checks compare. */
static inline size_t sp_x_bytes(const sp_geom *g) {
  return sp_x_elems(g) * sp_dtype_size(g->dtype);
}

static inline size_t sp_y_bytes(const sp_geom *g) {
  return sp_y_elems(g) * sp_dtype_size(g->dtype);
}

/* The tensors of one call. Forward reads x and writes y (and indices when the
 * plan has an index type). Backward reads dy (and indices or x) and writes dx;
 * indices is then read only. Unpooling reads y from dy and indices and
 * writes x into dx (the output-shaped tensor it reads, the input-shaped one
 * it writes, as backward); its backward reads dx from x and indices and
 * writes dy into y (as forward). */
typedef struct sp_io {
  /* Each tensor as f32 (what the f32 kernels read and write) or untyped
   * (elements of the plan's dtype: dispatch's byte arithmetic, and kernels
   * of the other element types). The same pointer either way. */
  union {
    const float *x;
    const void *xv;
  };
  union {
    float *y;
    void *yv;
  };
  void *indices;
  union {
    const float *dy;
    const void *dyv;
  };
  union {
    float *dx;
    void *dxv;
  };
} sp_io;

typedef void (*sp_kernel_fn)(const sp_geom *g, const sp_io *io);

/* What one kernel computes. */
typedef enum {
  SP_OP_FWD,        /* forward */
  SP_OP_BWD,        /* backward without indices: MAX recomputes winners from x,
                       LP reads x, AVG reads dy alone */
  SP_OP_BWD_IDX,    /* MAX backward from the indices of forward */
  SP_OP_UNPOOL,     /* max unpooling: dx = 0, then dx_plane[index] = dy */
  SP_OP_UNPOOL_BWD, /* its gradient: y = x_plane[index] */
  SP_OP_COUNT
} sp_op;

/* Which geometries a kernel accepts. Dispatch prefers the specialised classes
 * over GENERAL; the exact predicate of each is sp_shape_matches() in
 * dispatch/plan.c. */
typedef enum {
  SP_SHAPE_GENERAL, /* anything that passed validation */
  SP_SHAPE_2X2S2,   /* 2x2, stride 2, dilation 1, no window touches padding */
  SP_SHAPE_3X3S2P1, /* 3x3, stride 2, dilation 1, pad top/left 1 */
  SP_SHAPE_3X3S1,   /* 3x3, stride 1, dilation 1 */
  SP_SHAPE_GLOBAL,  /* one window covering the whole input, no padding */
  SP_SHAPE_ND,      /* a depth axis or adaptive windows (GENERAL: neither) */
  SP_SHAPE_2X2X2S2, /* 3D 2x2x2, stride 2, dilation 1, no window touches
                       padding (the 2X2S2 rules on every axis) */
  SP_SHAPE_3X3X3S1, /* 3D 3x3x3, stride 1, dilation 1, fixed windows, any
                       padding (the 3X3S1 rules with a depth axis) */
  SP_SHAPE_1X3S2P1, /* 1x3, column stride 2, pad left 1, dilation 1, each
                       output row the one input row at its position (kernel,
                       stride 1 and no padding on the row axis): 1D k3/s2/p1
                       as audio nets pool, on the 3X3S2P1 row folds */
  SP_SHAPE_3X3S2,   /* 3x3, stride 2, dilation 1, any padding (where a plan
                       matches 3X3S2P1 too, the registry's first kernel of
                       either class) */
  SP_SHAPE_COUNT
} sp_shape;

/* Bit masks of accepted element types (registry.inc's SP_KERNEL_T). */
#define SP_DT_BIT(t) (1u << (unsigned)(t))
#define SP_DT_F32 SP_DT_BIT(SIMDPOOL_F32)
#define SP_DT_FLOATS                                                           \
  (SP_DT_BIT(SIMDPOOL_F32) | SP_DT_BIT(SIMDPOOL_BF16) | SP_DT_BIT(SIMDPOOL_F16))
#define SP_DT_INT8 (SP_DT_BIT(SIMDPOOL_S8) | SP_DT_BIT(SIMDPOOL_U8))
#define SP_DT_ALL (SP_DT_FLOATS | SP_DT_INT8)

/* Bit masks of accepted index types. */
#define SP_IDX_BIT(t) (1u << (unsigned)(t))
#define SP_IDX_NONE_ONLY SP_IDX_BIT(SIMDPOOL_INDEX_NONE)
#define SP_IDX_ANY                                                             \
  (SP_IDX_BIT(SIMDPOOL_INDEX_NONE) | SP_IDX_BIT(SIMDPOOL_INDEX_I32) |          \
   SP_IDX_BIT(SIMDPOOL_INDEX_I64) | SP_IDX_BIT(SIMDPOOL_INDEX_U8))
#define SP_IDX_TYPED                                                           \
  (SP_IDX_BIT(SIMDPOOL_INDEX_I32) | SP_IDX_BIT(SIMDPOOL_INDEX_I64) |           \
   SP_IDX_BIT(SIMDPOOL_INDEX_U8))

/* Bytes per index of an index type; 0 for SIMDPOOL_INDEX_NONE. */
static inline size_t sp_index_size(simdpool_index_type t) {
  switch (t) {
  case SIMDPOOL_INDEX_I32:
    return sizeof(int32_t);
  case SIMDPOOL_INDEX_I64:
    return sizeof(int64_t);
  case SIMDPOOL_INDEX_U8:
    return sizeof(uint8_t);
  case SIMDPOOL_INDEX_NONE:
    break;
  }
  return 0;
}

/* What a kernel honours beyond its class (registry.inc's last field). */
enum {
  SP_K_ROWS = 1u,  /* sp_geom's row0/row1, where sp_bwd_rows_ok(g) */
  SP_K_FBASE = 2u, /* sp_geom's fbase: flat I32/I64 indices it reads */
  SP_K_COLS = 4u,  /* sp_geom's col0/col1 */
};

typedef struct sp_kernel_entry {
  const char *name; /* e.g. "maxpool_fwd_nchw_scalar" */
  simdpool_isa isa;
  simdpool_method method;
  simdpool_layout layout;
  sp_op op;
  sp_shape shape;
  unsigned index_mask; /* SP_IDX_* : index types this kernel handles */
  unsigned dtype_mask; /* SP_DT_* : element types this kernel handles */
  unsigned flags;      /* SP_K_* below */
  sp_kernel_fn fn;
} sp_kernel_entry;

/* The registry, built from kernels/registry.inc (dispatch/registry.c). */
extern const sp_kernel_entry sp_registry[];
extern const size_t sp_registry_size;

/* 1 when every flat I32/I64 index of g names a valid tap of its window;
 * 0 when one does not or the pass cannot decide (kernels/index_check.h),
 * at each ISA's vector width; _base is dispatch's baseline build. */
int sp_flat_indices_ok_base(const sp_geom *g, const void *indices);
int sp_flat_indices_ok_sse41(const sp_geom *g, const void *indices);
int sp_flat_indices_ok_avx2(const sp_geom *g, const void *indices);
int sp_flat_indices_ok_avx512(const sp_geom *g, const void *indices);
int sp_flat_indices_ok_neon(const sp_geom *g, const void *indices);
/* The same for 2x2x2/s2 plans (SP_SHAPE_2X2X2S2). */
int sp_2x2x2_indices_ok_base(const sp_geom *g, const void *indices);
int sp_2x2x2_indices_ok_sse41(const sp_geom *g, const void *indices);
int sp_2x2x2_indices_ok_avx2(const sp_geom *g, const void *indices);
int sp_2x2x2_indices_ok_avx512(const sp_geom *g, const void *indices);
int sp_2x2x2_indices_ok_neon(const sp_geom *g, const void *indices);
/* The same for U8 tap numbers (any padding and dilation). */
int sp_u8_indices_ok_base(const sp_geom *g, const void *indices);
int sp_u8_indices_ok_sse41(const sp_geom *g, const void *indices);
int sp_u8_indices_ok_avx2(const sp_geom *g, const void *indices);
int sp_u8_indices_ok_avx512(const sp_geom *g, const void *indices);
int sp_u8_indices_ok_neon(const sp_geom *g, const void *indices);

/* The canonical quiet NaN that every arithmetic NaN result is written as. */
#define SP_CANONICAL_NAN_BITS 0x7fc00000u

/* The AVG division's fast path (kernels/tmpl/common.h, div_by): exact,
 * and proven so by tests/test_divide.c, for every integer divisor d in
 * [1, SP_DIV_FAST_MAX] and every x with SP_DIV_FAST_MIN <= |x| <= FLT_MAX.
 * Everything else divides. */
#define SP_DIV_FAST_MAX 65536.0f
#define SP_DIV_FAST_MIN 0x1p-100f

/* y[i] = x[i] / d[i * d_stride] (d_stride 0: d[0] for all, or 1) with the
 * division the AVG kernels of one ISA use, or with `sum` their output
 * (+0 + x[i]) / d[i * d_stride], NaN canonical; the proof in
 * tests/test_divide.c calls it. Like a kernel it computes and nothing else.
 * Returns 1 when the ISA has the fast path, 0 when it always divides
 * (SSE4.1: no FMA). */
typedef int (*sp_divide_fn)(const float *x, const float *d, size_t d_stride,
                            float *y, size_t n, int sum);

typedef struct sp_divide_entry {
  simdpool_isa isa;
  sp_divide_fn fn;
} sp_divide_entry;

/* One entry per SIMD ISA built (dispatch/registry.c). */
extern const sp_divide_entry sp_divide_table[];
extern const size_t sp_divide_table_size;

/* bf16/f16/s8/u8 <-> f32 over n elements with one ISA's vector layer
 * (kernels/tmpl/convert.c), bit for bit kernels/dtype.h's conversions:
 * widen exactly; narrow once with round to nearest even and the canonical
 * NaN, or with keep MAX's narrowing (a NaN keeps its payload); 8-bit
 * integers narrow from integer-valued floats (keep is ignored). t is not
 * F32. */
typedef void (*sp_widen_fn)(simdpool_dtype t, const void *src, float *dst,
                            size_t n);
typedef void (*sp_narrow_fn)(simdpool_dtype t, int keep, const float *src,
                             void *dst, size_t n);

typedef struct sp_convert_entry {
  simdpool_isa isa;
  sp_widen_fn widen;
  sp_narrow_fn narrow;
} sp_convert_entry;

/* One entry per SIMD ISA built (dispatch/registry.c). */
extern const sp_convert_entry sp_convert_table[];
extern const size_t sp_convert_table_size;

#endif /* SIMDPOOL_KERNEL_H */
