/* SPDX-License-Identifier: MIT */
/* plan.c — plan creation: validation (docs/semantics.md#rejections), shape
 * math (docs/semantics.md#shapes), ISA and kernel choice. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernel_util.h"

/* The largest byte count or coordinate the kernels may meet; everything is
 * computed in size_t and ptrdiff_t, so stay well below both. */
#define SP_SIZE_LIMIT ((size_t)PTRDIFF_MAX)
/* The largest stride, dilation and dilated kernel extent: far beyond any
 * real network, and small enough that the kernels' sums of positions,
 * pads, strides and dilations (each below 2^62) never overflow. */
#define SP_AXIS_LIMIT ((size_t)1 << 40)

/* ------------------------------------------------------------ descriptors */

/* The size a caller's simdpool_desc has when `last` is its last field: that
 * field's end, rounded up to the struct's alignment, which is size_t's (its
 * first member's; asserted below). */
#define SP_DESC_SIZE_THROUGH(last)                                             \
  ((offsetof(simdpool_desc, last) + sizeof(((simdpool_desc *)0)->last) +       \
    _Alignof(size_t) - 1) /                                                    \
   _Alignof(size_t) * _Alignof(size_t))

/* Every simdpool_desc layout this library reads, oldest first: the
 * descriptor of each release that appended fields ends at a later field.
 * Appending fields to simdpool_desc appends a row here (naming the new last
 * field) and gives the new fields a default in simdpool_desc_init_sized();
 * the assertions below fail the build until the last row is the current
 * layout. */
static const size_t desc_layout_sizes[] = {
    SP_DESC_SIZE_THROUGH(isa),   /* 0.1 plus struct_size: the first with it */
    SP_DESC_SIZE_THROUGH(quant), /* 0.2: pixel strides, output clamp,
                                    depth, adaptive windows, dtype and
                                    quantization */
};
#define SP_DESC_LAYOUTS (sizeof desc_layout_sizes / sizeof desc_layout_sizes[0])
_Static_assert(_Alignof(simdpool_desc) == _Alignof(size_t),
               "SP_DESC_SIZE_THROUGH assumes size_t's alignment");
_Static_assert(SP_DESC_SIZE_THROUGH(quant) == sizeof(simdpool_desc),
               "simdpool_desc grew: add its layout to desc_layout_sizes");

void simdpool_desc_init_sized(simdpool_desc *d, size_t struct_size,
                              simdpool_method m, simdpool_layout l, size_t n,
                              size_t c, size_t h, size_t w, size_t kernel_h,
                              size_t kernel_w) {
  if (!d || struct_size < sizeof d->struct_size)
    return;
  simdpool_desc full;
  memset(&full, 0, sizeof full);
  full.struct_size = struct_size;
  full.method = m;
  full.layout = l;
  full.n = n;
  full.c = c;
  full.h = h;
  full.w = w;
  full.kernel_h = kernel_h;
  full.kernel_w = kernel_w;
  full.stride_h = kernel_h;
  full.stride_w = kernel_w;
  full.dilation_h = 1;
  full.dilation_w = 1;
  full.padding = SIMDPOOL_PAD_EXPLICIT;
  full.ceil_mode = 0;
  full.count_include_pad = 1;
  full.p = 2.0f;
  full.index_type = SIMDPOOL_INDEX_NONE;
  full.isa = SIMDPOOL_ISA_AUTO;
  full.x_pixel_stride = 0;
  full.y_pixel_stride = 0;
  full.clamp = 0;
  full.clamp_min = -INFINITY;
  full.clamp_max = INFINITY;
  full.d = full.kernel_d = full.stride_d = full.dilation_d = 1;
  full.pad_front = full.pad_back = 0;
  full.adaptive = 0;
  full.out_d = full.out_h = full.out_w = 0;
  full.dtype = SIMDPOOL_F32;
  full.quant.x_scale = full.quant.y_scale = 1.0f;
  full.quant.x_zero_point = full.quant.y_zero_point = 0;
  full.quant.y_min = INT32_MIN; /* the dtype's whole range */
  full.quant.y_max = INT32_MAX;
  /* The caller's descriptor has struct_size bytes: a shorter (older) one
   * gets the fields it has, a longer (newer) one the fields this library
   * knows, which plan creation then rejects by its size. */
  memcpy(d, &full, struct_size < sizeof full ? struct_size : sizeof full);
}

/* The exported function behind the name the header's macro takes. */
#undef simdpool_desc_init
void simdpool_desc_init(simdpool_desc *d, simdpool_method m, simdpool_layout l,
                        size_t n, size_t c, size_t h, size_t w, size_t kernel_h,
                        size_t kernel_w) {
  simdpool_desc_init_sized(d, sizeof *d, m, l, n, c, h, w, kernel_h, kernel_w);
}

#undef simdpool_desc_init_1d
#undef simdpool_desc_init_3d
#undef simdpool_desc_init_adaptive

/* Writes the fields of full that fit in struct_size bytes to d. */
static void put_desc(simdpool_desc *d, size_t struct_size,
                     const simdpool_desc *full) {
  memcpy(d, full, struct_size < sizeof *full ? struct_size : sizeof *full);
}

void simdpool_desc_init_1d_sized(simdpool_desc *d, size_t struct_size,
                                 simdpool_method m, simdpool_layout l, size_t n,
                                 size_t c, size_t w, size_t kernel_w) {
  if (!d || struct_size < sizeof d->struct_size)
    return;
  simdpool_desc full;
  simdpool_desc_init_sized(&full, struct_size, m, l, n, c, 1, w, 1, kernel_w);
  put_desc(d, struct_size, &full);
}

void simdpool_desc_init_3d_sized(simdpool_desc *d, size_t struct_size,
                                 simdpool_method m, simdpool_layout l, size_t n,
                                 size_t c, size_t dd, size_t h, size_t w,
                                 size_t kernel_d, size_t kernel_h,
                                 size_t kernel_w) {
  if (!d || struct_size < sizeof d->struct_size)
    return;
  simdpool_desc full;
  simdpool_desc_init_sized(&full, struct_size, m, l, n, c, h, w, kernel_h,
                           kernel_w);
  full.d = dd;
  full.kernel_d = full.stride_d = kernel_d;
  put_desc(d, struct_size, &full);
}

void simdpool_desc_init_adaptive_sized(simdpool_desc *d, size_t struct_size,
                                       simdpool_method m, simdpool_layout l,
                                       size_t n, size_t c, size_t dd, size_t h,
                                       size_t w, size_t out_d, size_t out_h,
                                       size_t out_w) {
  if (!d || struct_size < sizeof d->struct_size)
    return;
  simdpool_desc full;
  simdpool_desc_init_sized(&full, struct_size, m, l, n, c, h, w, 1, 1);
  full.d = dd;
  full.adaptive = 1;
  full.out_d = out_d;
  full.out_h = out_h;
  full.out_w = out_w;
  put_desc(d, struct_size, &full);
}

void simdpool_desc_init_1d(simdpool_desc *d, simdpool_method m,
                           simdpool_layout l, size_t n, size_t c, size_t w,
                           size_t kernel_w) {
  simdpool_desc_init_1d_sized(d, sizeof *d, m, l, n, c, w, kernel_w);
}

