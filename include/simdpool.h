/* SPDX-License-Identifier: MIT */
/* simdpool.h — public API of simdpool: SIMD 1D, 2D and 3D max/average/LP
 * pooling with fixed or adaptive windows, channels-first (NCW, NCHW,
 * NCDHW) and channels-last (NWC, NHWC, NDHWC), on f32 elements (the bf16,
 * f16, s8 and u8 element types are named below; their kernels are not in
 * this version yet). What every call computes and
 * rejects, bit for bit and message for message: docs/semantics.md. */
#ifndef SIMDPOOL_H
#define SIMDPOOL_H

#include <stddef.h>
#include <stdint.h>

#define SIMDPOOL_VERSION_MAJOR 0
#define SIMDPOOL_VERSION_MINOR 2
#define SIMDPOOL_VERSION_PATCH 0
/* One integer that grows with every release: major * 10000 + minor * 100 +
 * patch. */
#define SIMDPOOL_VERSION                                                       \
  (SIMDPOOL_VERSION_MAJOR * 10000 + SIMDPOOL_VERSION_MINOR * 100 +             \
   SIMDPOOL_VERSION_PATCH)
#define SIMDPOOL_VERSION_STRING "0.2.0"

/* SIMDPOOL_API marks the exported functions. The shared library is built with
 * -fvisibility=hidden, so these are its only dynamic symbols. */
#if defined(SIMDPOOL_BUILDING) && defined(__GNUC__)
#define SIMDPOOL_API __attribute__((visibility("default")))
#else
#define SIMDPOOL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SIMDPOOL_OK = 0,
  SIMDPOOL_INVALID_ARGUMENT,
  SIMDPOOL_UNSUPPORTED,
  SIMDPOOL_OUT_OF_MEMORY
} simdpool_status;

typedef enum { SIMDPOOL_MAX, SIMDPOOL_AVG, SIMDPOOL_LP } simdpool_method;

/* Channels-first / channels-last, for every rank: NCW and NWC (1D), NCHW
 * and NHWC (2D), NCDHW and NDHWC (3D). */
typedef enum { SIMDPOOL_NCHW, SIMDPOOL_NHWC } simdpool_layout;

typedef enum {
  SIMDPOOL_PAD_EXPLICIT,
  SIMDPOOL_PAD_VALID,
  SIMDPOOL_PAD_SAME_UPPER,
  SIMDPOOL_PAD_SAME_LOWER
} simdpool_padding;

typedef enum {
  SIMDPOOL_INDEX_NONE,
  SIMDPOOL_INDEX_I32,
  SIMDPOOL_INDEX_I64,
  SIMDPOOL_INDEX_U8
} simdpool_index_type;

/* The element type of x, y, dy and dx (docs/semantics.md#element-types).
 * BF16 and F16 are storage types: their values are widened to f32 exactly,
 * computed with the f32 rules and rounded once (round to nearest even) when
 * stored. S8 and U8 are forward only: MAX compares the integers, AVG is
 * quantized (simdpool_quant). */
typedef enum {
  SIMDPOOL_F32 = 0,
  SIMDPOOL_BF16,
  SIMDPOOL_F16,
  SIMDPOOL_S8,
  SIMDPOOL_U8
} simdpool_dtype;

/* Quantization of an S8/U8 AVG plan (PyTorch's quantized avg_pool2d,
 * XNNPACK's qs8/qu8 average pooling): real = scale * (q - zero_point).
 * Read only by S8/U8 AVG plans; the other plans ignore it. */
typedef struct simdpool_quant {
  float x_scale, y_scale;             /* finite, > 0 */
  int32_t x_zero_point, y_zero_point; /* inside the dtype's range */
  /* The output clamp, in quantized values: inside the dtype's range,
   * y_min <= y_max. simdpool_desc_init() sets INT32_MIN and INT32_MAX,
   * which stand for the dtype's whole range (-128..127 or 0..255). */
  int32_t y_min, y_max;
} simdpool_quant;

/* The kernel variants. AVX2 runs on CPUs with AVX2, FMA and F16C (every
 * AVX2 CPU made so far); AVX512 needs AVX-512 F, BW, DQ and VL. */
