/* SPDX-License-Identifier: MIT */
/* fuzz_pool.c — libFuzzer target for simdpool's public API. Each input is a
 * pooling descriptor of any rank (1D, 2D, 3D; fixed or adaptive windows;
 * sometimes with out-of-range enums, zero or huge sizes, or fields that do
 * not go together) and the data to pool. simdpool_plan_create must never
 * crash or leak on any descriptor; every accepted plan (below a size cap)
 * runs forward, backward (without indices, with forward's indices, with
 * corrupted indices) and unpooling and its backward (from forward's and
 * from corrupted indices) on the scalar reference and on every ISA this
 * machine runs, plain and through simdpool_*_parallel (a NULL
 * parallel_for, and one that runs the tasks in reverse order), and every
 * result must equal the scalar reference bit for bit, with outputs between
 * intact guard bands, inputs unchanged, failed calls writing nothing; 2D
 * fixed 1x1 windows are also checked against an oracle that does not use
 * the library. Any mismatch prints what differed on stderr and aborts.
 * Built as the libFuzzer executable fuzz_pool (-Dfuzz=true, clang) and,
 * with replay_main.c, as the corpus regression test fuzz-corpus in every
 * build.
 *
 * Input format (multi-byte values little endian; make_corpus.py writes it):
 *   F        flags: 0x01 explicit pads follow; 0x02 ceil_mode is a raw
 *            int32 that follows, else 0x04 gives it; 0x08 count_include_pad
 *            = 1 unless 0x10: a raw int32 follows; 0x20 strides follow (else
 *            stride = kernel); 0x40 dilations follow (else 1); 0x80 global
 *            pooling (kernel = h x w, and d with the depth axis; decoded
 *            kernel bytes ignored), but with adaptive (X 0x80): keep the
 *            decoded kernels, strides and dilations (below)
 *   E x5     method, layout, padding, index_type, isa (enum bytes, below)
 *   V        SIMDPOOL_ISA during this input: 1..5 scalar, sse41, avx2,
 *            avx512, neon; 6 auto; 7 an unknown name; anything else leaves
 *            the environment alone. Bit 0x80: the extension byte X follows;
 *            bit 0x40: the element type T follows (after X); V & 0x3f is
 *            the above
 *   [T]      (V 0x40) dtype (enum byte of 5: F32, BF16, F16, S8, U8), and
 *            for S8/U8 six quantization bytes: x_scale and y_scale (a byte
 *            b picks the scale table's b % 16: 1, 0.5, 0, -1, inf, NaN,
 *            subnormal, ...), x_zero_point and y_zero_point (b < 0xF0:
 *            b - 128 for S8, b for U8; else a raw int32 follows), y_min
 *            and y_max (0: the INT32_MIN / INT32_MAX sentinel, else as the
 *            zero points)
 *   [X]      extension: bits 0-1 x_pixel_stride, bits 2-3 y_pixel_stride
 *            (0: 0, dense; 1: c + a size byte of 0..4; 2: c; 3: a size byte
 *            of 0..15, so often below c), 0x10 clamp = 1, 0x20 clamp is a raw
 *            int32 (either: its operands follow O), 0x40 a depth axis (its
 *            sizes follow the pads), 0x80 adaptive = 1 (the output sizes
 *            follow the depth axis)
 *   S x6     n, c, h, w, kernel_h, kernel_w (size bytes, below)
 *   [S x2]   stride_h, stride_w          [S x2] dilation_h, dilation_w
 *   [S x4]   pad_top, pad_left, pad_bottom, pad_right
 *   [S x4]   (X 0x40) d, kernel_d, stride_d, dilation_d; without the
 *            depth axis all 1 (simdpool_desc_init's defaults). stride_d and
 *            dilation_d are always given, whatever F 0x20 and 0x40 say
 *   [S x2]   (X 0x40 and F 0x01) pad_front, pad_back
 *   [S x3]   (X 0x80) out_d, out_h, out_w. Adaptive windows get kernel,
 *            stride and dilation 1 on every axis (what
 *            simdpool_desc_init_adaptive sets) unless F 0x80 keeps the
 *            decoded ones; padding, pads, ceil_mode and method stay as
 *            decoded, so the library must reject what does not fit
 *   [i32]    ceil_mode                   [i32]  count_include_pad
 *   P        p (below)
 *   O        options: bits 0-1 misalignment of x and dy in floats, bits 2-3
 *            of y, dx and indices in elements; 0x10 AVG backward gets x =
 *            NULL; 0x20 backward from indices gets x = NULL; bits 6-7 the
 *            number of index corruptions minus 1
 *   [S] [S]  x_pixel_stride's and y_pixel_stride's size bytes (modes 1, 3)
 *   [i32]    clamp (0x20)                [B x2] clamp_min, clamp_max: a byte
 *            b < 0xF0 gives the clamp table's b % 16 (±0, ±inf, ±FLT_MAX,
 *            NaN, ...), else raw 32-bit pattern follows
 *   data     x (n*c*d*h*w elements), dy (n*c*out_d*out_h*out_w elements),
 *            then
 *            the index corruptions, each: position (2 bytes), kind (1 byte:
 *            kind % 8 picks +1, -1, +row, -row, raw, special, another
 *            position's index, small delta; with kind & 8, +row and -row
 *            are a depth slice, h*w, or for U8 kernel_h*kernel_w, instead),
 *            operands
 * Descriptor bytes past the end of the input read as 0; data bytes past the
 * end come from a xorshift generator seeded by a hash of the input.
 * The input's last byte (also read as whatever field it falls in) picks the
 * caller's floating-point environment of every call but the scalar
 * reference's (tenv_decode in ../fpenv_test.h: rounding mode, FTZ/FZ,
 * DAZ/FZ16, status flags set, traps unmasked/DN); results must not change
 * and the environment must read back unchanged after each call.
 *
 * Enum byte b: b < 0xF8 gives b % count; 0xF8 -1, 0xF9 count, 0xFA
 * count + 1, 0xFB INT_MIN, 0xFC INT_MAX, 0xFD..0xFF a raw int32 follows.
 * Size byte b: b < 0xE0 gives base + b % mod (per field: n 1..3, c 1..12,
 * h and w 1..12, kernel 1..5, stride 1..4, dilation 1..3, pads 0..3; d
 * 1..8, kernel_d 1..3, stride_d 1..3, dilation_d 1..2, pad_front and
 * pad_back 0..3; out_d 1..8, out_h and out_w 1..12);
 * 0xF0..0xFF the medium sizes table; 0xE0..0xEF special values (see
 * dec_size: 0, SIZE_MAX, PTRDIFF_MAX, 2^31, 2^32, 256, ..., raw 1, 2, 4 or
 * 8 bytes).
 * Float (data): tag byte t < 0x60 gives (t % 9) - 4 (ties), t < 0xA0 the
 * special values table (±0, ±inf, NaN payloads, signalling NaNs,
 * denormals, ±FLT_MAX, ...), else a raw 32-bit pattern follows.
 */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fpenv_test.h"
#include "fuzz_pool.h"
#include "simdpool.h"

/* simdpool_forward_parallel / simdpool_backward_parallel are exercised
 * unless the build says they are not there yet. */
#ifndef FUZZ_HAVE_PARALLEL
#define FUZZ_HAVE_PARALLEL 1
#endif

/* Tensors above this many elements (or above twice as many input plus
 * output-times-taps elements) are not allocated; the plan is still created
 * and destroyed. Fuzzing keeps each input at a few milliseconds; the replay
 * driver raises the cap so that its seeds reach the sizes at which the
 * parallel entry points split the work. */
size_t fuzz_pool_max_elems = (size_t)1 << 16;

#define GUARD 64               /* guard band bytes on each side of an output */
#define GUARD_BYTE 0xCD        /* guard band contents */
#define FILL_REF 0xA5          /* outputs before a scalar reference call */
#define FILL_RUN 0x5A          /* outputs before every other call */
#define POOL_MAGIC 0x600D600Du /* what the reversing parallel-for checks */

/* ------------------------------------------------------------ reporting */

int fuzz_pool_verbose;

static char g_desc_text[1024]; /* the current descriptor, for messages */
static const char *g_label = "";
static const char *g_stage = "";
static size_t g_max_tasks;  /* the largest range reverse_for was given */
static size_t g_pool_calls; /* how often reverse_for was called */

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static void
fail(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "fuzz_pool: MISMATCH [%s] %s: ", g_label, g_stage);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n  desc: %s\n", g_desc_text);
  fflush(stderr);
  abort();
}

static const char *status_name(simdpool_status st) {
  const char *s = simdpool_status_string(st);
  return s ? s : "(null)";
}

/* ------------------------------------------------------------ decoding */

typedef struct reader {
  const uint8_t *p;
  size_t left;
  uint32_t rng; /* xorshift32 state for data past the end */
} reader;

/* A descriptor byte: 0 once the input is exhausted. */
static uint8_t desc_u8(reader *r) {
  if (!r->left)
    return 0;
  r->left--;
  return *r->p++;
}

