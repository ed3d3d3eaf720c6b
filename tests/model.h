/* SPDX-License-Identifier: MIT */
/* model.h - an independent brute-force reference of simdpool's semantics.
 *
 * Written straight from the rules of docs/semantics.md and DESIGN.md
 * (1D, 2D and 3D pooling, fixed and adaptive windows, max unpooling and
 * its backward), sharing no code with the library (it uses only the
 * public types of simdpool.h). It is
 * deliberately slow and obvious: one function computes the offset of an
 * element in either layout, every window is scanned tap by tap (kd outer,
 * then kh, kw inner), every sum is a plain f32 accumulation in the
 * prescribed order. 2D is the 3D model with a depth of 1 (d = kernel_d =
 * stride_d = dilation_d = 1, no depth pads); 1D is 2D with h = 1.
 *
 * The model supports spatial sizes, kernels, strides, dilations, pads and
 * adaptive output sizes below 2^31 (it computes shapes with signed 64-bit
 * integers); n and c may be anything (byte-count overflow is detected). */
#ifndef SIMDPOOL_TEST_MODEL_H
#define SIMDPOOL_TEST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "simdpool.h"

/* Reasons a desc is rejected, as a bit set (several may hold at once). */
enum {
  MODEL_BAD_NULL_SIZE = 1 << 0,  /* a zero size, kernel, stride or dilation */
  MODEL_BAD_ENUM = 1 << 1,       /* an enum value out of range */
  MODEL_BAD_PAD_MODE = 1 << 2,   /* nonzero pad with a non-EXPLICIT mode */
  MODEL_BAD_CEIL = 1 << 3,       /* ceil_mode not 0/1, or 1 with VALID/SAME */
  MODEL_BAD_CIP = 1 << 4,        /* AVG count_include_pad not 0/1 */
  MODEL_BAD_INDEX_TYPE = 1 << 5, /* index type with AVG or LP */
  MODEL_BAD_P = 1 << 6,          /* LP p not finite or <= 0 */
  MODEL_BAD_PAD_EXTENT = 1 << 7, /* pad >= dilated kernel extent */
  MODEL_BAD_OUT = 1 << 8,        /* output size below 1 */
  MODEL_BAD_WINDOW = 1 << 9,     /* a window holding no input element */
  MODEL_BAD_OVERFLOW = 1 << 10,  /* a byte count above PTRDIFF_MAX */
  MODEL_BAD_PIXEL_STRIDE = 1 << 11, /* nonzero with NCHW, or in (0, c) */
  MODEL_BAD_CLAMP = 1 << 12,        /* clamp not 0/1; NaN bound or min > max */
  /* adaptive not 0/1; output sizes with adaptive = 0; with adaptive = 1 a
   * zero output size, a kernel/stride/dilation other than 1, a padding mode
   * other than EXPLICIT, a pad, ceil mode, or LP */
  MODEL_BAD_ADAPTIVE = 1 << 13,
  /* An S8/U8 AVG plan's quantization: a scale not finite and > 0, a zero
   * point or clamp bound outside the dtype (INT32_MIN / INT32_MAX standing
   * for its ends), y_min > y_max, or a multiplier (x_scale / y_scale) /
   * divisor that is not a normal f32 for divisor 1 or the largest window */
  MODEL_BAD_QUANT = 1 << 14,
  /* The two UNSUPPORTED reasons the model can predict (forced ISAs are the
   * caller's business: the model knows nothing of CPUs). */
  MODEL_UNSUP_I32 = 1 << 16, /* I32 indices and d*h*w > INT32_MAX */
  MODEL_UNSUP_U8 = 1 << 17,  /* U8 indices and kernel_d*kernel_h*kernel_w >
                                256, or U8 with adaptive windows */
  /* S8/U8 with LP or with the output clamp, or an S8/U8 AVG window of more
   * than 2^23 taps */
  MODEL_UNSUP_INT8 = 1 << 18
};
#define MODEL_INVALID_MASK 0xffffu
#define MODEL_UNSUP_MASK 0xffff0000u