void simdpool_desc_init_3d(simdpool_desc *d, simdpool_method m,
                           simdpool_layout l, size_t n, size_t c, size_t dd,
                           size_t h, size_t w, size_t kernel_d, size_t kernel_h,
                           size_t kernel_w) {
  simdpool_desc_init_3d_sized(d, sizeof *d, m, l, n, c, dd, h, w, kernel_d,
                              kernel_h, kernel_w);
}

void simdpool_desc_init_adaptive(simdpool_desc *d, simdpool_method m,
                                 simdpool_layout l, size_t n, size_t c,
                                 size_t dd, size_t h, size_t w, size_t out_d,
                                 size_t out_h, size_t out_w) {
  simdpool_desc_init_adaptive_sized(d, sizeof *d, m, l, n, c, dd, h, w, out_d,
                                    out_h, out_w);
}

/* Copies the caller's descriptor d, of the layout d->struct_size names, into
 * *cur of the current layout; fields d lacks get their defaults. */
static simdpool_status read_desc(const simdpool_desc *d, simdpool_desc *cur) {
  const size_t size = d->struct_size;
  int known = 0;
  for (size_t i = 0; i < SP_DESC_LAYOUTS; i++)
    known |= size == desc_layout_sizes[i];
  if (!known) {
    if (size == 0)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "desc.struct_size=0: the descriptor was not filled by "
                     "simdpool_desc_init(), which records its size there");
    if (size > sizeof *cur)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "desc.struct_size=%zu is larger than this library's "
                     "simdpool_desc (%zu bytes): the program was built "
                     "against a newer simdpool.h than this library (%s)",
                     size, sizeof *cur, SIMDPOOL_VERSION_STRING);
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "desc.struct_size=%zu is not the size of a simdpool_desc "
                   "layout this library reads (this one's is %zu bytes); "
                   "fill descriptors with simdpool_desc_init()",
                   size, sizeof *cur);
  }
  simdpool_desc_init_sized(cur, sizeof *cur, d->method, d->layout, d->n, d->c,
                           d->h, d->w, d->kernel_h, d->kernel_w);
  memcpy(cur, d, size);
  return SIMDPOOL_OK;
}

const char *simdpool_version(void) {
  return SIMDPOOL_VERSION_STRING;
}

/* ------------------------------------------------------------ validation */

/* a * b, or 0 with *ok cleared when it exceeds SP_SIZE_LIMIT. */
static size_t mul_checked(size_t a, size_t b, int *ok) {
  if (b != 0 && a > SP_SIZE_LIMIT / b) {
    *ok = 0;
    return 0;
  }
  return a * b;
}

static size_t add_checked(size_t a, size_t b, int *ok) {
  if (a > SP_SIZE_LIMIT - b) {
    *ok = 0;
    return 0;
  }
  return a + b;
}

/* The names of one spatial axis' fields, for messages. */
typedef struct axis_names {
  const char *in, *kernel, *stride, *dilation, *pad_begin, *pad_end, *out;
} axis_names;

static const axis_names axis_h = {
    "h",       "kernel_h",   "stride_h",     "dilation_h",
    "pad_top", "pad_bottom", "output height"};
static const axis_names axis_w = {"w",           "kernel_w", "stride_w",
                                  "dilation_w",  "pad_left", "pad_right",
                                  "output width"};
static const axis_names axis_d = {"d",           "kernel_d",  "stride_d",
                                  "dilation_d",  "pad_front", "pad_back",
                                  "output depth"};

/* Does some tap of window o lie inside the input? Tap i sits at padded
 * position o*s + i*d; the input covers [pb, pb + in). */
static int window_has_input(size_t o, size_t s, size_t k, size_t d, size_t pb,
                            size_t in) {
  const size_t start = o * s;
  size_t first = 0; /* first tap at or after the input's begin */
  if (start < pb)
    first = (pb - start + d - 1) / d;
  return first < k && start + first * d < pb + in;
}

/* Resolves one axis: pads and output size (docs/semantics.md#shapes). */
static simdpool_status resolve_axis(const simdpool_desc *d,
                                    const axis_names *nm, size_t in, size_t k,
                                    size_t s, size_t dil, size_t pad_begin,
                                    size_t pad_end, size_t *pb_out,
                                    size_t *pe_out, size_t *out) {
  int ok = 1;
  if (s > SP_AXIS_LIMIT)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s=%zu is above the limit %zu (2^40)", nm->stride, s,
                   SP_AXIS_LIMIT);
  if (dil > SP_AXIS_LIMIT)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s=%zu is above the limit %zu (2^40)", nm->dilation, dil,
                   SP_AXIS_LIMIT);
  const size_t extent = add_checked(mul_checked(dil, k - 1, &ok), 1, &ok);
  if (!ok || extent > SP_AXIS_LIMIT)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s=%zu with %s=%zu: the dilated kernel extent is above "
                   "the limit %zu (2^40)",
                   nm->kernel, k, nm->dilation, dil, SP_AXIS_LIMIT);
  size_t pb = 0, pe = 0, o;
  switch (d->padding) {
  case SIMDPOOL_PAD_EXPLICIT: {
    pb = pad_begin;
    pe = pad_end;
    if (pb >= extent)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu must be smaller than the dilated kernel extent "
                     "%zu (%s=%zu, %s=%zu)",
                     nm->pad_begin, pb, extent, nm->kernel, k, nm->dilation,
                     dil);
    if (pe >= extent)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu must be smaller than the dilated kernel extent "
                     "%zu (%s=%zu, %s=%zu)",
                     nm->pad_end, pe, extent, nm->kernel, k, nm->dilation, dil);
    const size_t span = add_checked(add_checked(in, pb, &ok), pe, &ok);
    add_checked(span, s, &ok); /* ceil mode reaches up to span + s */
    if (!ok)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu with %s=%zu and %s=%zu: size overflow", nm->in, in,
                     nm->pad_begin, pb, nm->pad_end, pe);
    if (!d->ceil_mode) {
      if (span < extent)
        return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                       "%s would be < 1: %s + %s + %s = %zu is smaller than "
                       "the dilated kernel extent %zu (%s=%zu, %s=%zu)",
                       nm->out, nm->in, nm->pad_begin, nm->pad_end, span,
                       extent, nm->kernel, k, nm->dilation, dil);
      o = (span - extent) / s + 1;
    } else {
      /* ceil((span - extent) / s) + 1, where span - extent may be negative
       * (PyTorch accepts a ceil-mode window larger than the padded input
       * while the deficit is below one stride). */
      if (span >= extent) {
        o = (span - extent + s - 1) / s + 1;
      } else if (extent - span < s) {
        o = 1;
      } else {
        return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                       "%s would be < 1: %s + %s + %s = %zu falls short of the "
                       "dilated kernel extent %zu (%s=%zu, %s=%zu) by at "
                       "least one %s (%zu), even in ceil mode",
                       nm->out, nm->in, nm->pad_begin, nm->pad_end, span,
                       extent, nm->kernel, k, nm->dilation, dil, nm->stride, s);
      }
      /* PyTorch: the last window must start inside the input or the begin
       * padding. */
      if ((o - 1) * s >= in + pb)
        o--;
    }
    break;
  }
  case SIMDPOOL_PAD_VALID:
    if (in < extent)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s would be < 1: %s=%zu is smaller than the dilated "
                     "kernel extent %zu (%s=%zu, %s=%zu) with VALID padding",
                     nm->out, nm->in, in, extent, nm->kernel, k, nm->dilation,
                     dil);
    o = (in - extent) / s + 1;
    break;
  default: { /* SAME_UPPER, SAME_LOWER */
    o = in / s + (in % s != 0);
    const size_t reach = add_checked((o - 1) * s, extent, &ok);
    if (!ok)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu with %s=%zu: size overflow", nm->in, in,
                     nm->kernel, k);
    const size_t total = reach > in ? reach - in : 0;
    const size_t small = total / 2, large = total - small;
    pb = d->padding == SIMDPOOL_PAD_SAME_UPPER ? small : large;
    pe = total - pb;
    break;
  }
  }
  /* A window can miss the input only when dilation steps over all of it
   * (in < dil); with in >= dil every window that overlaps the input's span,
   * which pads < extent and the output rule guarantee, holds an element. */
  if (in < dil) {
    for (size_t i = 0; i < o; i++)
      if (!window_has_input(i, s, k, dil, pb, in))
        return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                       "the window of %s index %zu holds no input element "
                       "(%s=%zu, %s=%zu, %s=%zu, %s=%zu, %s=%zu)",
                       nm->out, i, nm->in, in, nm->kernel, k, nm->dilation, dil,
                       nm->pad_begin, pb, nm->stride, s);
  }
  *pb_out = pb;
  *pe_out = pe;
  *out = o;
  return SIMDPOOL_OK;
}