/* A data byte: the input's, then the generator's. */
static uint8_t data_u8(reader *r) {
  if (r->left) {
    r->left--;
    return *r->p++;
  }
  uint32_t x = r->rng;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  r->rng = x;
  return (uint8_t)(x >> 24);
}

static uint64_t desc_le(reader *r, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)desc_u8(r) << (8 * i);
  return v;
}

static uint64_t data_le(reader *r, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)data_u8(r) << (8 * i);
  return v;
}

static int32_t as_i32(uint64_t v) {
  const uint32_t u = (uint32_t)v;
  int32_t s;
  memcpy(&s, &u, sizeof s);
  return s;
}

static int dec_enum(reader *r, int count) {
  const uint8_t b = desc_u8(r);
  if (b < 0xF8)
    return b % count;
  switch (b) {
  case 0xF8:
    return -1;
  case 0xF9:
    return count;
  case 0xFA:
    return count + 1;
  case 0xFB:
    return INT_MIN;
  case 0xFC:
    return INT_MAX;
  default:
    return (int)as_i32(desc_le(r, 4));
  }
}

static const size_t medium_sizes[16] = {6,  7,  8,  11, 13, 15, 16, 17,
                                        24, 31, 32, 33, 48, 64, 65, 128};

static size_t dec_size(reader *r, size_t base, size_t mod) {
  const uint8_t b = desc_u8(r);
  if (b < 0xE0)
    return base + b % mod;
  if (b >= 0xF0)
    return medium_sizes[b - 0xF0];
  switch (b) {
  case 0xE0:
    return 0;
  case 0xE1:
    return SIZE_MAX;
  case 0xE2:
    return SIZE_MAX / 2; /* PTRDIFF_MAX */
  case 0xE3:
    return SIZE_MAX / 2 + 1;
  case 0xE4:
    return (size_t)1 << 31;
  case 0xE5:
    return ((size_t)1 << 31) - 1;
  case 0xE6:
    return (size_t)((uint64_t)1 << 32);
  case 0xE7:
    return (size_t)(((uint64_t)1 << 32) + 1);
  case 0xE8:
    return 255;
  case 0xE9:
    return 256;
  case 0xEA:
    return 257;
  case 0xEB:
    return 65536;
  case 0xEC:
    return (size_t)desc_le(r, 1);
  case 0xED:
    return (size_t)desc_le(r, 2);
  case 0xEE:
    return (size_t)desc_le(r, 4);
  default: /* 0xEF */
    return (size_t)desc_le(r, 8);
  }
}

static float bits_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* p = 1 and p = 2 (exact special cases) half of the time, SLEEF's pow the
 * other half. */
static const float p_table[16] = {1.0f, 2.0f,  3.0f,  0.5f,         1.0f, 2.0f,
                                  1.5f, 0.25f, 1.0f,  2.0f,         7.0f, 1e-3f,
                                  1.0f, 2.0f,  33.0f, 0x1.fffffep0f};

static float dec_p(reader *r) {
  const uint8_t b = desc_u8(r);
  switch (b) {
  case 0x80:
    return bits_float((uint32_t)desc_le(r, 4));
  case 0x81:
    return 0.0f;
  case 0x82:
    return -1.0f;
  case 0x83:
    return bits_float(0x7f800000u); /* inf */
  case 0x84:
    return bits_float(0x7fc00000u); /* NaN */
  case 0x85:
    return bits_float(0x00000001u); /* smallest denormal */
  case 0x86:
    return FLT_MAX;
  case 0x87:
    return bits_float(0x80000000u); /* -0 */
  default:
    return p_table[b % 16];
  }
}

static const uint32_t special_bits[32] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, /* ±0, ±inf */
    0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa00000, /* NaNs, sNaNs */
    0x7fc12345, 0xffd00bad, 0x7fffffff, 0xffffffff, /* NaN payloads */
    0x00000001, 0x80000001, 0x007fffff, 0x807fffff, /* denormals */
    0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, /* ±FLT_MIN, ±FLT_MAX */
    0x3f800000, 0xbf800000, 0x3f800001, 0x3f7fffff, /* ±1, 1 ± ulp */
    0x4b800000, 0x33800000, 0x5f800000, 0x1f800000, /* 2^24, 2^-24, 2^±64 */
    0x00400000, 0x3f000000, 0x40490fdb, 0xc0490fdb, /* denormal, .5, ±pi */
};

static float dec_float(reader *r) {
  const uint8_t t = data_u8(r);
  if (t < 0x60)
    return (float)((int)(t % 9) - 4);
  if (t < 0xA0)
    return bits_float(special_bits[t & 31]);
  return bits_float((uint32_t)data_le(r, 4));
}

/* Clamp bounds: both signs of the interesting values, and NaN (rejected). */
static const uint32_t clamp_bits[16] = {
    0xff800000, 0x7f800000, 0x80000000, 0x00000000, /* -inf, +inf, -0, +0 */
    0xbf800000, 0x3f800000, 0x3f000000, 0xbf000000, /* -1, 1, 0.5, -0.5 */
    0x40c00000, 0xc0c00000, 0x7f7fffff, 0xff7fffff, /* 6, -6, ±FLT_MAX */
    0x00000001, 0x40000000, 0xc0800000, 0x7fc00000, /* denormal, 2, -4, NaN */
};

static float dec_bound(reader *r) {
  const uint8_t b = desc_u8(r);
  return b < 0xF0 ? bits_float(clamp_bits[b % 16])
                  : bits_float((uint32_t)desc_le(r, 4));
}

/* A pixel stride of extension mode m (the X byte's two bits). */
/* A quantization scale: the table's b % 16 (b: a descriptor byte). */
static float dec_scale(reader *r) {
  static const uint32_t scale_bits[16] = {
      0x3f800000u, 0x3f000000u, 0x00000000u, 0xbf800000u, /* 1 .5 0 -1 */
      0x7f800000u, 0x7fc00000u, 0x00000001u, 0x3c23d70au, /* inf NaN sub .01 */
      0x40400000u, 0x00800000u, 0x7f7fffffu, 0x3e800000u, /* 3 FLT_MIN MAX */
      0x0d800000u, 0x72800000u, 0x3fc00000u, 0x40a00000u};
  return bits_float(scale_bits[desc_u8(r) % 16]);
}

/* A zero point or output bound of an S8/U8 plan: 0 gives sentinel (when
 * not 0: y_min/y_max), b < 0xF0 a value of the dtype, else a raw int32. */
static int32_t dec_qint(reader *r, int s8, int32_t sentinel) {
  const uint8_t b = desc_u8(r);
  if (b == 0 && sentinel != 0)
    return sentinel;
  if (b >= 0xF0)
    return as_i32(desc_le(r, 4));
  return s8 ? (int32_t)b - 128 : (int32_t)b;
}

static size_t dec_pixel_stride(reader *r, unsigned m, size_t c) {
  switch (m) {
  case 1:
    return c + dec_size(r, 0, 5); /* a special size may wrap: rejected */
  case 2:
    return c;
  case 3:
    return dec_size(r, 0, 16);
  default:
    return 0;
  }
}

/* Bits of the V and X bytes. */
#define V_EXT 0x80u
#define V_DTYPE 0x40u
#define X_CLAMP 0x10u
#define X_CLAMP_RAW 0x20u
#define X_DEPTH 0x40u
#define X_ADAPTIVE 0x80u

/* Option bits of the O byte. */
#define OPT_AVG_NULL_X 0x10u
#define OPT_IDX_NULL_X 0x20u

/* Flag bits of the F byte. */
#define F_PADS 0x01u
#define F_CEIL_RAW 0x02u
#define F_CEIL 0x04u
#define F_CIP 0x08u
#define F_CIP_RAW 0x10u
#define F_STRIDE 0x20u
#define F_DIL 0x40u
#define F_GLOBAL 0x80u