/* The spatial axes, outermost first. */
enum { MODEL_AXIS_D = 0, MODEL_AXIS_H = 1, MODEL_AXIS_W = 2 };

/* The model's verdict on a desc. */
typedef struct model_shape {
  unsigned reasons; /* bit set of MODEL_* reasons; 0 when accepted */
  /* Resolved geometry; meaningful when no shape reason is set. Adaptive
   * plans: the given output sizes, every pad 0. */
  size_t out_d, out_h, out_w;
  size_t pad_front, pad_top, pad_left, pad_back, pad_bottom, pad_right;
} model_shape;

/* Bytes of one element of dtype t (4 for F32 and out-of-range values). */
size_t model_elem_size(simdpool_dtype t);

/* Predicts what simdpool_plan_create does with *d (ignoring the ISA). */
void model_resolve(const simdpool_desc *d, model_shape *s);

/* The status implied by a set of reasons: OK when empty, INVALID_ARGUMENT
 * when only invalid reasons are set, UNSUPPORTED when only unsupported ones
 * are. When both kinds are set the contract does not say which wins; this
 * returns INVALID_ARGUMENT and model_status_acceptable() accepts either. */
simdpool_status model_status(unsigned reasons);
int model_status_acceptable(unsigned reasons, simdpool_status got);

/* Short human-readable description of the first reasons set (static). */
const char *model_reason_string(unsigned reasons);

/* Element counts of the tensors of a resolved desc (dense: n*c*d*h*w and
 * n*c*out_d*out_h*out_w; indices always have model_y_count elements). */
size_t model_x_count(const simdpool_desc *d);
size_t model_y_count(const simdpool_desc *d, const model_shape *s);
/* The elements x and dx (model_x_span), y and dy (model_y_span) span with
 * the desc's channels-last pixel strides: (pixels - 1) * stride + c, a pixel
 * being one (n, d, h, w); the dense count without. */
size_t model_x_span(const simdpool_desc *d);
size_t model_y_span(const simdpool_desc *d, const model_shape *s);
/* Where dense element off of x (model_x_at) or y (model_y_at) lives with
 * the pixel strides. */
size_t model_x_at(const simdpool_desc *d, size_t off);
size_t model_y_at(const simdpool_desc *d, size_t off);
/* Size in bytes of one index of d->index_type (0 for NONE). */
size_t model_index_size(simdpool_index_type t);

/* Offset of element (n, c, z, h, w) of a dense tensor of shape
 * (N, C, D, H, W) stored channels-first (NCHW: n, c, z, h, w, w fastest) or
 * channels-last (NHWC: n, z, h, w, c, c fastest). 2D tensors have D = 1. */
size_t model_elem(simdpool_layout layout, size_t C, size_t D, size_t H,
                  size_t W, size_t n, size_t c, size_t z, size_t h, size_t w);

/* Inverse of model_elem: the coordinates of the element at offset off. */
void model_coords(simdpool_layout layout, size_t C, size_t D, size_t H,
                  size_t W, size_t off, size_t *n, size_t *c, size_t *z,
                  size_t *h, size_t *w);

/* The window of output coordinate o on one axis (MODEL_AXIS_*) of a
 * resolved, accepted desc: its taps (kernel size, or the adaptive window's
 * extent) and the input position of tap t (outside [0, in) for padding). */
size_t model_window_taps(const simdpool_desc *d, const model_shape *s, int axis,
                         size_t o);
long long model_tap_pos(const simdpool_desc *d, const model_shape *s, int axis,
                        size_t o, size_t t);

/* Forward pass. indices receives d->index_type values when not NULL. x and
 * y are strided as the desc says (only the pixels' c channels are read or
 * written); with clamp = 1 every y is clamped last. */
void model_forward(const simdpool_desc *d, const model_shape *s, const float *x,
                   float *y, void *indices);

/* Backward pass (strided like forward; the clamp is not the model's
 * business: the library rejects backward with one). MAX: winners from
 * indices (of d->index_type) when indices is
 * not NULL, else recomputed from x. AVG: x unused. LP: x needed. Returns 0
 * on success, -1 when some index names no valid tap of its window (then dx
 * is left untouched). */