static int bad_enum(int v, int count) {
  return v < 0 || v >= count;
}

/* The first nonzero explicit pad of d in the order top, left, bottom,
 * right, front, back: its value (0: none) and, in *name, its field. */
static size_t first_pad(const simdpool_desc *d, const char **name) {
  const struct {
    const char *name;
    size_t value;
  } pads[] = {{"pad_top", d->pad_top},       {"pad_left", d->pad_left},
              {"pad_bottom", d->pad_bottom}, {"pad_right", d->pad_right},
              {"pad_front", d->pad_front},   {"pad_back", d->pad_back}};
  for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++)
    if (pads[i].value != 0) {
      *name = pads[i].name;
      return pads[i].value;
    }
  *name = NULL;
  return 0;
}

/* The rules of adaptive windows (docs/semantics.md#adaptive-windows): the
 * output sizes are given exactly when adaptive = 1, and then the window
 * fields keep desc_init_adaptive's values. */
static simdpool_status check_adaptive(const simdpool_desc *d) {
  const struct {
    const char *name;
    size_t value;
  } outs[] = {{"out_d", d->out_d}, {"out_h", d->out_h}, {"out_w", d->out_w}};
  if (d->adaptive != 0 && d->adaptive != 1)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "adaptive=%d: must be 0 (fixed windows) or 1 (adaptive "
                   "windows)",
                   d->adaptive);
  if (!d->adaptive) {
    for (size_t i = 0; i < 3; i++)
      if (outs[i].value != 0)
        return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                       "%s=%zu with adaptive=0: output sizes are given only "
                       "for adaptive windows (fixed windows derive them)",
                       outs[i].name, outs[i].value);
    return SIMDPOOL_OK;
  }
  for (size_t i = 0; i < 3; i++)
    if (outs[i].value == 0)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=0 with adaptive=1: every output size must be >= 1",
                     outs[i].name);
  if (d->method == SIMDPOOL_LP)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "adaptive=1 with method=LP: adaptive windows exist for MAX "
                   "and AVG (PyTorch's AdaptiveMaxPool, AdaptiveAvgPool)");
  const struct {
    const char *name;
    size_t value;
  } ones[] = {{"kernel_d", d->kernel_d},     {"kernel_h", d->kernel_h},
              {"kernel_w", d->kernel_w},     {"stride_d", d->stride_d},
              {"stride_h", d->stride_h},     {"stride_w", d->stride_w},
              {"dilation_d", d->dilation_d}, {"dilation_h", d->dilation_h},
              {"dilation_w", d->dilation_w}};
  for (size_t i = 0; i < sizeof ones / sizeof ones[0]; i++)
    if (ones[i].value != 1)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu with adaptive=1: adaptive windows take their "
                     "extents from the sizes; kernel, stride and dilation "
                     "must stay 1",
                     ones[i].name, ones[i].value);
  if (d->padding != SIMDPOOL_PAD_EXPLICIT)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "padding=SIMDPOOL_PAD_%s with adaptive=1: adaptive windows "
                   "have no padding (SIMDPOOL_PAD_EXPLICIT with every pad 0)",
                   sp_padding_name(d->padding));
  const char *pad;
  const size_t pv = first_pad(d, &pad);
  if (pv)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s=%zu with adaptive=1: adaptive windows have no padding",
                   pad, pv);
  if (d->ceil_mode)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "ceil_mode=1 with adaptive=1: adaptive windows have no "
                   "rounding mode (floor mode, 0)");
  return SIMDPOOL_OK;
}

/* The value range of an integer dtype (S8, U8). */
static void int_range(simdpool_dtype t, int32_t *lo, int32_t *hi) {
  *lo = t == SIMDPOOL_S8 ? -128 : 0;
  *hi = t == SIMDPOOL_S8 ? 127 : 255;
}

/* A bound of the quantization's output clamp: v, or the dtype range's end
 * when v is the sentinel that stands for it (INT32_MIN for y_min,
 * INT32_MAX for y_max). */
static int32_t clamp_bound(int32_t v, int32_t sentinel, int32_t end) {
  return v == sentinel ? end : v;
}

/* ratio = x_scale / y_scale of a quantized AVG plan, in f32 (plan creation
 * runs in the default floating-point environment); the kernels read it
 * from sp_geom's q_ratio. */
static float quant_ratio(const simdpool_quant *q) {
  return q->x_scale / q->y_scale;
}

/* The multiplier of a quantized AVG plan for one divisor, computed as the
 * kernels compute it (docs/semantics.md#quantized-avg). */
static float quant_multiplier(const simdpool_quant *q, size_t divisor,
                              float *ratio) {
  *ratio = quant_ratio(q);
  return *ratio / (float)divisor;
}

/* The rules of the element type that need no output shape
 * (docs/semantics.md#element-types): S8/U8 plans are MAX or quantized AVG
 * forward without a float clamp, and an S8/U8 AVG plan's quantization
 * holds finite positive scales and zero points and a clamp inside the
 * dtype's range. */
static simdpool_status check_dtype(const simdpool_desc *d) {
  if (!sp_dtype_integer(d->dtype))
    return SIMDPOOL_OK;
  const char *t = sp_dtype_name(d->dtype);
  if (d->method == SIMDPOOL_LP)
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "method=LP with dtype=%s: LP pooling exists for F32, BF16 "
                   "and F16 only",
                   t);
  if (d->clamp)
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "clamp=1 with dtype=%s: the output clamp is for "
                   "floating-point dtypes (quantized AVG clamps with "
                   "quant.y_min and quant.y_max)",
                   t);
  if (d->method != SIMDPOOL_AVG)
    return SIMDPOOL_OK; /* MAX ignores quant */
  const simdpool_quant *q = &d->quant;
  const struct {
    const char *name;
    float value;
  } scales[] = {{"x_scale", q->x_scale}, {"y_scale", q->y_scale}};
  for (size_t i = 0; i < 2; i++)
    if (!(isfinite(scales[i].value) && scales[i].value > 0.0f))
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "quant.%s=%g with dtype=%s and method=AVG: a scale must "
                     "be finite and > 0",
                     scales[i].name, (double)scales[i].value, t);
  int32_t lo, hi;
  int_range(d->dtype, &lo, &hi);
  const struct {
    const char *name;
    int32_t value;
  } zps[] = {{"x_zero_point", q->x_zero_point},
             {"y_zero_point", q->y_zero_point}};
  for (size_t i = 0; i < 2; i++)
    if (zps[i].value < lo || zps[i].value > hi)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "quant.%s=%d is outside %s's range [%d, %d]", zps[i].name,
                     (int)zps[i].value, t, (int)lo, (int)hi);
  const int32_t ymin = clamp_bound(q->y_min, INT32_MIN, lo);
  const int32_t ymax = clamp_bound(q->y_max, INT32_MAX, hi);
  if (ymin < lo || ymin > hi || ymax < lo || ymax > hi)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "quant.%s=%d is outside %s's range [%d, %d] (y_min "
                   "INT32_MIN and y_max INT32_MAX stand for its ends)",
                   ymin < lo || ymin > hi ? "y_min" : "y_max",
                   (int)(ymin < lo || ymin > hi ? q->y_min : q->y_max), t,
                   (int)lo, (int)hi);
  if (ymin > ymax)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "quant.y_min=%d is greater than quant.y_max=%d: the "
                   "output range is empty",
                   (int)ymin, (int)ymax);
  return SIMDPOOL_OK;
}