static void decode_desc(reader *r, simdpool_desc *d, int *env_sel,
                        unsigned *opts) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d; /* what simdpool_desc_init records */
  /* simdpool_desc_init's defaults of the fields decoded only sometimes
   * (simdpool_desc_init_sized in dispatch/plan.c); the clamp bounds are
   * read only with a clamp, so a plan without one keeps -inf and +inf. */
  d->d = d->kernel_d = d->stride_d = d->dilation_d = 1;
  d->clamp_min = -INFINITY;
  d->clamp_max = INFINITY;
  const unsigned f = desc_u8(r);
  d->method = (simdpool_method)dec_enum(r, 3);
  d->layout = (simdpool_layout)dec_enum(r, 2);
  d->padding = (simdpool_padding)dec_enum(r, 4);
  d->index_type = (simdpool_index_type)dec_enum(r, 4);
  d->isa = (simdpool_isa)dec_enum(r, 6);
  *env_sel = desc_u8(r);
  unsigned x = 0;
  const int typed = (*env_sel & V_DTYPE) != 0;
  *env_sel &= ~V_DTYPE;
  if (*env_sel & V_EXT) {
    *env_sel &= ~V_EXT;
    x = desc_u8(r);
  }
  d->quant.x_scale = d->quant.y_scale = 1.0f; /* desc_init's defaults */
  d->quant.y_min = INT32_MIN;
  d->quant.y_max = INT32_MAX;
  if (typed) {
    d->dtype = (simdpool_dtype)dec_enum(r, 5);
    if (d->dtype == SIMDPOOL_S8 || d->dtype == SIMDPOOL_U8) {
      const int s8 = d->dtype == SIMDPOOL_S8;
      d->quant.x_scale = dec_scale(r);
      d->quant.y_scale = dec_scale(r);
      d->quant.x_zero_point = dec_qint(r, s8, 0);
      d->quant.y_zero_point = dec_qint(r, s8, 0);
      d->quant.y_min = dec_qint(r, s8, INT32_MIN);
      d->quant.y_max = dec_qint(r, s8, INT32_MAX);
    }
  }
  d->n = dec_size(r, 1, 3);
  d->c = dec_size(r, 1, 12);
  d->h = dec_size(r, 1, 12);
  d->w = dec_size(r, 1, 12);
  d->kernel_h = dec_size(r, 1, 5);
  d->kernel_w = dec_size(r, 1, 5);
  const int global = (f & F_GLOBAL) && !(x & X_ADAPTIVE);
  if (global) {
    d->kernel_h = d->h;
    d->kernel_w = d->w;
  }
  if (f & F_STRIDE) {
    d->stride_h = dec_size(r, 1, 4);
    d->stride_w = dec_size(r, 1, 4);
  } else {
    d->stride_h = d->kernel_h;
    d->stride_w = d->kernel_w;
  }
  d->dilation_h = d->dilation_w = 1;
  if (f & F_DIL) {
    d->dilation_h = dec_size(r, 1, 3);
    d->dilation_w = dec_size(r, 1, 3);
  }
  if (f & F_PADS) {
    d->pad_top = dec_size(r, 0, 4);
    d->pad_left = dec_size(r, 0, 4);
    d->pad_bottom = dec_size(r, 0, 4);
    d->pad_right = dec_size(r, 0, 4);
  }
  if (x & X_DEPTH) {
    d->d = dec_size(r, 1, 8);
    d->kernel_d = dec_size(r, 1, 3);
    if (global)
      d->kernel_d = d->d;
    d->stride_d = dec_size(r, 1, 3);
    d->dilation_d = dec_size(r, 1, 2);
    if (f & F_PADS) {
      d->pad_front = dec_size(r, 0, 4);
      d->pad_back = dec_size(r, 0, 4);
    }
  }
  if (x & X_ADAPTIVE) {
    d->adaptive = 1;
    d->out_d = dec_size(r, 1, 8);
    d->out_h = dec_size(r, 1, 12);
    d->out_w = dec_size(r, 1, 12);
    if (!(f & F_GLOBAL)) /* simdpool_desc_init_adaptive's window */
      d->kernel_d = d->kernel_h = d->kernel_w = d->stride_d = d->stride_h =
          d->stride_w = d->dilation_d = d->dilation_h = d->dilation_w = 1;
  }
  d->ceil_mode = (f & F_CEIL_RAW) ? (int)as_i32(desc_le(r, 4))
                 : (f & F_CEIL)   ? 1
                                  : 0;
  d->count_include_pad = (f & F_CIP_RAW) ? (int)as_i32(desc_le(r, 4))
                         : (f & F_CIP)   ? 1
                                         : 0;
  d->p = dec_p(r);
  *opts = desc_u8(r);
  d->x_pixel_stride = dec_pixel_stride(r, x & 3u, d->c);
  d->y_pixel_stride = dec_pixel_stride(r, (x >> 2) & 3u, d->c);
  if (x & (X_CLAMP | X_CLAMP_RAW)) {
    d->clamp = (x & X_CLAMP_RAW) ? (int)as_i32(desc_le(r, 4)) : 1;
    d->clamp_min = dec_bound(r);
    d->clamp_max = dec_bound(r);
  }
}

static void describe(const simdpool_desc *d, const char *env) {
  snprintf(g_desc_text, sizeof g_desc_text,
           "method=%d layout=%d n=%zu c=%zu d=%zu h=%zu w=%zu "
           "kernel=%zux%zux%zu stride=%zux%zux%zu dilation=%zux%zux%zu "
           "padding=%d pads(f,t,l,bk,b,r)=%zu,%zu,%zu,%zu,%zu,%zu "
           "ceil_mode=%d count_include_pad=%d p=%a index_type=%d isa=%d "
           "SIMDPOOL_ISA=%s pixel_strides(x,y)=%zu,%zu clamp=%d [%a, %a] "
           "adaptive=%d out=%zux%zux%zu dtype=%d quant=(%a, %a, %d, %d, %d, "
           "%d)",
           (int)d->method, (int)d->layout, d->n, d->c, d->d, d->h, d->w,
           d->kernel_d, d->kernel_h, d->kernel_w, d->stride_d, d->stride_h,
           d->stride_w, d->dilation_d, d->dilation_h, d->dilation_w,
           (int)d->padding, d->pad_front, d->pad_top, d->pad_left, d->pad_back,
           d->pad_bottom, d->pad_right, d->ceil_mode, d->count_include_pad,
           (double)d->p, (int)d->index_type, (int)d->isa, env ? env : "(unset)",
           d->x_pixel_stride, d->y_pixel_stride, d->clamp, (double)d->clamp_min,
           (double)d->clamp_max, d->adaptive, d->out_d, d->out_h, d->out_w,
           (int)d->dtype, (double)d->quant.x_scale, (double)d->quant.y_scale,
           (int)d->quant.x_zero_point, (int)d->quant.y_zero_point,
           (int)d->quant.y_min, (int)d->quant.y_max);
}

/* ------------------------------------------------------------ buffers */

/* A tensor inside a malloc'd block: inputs end exactly at the block's end
 * (so ASan sees any read past them); outputs sit between guard bands. */
typedef struct buf {
  unsigned char *base, *data;
  size_t bytes, lead, total;
} buf;

static void buf_alloc(buf *b, size_t bytes, size_t misalign, int guarded) {
  b->lead = misalign + (guarded ? GUARD : 0);
  b->bytes = bytes;
  b->total = b->lead + bytes + (guarded ? GUARD : 0);
  b->base = malloc(b->total ? b->total : 1);
  if (!b->base) {
    fprintf(stderr, "fuzz_pool: out of memory (%zu bytes)\n", b->total);
    abort();
  }
  memset(b->base, GUARD_BYTE, b->total);
  b->data = b->base + b->lead;
}

static void buf_free(buf *b) {
  free(b->base);
  memset(b, 0, sizeof *b);
}

static void buf_fill(buf *b, unsigned char v) {
  if (b->data)
    memset(b->data, v, b->bytes);
}

/* Are all of p[0..n) equal to v? (One overlapping memcmp: fast.) */
static int all_bytes(const unsigned char *p, size_t n, unsigned char v) {
  return n == 0 || (p[0] == v && memcmp(p, p + 1, n - 1) == 0);
}

/* The first byte of p[0..n) that is not v (there must be one). */
static size_t first_other(const unsigned char *p, size_t n, unsigned char v) {
  size_t i = 0;
  while (i + 1 < n && p[i] == v)
    i++;
  return i;
}

static void check_guards(const buf *b, const char *what) {
  if (!b->base)
    return;
  const unsigned char *end = b->data + b->bytes;
  const size_t tail = b->total - b->lead - b->bytes;
  if (!all_bytes(b->base, b->lead, GUARD_BYTE)) {
    const size_t i = first_other(b->base, b->lead, GUARD_BYTE);
    fail("%s: guard byte %td (before the tensor) overwritten: 0x%02x", what,
         (ptrdiff_t)i - (ptrdiff_t)b->lead, b->base[i]);
  }
  if (!all_bytes(end, tail, GUARD_BYTE)) {
    const size_t i = first_other(end, tail, GUARD_BYTE);
    fail("%s: guard byte %zu after the tensor's end overwritten: 0x%02x", what,
         i, end[i]);
  }
}

static void check_untouched(const buf *b, unsigned char fill,
                            const char *what) {
  if (!all_bytes(b->data, b->bytes, fill)) {
    const size_t i = first_other(b->data, b->bytes, fill);
    fail("%s written by a call that failed: byte %zu is 0x%02x, was 0x%02x",
         what, i, b->data[i], fill);
  }
  check_guards(b, what);
}

/* memcmp, and on a difference the first differing element in hex. */
static void check_same(const void *got, const void *want, size_t bytes,
                       size_t elem, const char *what) {
  if (memcmp(got, want, bytes) == 0)
    return;
  const unsigned char *g = got, *w = want;
  size_t i = 0;
  while (g[i] == w[i])
    i++;
  i -= i % elem;
  char gs[40] = "", ws[40] = "";
  for (size_t k = elem; k-- > 0;) {
    char t[4];
    snprintf(t, sizeof t, "%02x", g[i + k]);
    strcat(gs, t);
    snprintf(t, sizeof t, "%02x", w[i + k]);
    strcat(ws, t);
  }
  fail("%s differs from scalar at element %zu: 0x%s, scalar 0x%s", what,
       i / elem, gs, ws);
}