typedef enum {
  SIMDPOOL_ISA_AUTO,
  SIMDPOOL_ISA_SCALAR,
  SIMDPOOL_ISA_SSE41,
  SIMDPOOL_ISA_AVX2,
  SIMDPOOL_ISA_AVX512,
  SIMDPOOL_ISA_NEON
} simdpool_isa;

/* What to pool and how. Fill it with simdpool_desc_init(), then change what
 * differs from PyTorch's defaults. All sizes are in elements.
 *
 * ABI: new fields are only ever appended. struct_size, which
 * simdpool_desc_init() sets to the sizeof(simdpool_desc) of the header the
 * caller was compiled with, tells the library which fields the caller's
 * descriptor has: simdpool_plan_create() reads the fields of that layout and
 * gives any field appended since its default, and rejects a size it does not
 * know (a descriptor not made by simdpool_desc_init(), or a header newer
 * than the library) with SIMDPOOL_INVALID_ARGUMENT. Do not set it yourself;
 * copying an initialised descriptor is fine. */
typedef struct simdpool_desc {
  size_t struct_size; /* set by simdpool_desc_init(): see above */
  simdpool_method method;
  simdpool_layout layout;
  size_t n, c, h, w;             /* input shape */
  size_t kernel_h, kernel_w;     /* >= 1 */
  size_t stride_h, stride_w;     /* >= 1 */
  size_t dilation_h, dilation_w; /* >= 1 */
  simdpool_padding padding;
  size_t pad_top, pad_left, pad_bottom, pad_right; /* EXPLICIT only, else 0 */
  int ceil_mode;         /* 0 floor, 1 ceil (PyTorch rule); EXPLICIT only */
  int count_include_pad; /* AVG only: 0 or 1 */
  float p;               /* LP only: finite, > 0 */
  simdpool_index_type index_type; /* MAX only: indices written by forward */
  simdpool_isa isa;               /* AUTO, or force one (tests, benches) */
  /* Appended in 0.2 (a 0.1 descriptor gets the defaults). */
  /* NHWC only: elements from one pixel's first channel to the next pixel's,
   * of x and dx (x_pixel_stride) and of y and dy (y_pixel_stride); 0 (the
   * default) means c, i.e. dense. Must be 0 or >= c; NCHW takes only 0. A
   * plan with strides > c reads and writes a channel slice of a wider
   * tensor: only the first c elements of each pixel are read or written,
   * the elements between them are never touched. Indices stay dense
   * (n, out_h, out_w, c) whatever the strides. */
  size_t x_pixel_stride, y_pixel_stride;
  /* Forward only, clamp = 1: every y is clamped to [clamp_min, clamp_max]
   * once it is final (docs/semantics.md#output-clamp); neither bound may
   * be NaN, and clamp_min <= clamp_max. clamp = 0 (the default, also of a
   * zero-filled descriptor): no clamp, the bounds are ignored (defaults
   * -inf, +inf). A plan with a clamp rejects backward calls. */
  int clamp;
  float clamp_min, clamp_max;
  /* 3D: the depth axis, outermost spatial axis (docs/semantics.md#ranks).
   * x is (n, c, d, h, w) channels-first or (n, d, h, w, c) channels-last.
   * 1D and 2D plans leave d = kernel_d = stride_d = dilation_d = 1 and the
   * depth pads 0 (what simdpool_desc_init() sets); 1D is h = kernel_h =
   * stride_h = dilation_h = 1. pad_front/pad_back: EXPLICIT only. */
  size_t d, kernel_d, stride_d, dilation_d;
  size_t pad_front, pad_back;
  /* Adaptive windows (PyTorch's AdaptiveMaxPool/AdaptiveAvgPool), adaptive
   * = 1: the output size out_d x out_h x out_w (each >= 1, any size, also
   * above the input's) is given and output i of an axis pools input
   * [floor(i*in/out), ceil((i+1)*in/out)). Kernel, stride and dilation stay
   * 1, no padding, floor mode (what simdpool_desc_init_adaptive() sets);
   * MAX and AVG only. adaptive = 0 (the default): out_d, out_h, out_w must
   * be 0. */
  int adaptive;
  size_t out_d, out_h, out_w;
  /* The element type of x, y, dy and dx (F32, the default, BF16, F16, S8
   * or U8; indices keep their own type), and the quantization of S8/U8 AVG
   * plans (simdpool_desc_init(): scales 1, zero points 0, the whole range).
   * Byte counts follow the type: simdpool_plan_tensor_bytes(). */
  simdpool_dtype dtype;
  simdpool_quant quant;
} simdpool_desc;