static size_t gcd_size(size_t a, size_t b) {
  while (b) {
    const size_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* The most input elements one window of an axis holds: the kernel
 * (fixed windows), or for adaptive windows ceil((in + out - gcd(in, out))
 * / out): window o holds ceil((r + in) / out) elements, r = o*in mod out,
 * and r reaches every multiple of the gcd below out. */
static size_t axis_max_taps(int adaptive, size_t in, size_t out, size_t k) {
  if (!adaptive)
    return k;
  const size_t top = out - gcd_size(in, out); /* < out, and in + out fits */
  return in / out + (top + in % out + out - 1) / out;
}

/* The rules of S8/U8 AVG that need the windows: at most 2^23 taps in a
 * window (the int32 sum and its conversion to f32 stay exact), and a
 * requantization multiplier m = (x_scale / y_scale) / divisor that is a
 * normal float for every divisor the plan can use: m shrinks as the divisor
 * grows, so divisor 1 and the largest window's tap count bound them all. */
static simdpool_status check_quant_windows(const simdpool_desc *d,
                                           const sp_geom *g) {
  if (!(d->dtype == SIMDPOOL_S8 || d->dtype == SIMDPOOL_U8) ||
      d->method != SIMDPOOL_AVG)
    return SIMDPOOL_OK;
  const char *t = sp_dtype_name(d->dtype);
  const size_t limit = (size_t)1 << 23;
  const size_t taps[3] = {axis_max_taps(g->adaptive, g->d, g->od, g->kd),
                          axis_max_taps(g->adaptive, g->h, g->oh, g->kh),
                          axis_max_taps(g->adaptive, g->w, g->ow, g->kw)};
  size_t window = 1;
  for (size_t i = 0; i < 3; i++)
    window = taps[i] > limit || window * taps[i] > limit ? limit + 1
                                                         : window * taps[i];
  if (window > limit)
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "dtype=%s AVG with windows of up to %zux%zux%zu taps: "
                   "quantized windows may hold at most 2^23 taps",
                   t, taps[0], taps[1], taps[2]);
  float ratio;
  const float m = quant_multiplier(&d->quant, window, &ratio);
  if (!isnormal(ratio) || !isnormal(m))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "quant.x_scale=%g, quant.y_scale=%g: the requantization "
                   "multiplier (x_scale / y_scale) / divisor must be a "
                   "normal float for divisors 1 to %zu, it is %g for %zu",
                   (double)d->quant.x_scale, (double)d->quant.y_scale, window,
                   (double)(isnormal(ratio) ? m : ratio),
                   isnormal(ratio) ? window : (size_t)1);
  return SIMDPOOL_OK;
}

simdpool_status sp_resolve_geom(const simdpool_desc *caller, sp_geom *g) {
  if (!caller)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "desc is NULL");
  simdpool_desc cur;
  const simdpool_status layout_st = read_desc(caller, &cur);
  if (layout_st != SIMDPOOL_OK)
    return layout_st;
  const simdpool_desc *d = &cur;
  if (bad_enum((int)d->method, SIMDPOOL_LP + 1))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "method=%d is not a simdpool_method", (int)d->method);
  if (bad_enum((int)d->layout, SIMDPOOL_NHWC + 1))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "layout=%d is not a simdpool_layout", (int)d->layout);
  if (bad_enum((int)d->padding, SIMDPOOL_PAD_SAME_LOWER + 1))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "padding=%d is not a simdpool_padding", (int)d->padding);
  if (bad_enum((int)d->index_type, SIMDPOOL_INDEX_U8 + 1))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "index_type=%d is not a simdpool_index_type",
                   (int)d->index_type);
  if (bad_enum((int)d->isa, SIMDPOOL_ISA_NEON + 1))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "isa=%d is not a simdpool_isa",
                   (int)d->isa);
  if (bad_enum((int)d->dtype, SIMDPOOL_U8 + 1))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "dtype=%d is not a simdpool_dtype", (int)d->dtype);

  const struct {
    const char *name;
    size_t value;
  } sizes[] = {{"n", d->n},
               {"c", d->c},
               {"h", d->h},
               {"w", d->w},
               {"kernel_h", d->kernel_h},
               {"kernel_w", d->kernel_w},
               {"stride_h", d->stride_h},
               {"stride_w", d->stride_w},
               {"dilation_h", d->dilation_h},
               {"dilation_w", d->dilation_w},
               {"d", d->d},
               {"kernel_d", d->kernel_d},
               {"stride_d", d->stride_d},
               {"dilation_d", d->dilation_d}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (sizes[i].value == 0)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "%s=0: must be >= 1",
                     sizes[i].name);

  if (d->ceil_mode != 0 && d->ceil_mode != 1)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "ceil_mode=%d: must be 0 (floor) or 1 (ceil)", d->ceil_mode);
  if (d->method == SIMDPOOL_AVG && d->count_include_pad != 0 &&
      d->count_include_pad != 1)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "count_include_pad=%d: must be 0 or 1",
                   d->count_include_pad);
  if (d->padding != SIMDPOOL_PAD_EXPLICIT) {
    const char *mode = sp_padding_name(d->padding), *pad;
    const size_t pv = first_pad(d, &pad);
    if (pv)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu with padding=SIMDPOOL_PAD_%s: explicit pads "
                     "are used only with SIMDPOOL_PAD_EXPLICIT",
                     pad, pv, mode);
    if (d->ceil_mode)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "ceil_mode=1 with padding=SIMDPOOL_PAD_%s: ceil mode "
                     "applies only to SIMDPOOL_PAD_EXPLICIT",
                     mode);
  }
  const simdpool_status adaptive_st = check_adaptive(d);
  if (adaptive_st != SIMDPOOL_OK)
    return adaptive_st;
  if (d->method != SIMDPOOL_MAX && d->index_type != SIMDPOOL_INDEX_NONE)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "index_type=%s with method=%s: indices exist only for MAX",
                   sp_index_type_name(d->index_type),
                   sp_method_name(d->method));
#if !SP_HAVE_SLEEF
  if (d->method == SIMDPOOL_LP && isfinite(d->p) && d->p > 0.0f &&
      d->p != 1.0f && d->p != 2.0f)
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "p=%g: LP pooling with p other than 1 and 2 needs SLEEF, "
                   "which this build of simdpool was configured without "
                   "(-Dsleef=disabled or not found)",
                   (double)d->p);