int model_backward(const simdpool_desc *d, const model_shape *s,
                   const float *dy, const void *indices, const float *x,
                   float *dx);

/* 1 when every index in indices names a valid (non-padding) tap of its own
 * window, else 0 (and *bad, when not NULL, receives the offset of the first
 * bad one in output order of memory). */
int model_indices_valid(const simdpool_desc *d, const model_shape *s,
                        const void *indices, size_t *bad);

/* Max unpooling (DESIGN.md "Unpooling", PyTorch max_unpool) on a MAX desc
 * with an index type: x = +0.0f at every element of x (with pixel strides
 * only the c channels of each pixel; the elements between are not
 * touched), then for each element of y in output order (n, c, od, oh, ow
 * channels-first; n, od, oh, ow, c channels-last) x_plane[index] = y, its
 * bits copied (the last of equal indices wins). An I32/I64 index names the
 * flat position (id*h + ih)*w + iw of its input plane, any 0 <= v < d*h*w;
 * a U8 index names a tap of its own window that must be valid (not
 * padding). Returns 0, or -1 when some index is bad (then x is left
 * untouched). */
int model_unpool(const simdpool_desc *d, const model_shape *s, const float *y,
                 const void *indices, float *x);

/* Its gradient: dy[o] = dx_plane[index[o]], bits copied (dy strided like
 * y, dx like x). Indices as for model_unpool(); returns 0, or -1 on a bad
 * index (dy untouched). */
int model_unpool_backward(const simdpool_desc *d, const model_shape *s,
                          const float *dx, const void *indices, float *dy);

/* 1 when every index is one unpooling takes (I32/I64: inside its input
 * plane; U8: a valid tap of its own window), else 0; then *bad (when not
 * NULL) receives the offset of the first bad one in memory order and
 * *value (when not NULL) its value as an integer. */
int model_unpool_indices_valid(const simdpool_desc *d, const model_shape *s,
                               const void *indices, size_t *bad,
                               long long *value);

/* The pow of docs/semantics.md#lp-forward (SLEEF u10 purec, scalar). */
float model_pow(float x, float y);

/* The canonical quiet NaN 0x7fc00000. */
float model_canonical_nan(void);

/* Element types (docs/semantics.md#element-types), computed from their
 * definitions in double arithmetic (not the library's integer tricks):
 * the f32 value of a bf16 or f16 pattern (a NaN keeps its payload, moved
 * to the top of f32's mantissa; returned as bits, since a float return may
 * quieten a signalling NaN), and the pattern nearest an f32 value, ties to
 * even, f16 with gradual underflow and overflow to inf. A NaN gives the
 * canonical NaN (0x7fc0, 0x7e00), or with keep_nan its own payload
 * truncated to the type's width (f16: the canonical NaN if that leaves
 * no payload). */
uint32_t model_bf16_to_f32_bits(uint16_t h);
uint32_t model_f16_to_f32_bits(uint16_t h);
uint16_t model_f32_to_bf16(uint32_t f32_bits, int keep_nan);
uint16_t model_f32_to_f16(uint32_t f32_bits, int keep_nan);

/* The ops on tensors of d->dtype (docs/semantics.md#element-types), as
 * DESIGN.md defines them from the f32 ones: widen exactly, compute with the
 * f32 model, narrow once (MAX forward and unpooling keep a NaN's payload,
 * everything else rounds to nearest even with canonical NaNs); S8/U8 AVG
 * is the quantized average, computed here on its own. Tensors are strided
 * as the desc says; element sizes follow the dtype. Returns as the f32
 * functions do. */
void model_forward_dtype(const simdpool_desc *d, const model_shape *s,
                         const void *x, void *y, void *indices);
int model_backward_dtype(const simdpool_desc *d, const model_shape *s,
                         const void *dy, const void *indices, const void *x,
                         void *dx);
int model_unpool_dtype(const simdpool_desc *d, const model_shape *s,
                       const void *y, const void *indices, void *x);
int model_unpool_backward_dtype(const simdpool_desc *d, const model_shape *s,
                                const void *dx, const void *indices, void *dy);

#endif /* SIMDPOOL_TEST_MODEL_H */