typedef struct simdpool_plan simdpool_plan;

/* Fills the descriptor at d, struct_size bytes long, with PyTorch's defaults
 * for the given method, layout, shape and window: stride = kernel, dilation
 * 1, explicit zero padding, floor mode, count_include_pad 1, p 2, no
 * indices, ISA AUTO, dense pixel strides (0), no clamp (clamp 0, bounds
 * -inf and +inf);
 * d->struct_size = struct_size. Writes at most
 * struct_size bytes (nothing when struct_size < sizeof(size_t)), so a
 * program built against an older, shorter simdpool_desc is safe with a newer
 * library. Never fails; a NULL d is ignored. Thread-safe. This is what the
 * simdpool_desc_init() macro calls; call it yourself only where the macro
 * cannot reach (bindings from other languages: pass the size of the
 * descriptor they allocate). */
SIMDPOOL_API void simdpool_desc_init_sized(simdpool_desc *d, size_t struct_size,
                                           simdpool_method m, simdpool_layout l,
                                           size_t n, size_t c, size_t h,
                                           size_t w, size_t kernel_h,
                                           size_t kernel_w);

/* simdpool_desc_init_sized(d, sizeof(simdpool_desc), ...). The macro below
 * passes the caller's sizeof; this function (what a function pointer or a
 * binding that calls the symbol gets) passes the library's, so it is right
 * only for a descriptor of the library's own layout. */
SIMDPOOL_API void simdpool_desc_init(simdpool_desc *d, simdpool_method m,
                                     simdpool_layout l, size_t n, size_t c,
                                     size_t h, size_t w, size_t kernel_h,
                                     size_t kernel_w);
#define simdpool_desc_init(d, m, l, n, c, h, w, kernel_h, kernel_w)            \
  simdpool_desc_init_sized((d), sizeof(simdpool_desc), (m), (l), (n), (c),     \
                           (h), (w), (kernel_h), (kernel_w))

/* Helpers over simdpool_desc_init() for the other ranks and for adaptive
 * windows; each fills the whole descriptor (the caller's layout, as the
 * macro does) and then sets:
 *   _1d: h = kernel_h = stride_h = 1 (x is (n, c, w) or (n, w, c));
 *   _3d: the depth axis: d = dd, kernel_d = stride_d = kernel_d, the depth
 *        pads 0;
 *   _adaptive: any rank (2D: dd = out_d = 1; 1D: also h = out_h = 1):
 *        adaptive = 1, the input d/h/w and out_d/out_h/out_w as given,
 *        every kernel, stride and dilation 1. */
SIMDPOOL_API void
simdpool_desc_init_1d_sized(simdpool_desc *d, size_t struct_size,
                            simdpool_method m, simdpool_layout l, size_t n,
                            size_t c, size_t w, size_t kernel_w);
SIMDPOOL_API void
simdpool_desc_init_3d_sized(simdpool_desc *d, size_t struct_size,
                            simdpool_method m, simdpool_layout l, size_t n,
                            size_t c, size_t dd, size_t h, size_t w,
                            size_t kernel_d, size_t kernel_h, size_t kernel_w);
SIMDPOOL_API void simdpool_desc_init_adaptive_sized(
    simdpool_desc *d, size_t struct_size, simdpool_method m, simdpool_layout l,
    size_t n, size_t c, size_t dd, size_t h, size_t w, size_t out_d,
    size_t out_h, size_t out_w);
SIMDPOOL_API void simdpool_desc_init_1d(simdpool_desc *d, simdpool_method m,
                                        simdpool_layout l, size_t n, size_t c,
                                        size_t w, size_t kernel_w);