#endif
  if (d->method == SIMDPOOL_LP && !(isfinite(d->p) && d->p > 0.0f))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "p=%g: LP pooling needs a finite p > 0", (double)d->p);

  /* Pixel strides (NHWC): 0 is dense; otherwise at least c. */
  const struct {
    const char *name;
    size_t value;
  } pix[] = {{"x_pixel_stride", d->x_pixel_stride},
             {"y_pixel_stride", d->y_pixel_stride}};
  for (size_t i = 0; i < 2; i++) {
    if (pix[i].value == 0)
      continue;
    if (d->layout != SIMDPOOL_NHWC)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu with layout=NCHW: pixel strides apply only to "
                     "NHWC (0 means dense)",
                     pix[i].name, pix[i].value);
    if (pix[i].value < d->c)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s=%zu is smaller than c=%zu: a pixel stride must be 0 "
                     "(dense) or >= c",
                     pix[i].name, pix[i].value, d->c);
  }
  if (d->clamp != 0 && d->clamp != 1)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "clamp=%d: must be 0 (none) or 1 (clamp y to [clamp_min, "
                   "clamp_max])",
                   d->clamp);
  if (d->clamp && (isnan(d->clamp_min) || isnan(d->clamp_max)))
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s=%g with clamp=1: a clamp bound must not be NaN",
                   isnan(d->clamp_min) ? "clamp_min" : "clamp_max",
                   (double)(isnan(d->clamp_min) ? d->clamp_min : d->clamp_max));
  if (d->clamp && d->clamp_min > d->clamp_max)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "clamp_min=%g is greater than clamp_max=%g: the clamp "
                   "range is empty",
                   (double)d->clamp_min, (double)d->clamp_max);

  const simdpool_status dtype_st = check_dtype(d);
  if (dtype_st != SIMDPOOL_OK)
    return dtype_st;

  memset(g, 0, sizeof *g);
  g->method = d->method;
  g->dtype = d->dtype;
  g->layout = d->layout;
  g->index_type = d->index_type;
  g->n = d->n;
  g->c = d->c;
  g->h = d->h;
  g->w = d->w;
  g->kh = d->kernel_h;
  g->kw = d->kernel_w;
  g->sh = d->stride_h;
  g->sw = d->stride_w;
  g->dh = d->dilation_h;
  g->dw = d->dilation_w;
  g->count_include_pad = d->method == SIMDPOOL_AVG ? d->count_include_pad : 0;
  g->p = d->method == SIMDPOOL_LP ? d->p : 0.0f;
  g->xs = d->x_pixel_stride ? d->x_pixel_stride : d->c;
  g->ys = d->y_pixel_stride ? d->y_pixel_stride : d->c;
  g->clamp = d->clamp;
  g->clamp_lo = d->clamp ? d->clamp_min : -INFINITY;
  g->clamp_hi = d->clamp ? d->clamp_max : INFINITY;
  if (sp_dtype_integer(d->dtype) && d->method == SIMDPOOL_AVG) {
    int32_t lo, hi;
    int_range(d->dtype, &lo, &hi);
    g->q_xzp = d->quant.x_zero_point;
    g->q_yzp = d->quant.y_zero_point;
    g->q_lo = clamp_bound(d->quant.y_min, INT32_MIN, lo);
    g->q_hi = clamp_bound(d->quant.y_max, INT32_MAX, hi);
    g->q_ratio = quant_ratio(&d->quant);
  }

  g->d = d->d;
  g->kd = d->kernel_d;
  g->sd = d->stride_d;
  g->dd = d->dilation_d;
  g->adaptive = d->adaptive;
  if (d->adaptive) {
    /* Every window is non-empty: out >= 1 and in >= 1 give
     * floor(o*in/out) < ceil((o+1)*in/out). */
    g->od = d->out_d;
    g->oh = d->out_h;
    g->ow = d->out_w;
  } else {
    simdpool_status st =
        resolve_axis(d, &axis_d, d->d, d->kernel_d, d->stride_d, d->dilation_d,
                     d->pad_front, d->pad_back, &g->pf, &g->pk, &g->od);
    if (st != SIMDPOOL_OK)
      return st;
    st = resolve_axis(d, &axis_h, d->h, d->kernel_h, d->stride_h, d->dilation_h,
                      d->pad_top, d->pad_bottom, &g->pt, &g->pb, &g->oh);
    if (st != SIMDPOOL_OK)
      return st;
    st = resolve_axis(d, &axis_w, d->w, d->kernel_w, d->stride_w, d->dilation_w,
                      d->pad_left, d->pad_right, &g->pl, &g->pr, &g->ow);
    if (st != SIMDPOOL_OK)
      return st;
  }

  /* Byte counts of every tensor must fit (kernels index with size_t and
   * ptrdiff_t): x and dx, y and dy, and the indices of the plan's type.
   * With pixel strides a tensor of P pixels spans (P - 1) * stride + c
   * elements (the last pixel needs only its channels), and the dense
   * counts of the tensors are bounded too (indices, the kernels' sums). */
  int ok = 1;
  const size_t nc = mul_checked(d->n, d->c, &ok);
  const size_t in_plane = mul_checked(mul_checked(d->d, d->h, &ok), d->w, &ok);
  const size_t out_plane =
      mul_checked(mul_checked(g->od, g->oh, &ok), g->ow, &ok);
  const size_t out_count = mul_checked(nc, out_plane, &ok);
  const size_t in_pixels = mul_checked(d->n, in_plane, &ok);
  const size_t out_pixels = mul_checked(d->n, out_plane, &ok);
  const size_t esize = sp_dtype_size(d->dtype);
  mul_checked(mul_checked(nc, in_plane, &ok), esize, &ok);
  mul_checked(out_count, esize, &ok);
  mul_checked(out_count, sp_index_size(d->index_type), &ok);
  mul_checked(g->xs, esize, &ok); /* a pixel step fits ptrdiff_t */
  mul_checked(g->ys, esize, &ok);
  if (ok && d->layout == SIMDPOOL_NHWC) {
    mul_checked(add_checked(mul_checked(in_pixels - 1, g->xs, &ok), d->c, &ok),
                esize, &ok);
    mul_checked(add_checked(mul_checked(out_pixels - 1, g->ys, &ok), d->c, &ok),
                esize, &ok);
  }
  if (!ok)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "n=%zu c=%zu d=%zu h=%zu w=%zu (output %zux%zux%zu, pixel "
                   "strides %zu, %zu): a tensor's byte count would overflow "
                   "(limit %zu bytes)",
                   d->n, d->c, d->d, d->h, d->w, g->od, g->oh, g->ow, g->xs,
                   g->ys, SP_SIZE_LIMIT);

  if (d->index_type == SIMDPOOL_INDEX_I32 && in_plane > INT32_MAX)
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "index_type=I32 cannot hold positions of an input plane "
                   "of d*h*w=%zu elements (> INT32_MAX); use I64",
                   in_plane);
  if (d->index_type == SIMDPOOL_INDEX_U8 && d->adaptive)
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "index_type=U8 with adaptive=1: tap numbers exist only for "
                   "fixed windows; use I32 or I64");
  if (d->index_type == SIMDPOOL_INDEX_U8 &&
      (d->kernel_d > 256 || d->kernel_h > 256 || d->kernel_w > 256 ||
       d->kernel_d * d->kernel_h * d->kernel_w > 256))
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "index_type=U8 needs kernel_d*kernel_h*kernel_w <= 256, "
                   "got kernel_d=%zu kernel_h=%zu kernel_w=%zu; use I32 or "
                   "I64",
                   d->kernel_d, d->kernel_h, d->kernel_w);
  /* Streaming access when the call moves more than L2 holds (or when
   * the L2 size cannot be read: it costs little in cache, and out of cache
   * it halved the 2x2/s2 NCHW forward's time here). The sum cannot
   * overflow: each term is bounded above. */
  const size_t l2 = sp_cpu_l2_bytes();
  const size_t call_bytes = esize * (nc * in_plane + out_count) +
                            sp_index_size(d->index_type) * out_count;
  g->beyond_l2 = l2 == 0 || call_bytes > l2;
  const simdpool_status quant_st = check_quant_windows(d, g);
  if (quant_st != SIMDPOOL_OK)
    return quant_st;
  return SIMDPOOL_OK;
}