/* ------------------------------------------------------------ calls */

typedef struct pool_token {
  unsigned magic;
} pool_token;

/* A parallel-for that runs the tasks on the calling thread in reverse order
 * (any order is allowed) and checks that pool is passed through. */
static void reverse_for(void *pool, simdpool_task_fn task, void *ctx,
                        size_t range) {
  pool_token *t = pool;
  if (!t || t->magic != POOL_MAGIC)
    fail("parallel_for got pool=%p, not the caller's", pool);
  if (range == 0)
    fail("parallel_for called with range 0");
  g_pool_calls++;
  if (range > g_max_tasks)
    g_max_tasks = range;
  for (size_t i = range; i-- > 0;)
    task(ctx, i);
}

/* How a forward or backward runs: plain, parallel over reverse_for,
 * parallel with a NULL parallel_for. The last is skipped when the library
 * did not call reverse_for (one chunk: both run the same serial path). */
enum { MODE_PLAIN, MODE_PAR_REVERSE, MODE_PAR_NULL, MODE_COUNT };
#if FUZZ_HAVE_PARALLEL
#define NMODES MODE_COUNT
#else
#define NMODES 1
#endif
static const char *const mode_names[MODE_COUNT] = {"", "_parallel(reverse)",
                                                   "_parallel(NULL)"};

/* Should mode run? pool_calls: g_pool_calls before the reverse_for call. */
static int mode_runs(int mode, size_t *pool_calls) {
  if (mode == MODE_PAR_REVERSE)
    *pool_calls = g_pool_calls;
  return mode != MODE_PAR_NULL || g_pool_calls != *pool_calls;
}

/* The caller environment of the current run's calls (the scalar
 * reference's run keeps the default one). */
static int g_env_on;
static tenv g_env;

static void env_enter(void) {
  if (g_env_on)
    tenv_write(g_env);
}

/* Back to the default environment; the caller's must have come back. */
static void env_leave(void) {
  if (!g_env_on)
    return;
  const tenv after = tenv_read();
  tenv_write(tenv_default());
  char a[64], b[64];
  if (!tenv_equal(after, g_env))
    fail("the caller's floating-point environment %s came back as %s",
         tenv_text(g_env, a, sizeof a), tenv_text(after, b, sizeof b));
}

static simdpool_status call_forward(int mode, const simdpool_plan *plan,
                                    const float *x, float *y, void *idx) {
  pool_token tok = {POOL_MAGIC};
  simdpool_status st;
  env_enter();
  switch (mode) {
#if FUZZ_HAVE_PARALLEL
  case MODE_PAR_NULL:
    st = simdpool_forward_parallel(plan, x, y, idx, NULL, &tok);
    break;
  case MODE_PAR_REVERSE:
    st = simdpool_forward_parallel(plan, x, y, idx, reverse_for, &tok);
    break;
#endif
  default:
    (void)tok;
    st = simdpool_forward(plan, x, y, idx);
  }
  env_leave();
  return st;
}

static simdpool_status call_backward(int mode, const simdpool_plan *plan,
                                     const float *dy, const void *idx,
                                     const float *x, float *dx) {
  pool_token tok = {POOL_MAGIC};
  simdpool_status st;
  env_enter();
  switch (mode) {
#if FUZZ_HAVE_PARALLEL
  case MODE_PAR_NULL:
    st = simdpool_backward_parallel(plan, dy, idx, x, dx, NULL, &tok);
    break;
  case MODE_PAR_REVERSE:
    st = simdpool_backward_parallel(plan, dy, idx, x, dx, reverse_for, &tok);
    break;
#endif
  default:
    (void)tok;
    st = simdpool_backward(plan, dy, idx, x, dx);
  }
  env_leave();
  return st;
}

/* Unpooling (bwd 0) or its backward (bwd 1): src is y (dx), dst x (dy). */
static simdpool_status call_unpool(int mode, int bwd, const simdpool_plan *plan,
                                   const float *src, const void *idx,
                                   float *dst) {
  pool_token tok = {POOL_MAGIC};
  simdpool_status st;
  env_enter();
  switch (mode) {
#if FUZZ_HAVE_PARALLEL
  case MODE_PAR_NULL:
  case MODE_PAR_REVERSE: {
    simdpool_parallel_for_fn pf = mode == MODE_PAR_NULL ? NULL : reverse_for;
    st = bwd ? simdpool_unpool_backward_parallel(plan, src, idx, dst, pf, &tok)
             : simdpool_unpool_parallel(plan, src, idx, dst, pf, &tok);
    break;
  }
#endif
  default:
    (void)tok;
    st = bwd ? simdpool_unpool_backward(plan, src, idx, dst)
             : simdpool_unpool(plan, src, idx, dst);
  }
  env_leave();
  return st;
}

/* A failing call must say why. */
static void expect_status(simdpool_status got, simdpool_status want,
                          const char *what) {
  if (got != want)
    fail("%s returned %s, expected %s (last error: %s)", what, status_name(got),
         status_name(want), simdpool_last_error());
  if (got != SIMDPOOL_OK && !*simdpool_last_error())
    fail("%s failed with %s but simdpool_last_error() is empty", what,
         status_name(got));
}

/* ------------------------------------------------------------ one input */

typedef struct fuzz {
  simdpool_desc d;
  reader *r;
  unsigned opts;
  size_t od, oh, ow, in_n, out_n, isz;
  /* NHWC pixel strides in elements (c when dense; 1 and unused in NCHW),
   * pixels of x and y, and the elements x/dx and y/dy span */
  size_t xs, ys, in_px, out_px, x_span, y_span;
  int has_idx, clamped;
  size_t es;                    /* bytes per element of the plan's dtype */
  int fwd_only;                 /* S8/U8: backward is UNSUPPORTED */
  buf x, dy, idx_good, idx_bad; /* inputs */
  buf y, idx, dx;               /* outputs */
  /* the scalar reference's results */
  unsigned char *ref_y, *ref_idx, *ref_dx, *ref_dx_idx, *ref_dx_bad;
  /* unpooling (into dx's buffer, from dy as y) and its backward (into y's
   * buffer, from x as dx): from forward's indices, from corrupted ones */
  unsigned char *ref_up[2], *ref_upb[2];
  simdpool_status ref_up_st[2];
  unsigned char *x_copy, *dy_copy; /* inputs must stay as they are */
  simdpool_status ref_bad_st;
} fuzz;

static int64_t idx_get(const fuzz *f, const unsigned char *p, size_t i) {
  switch (f->d.index_type) {
  case SIMDPOOL_INDEX_I32: {
    int32_t v;
    memcpy(&v, p + i * 4, 4);
    return v;
  }
  case SIMDPOOL_INDEX_I64: {
    int64_t v;
    memcpy(&v, p + i * 8, 8);
    return v;
  }
  default:
    return p[i];
  }
}

static void idx_set(const fuzz *f, unsigned char *p, size_t i, uint64_t v) {
  switch (f->d.index_type) {
  case SIMDPOOL_INDEX_I32: {
    const uint32_t u = (uint32_t)v;
    memcpy(p + i * 4, &u, 4);
    break;
  }
  case SIMDPOOL_INDEX_I64:
    memcpy(p + i * 8, &v, 8);
    break;
  default:
    p[i] = (unsigned char)v;
    break;
  }
}

/* idx_bad = forward's indices with a few entries changed as the input
 * says: off by one, a row, a depth slice or a column, raw values, extremes,
 * a neighbour's index. Some stay valid taps of their window, most do not.
 * (The sizes fit: the tensors were allocated, and plan creation bounds U8
 * windows by 256 taps.) */
static void corrupt_indices(fuzz *f) {
  unsigned char *p = f->idx_bad.data;
  memcpy(p, f->idx_good.data, f->idx_good.bytes);
  const int count = 1 + (int)(f->opts >> 6);
  const int u8 = f->d.index_type == SIMDPOOL_INDEX_U8;
  const int64_t row = u8 ? (int64_t)f->d.kernel_w : (int64_t)f->d.w;
  const int64_t slice = u8 ? (int64_t)(f->d.kernel_h * f->d.kernel_w)
                           : (int64_t)(f->d.h * f->d.w);
  const int64_t plane =
      u8 ? slice * (int64_t)f->d.kernel_d : slice * (int64_t)f->d.d;
  for (int k = 0; k < count; k++) {
    const size_t pos = (size_t)data_le(f->r, 2) % f->out_n;
    const int64_t v = idx_get(f, p, pos);
    const uint8_t kind = data_u8(f->r);
    const int64_t step = (kind & 8u) ? slice : row;
    uint64_t nv;
    switch (kind % 8) {
    case 0:
      nv = (uint64_t)v + 1;
      break;
    case 1:
      nv = (uint64_t)v - 1;
      break;
    case 2:
      nv = (uint64_t)v + (uint64_t)step;
      break;
    case 3:
      nv = (uint64_t)v - (uint64_t)step;
      break;
    case 4:
      nv = data_le(f->r, (int)f->isz);
      break;
    case 5: {
      const uint64_t specials[8] = {UINT64_MAX, /* -1 */
                                    u8 ? 255u : (uint64_t)INT32_MIN,
                                    (uint64_t)INT32_MAX,
                                    (uint64_t)INT64_MIN,
                                    (uint64_t)plane,
                                    (uint64_t)plane - 1,
                                    0,
                                    256};
      nv = specials[data_u8(f->r) % 8];
      break;
    }
    case 6:
      nv = (uint64_t)idx_get(f, p, (size_t)data_le(f->r, 2) % f->out_n);
      break;
    default:
      nv = (uint64_t)v + (uint64_t)((int64_t)data_u8(f->r) - 128);
      break;
    }
    idx_set(f, p, pos, nv);
  }
}