SIMDPOOL_API void simdpool_desc_init_3d(simdpool_desc *d, simdpool_method m,
                                        simdpool_layout l, size_t n, size_t c,
                                        size_t dd, size_t h, size_t w,
                                        size_t kernel_d, size_t kernel_h,
                                        size_t kernel_w);
SIMDPOOL_API void simdpool_desc_init_adaptive(
    simdpool_desc *d, simdpool_method m, simdpool_layout l, size_t n, size_t c,
    size_t dd, size_t h, size_t w, size_t out_d, size_t out_h, size_t out_w);
#define simdpool_desc_init_1d(d, m, l, n, c, w, kernel_w)                      \
  simdpool_desc_init_1d_sized((d), sizeof(simdpool_desc), (m), (l), (n), (c),  \
                              (w), (kernel_w))
#define simdpool_desc_init_3d(d, m, l, n, c, dd, h, w, kernel_d, kernel_h,     \
                              kernel_w)                                        \
  simdpool_desc_init_3d_sized((d), sizeof(simdpool_desc), (m), (l), (n), (c),  \
                              (dd), (h), (w), (kernel_d), (kernel_h),          \
                              (kernel_w))
#define simdpool_desc_init_adaptive(d, m, l, n, c, dd, h, w, out_d, out_h,     \
                                    out_w)                                     \
  simdpool_desc_init_adaptive_sized((d), sizeof(simdpool_desc), (m), (l), (n), \
                                    (c), (dd), (h), (w), (out_d), (out_h),     \
                                    (out_w))

/* Validates *d, computes the output shape and picks one kernel per operation
 * for the chosen ISA. On success stores a new plan in *out and returns
 * SIMDPOOL_OK. On failure *out is set to NULL (when out is not NULL) and the
 * reason is available from simdpool_last_error():
 *   SIMDPOOL_INVALID_ARGUMENT  NULL d or out; a d->struct_size that is not
 *     the size of a simdpool_desc layout this library knows (above); a zero
 *     size, stride or dilation;
 *     a stride, dilation or dilated kernel extent above 2^40;
 *     an enum value out of range; an output size below 1; a window that holds
 *     no input element; a pad >= the dilated kernel extent; pads with a padding
 *     mode other than EXPLICIT; ceil_mode with VALID or SAME_*; ceil_mode or
 *     count_include_pad other than 0/1; an index type with AVG or LP; LP with
 *     p not finite or <= 0; adaptive other than 0/1; output sizes with
 *     adaptive 0; with adaptive 1, a zero output size, LP, a kernel, stride
 *     or dilation other than 1, a padding mode other than EXPLICIT, a pad,
 *     or ceil_mode; a pixel stride with NCHW, or one in (0, c);
 *     clamp other than 0/1; with clamp 1, a NaN bound or clamp_min >
 *     clamp_max; with an S8/U8 AVG plan, a quant scale not finite and > 0,
 *     a zero point or clamp bound outside the dtype's range, quant.y_min >
 *     quant.y_max, or a multiplier (x_scale / y_scale) / divisor that is
 *     not a normal float; a byte count of any
 *     tensor above PTRDIFF_MAX; an unknown name in the SIMDPOOL_ISA
 *     environment variable.
 *   SIMDPOOL_UNSUPPORTED  an index type too narrow for the shape (I32 needs
 *     d*h*w <= INT32_MAX, U8 needs a fixed window of kernel_d*kernel_h*
 *     kernel_w <= 256 taps); a forced ISA
 *     (desc.isa or SIMDPOOL_ISA) that this build or this CPU lacks; a forced
 *     SIMD ISA on a plane of more than INT32_MAX elements or a window of more
 *     than INT32_MAX taps (SIMD kernels count in 32-bit lanes; AUTO then
 *     picks the scalar kernels, and the message says so); LP or a clamp
 *     with S8/U8; an S8/U8 AVG window of more than 2^23 taps.
 *   SIMDPOOL_OUT_OF_MEMORY  the plan could not be allocated.
 * With isa == AUTO the environment variable SIMDPOOL_ISA (scalar, sse41, avx2,
 * avx512, neon or auto, in any letter case: AVX2 is avx2), read at every
 * plan creation, picks the variant; otherwise the best variant this CPU runs.
 * Thread-safe. */