/* ------------------------------------------------------------ views */

/* Adaptive windows of one axis that are fixed windows: window o is
 * [o*s, o*s + k) for one k and s (e.g. 14 -> 7: k = s = 2; 13 -> 6: k = 3,
 * s = 2; any -> 1: the whole axis). Sets *k and *s. */
static int adaptive_uniform(size_t in, size_t out, size_t *k, size_t *s) {
  *k = sp_adaptive_end(0, in, out);
  *s = out > 1 ? sp_adaptive_start(1, in, out) : *k;
  if (*s == 0) /* out > in: windows repeat */
    return 0;
  for (size_t o = 0; o < out; o++) {
    const size_t a = sp_adaptive_start(o, in, out);
    if (a != o * *s || sp_adaptive_end(o, in, out) - a != *k)
      return 0;
  }
  return 1;
}

/* Adaptive AVG divides ((acc / kd) / kh) / kw, fixed AVG acc / (kd*kh*kw):
 * the same bits when every extent but one is 1 (a division by 1 is exact),
 * or for two extents of 2 and one of 1 (two halvings round a subnormal
 * quotient as one division by 4 does, proven over every float by the
 * `divide` test); not for 2, 4 or 2, 2, 2 (x = 5 * 2^-149: (x/2)/4 = 0,
 * x/8 = 2^-149) nor for odd sides. */
static int adaptive_avg_as_fixed(size_t kd, size_t kh, size_t kw) {
  const size_t big = (kd > 1) + (kh > 1) + (kw > 1);
  const size_t twos = (kd == 2) + (kh == 2) + (kw == 2);
  return big <= 1 || (big == 2 && twos == 2);
}

void sp_simplify_geom(sp_geom *g) {
  size_t kd, sd, kh, sh, kw, sw;
  if (g->adaptive && adaptive_uniform(g->d, g->od, &kd, &sd) &&
      adaptive_uniform(g->h, g->oh, &kh, &sh) &&
      adaptive_uniform(g->w, g->ow, &kw, &sw) &&
      (g->method == SIMDPOOL_MAX || adaptive_avg_as_fixed(kd, kh, kw))) {
    /* No padding, so count_include_pad changes nothing. */
    g->adaptive = 0;
    g->kd = kd, g->kh = kh, g->kw = kw;
    g->sd = sd, g->sh = sh, g->sw = sw;
    g->dd = g->dh = g->dw = 1;
  }
  if (g->adaptive || g->kd != 1 || (g->d > 1 && g->sd != 1))
    return;
  /* The depth window is one slice and output slice i reads input slice i:
   * a 2D plan over the slices. With no row padding and windows that tile
   * each slice's rows (h = oh*sh, extent <= sh), the slices stacked into
   * one plane of d*h rows have exactly the same windows, and their flat
   * indices are the 3D ones ((id*h + iy)*w + ix): every index type. Else
   * each slice is a plane of its own, whose flat indices would lack the
   * slice's offset: only for plans without I32/I64 indices. */
  const size_t eh = g->dh * (g->kh - 1) + 1;
  if (g->d == 1) {
    g->od = 1; /* any depth stride and dilation: one slice */
    return;
  }
  if (g->pt == 0 && g->pb == 0 && g->h == g->oh * g->sh && eh <= g->sh) {
    g->h *= g->d;
    g->oh *= g->od;
  } else if (g->index_type == SIMDPOOL_INDEX_NONE ||
             g->index_type == SIMDPOOL_INDEX_U8) {
    if (g->layout == SIMDPOOL_NCHW)
      g->c *= g->d; /* (n, c, d, h, w) is (n, c*d, h, w) */
    else
      g->n *= g->d; /* (n, d, h, w, c) is (n*d, h, w, c) */
  } else {
    return;
  }
  g->d = g->od = 1;
  g->sd = g->dd = 1;
}

/* ------------------------------------------------------------ kernel choice */

/* One axis of a 2x2/stride-2 window class: 2 taps, stride 2, undilated,
 * no leading padding, and every window inside the input. */
static int axis_2s2(size_t k, size_t s, size_t dil, size_t pad, size_t in,
                    size_t out) {
  return k == 2 && s == 2 && dil == 1 && pad == 0 && 2 * out <= in;
}

/* One window per plane, and that window is the whole plane on every axis:
 * fixed windows of each axis' full extent, undilated and unpadded, or
 * adaptive windows with every output size 1 (their windows are [0, in)),
 * unless the parallel split cut the geometry out of a larger output.
 * Any rank: a plane of d*h*w elements, scanned in row-major order. */
static int geom_global(const sp_geom *g) {
  if (g->od != 1 || g->oh != 1 || g->ow != 1)
    return 0;
  if (g->adaptive) /* and not a block of a larger axis (sp_geom.acut) */
    return !memcmp(g->acut, (const sp_acut[3]){{0}}, sizeof g->acut);
  return g->kd == g->d && g->kh == g->h && g->kw == g->w && g->dd == 1 &&
         g->dh == 1 && g->dw == 1 && g->pf == 0 && g->pk == 0 && g->pt == 0 &&
         g->pl == 0 && g->pb == 0 && g->pr == 0;
}

int sp_shape_matches(sp_shape s, const sp_geom *g) {
  const int undilated = g->dh == 1 && g->dw == 1;
  if (s == SP_SHAPE_GLOBAL)
    return geom_global(g);
  if (s == SP_SHAPE_2X2X2S2)
    return !g->adaptive && axis_2s2(g->kd, g->sd, g->dd, g->pf, g->d, g->od) &&
           axis_2s2(g->kh, g->sh, g->dh, g->pt, g->h, g->oh) &&
           axis_2s2(g->kw, g->sw, g->dw, g->pl, g->w, g->ow);
  if (s == SP_SHAPE_3X3X3S1)
    return !g->adaptive && g->kd == 3 && g->kh == 3 && g->kw == 3 &&
           g->sd == 1 && g->sh == 1 && g->sw == 1 && g->dd == 1 && undilated;
  if (s == SP_SHAPE_ND)
    return !sp_geom_2d(g);
  if (!sp_geom_2d(g))
    return 0; /* every other class is 2D */
  switch (s) {
  case SP_SHAPE_GENERAL:
  case SP_SHAPE_ND:
  case SP_SHAPE_2X2X2S2:
  case SP_SHAPE_3X3X3S1:
  case SP_SHAPE_GLOBAL:
    return 1;
  case SP_SHAPE_2X2S2:
    /* No window touches padding: all four taps of every window are valid. */
    return axis_2s2(g->kh, g->sh, g->dh, g->pt, g->h, g->oh) &&
           axis_2s2(g->kw, g->sw, g->dw, g->pl, g->w, g->ow);
  case SP_SHAPE_3X3S2P1:
    return undilated && g->kh == 3 && g->kw == 3 && g->sh == 2 && g->sw == 2 &&
           g->pt == 1 && g->pl == 1;
  case SP_SHAPE_3X3S1:
    return undilated && g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1;
  case SP_SHAPE_3X3S2:
    return undilated && g->kh == 3 && g->kw == 3 && g->sh == 2 && g->sw == 2;
  case SP_SHAPE_1X3S2P1:
    return undilated && g->kh == 1 && g->kw == 3 && g->sh == 1 && g->sw == 2 &&
           g->pt == 0 && g->pb == 0 && g->pl == 1;
  case SP_SHAPE_COUNT:
    break;
  }
  return 0;
}