/* The elements between the pixels of a strided y or dx (stride > c) must
 * hold what the buffer was filled with; they are then zeroed, so that
 * results written over different fills compare equal. */
static void settle_gaps(const fuzz *f, buf *b, size_t stride, size_t pixels,
                        unsigned char fill, const char *what) {
  const size_t c = f->d.c, gap = (stride - c) * f->es;
  if (stride <= c)
    return;
  for (size_t px = 0; px + 1 < pixels; px++) {
    unsigned char *g = b->data + (px * stride + c) * f->es;
    if (!all_bytes(g, gap, fill)) {
      const size_t i = first_other(g, gap, fill);
      fail("%s: element %zu between pixels %zu and %zu (stride %zu, c %zu) "
           "written: byte 0x%02x, was 0x%02x",
           what, c + i / f->es, px, px + 1, stride, c, g[i], fill);
    }
    memset(g, 0, gap);
  }
}

static void save_or_compare(int ref_first, unsigned char *ref, const buf *b,
                            size_t elem, const char *what) {
  if (ref_first)
    memcpy(ref, b->data, b->bytes);
  else
    check_same(b->data, ref, b->bytes, elem, what);
}

static uint32_t float_bits(float v) {
  uint32_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* An oracle independent of the library for 2D fixed 1x1 windows (no
 * padding is possible, dilation does not matter): y(oy, ox) = f(x(oy*sh,
 * ox*sw)) with MAX f(v) = v (its exact bits; index oy*sh*w + ox*sw, or tap 0),
 * AVG f(v) = (0.0f + v) / 1.0f (so -0 gives +0), LP p = 1 |v|, LP p = 2
 * sqrtf(|v|*|v|); NaN results canonical except for MAX. Checks the scalar
 * reference's forward. */
static void check_1x1_oracle(const fuzz *f) {
  const simdpool_desc *d = &f->d;
  if (d->kernel_h != 1 || d->kernel_w != 1 || d->d != 1 || d->kernel_d != 1 ||
      d->adaptive || d->dtype != SIMDPOOL_F32)
    return;
  if (d->method == SIMDPOOL_LP && d->p != 1.0f && d->p != 2.0f)
    return;
  const float *x = (const float *)f->x.data;
  const int nhwc = d->layout == SIMDPOOL_NHWC;
  size_t o = 0;
  for (size_t ni = 0; ni < d->n; ni++) {
    for (size_t ci = 0; ci < (nhwc ? 1 : d->c); ci++) {
      for (size_t oy = 0; oy < f->oh; oy++) {
        for (size_t ox = 0; ox < f->ow; ox++) {
          for (size_t cj = 0; cj < (nhwc ? d->c : 1); cj++, o++) {
            const size_t ch = nhwc ? cj : ci;
            const size_t iy = oy * d->stride_h, ix = ox * d->stride_w;
            const size_t at = nhwc ? ((ni * d->h + iy) * d->w + ix) * f->xs + ch
                                   : ((ni * d->c + ch) * d->h + iy) * d->w + ix;
            const size_t yat = nhwc ? (o / d->c) * f->ys + o % d->c : o;
            const float v = x[at];
            uint32_t want;
            if (d->method == SIMDPOOL_MAX) {
              want = float_bits(v);
            } else {
              const float a = fabsf(v);
              const float r = d->method == SIMDPOOL_AVG ? (0.0f + v) / 1.0f
                              : d->p == 1.0f            ? a
                                                        : sqrtf(a * a);
              want = isnan(r) ? 0x7fc00000u : float_bits(r);
            }
            if (f->clamped) {
              const float rv = bits_float(want);
              if (rv < d->clamp_min)
                want = float_bits(d->clamp_min);
              else if (rv > d->clamp_max)
                want = float_bits(d->clamp_max);
            }
            uint32_t got;
            memcpy(&got, f->y.data + yat * sizeof(float), sizeof got);
            if (got != want)
              fail("1x1 window: scalar y[%zu] = 0x%08x, expected 0x%08x "
                   "(x[%zu] = 0x%08x)",
                   yat, got, want, at, float_bits(v));
            if (d->method != SIMDPOOL_MAX || !f->has_idx)
              continue;
            const int64_t gi = idx_get(f, f->idx.data, o);
            const int64_t wi = d->index_type == SIMDPOOL_INDEX_U8
                                   ? 0
                                   : (int64_t)(iy * d->w + ix);
            if (gi != wi)
              fail("1x1 window: scalar index[%zu] = %lld, expected %lld", o,
                   (long long)gi, (long long)wi);
          }
        }
      }
    }
  }
}

enum { BW_NOIDX, BW_IDX, BW_BAD };

/* Runs everything on one plan. ref: this is the scalar reference run that
 * records the results every later run must match. */
static void run_plan(fuzz *f, const simdpool_plan *plan, int ref) {
  static unsigned char dummy[64]; /* indices a plan without them refuses */
  const unsigned char fill = ref ? FILL_REF : FILL_RUN;
  void *idx_out = f->has_idx ? f->idx.data : NULL;
  const float *x = (const float *)f->x.data;
  const float *dy = (const float *)f->dy.data;
  float *y = (float *)f->y.data, *dx = (float *)f->dx.data;
  char what[96];

  size_t pool_calls = 0;
  for (int mode = 0; mode < NMODES; mode++) {
    if (!mode_runs(mode, &pool_calls))
      continue;
    snprintf(what, sizeof what, "forward%s", mode_names[mode]);
    g_stage = what;
    buf_fill(&f->y, fill);
    buf_fill(&f->idx, fill);
    expect_status(call_forward(mode, plan, x, y, idx_out), SIMDPOOL_OK, what);
    check_guards(&f->y, "y");
    check_guards(&f->idx, "indices");
    settle_gaps(f, &f->y, f->ys, f->out_px, fill, "y");
    const int first = ref && mode == MODE_PLAIN;
    save_or_compare(first, f->ref_y, &f->y, f->es, "y");
    if (f->has_idx)
      save_or_compare(first, f->ref_idx, &f->idx, f->isz, "indices");
    if (first)
      check_1x1_oracle(f);
    if (first && f->has_idx) {
      memcpy(f->idx_good.data, f->idx.data, f->idx.bytes);
      corrupt_indices(f);
    }
  }

  for (int v = BW_NOIDX; v <= BW_BAD; v++) {
    if (v != BW_NOIDX && !f->has_idx)
      break;
    const void *ix = v == BW_IDX   ? (const void *)f->idx_good.data
                     : v == BW_BAD ? (const void *)f->idx_bad.data
                                   : NULL;
    const float *xb = x;
    if (v == BW_NOIDX && f->d.method == SIMDPOOL_AVG &&
        (f->opts & OPT_AVG_NULL_X))
      xb = NULL;
    if (v != BW_NOIDX && (f->opts & OPT_IDX_NULL_X))
      xb = NULL;
    unsigned char *refbuf = v == BW_NOIDX ? f->ref_dx
                            : v == BW_IDX ? f->ref_dx_idx
                                          : f->ref_dx_bad;
    for (int mode = 0; mode < NMODES; mode++) {
      if (!mode_runs(mode, &pool_calls))
        continue;
      snprintf(what, sizeof what, "backward%s %s", mode_names[mode],
               v == BW_NOIDX ? "without indices"
               : v == BW_IDX ? "from forward's indices"
                             : "from corrupted indices");
      g_stage = what;
      buf_fill(&f->dx, fill);
      const simdpool_status st = call_backward(mode, plan, dy, ix, xb, dx);
      check_guards(&f->dx, "dx");
      const int first = ref && mode == MODE_PLAIN;
      if (f->fwd_only) { /* S8/U8 */
        expect_status(st, SIMDPOOL_UNSUPPORTED, what);
        check_untouched(&f->dx, fill, "dx");
        continue;
      }
      if (f->clamped) { /* the clamp is forward's only: never a backward */
        expect_status(st, SIMDPOOL_INVALID_ARGUMENT, what);
        check_untouched(&f->dx, fill, "dx");
        continue;
      }
      if (st == SIMDPOOL_OK)
        settle_gaps(f, &f->dx, f->xs, f->in_px, fill, "dx");
      if (v != BW_BAD) {
        expect_status(st, SIMDPOOL_OK, what);
      } else if (first) {
        if (st != SIMDPOOL_OK)
          expect_status(st, SIMDPOOL_INVALID_ARGUMENT, what);
        f->ref_bad_st = st;
      } else {
        expect_status(st, f->ref_bad_st, what);
      }
      if (st == SIMDPOOL_OK)
        save_or_compare(first, refbuf, &f->dx, f->es, "dx");
      else
        check_untouched(&f->dx, fill, "dx");
    }
    /* MAX backward from forward's indices and from x pick the same
     * winners and add in the same order: the same bits. */
    if (ref && v == BW_IDX && !f->clamped && !f->fwd_only) {
      g_stage = "backward from indices vs from x";
      check_same(f->ref_dx_idx, f->ref_dx, f->dx.bytes, f->es,
                 "dx from indices vs dx recomputed from x (scalar)");
    }
  }

  /* Unpooling from forward's indices (dy's values as y; every index a tap
   * of its window) and from corrupted ones (any in-plane I32/I64 index is
   * accepted, so the status is the scalar reference's, and on success the
   * bits are too), and its backward (x's values as dx). A plan without
   * indices, or not MAX, refuses both and writes nothing. */
  for (int bad = 0; bad < 2; bad++) {
    const void *ix = !f->has_idx ? (const void *)dummy
                     : bad       ? (const void *)f->idx_bad.data
                                 : (const void *)f->idx_good.data;
    for (int bwd = 0; bwd < 2; bwd++) {
      buf *out = bwd ? &f->y : &f->dx;
      unsigned char *refbuf = bwd ? f->ref_upb[bad] : f->ref_up[bad];
      for (int mode = 0; mode < NMODES; mode++) {
        if (!mode_runs(mode, &pool_calls))
          continue;
        snprintf(what, sizeof what, "unpool%s%s %s", bwd ? "_backward" : "",
                 mode_names[mode],
                 bad ? "from corrupted indices" : "from forward's indices");
        g_stage = what;
        buf_fill(out, fill);
        const simdpool_status st =
            call_unpool(mode, bwd, plan, bwd ? x : dy, ix, (float *)out->data);
        check_guards(out, bwd ? "y (unpooling's dy)" : "dx (unpooled x)");
        const int first = ref && mode == MODE_PLAIN;
        if (!f->has_idx) {
          expect_status(st, SIMDPOOL_INVALID_ARGUMENT, what);
        } else if (!bad) {
          expect_status(st, SIMDPOOL_OK, what);
        } else if (first && !bwd) {
          if (st != SIMDPOOL_OK)
            expect_status(st, SIMDPOOL_INVALID_ARGUMENT, what);
          f->ref_up_st[1] = st;
        } else {
          expect_status(st, f->ref_up_st[1], what);
        }
        if (st != SIMDPOOL_OK) {
          check_untouched(out, fill, bwd ? "unpooling's dy" : "unpooled x");
          continue;
        }
        settle_gaps(f, out, bwd ? f->ys : f->xs, bwd ? f->out_px : f->in_px,
                    fill, bwd ? "unpooling's dy" : "unpooled x");
        save_or_compare(first, refbuf, out, f->es,
                        bwd ? "unpooling's dy" : "unpooled x");
      }
    }
    if (!f->has_idx)
      break;
  }

  /* Inputs are const. */
  if (memcmp(f->x.data, f->x_copy, f->x.bytes) != 0 ||
      memcmp(f->dy.data, f->dy_copy, f->dy.bytes) != 0 ||
      (f->has_idx &&
       memcmp(f->idx_good.data, f->ref_idx, f->idx_good.bytes) != 0))
    fail("an input (x, dy or indices) was written to");

  /* Argument errors: INVALID_ARGUMENT, and no output written. */
  for (int mode = 0; mode < NMODES; mode++) {
    snprintf(what, sizeof what, "forward%s with bad arguments",
             mode_names[mode]);
    g_stage = what;
    buf_fill(&f->y, fill);
    buf_fill(&f->idx, fill);
    expect_status(call_forward(mode, plan, NULL, y, idx_out),
                  SIMDPOOL_INVALID_ARGUMENT, "forward with x = NULL");
    expect_status(call_forward(mode, plan, x, NULL, idx_out),
                  SIMDPOOL_INVALID_ARGUMENT, "forward with y = NULL");
    expect_status(call_forward(mode, NULL, x, y, idx_out),
                  SIMDPOOL_INVALID_ARGUMENT, "forward with plan = NULL");
    expect_status(call_forward(mode, plan, x, y, f->has_idx ? NULL : dummy),
                  SIMDPOOL_INVALID_ARGUMENT,
                  f->has_idx ? "forward without the plan's indices"
                             : "forward with indices on a plan without");
    check_untouched(&f->y, fill, "y");
    check_untouched(&f->idx, fill, "indices");

    snprintf(what, sizeof what, "backward%s with bad arguments",
             mode_names[mode]);
    g_stage = what;
    buf_fill(&f->dx, fill);
    expect_status(call_backward(mode, plan, NULL, NULL, x, dx),
                  SIMDPOOL_INVALID_ARGUMENT, "backward with dy = NULL");
    expect_status(call_backward(mode, plan, dy, NULL, x, NULL),
                  SIMDPOOL_INVALID_ARGUMENT, "backward with dx = NULL");
    expect_status(call_backward(mode, NULL, dy, NULL, x, dx),
                  SIMDPOOL_INVALID_ARGUMENT, "backward with plan = NULL");
    /* S8/U8 plans refuse any backward once its pointers are there. */
    const simdpool_status later =
        f->fwd_only ? SIMDPOOL_UNSUPPORTED : SIMDPOOL_INVALID_ARGUMENT;
    if (f->d.method != SIMDPOOL_AVG)
      expect_status(call_backward(mode, plan, dy, NULL, NULL, dx), later,
                    "MAX/LP backward without x or indices");
    if (!f->has_idx)
      expect_status(call_backward(mode, plan, dy, dummy, x, dx), later,
                    "backward with indices on a plan without");
    check_untouched(&f->dx, fill, "dx");
  }
  g_stage = "";
}

static int mul_fits(size_t a, size_t b, size_t *r) {
  if (b != 0 && a > SIZE_MAX / b)
    return 0;
  *r = a * b;
  return 1;
}

/* Does this shape exceed what the SIMD kernels index in int32 lanes (an
 * input plane d*h*w or a window kernel_d*kernel_h*kernel_w above
 * INT32_MAX, as simd_geom_ok in dispatch/plan.c; an adaptive window lies
 * inside the plane)? Then a forced SIMD ISA may answer UNSUPPORTED where
 * scalar accepts. */
static int simd_too_big(const simdpool_desc *d) {
  size_t plane, taps;
  return !mul_fits(d->d, d->h, &plane) || !mul_fits(plane, d->w, &plane) ||
         plane > INT32_MAX || !mul_fits(d->kernel_d, d->kernel_h, &taps) ||
         !mul_fits(taps, d->kernel_w, &taps) || taps > INT32_MAX;
}

/* The most input elements an adaptive window of one axis holds:
 * [floor(i*in/out), ceil((i+1)*in/out)) spans at most ceil(in/out) + 1,
 * and never more than in. */
static size_t adaptive_extent(size_t in, size_t out) {
  const size_t e = in / out + 2;
  return e < in ? e : in;
}

static const simdpool_isa all_isas[] = {SIMDPOOL_ISA_SCALAR, SIMDPOOL_ISA_SSE41,
                                        SIMDPOOL_ISA_AVX2, SIMDPOOL_ISA_AVX512,
                                        SIMDPOOL_ISA_NEON};
#define NISAS (sizeof all_isas / sizeof all_isas[0])

/* simdpool_plan_create with the checks every call must pass: *out is NULL
 * exactly on failure, a failure has a message and a known status. */
static simdpool_status create(const simdpool_desc *d, simdpool_plan **out) {
  static char sentinel;
  *out = (simdpool_plan *)(void *)&sentinel;
  const simdpool_status st = simdpool_plan_create(d, out);
  if (st == SIMDPOOL_OK) {
    if (!*out)
      fail("plan_create returned ok with a NULL plan");
    return st;
  }
  if (*out)
    fail("plan_create failed (%s) but left *out = %p", status_name(st),
         (void *)*out);
  if (st != SIMDPOOL_INVALID_ARGUMENT && st != SIMDPOOL_UNSUPPORTED &&
      st != SIMDPOOL_OUT_OF_MEMORY)
    fail("plan_create returned status %d", (int)st);
  if (!*simdpool_last_error())
    fail("plan_create failed (%s) with an empty simdpool_last_error()",
         status_name(st));
  return st;
}

/* SIMDPOOL_ISA for the input, by the V byte; NULL leaves it alone. */
static const char *env_value(int sel) {
  static const char *const names[] = {NULL,     "scalar", "sse41", "avx2",
                                      "avx512", "neon",   "auto",  "avx1024"};
  return sel >= 0 && sel < 8 ? names[sel] : NULL;
}

/* Which ISA the environment (value env) makes AUTO plans run: -1 best
 * supported, -2 an unknown name, else the named ISA. */
static int env_isa(const char *env) {
  if (!env || !*env || strcmp(env, "auto") == 0)
    return -1;
  for (size_t i = 0; i < NISAS; i++)
    if (strcmp(env, simdpool_isa_name(all_isas[i])) == 0)
      return (int)all_isas[i];
  return -2;
}

/* count elements of dtype t into b: f32 by dec_float; bf16 and f16 a tag
 * byte t < 0x80 gives one of a few values (ties: ±0, ±1, 2, a NaN with a
 * payload, inf), else a raw 16-bit pattern follows; S8/U8 raw bytes. */
static void fill_data(reader *r, buf *b, size_t count, simdpool_dtype t) {
  if (t == SIMDPOOL_F32) {
    for (size_t i = 0; i < count; i++) {
      const float v = dec_float(r);
      memcpy(b->data + 4 * i, &v, 4);
    }
  } else if (t == SIMDPOOL_BF16 || t == SIMDPOOL_F16) {
    static const uint16_t few[2][8] = {
        {0x0000, 0x8000, 0x3f80, 0xbf80, 0x4000, 0x7f81, 0x7f80, 0x0001},
        {0x0000, 0x8000, 0x3c00, 0xbc00, 0x4000, 0x7c01, 0x7c00, 0x0001}};
    for (size_t i = 0; i < count; i++) {
      const uint8_t tag = data_u8(r);
      const uint16_t h = tag < 0x80 ? few[t == SIMDPOOL_F16][tag % 8]
                                    : (uint16_t)data_le(r, 2);
      memcpy(b->data + 2 * i, &h, 2);
    }
  } else {
    for (size_t i = 0; i < count; i++)
      b->data[i] = data_u8(r);
  }
}

/* The checks and runs of one decoded input. */
static void fuzz_one(reader *r, const simdpool_desc *desc, unsigned opts,
                     unsigned env_code) {
  fuzz f;
  memset(&f, 0, sizeof f);
  g_max_tasks = 0;
  f.d = *desc;
  f.r = r;
  f.opts = opts;
  const int raw_isa = (int)desc->isa;

  /* Plans: the scalar reference, every other ISA forced, and the isa the
   * input gave (AUTO, or out of range). */
  simdpool_plan *plans[NISAS + 1] = {NULL};
  const char *labels[NISAS + 1] = {NULL};
  simdpool_status st[NISAS];
  char scalar_err[256] = "";
  for (size_t i = 0; i < NISAS; i++) {
    simdpool_desc d = *desc;
    d.isa = all_isas[i];
    g_label = simdpool_isa_name(all_isas[i]);
    g_stage = "plan_create";
    labels[i] = g_label;
    st[i] = create(&d, &plans[i]);
    if (i == 0 && st[0] != SIMDPOOL_OK)
      snprintf(scalar_err, sizeof scalar_err, "%s", simdpool_last_error());
    const int runs = simdpool_isa_supported(all_isas[i]);
    if (!runs && st[i] == SIMDPOOL_OK)
      fail("plan_create accepted isa=%s, which simdpool_isa_supported() "
           "says this machine lacks",
           g_label);
    if (runs && i > 0 && st[i] != st[0] &&
        !(st[0] == SIMDPOOL_OK && st[i] == SIMDPOOL_UNSUPPORTED &&
          simd_too_big(desc)))
      fail("plan_create returned %s, scalar %s (last error: %s)",
           status_name(st[i]), status_name(st[0]), simdpool_last_error());
    if (st[i] == SIMDPOOL_OK && simdpool_plan_isa(plans[i]) != all_isas[i])
      fail("plan_isa() = %s, forced %s",
           simdpool_isa_name(simdpool_plan_isa(plans[i])), g_label);
  }

  /* The descriptor's own isa: out of range must be rejected; AUTO follows
   * SIMDPOOL_ISA or picks the best supported ISA. */
  size_t nplans = NISAS;
  if (raw_isa < (int)SIMDPOOL_ISA_AUTO || raw_isa > (int)SIMDPOOL_ISA_NEON ||
      raw_isa == (int)SIMDPOOL_ISA_AUTO) {
    g_label = "desc.isa";
    g_stage = "plan_create";
    simdpool_plan *p;
    const simdpool_status s = create(desc, &p);
    if (raw_isa != (int)SIMDPOOL_ISA_AUTO) {
      expect_status(s, SIMDPOOL_INVALID_ARGUMENT, "plan_create");
    } else if (st[0] != SIMDPOOL_OK) {
      if (s == SIMDPOOL_OK)
        fail("AUTO plan accepted a descriptor scalar rejects (%s)",
             status_name(st[0]));
    } else {
      const int want = env_isa(getenv("SIMDPOOL_ISA"));
      if (want == -2)
        expect_status(s, SIMDPOOL_INVALID_ARGUMENT, "plan_create (AUTO)");
      else if (want >= 0 && !simdpool_isa_supported((simdpool_isa)want))
        expect_status(s, SIMDPOOL_UNSUPPORTED, "plan_create (AUTO)");
      else if (!(s == SIMDPOOL_UNSUPPORTED && want >= 0 && simd_too_big(desc)))
        expect_status(s, SIMDPOOL_OK, "plan_create (AUTO)");
      if (s == SIMDPOOL_OK) {
        const simdpool_isa got = simdpool_plan_isa(p);
        simdpool_isa best = SIMDPOOL_ISA_SCALAR;
        for (size_t i = 0; i < NISAS; i++)
          if (simdpool_isa_supported(all_isas[i]))
            best = all_isas[i];
        if (want >= 0 && got != (simdpool_isa)want)
          fail("AUTO plan runs %s, SIMDPOOL_ISA asks for %s",
               simdpool_isa_name(got), simdpool_isa_name((simdpool_isa)want));
        if (want == -1 && got != best && !simd_too_big(desc))
          fail("AUTO plan runs %s, the best ISA here is %s",
               simdpool_isa_name(got), simdpool_isa_name(best));
        if (!simdpool_isa_supported(got) || got == SIMDPOOL_ISA_AUTO)
          fail("AUTO plan runs %s", simdpool_isa_name(got));
      }
    }
    if (s == SIMDPOOL_OK) {
      plans[nplans] = p;
      labels[nplans++] = "auto";
    }
  }

  /* Accepted plans agree on the output shape (output_shape is
   * output_dims without the depth); adaptive plans have the one asked. */
  if (st[0] == SIMDPOOL_OK) {
    g_label = labels[0];
    g_stage = "output shape";
    simdpool_plan_output_dims(plans[0], &f.od, &f.oh, &f.ow);
    simdpool_plan_output_dims(plans[0], NULL, NULL, NULL);
    simdpool_plan_output_shape(plans[0], NULL, NULL);
    if (f.od == 0 || f.oh == 0 || f.ow == 0)
      fail("scalar plan has output %zux%zux%zu", f.od, f.oh, f.ow);
    if (desc->adaptive &&
        (f.od != desc->out_d || f.oh != desc->out_h || f.ow != desc->out_w))
      fail("adaptive plan has output %zux%zux%zu, asked for %zux%zux%zu", f.od,
           f.oh, f.ow, desc->out_d, desc->out_h, desc->out_w);
    for (size_t i = 0; i < nplans; i++) {
      size_t od, oh, ow, oh2, ow2;
      if (!plans[i])
        continue;
      g_label = labels[i];
      simdpool_plan_output_dims(plans[i], &od, &oh, &ow);
      simdpool_plan_output_shape(plans[i], &oh2, &ow2);
      if (od != f.od || oh != f.oh || ow != f.ow)
        fail("output %zux%zux%zu, scalar %zux%zux%zu", od, oh, ow, f.od, f.oh,
             f.ow);
      if (oh2 != oh || ow2 != ow)
        fail("plan_output_shape %zux%zu, plan_output_dims %zux%zux%zu", oh2,
             ow2, od, oh, ow);
    }
    g_stage = "";
  }

  /* Tensors only for accepted plans below the caps; the work is the
   * output times the taps of the largest window. */
  size_t nc = 0, taps = 0, work = 0;
  if (desc->adaptive && st[0] == SIMDPOOL_OK)
    taps = adaptive_extent(desc->d, f.od) * adaptive_extent(desc->h, f.oh) *
           adaptive_extent(desc->w, f.ow);
  int small =
      st[0] == SIMDPOOL_OK && mul_fits(desc->n, desc->c, &nc) &&
      mul_fits(nc, desc->d, &f.in_n) && mul_fits(f.in_n, desc->h, &f.in_n) &&
      mul_fits(f.in_n, desc->w, &f.in_n) && mul_fits(nc, f.od, &f.out_n) &&
      mul_fits(f.out_n, f.oh, &f.out_n) && mul_fits(f.out_n, f.ow, &f.out_n) &&
      (desc->adaptive || (mul_fits(desc->kernel_d, desc->kernel_h, &taps) &&
                          mul_fits(taps, desc->kernel_w, &taps))) &&
      mul_fits(f.out_n, taps, &work) && f.in_n <= fuzz_pool_max_elems &&
      f.out_n <= fuzz_pool_max_elems &&
      work <= 2 * fuzz_pool_max_elems - f.in_n;
  /* Strided NHWC tensors span (pixels - 1) * stride + c elements. */
  const int nhwc = desc->layout == SIMDPOOL_NHWC;
  f.xs = nhwc ? (desc->x_pixel_stride ? desc->x_pixel_stride : desc->c) : 1;
  f.ys = nhwc ? (desc->y_pixel_stride ? desc->y_pixel_stride : desc->c) : 1;
  f.x_span = f.in_n;
  f.y_span = f.out_n;
  if (small && nhwc) {
    f.in_px = f.in_n / desc->c;
    f.out_px = f.out_n / desc->c;
    small = mul_fits(f.in_px - 1, f.xs, &f.x_span) &&
            mul_fits(f.out_px - 1, f.ys, &f.y_span) &&
            (f.x_span += desc->c) <= fuzz_pool_max_elems &&
            (f.y_span += desc->c) <= fuzz_pool_max_elems;
  }
  if (small) {
    f.clamped = desc->clamp == 1;
    f.has_idx = desc->index_type != SIMDPOOL_INDEX_NONE;
    f.isz = desc->index_type == SIMDPOOL_INDEX_I32   ? 4
            : desc->index_type == SIMDPOOL_INDEX_I64 ? 8
                                                     : 1;
    f.es = desc->dtype == SIMDPOOL_F32                                   ? 4
           : desc->dtype == SIMDPOOL_BF16 || desc->dtype == SIMDPOOL_F16 ? 2
                                                                         : 1;
    f.fwd_only = desc->dtype == SIMDPOOL_S8 || desc->dtype == SIMDPOOL_U8;
    /* The plans' own byte counts against this independent computation. */
    const size_t want_bytes[5] = {f.x_span * f.es, f.y_span * f.es,
                                  f.has_idx ? f.out_n * f.isz : 0,
                                  f.y_span * f.es, f.x_span * f.es};
    for (size_t i = 0; i < nplans; i++)
      for (int t = 0; t < 5 && plans[i]; t++) {
        const size_t got =
            simdpool_plan_tensor_bytes(plans[i], (simdpool_tensor)t);
        if (got != want_bytes[t])
          fail("[%s] plan_tensor_bytes(tensor %d) = %zu, expected %zu",
               labels[i], t, got, want_bytes[t]);
      }
    const size_t in_mis = (f.opts & 3u) * f.es;
    const size_t out_mis = (f.opts >> 2) & 3u;
    buf_alloc(&f.x, f.x_span * f.es, in_mis, 0);
    buf_alloc(&f.dy, f.y_span * f.es, in_mis, 0);
    buf_alloc(&f.y, f.y_span * f.es, out_mis * f.es, 1);
    buf_alloc(&f.dx, f.x_span * f.es, out_mis * f.es, 1);
    /* The elements between strided pixels get data too (NaN, inf, ...):
     * no result may depend on them. */
    fill_data(r, &f.x, f.x_span, desc->dtype);
    fill_data(r, &f.dy, f.y_span, desc->dtype);
    f.x_copy = malloc(f.x.bytes);
    f.dy_copy = malloc(f.dy.bytes);
    if (!f.x_copy || !f.dy_copy)
      abort();
    memcpy(f.x_copy, f.x.data, f.x.bytes);
    memcpy(f.dy_copy, f.dy.data, f.dy.bytes);
    f.ref_y = malloc(f.y.bytes);
    f.ref_dx = malloc(f.dx.bytes);
    if (f.has_idx) {
      buf_alloc(&f.idx, f.out_n * f.isz, out_mis * f.isz, 1);
      buf_alloc(&f.idx_good, f.out_n * f.isz, 0, 0);
      buf_alloc(&f.idx_bad, f.out_n * f.isz, 0, 0);
      f.ref_idx = malloc(f.idx.bytes);
      f.ref_dx_idx = malloc(f.dx.bytes);
      f.ref_dx_bad = malloc(f.dx.bytes);
      if (!f.ref_idx || !f.ref_dx_idx || !f.ref_dx_bad)
        abort();
      for (int k = 0; k < 2; k++) {
        f.ref_up[k] = malloc(f.dx.bytes);
        f.ref_upb[k] = malloc(f.y.bytes);
        if (!f.ref_up[k] || !f.ref_upb[k])
          abort();
      }
    }
    if (!f.ref_y || !f.ref_dx)
      abort();

    g_label = "scalar (reference)";
    g_env_on = 0;
    run_plan(&f, plans[0], 1);
    g_env = tenv_decode(env_code);
    g_env_on = TENV_SUPPORTED;
    /* Every forced ISA (scalar again: an element no call writes shows up
     * as the two fill patterns differing); the AUTO plan runs one of
     * these ISAs' kernels, it was checked above. */
    for (size_t i = 0; i < NISAS; i++) {
      if (!plans[i])
        continue;
      g_label = labels[i];
      run_plan(&f, plans[i], 0);
    }
    g_env_on = 0;

    buf_free(&f.x);
    buf_free(&f.dy);
    buf_free(&f.y);
    buf_free(&f.dx);
    buf_free(&f.idx);
    buf_free(&f.idx_good);
    buf_free(&f.idx_bad);
    free(f.x_copy);
    free(f.dy_copy);
    free(f.ref_y);
    free(f.ref_idx);
    free(f.ref_dx);
    free(f.ref_dx_idx);
    free(f.ref_dx_bad);
    for (int k = 0; k < 2; k++) {
      free(f.ref_up[k]);
      free(f.ref_upb[k]);
    }
  }
  if (fuzz_pool_verbose) {
    printf("  %s\n  scalar: %s", g_desc_text, status_name(st[0]));
    if (st[0] == SIMDPOOL_OK)
      printf(", output %zux%zux%zu", f.od, f.oh, f.ow);
    if (small) {
      char e[64];
      printf(", bit-exact (caller environment %s) on",
             tenv_text(tenv_decode(env_code), e, sizeof e));
      for (size_t i = 0; i < NISAS; i++)
        if (plans[i])
          printf(" %s", labels[i]);
      if (f.has_idx)
        printf("; corrupted indices: backward %s, unpool %s",
               status_name(f.ref_bad_st), status_name(f.ref_up_st[1]));
      if (g_max_tasks > 1)
        printf("; parallel: up to %zu tasks", g_max_tasks);
    } else if (st[0] == SIMDPOOL_OK) {
      printf(", above the size cap: not run");
    } else {
      printf(" (%s)", scalar_err);
    }
    printf("\n");
  }
  for (size_t i = 0; i < nplans; i++)
    simdpool_plan_destroy(plans[i]);
  g_label = "";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The process's own SIMDPOOL_ISA, restored after inputs that set it. */
  static int env_saved;
  static char env_orig[128];
  static int env_orig_set;
  if (!env_saved) {
    const char *e = getenv("SIMDPOOL_ISA");
    env_orig_set = e != NULL;
    if (e)
      snprintf(env_orig, sizeof env_orig, "%s", e);
    env_saved = 1;
  }

  uint32_t h = 2166136261u; /* FNV-1a: the data generator's seed */
  for (size_t i = 0; i < size; i++)
    h = (h ^ data[i]) * 16777619u;
  reader r = {data, size, h ? h : 1u};

  simdpool_desc d;
  int env_sel;
  unsigned opts;
  decode_desc(&r, &d, &env_sel, &opts);
  const char *env = env_value(env_sel);
  if (env)
    setenv("SIMDPOOL_ISA", env, 1);
  describe(&d, getenv("SIMDPOOL_ISA"));

  /* The small functions must take anything. */
  g_label = "api";
  g_stage = "names";
  if (!simdpool_isa_name(d.isa) ||
      !simdpool_status_string((simdpool_status)d.ceil_mode))
    fail("a name function returned NULL");
  if (((int)d.isa < 0 || (int)d.isa > (int)SIMDPOOL_ISA_NEON) &&
      (strcmp(simdpool_isa_name(d.isa), "unknown") != 0 ||
       simdpool_isa_supported(d.isa)))
    fail("isa=%d: name \"%s\", supported %d", (int)d.isa,
         simdpool_isa_name(d.isa), simdpool_isa_supported(d.isa));
  simdpool_plan *p;
  expect_status(create(NULL, &p), SIMDPOOL_INVALID_ARGUMENT,
                "plan_create(NULL, &plan)");
  expect_status(simdpool_plan_create(&d, NULL), SIMDPOOL_INVALID_ARGUMENT,
                "plan_create(&desc, NULL)");
  simdpool_plan_destroy(NULL);

  fuzz_one(&r, &d, opts, size ? data[size - 1] : 0u);

  if (env) {
    if (env_orig_set)
      setenv("SIMDPOOL_ISA", env_orig, 1);
    else
      unsetenv("SIMDPOOL_ISA");
  }
  return 0;
}