SIMDPOOL_API simdpool_status simdpool_plan_create(const simdpool_desc *d,
                                                  simdpool_plan **out);

/* Frees a plan. NULL is accepted and ignored. Must not race with calls that
 * use the same plan. */
SIMDPOOL_API void simdpool_plan_destroy(simdpool_plan *plan);

/* Stores the output height and width of the plan (either pointer may be NULL;
 * simdpool_plan_output_dims below adds the depth).
 * Thread-safe. */
SIMDPOOL_API void simdpool_plan_output_shape(const simdpool_plan *plan,
                                             size_t *out_h, size_t *out_w);

/* Stores the output depth, height and width of the plan (any pointer may
 * be NULL; 2D plans have depth 1, 1D plans depth and height 1).
 * Thread-safe. */
SIMDPOOL_API void simdpool_plan_output_dims(const simdpool_plan *plan,
                                            size_t *out_d, size_t *out_h,
                                            size_t *out_w);

/* The ISA whose kernels the plan runs; never SIMDPOOL_ISA_AUTO. A NULL plan
 * gives SIMDPOOL_ISA_AUTO. Thread-safe. */
SIMDPOOL_API simdpool_isa simdpool_plan_isa(const simdpool_plan *plan);

/* The operations of a plan, each run by one kernel. */
typedef enum {
  SIMDPOOL_OP_FORWARD,          /* simdpool_forward() */
  SIMDPOOL_OP_BACKWARD,         /* simdpool_backward() without indices */
  SIMDPOOL_OP_BACKWARD_INDICES, /* simdpool_backward() with indices (MAX
                                   plans with an index type only) */
  SIMDPOOL_OP_UNPOOL,           /* simdpool_unpool() (MAX plans with an index
                                   type only) */
  SIMDPOOL_OP_UNPOOL_BACKWARD   /* simdpool_unpool_backward() (likewise) */
} simdpool_op;

/* The name of the kernel the plan runs for op, as simdpool's kernel registry
 * lists it (e.g. "sp_maxpool_fwd_2x2s2_nchw_avx512"): a static string, for
 * logs and benchmarks; the names may change between versions. NULL for a
 * NULL plan, an op out of range, or an op the plan lacks
 * (SIMDPOOL_OP_BACKWARD_INDICES, SIMDPOOL_OP_UNPOOL or
 * SIMDPOOL_OP_UNPOOL_BACKWARD on a plan without an index type). For the two
 * unpooling ops it names the kernel that runs when every index names a
 * valid tap of its own window (what forward writes); other in-plane indices
 * run the op's general kernel of the same ISA, with the same bits. The serial
 * entry points run this kernel; the _parallel ones run, per chunk, the
 * kernel the plan's ISA picks for that chunk's part of the tensors: this one
 * or a less specialised one of the same ISA, with the same bits.
 * Thread-safe. */
SIMDPOOL_API const char *simdpool_plan_kernel_name(const simdpool_plan *plan,
                                                   simdpool_op op);

/* The tensors of a forward or backward call. */
typedef enum {
  SIMDPOOL_TENSOR_X,       /* forward's input, backward's x */
  SIMDPOOL_TENSOR_Y,       /* forward's output */
  SIMDPOOL_TENSOR_INDICES, /* written by forward, read by backward */
  SIMDPOOL_TENSOR_DY,      /* backward's input gradient (shaped as y) */
  SIMDPOOL_TENSOR_DX       /* backward's output (shaped as x) */
} simdpool_tensor;