int sp_op_needed(const sp_geom *g, sp_op op) {
  if ((op == SP_OP_BWD || op == SP_OP_BWD_IDX) && sp_dtype_integer(g->dtype))
    return 0; /* S8/U8: forward only */
  if (op == SP_OP_BWD_IDX || op == SP_OP_UNPOOL || op == SP_OP_UNPOOL_BWD)
    return g->method == SIMDPOOL_MAX && g->index_type != SIMDPOOL_INDEX_NONE;
  return op == SP_OP_FWD || op == SP_OP_BWD;
}

int sp_is_general(const sp_kernel_entry *e) {
  return e->shape == SP_SHAPE_GENERAL || e->shape == SP_SHAPE_ND;
}

/* SIMD kernels track indices and taps in int32 lanes: planes and windows of
 * at most INT32_MAX elements (anything a real network has). */
static int simd_geom_ok(const sp_geom *g) {
  return sp_in_plane(g) <= INT32_MAX && g->kh <= INT32_MAX / g->kw &&
         g->kd <= INT32_MAX / (g->kh * g->kw);
}

static const sp_kernel_entry *pick(simdpool_isa isa, const sp_geom *g, sp_op op,
                                   int general_only) {
  if (isa != SIMDPOOL_ISA_SCALAR && !simd_geom_ok(g))
    return NULL;
  const simdpool_index_type it =
      op == SP_OP_BWD ? SIMDPOOL_INDEX_NONE : g->index_type;
  const sp_kernel_entry *best = NULL;
  for (size_t i = 0; i < sp_registry_size; i++) {
    const sp_kernel_entry *e = &sp_registry[i];
    if (e->isa != isa || e->method != g->method || e->layout != g->layout ||
        e->op != op || !(e->index_mask & SP_IDX_BIT(it)) ||
        !(e->dtype_mask & SP_DT_BIT(g->dtype)) ||
        !sp_shape_matches(e->shape, g) || (general_only && !sp_is_general(e)))
      continue;
    /* Prefer a specialised class over GENERAL and ND (the classes that take
     * every geometry of their rank); among equals, the first. */
    if (!best || (sp_is_general(best) && !sp_is_general(e)))
      best = e;
  }
  return best;
}

const sp_kernel_entry *sp_pick_kernel(simdpool_isa isa, const sp_geom *g,
                                      sp_op op) {
  return pick(isa, g, op, 0);
}

const sp_kernel_entry *sp_pick_general(simdpool_isa isa, const sp_geom *g,
                                       sp_op op) {
  return pick(isa, g, op, 1);
}

int sp_dtype_widens(simdpool_isa isa, const sp_geom *g) {
  return isa != SIMDPOOL_ISA_SCALAR && g->dtype != SIMDPOOL_F32 &&
         (!sp_dtype_integer(g->dtype) || g->method == SIMDPOOL_MAX);
}

const sp_kernel_entry *sp_pick_dtype_kernel(simdpool_isa isa, const sp_geom *g,
                                            sp_op op, int general) {
  const sp_kernel_entry *e = pick(isa, g, op, general);
  if (!sp_dtype_widens(isa, g) || (e && !sp_is_general(e)))
    return e;
  /* The ISA's f32 kernel of a specialised class on widened copies is
   * faster than its GENERAL/ND kernel of the dtype (bench: incep_avg3 bf16
   * and f16, 1.1x to 2x), so a fast path of f32 comes before a native
   * general kernel. */
  sp_geom f = *g;
  f.dtype = SIMDPOOL_F32;
  const sp_kernel_entry *w = pick(isa, &f, op, general);
  return w && (!e || !sp_is_general(w)) ? w : e;
}

const sp_kernel_entry *sp_plan_kernel(const simdpool_plan *plan,
                                      const sp_geom *g, sp_op op, int general) {
  return sp_pick_dtype_kernel(plan->isa, g, op, general);
}

static const char *op_name(sp_op op) {
  switch (op) {
  case SP_OP_FWD:
    return "forward";
  case SP_OP_BWD:
    return "backward";
  case SP_OP_BWD_IDX:
    return "backward from indices";
  case SP_OP_UNPOOL:
    return "unpooling";
  case SP_OP_UNPOOL_BWD:
    return "unpooling's backward";
  case SP_OP_COUNT:
    break;
  }
  return "?";
}

/* Fills plan->kernel for isa; SIMDPOOL_UNSUPPORTED when isa cannot serve the
 * plan: a SIMD ISA on a geometry beyond its 32-bit lanes, or an ISA that
 * lacks an op (only possible for a partly built ISA). */
static simdpool_status pick_all(simdpool_isa isa, simdpool_plan *plan) {
  const sp_geom *g = &plan->geom;
  if (isa != SIMDPOOL_ISA_SCALAR && !simd_geom_ok(g))
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "isa=%s: SIMD kernels count in 32-bit lanes, so the input "
                   "plane (d*h*w=%zu) and the window (kernel_d=%zu, "
                   "kernel_h=%zu, kernel_w=%zu) must have at most INT32_MAX "
                   "elements; isa=scalar (what AUTO picks) has no such limit",
                   simdpool_isa_name(isa), sp_in_plane(g), g->kd, g->kh, g->kw);
  /* bf16, f16, and S8/U8 MAX on a SIMD ISA: the ISA's kernels of the
   * dtype where it has them (the fast paths: kernels/tmpl/elem.h), else
   * its f32 kernels on widened copies (every value of these types is an
   * f32). The quantized average is not an f32 computation: it has kernels
   * of its own (SP_DT_INT8). */
  static const char *const suffix[] = {"f32", "bf16", "f16", "s8", "u8"};
  plan->isa = isa;
  plan->widen = sp_dtype_widens(isa, g);
  for (int op = 0; op < SP_OP_COUNT; op++) {
    plan->kernel[op] = plan->any_index[op] = NULL;
    plan->name[op][0] = '\0';
    if (!sp_op_needed(&plan->geom, (sp_op)op))
      continue;
    plan->kernel[op] = sp_plan_kernel(plan, g, (sp_op)op, 0);
    if (op == SP_OP_UNPOOL || op == SP_OP_UNPOOL_BWD)
      plan->any_index[op] = sp_plan_kernel(plan, g, (sp_op)op, 1);
    if (plan->kernel[op] && !sp_kernel_takes(plan->kernel[op], g->dtype))
      snprintf(plan->name[op], sizeof plan->name[op], "%s+%s",
               plan->kernel[op]->name, suffix[g->dtype]);
    if (!plan->kernel[op] || ((op == SP_OP_UNPOOL || op == SP_OP_UNPOOL_BWD) &&
                              !plan->any_index[op]))
      return sp_fail(SIMDPOOL_UNSUPPORTED,
                     "isa=%s has no kernel for %s of this "
                     "method/layout/index type",
                     simdpool_isa_name(isa), op_name((sp_op)op));
  }
  return SIMDPOOL_OK;
}