/* The size in bytes of tensor `which` of a call on the plan, i.e. what the
 * buffer passed for it must hold: x and dx n*c*d*h*w, y and dy
 * n*c*out_d*out_h*out_w elements of the plan's dtype (4, 2 or 1 bytes),
 * indices as many elements of the plan's index type (0 without one).
 * With an NHWC pixel stride s, x and dx span (n*d*h*w - 1)*s + c elements
 * (y, dy: (n*out_d*out_h*out_w - 1)*s + c): the last
 * pixel needs only its c channels, not a whole stride. Plan creation
 * bounds each of these by PTRDIFF_MAX, so the product never overflows. 0
 * for a NULL plan or a `which` out of range. Thread-safe. */
SIMDPOOL_API size_t simdpool_plan_tensor_bytes(const simdpool_plan *plan,
                                               simdpool_tensor which);

/* Floating-point environment (every call that computes: simdpool_forward,
 * simdpool_backward and their _parallel forms). The results never depend on
 * the caller's floating-point mode: each kernel runs in the IEEE 754 default
 * environment, round to nearest even with subnormals neither flushed nor
 * read as zero and every exception masked (x86: MXCSR = 0x1f80 but for its
 * status flags; AArch64: FPCR = 0, i.e. RMode 0, FZ = FZ16 = DN = 0), on the
 * calling thread and on every thread of the caller's pool that runs one of
 * its tasks, whatever FTZ/DAZ, FZ, rounding mode or traps the caller set.
 * Before it returns, each of those threads gets its exact control and
 * status state back (MXCSR; FPCR and FPSR): the call leaves no exception
 * flag set that was clear, and an unmasked trap never fires inside it. The
 * cost is one read and one write of the control register per kernel call,
 * plus one more write when the caller's mode is not the default (a few
 * nanoseconds). simdpool_plan_create() runs in the same environment and
 * restores the caller's too: which descriptors it accepts and the text of
 * its messages (which print floats) never depend on the caller's mode. */

/* Forward pass: y = pool(x). Every tensor pointer of the calls below is
 * void: x, y, dy and dx hold elements of the plan's dtype (F32: float).
 * x is (n,c,h,w), y and indices are
 * (n,c,out_h,out_w) (3D: (n,c,d,h,w) and (n,c,out_d,out_h,out_w)), in the
 * plan's layout: dense, but for NHWC pixel strides
 * of x and y (indices are always dense). With a clamp, y is clamped once
 * final. indices must be non-NULL
 * exactly when the plan has an index type (MAX only); it then receives int32_t,
 * int64_t or uint8_t values (docs/semantics.md#max-forward: ih*w+iw, or
 * kh_i*kernel_w+kw_i for U8). Returns:
 *   SIMDPOOL_OK
 *   SIMDPOOL_INVALID_ARGUMENT  NULL plan, x or y; indices given to a plan
 *     without an index type, or missing from a plan with one; any two of x,
 *     y and indices sharing a byte (x == y included; with pixel strides,
 *     two tensors whose spans of simdpool_plan_tensor_bytes() bytes overlap
 *     count as sharing one, even where their channels interleave).
 * On failure no output is written. Allocates nothing. Thread-safe: many
 * threads may run one plan at once on distinct outputs. Computes in the
 * default floating-point environment and restores the caller's (above). */
SIMDPOOL_API simdpool_status simdpool_forward(const simdpool_plan *plan,
                                              const void *x, void *y,
                                              void *indices);

/* Backward pass: dx = d pool / d x applied to dy; dx is overwritten.
 * MAX: with indices non-NULL (the plan must have an index type) the winners
 * are read from indices, else recomputed from x; each index must name a valid
 * (non-padding) tap of its own window. AVG needs neither indices nor x (both
 * are ignored). LP needs x. Returns:
 *   SIMDPOOL_OK
 *   SIMDPOOL_INVALID_ARGUMENT  NULL plan, dy or dx; a plan with an output
 *     clamp (forward only: the clamp is not differentiated); missing x where
 *     it is needed; indices on a plan without an index type; dx sharing a
 *     byte with dy, indices, or x where x is read (dy == dx included;
 *     spans as for simdpool_forward()); an index that names no valid tap
 *     of its window.
 * x and dx use the plan's x pixel stride, dy its y pixel stride (NHWC); dx
 * is written only at the c channels of each pixel.
 * On failure dx is not written. Allocates nothing. Thread-safe like
 * simdpool_forward(). Computes in the default floating-point environment
 * and restores the caller's (above). */