/* Do a and b spell the same word, ignoring ASCII letter case? */
static int same_word_any_case(const char *a, const char *b) {
  for (;; a++, b++) {
    const char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
    const char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
    if (ca != cb)
      return 0;
    if (!ca)
      return 1;
  }
}

/* The ISA the caller forces: desc.isa, else SIMDPOOL_ISA (its names in any
 * letter case), else AUTO. */
static simdpool_status requested_isa(const simdpool_desc *d,
                                     simdpool_isa *isa) {
  *isa = d->isa;
  if (d->isa != SIMDPOOL_ISA_AUTO)
    return SIMDPOOL_OK;
  const char *env = getenv("SIMDPOOL_ISA");
  if (!env || !*env)
    return SIMDPOOL_OK;
  for (int i = SIMDPOOL_ISA_AUTO; i <= SIMDPOOL_ISA_NEON; i++) {
    if (same_word_any_case(env, simdpool_isa_name((simdpool_isa)i))) {
      *isa = (simdpool_isa)i;
      return SIMDPOOL_OK;
    }
  }
  return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                 "SIMDPOOL_ISA='%.64s' is not an ISA name (expected auto, "
                 "scalar, sse41, avx2, avx512 or neon, in any letter case)",
                 env);
}

/* Plan creation proper; simdpool_plan_create runs it in the default
 * floating-point environment. */
static simdpool_status plan_create(const simdpool_desc *d,
                                   simdpool_plan **out) {
  if (!out)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  sp_geom g;
  simdpool_status st = sp_resolve_geom(d, &g);
  if (st != SIMDPOOL_OK)
    return st;
  simdpool_isa isa;
  st = requested_isa(d, &isa);
  if (st != SIMDPOOL_OK)
    return st;
  const char *origin =
      d->isa != SIMDPOOL_ISA_AUTO ? "desc.isa" : "SIMDPOOL_ISA";
  if (isa != SIMDPOOL_ISA_AUTO && !sp_isa_built(isa))
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "%s=%s: this build of simdpool has no %s kernels", origin,
                   simdpool_isa_name(isa), simdpool_isa_name(isa));
  if (isa != SIMDPOOL_ISA_AUTO && !sp_cpu_runs(isa))
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "%s=%s: this CPU (or OS) cannot run %s kernels", origin,
                   simdpool_isa_name(isa), simdpool_isa_name(isa));

  simdpool_plan *plan = malloc(sizeof *plan);
  if (!plan)
    return sp_fail(SIMDPOOL_OUT_OF_MEMORY, "cannot allocate a plan");
  plan->out_d = g.od;
  plan->out_h = g.oh;
  plan->out_w = g.ow;
  sp_simplify_geom(&g);
  plan->geom = g;
  snprintf(plan->clamp_text, sizeof plan->clamp_text,
           "clamp_min=%g, clamp_max=%g", (double)g.clamp_lo,
           (double)g.clamp_hi);
  if (isa != SIMDPOOL_ISA_AUTO) {
    st = pick_all(isa, plan);
  } else {
    /* The best ISA this build and CPU run that covers every op of the plan;
     * scalar covers all. */
    st = SIMDPOOL_UNSUPPORTED;
    for (int i = SIMDPOOL_ISA_NEON; i >= SIMDPOOL_ISA_SCALAR && st; i--)
      if (simdpool_isa_supported((simdpool_isa)i))
        st = pick_all((simdpool_isa)i, plan);
  }
  if (st != SIMDPOOL_OK) {
    free(plan);
    return st;
  }
  *out = plan;
  return SIMDPOOL_OK;
}

typedef struct create_call {
  const simdpool_desc *d;
  simdpool_plan **out;
  simdpool_status status;
} create_call;

static void create_task(void *ctx) {
  create_call *c = ctx;
  c->status = plan_create(c->d, c->out);
}

/* Plan creation compares floats (LP's p, the clamp, quantization scales
 * and multipliers) and prints them into messages, and glibc's printf
 * rounds decimals in the current rounding mode: all of it runs in the
 * IEEE default environment (sp_call_default_env), so that neither a
 * decision nor a message depends on the caller's mode, and the caller's
 * control and status state comes back unchanged. */
simdpool_status simdpool_plan_create(const simdpool_desc *d,
                                     simdpool_plan **out) {
  create_call c = {d, out, SIMDPOOL_OK};
  sp_call_default_env(create_task, &c);
  return c.status;
}

void simdpool_plan_destroy(simdpool_plan *plan) {
  free(plan);
}

void simdpool_plan_output_shape(const simdpool_plan *plan, size_t *out_h,
                                size_t *out_w) {
  if (out_h)
    *out_h = plan ? plan->out_h : 0;
  if (out_w)
    *out_w = plan ? plan->out_w : 0;
}

void simdpool_plan_output_dims(const simdpool_plan *plan, size_t *out_d,
                               size_t *out_h, size_t *out_w) {
  if (out_d)
    *out_d = plan ? plan->out_d : 0;
  simdpool_plan_output_shape(plan, out_h, out_w);
}

simdpool_isa simdpool_plan_isa(const simdpool_plan *plan) {
  return plan ? plan->isa : SIMDPOOL_ISA_AUTO;
}

/* The public ops name the internal ones one to one. */
_Static_assert(SIMDPOOL_OP_FORWARD == (int)SP_OP_FWD &&
                   SIMDPOOL_OP_BACKWARD == (int)SP_OP_BWD &&
                   SIMDPOOL_OP_BACKWARD_INDICES == (int)SP_OP_BWD_IDX &&
                   SIMDPOOL_OP_UNPOOL == (int)SP_OP_UNPOOL &&
                   SIMDPOOL_OP_UNPOOL_BACKWARD == (int)SP_OP_UNPOOL_BWD &&
                   SP_OP_COUNT == 5,
               "simdpool_op and sp_op differ");

const char *simdpool_plan_kernel_name(const simdpool_plan *plan,
                                      simdpool_op op) {
  if (!plan || (unsigned)op >= SP_OP_COUNT || !plan->kernel[op])
    return NULL;
  return plan->name[op][0] ? plan->name[op] : plan->kernel[op]->name;
}

size_t simdpool_plan_tensor_bytes(const simdpool_plan *plan,
                                  simdpool_tensor which) {
  if (!plan)
    return 0;
  const sp_geom *g = &plan->geom;
  const size_t planes = g->n * g->c; /* each product bounded at creation */
  switch (which) {
  case SIMDPOOL_TENSOR_X:
  case SIMDPOOL_TENSOR_DX:
    return sp_x_bytes(g);
  case SIMDPOOL_TENSOR_Y:
  case SIMDPOOL_TENSOR_DY:
    return sp_y_bytes(g);
  case SIMDPOOL_TENSOR_INDICES:
    return planes * sp_out_plane(g) * sp_index_size(g->index_type);
  }
  return 0;
}