SIMDPOOL_API simdpool_status simdpool_backward(const simdpool_plan *plan,
                                               const void *dy,
                                               const void *indices,
                                               const void *x, void *dx);

/* Max unpooling (PyTorch max_unpool1d/2d/3d, ONNX MaxUnpool to the plan's
 * input shape): x = 0 everywhere, then for each element of y in output order
 * x_plane[index] = y (docs/semantics.md#max-unpooling). y and indices are
 * shaped as forward's outputs, x as its input, in the plan's layout (x and
 * y with the plan's pixel strides: only the c channels of each x pixel are
 * written). The plan must be a MAX plan with an index type; each I32/I64
 * index is a flat position inside its input plane ((id*h + ih)*w + iw,
 * 0 <= index < d*h*w), each U8 index a tap of its own window that is not
 * padding. Two equal indices of one plane: the later output wins. The bits
 * of y are copied unchanged (NaN payloads, -0.0f). Any in-plane index is
 * accepted; indices that name taps of their own windows, as forward writes
 * them, take the fast paths. A plan's output clamp (forward's) plays no part:
 * y's bits are stored as given. Returns:
 *   SIMDPOOL_OK
 *   SIMDPOOL_INVALID_ARGUMENT  NULL plan, y, indices or x; a plan that is
 *     not MAX or has no index type; x sharing a byte with y or indices
 *     (spans as for simdpool_forward()); an index outside its plane (U8: a
 *     tap number beyond the window, or a padding tap).
 * On failure x is not written. Allocates nothing. Thread-safe like
 * simdpool_forward(); the floating-point environment is left as it is
 * (unpooling does no arithmetic). */
SIMDPOOL_API simdpool_status simdpool_unpool(const simdpool_plan *plan,
                                             const void *y, const void *indices,
                                             void *x);

/* The gradient of simdpool_unpool(): dy[o] = dx_plane[indices[o]], bits
 * copied. dx is shaped as x (the plan's x pixel stride), dy and indices as
 * y. Checks and statuses as simdpool_unpool() (dx for x, dy for y): dy
 * sharing a byte with dx or indices, or a bad index, is
 * SIMDPOOL_INVALID_ARGUMENT and nothing is written. */
SIMDPOOL_API simdpool_status simdpool_unpool_backward(const simdpool_plan *plan,
                                                      const void *dx,
                                                      const void *indices,
                                                      void *dy);

/* ------------------------------------------------------------ threads */

/* A task of a parallel-for: called once for every i in [0, range). */
typedef void (*simdpool_task_fn)(void *ctx, size_t i);

/* A parallel-for over the caller's thread pool, shaped after pthreadpool's
 * parallelize_1d: calls task(ctx, i) exactly once for every i in [0, range),
 * in any order and on any threads, and returns when every call has returned.
 * pool is passed through untouched. simdpool_threadpool_parallel_for() (over
 * a simdpool_threadpool) and simdpool_pthreadpool_parallel_for() (over a
 * pthreadpool_t, in simdpool_pthreadpool.h) are two such functions. */
typedef void (*simdpool_parallel_for_fn)(void *pool, simdpool_task_fn task,
                                         void *ctx, size_t range);

/* simdpool_forward() with the work spread over parallel_for(pool, ...). The
 * work is cut so that no two tasks write the same byte, and the outputs are
 * bit-identical to simdpool_forward()'s whatever the thread count. A NULL
 * parallel_for runs every task on the calling thread. Checks and statuses are
 * those of simdpool_forward(); on failure no task runs. Allocates nothing.
 * Every task computes in the default floating-point environment and gives
 * its thread's environment back, whatever mode the pool's threads run in
 * (above). */
SIMDPOOL_API simdpool_status simdpool_forward_parallel(
    const simdpool_plan *plan, const void *x, void *y, void *indices,
    simdpool_parallel_for_fn parallel_for, void *pool);

/* simdpool_backward() spread like simdpool_forward_parallel(), bit-identical
 * to it. Where windows of neighbouring output rows (3D: slices) share input
 * rows (slices) (kernel extent > stride; adaptive windows: the output size
 * does not divide the input size), or MAX reads I32/I64 indices, the tasks
 * split only the planes (n*c in NCHW, n in NHWC), except 2D NHWC MAX with
 * undilated windows, which splits into bands of dx rows. Statuses as
 * simdpool_backward(). Indices are validated first, chunk by chunk through
 * parallel_for(pool, ...), before any task computes: the first bad index is
 * reported as simdpool_backward() reports it and dx is not written. The
 * floating-point environment as for simdpool_forward_parallel(). */
SIMDPOOL_API simdpool_status simdpool_backward_parallel(
    const simdpool_plan *plan, const void *dy, const void *indices,
    const void *x, void *dx, simdpool_parallel_for_fn parallel_for, void *pool);

/* simdpool_unpool() and simdpool_unpool_backward() spread over
 * parallel_for(pool, ...) by planes (n*c in NCHW, n in NHWC), bit-identical
 * to the serial calls. Indices are checked
 * before any task writes. Statuses as the serial calls. */
SIMDPOOL_API simdpool_status simdpool_unpool_parallel(
    const simdpool_plan *plan, const void *y, const void *indices, void *x,
    simdpool_parallel_for_fn parallel_for, void *pool);
SIMDPOOL_API simdpool_status simdpool_unpool_backward_parallel(
    const simdpool_plan *plan, const void *dx, const void *indices, void *dy,
    simdpool_parallel_for_fn parallel_for, void *pool);

/* A small built-in pool of worker threads (POSIX threads). */
typedef struct simdpool_threadpool simdpool_threadpool;

/* Creates a pool that runs tasks on `threads` threads: the calling thread of
 * each parallel-for plus threads - 1 workers. threads == 0 means one per
 * online CPU. Stores the pool in *out and returns SIMDPOOL_OK; or
 * SIMDPOOL_INVALID_ARGUMENT (NULL out, threads above 1024) or
 * SIMDPOOL_OUT_OF_MEMORY (allocation or thread creation failed) with *out
 * set to NULL. */
SIMDPOOL_API simdpool_status
simdpool_threadpool_create(size_t threads, simdpool_threadpool **out);

/* Stops and joins the workers and frees the pool. NULL is ignored. Must not
 * race with a parallel-for on the same pool. */
SIMDPOOL_API void simdpool_threadpool_destroy(simdpool_threadpool *pool);

/* The number of threads a pool runs tasks on (0 for NULL). */
SIMDPOOL_API size_t
simdpool_threadpool_threads(const simdpool_threadpool *pool);

/* The parallel-for of a simdpool_threadpool (pass the pool as `pool`). Calls
 * from several threads on one pool are served one after another. A NULL pool
 * runs every task on the calling thread. */
SIMDPOOL_API void simdpool_threadpool_parallel_for(void *pool,
                                                   simdpool_task_fn task,
                                                   void *ctx, size_t range);

/* ------------------------------------------------------------ errors */

/* A static English name for a status ("ok", "invalid argument", ...). */
SIMDPOOL_API const char *simdpool_status_string(simdpool_status s);

/* Detail of the last failure of a simdpool call on this thread: which field,
 * which value and why. Empty string when no call has failed on this thread.
 * The text stays valid until the next failing call on the same thread. */
SIMDPOOL_API const char *simdpool_last_error(void);

/* Nonzero when this build has kernels for isa and this CPU (and OS) can run
 * them. SIMDPOOL_ISA_AUTO and SIMDPOOL_ISA_SCALAR always give 1. Thread-safe.
 */
SIMDPOOL_API int simdpool_isa_supported(simdpool_isa isa);

/* "auto", "scalar", "sse41", "avx2", "avx512", "neon"; "unknown" for any
 * other value. */
SIMDPOOL_API const char *simdpool_isa_name(simdpool_isa isa);

/* The library's version string, e.g. "0.1.0" (SIMDPOOL_VERSION_STRING of the
 * build that is linked, which may differ from the header's). */
SIMDPOOL_API const char *simdpool_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SIMDPOOL_H */
