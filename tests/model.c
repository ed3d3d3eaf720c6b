/* SPDX-License-Identifier: MIT */
/* model.c - the independent brute-force reference of simdpool (see model.h).
 *
 * Every formula below is a rule of docs/semantics.md ("Shapes", "Numerics",
 * "Rejections") or of the contract DESIGN.md (ranks, adaptive windows); the
 * comments quote the rule they implement. Clarity over speed: no
 * precomputed tables, no fast paths. Every window is three axes (depth,
 * height, width), each resolved on its own by the same rules. */
#include "model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sleef.h>

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */
/* ------------------------------------------------------------------------ */

float model_canonical_nan(void) {
  uint32_t bits = 0x7fc00000u;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* "Every NaN produced by arithmetic is written as the canonical quiet NaN." */
static float canon(float v) {
  return isnan(v) ? model_canonical_nan() : v;
}

float model_pow(float x, float y) {
  return Sleef_powf1_u10purec(x, y);
}

/* Floor and ceiling of a / b for b > 0 and any sign of a. */
static long long floor_div(long long a, long long b) {
  long long q = a / b;
  if (a % b != 0 && a < 0)
    q -= 1;
  return q;
}

static long long ceil_div(long long a, long long b) {
  long long q = a / b;
  if (a % b != 0 && a > 0)
    q += 1;
  return q;
}

/* a * b, or 0 when the product does not fit in size_t. */
static int mul_fits(size_t a, size_t b, size_t *product) {
  if (a != 0 && b > SIZE_MAX / a)
    return 0;
  *product = a * b;
  return 1;
}

/* 1 when the product of the count factors times elem_size fits in
 * ptrdiff_t. */
static int bytes_fit(const size_t *factors, size_t count, size_t elem_size) {
  size_t t = elem_size;
  size_t i;
  for (i = 0; i < count; i++)
    if (!mul_fits(t, factors[i], &t))
      return 0;
  return t <= (size_t)PTRDIFF_MAX;
}

/* a * b * c compared with limit, without overflow (a, b, c >= 1). */
static int product_above(size_t a, size_t b, size_t c, size_t limit) {
  size_t t;
  if (!mul_fits(a, b, &t) || t > limit)
    return 1;
  if (!mul_fits(t, c, &t) || t > limit)
    return 1;
  return 0;
}

size_t model_index_size(simdpool_index_type t) {
  switch (t) {
  case SIMDPOOL_INDEX_I32:
    return 4;
  case SIMDPOOL_INDEX_I64:
    return 8;
  case SIMDPOOL_INDEX_U8:
    return 1;
  default:
    return 0;
  }
}

size_t model_elem(simdpool_layout layout, size_t C, size_t D, size_t H,
                  size_t W, size_t n, size_t c, size_t z, size_t h, size_t w) {
  if (layout == SIMDPOOL_NCHW)
    return (((n * C + c) * D + z) * H + h) * W + w;
  return (((n * D + z) * H + h) * W + w) * C + c;
}

void model_coords(simdpool_layout layout, size_t C, size_t D, size_t H,
                  size_t W, size_t off, size_t *n, size_t *c, size_t *z,
                  size_t *h, size_t *w) {
  if (layout == SIMDPOOL_NCHW) {
    *w = off % W;
    off /= W;
    *h = off % H;
    off /= H;
    *z = off % D;
    off /= D;
    *c = off % C;
    *n = off / C;
  } else {
    *c = off % C;
    off /= C;
    *w = off % W;
    off /= W;
    *h = off % H;
    off /= H;
    *z = off % D;
    *n = off / D;
  }
}

size_t model_x_count(const simdpool_desc *d) {
  return d->n * d->c * d->d * d->h * d->w;
}

size_t model_y_count(const simdpool_desc *d, const model_shape *s) {
  return d->n * d->c * s->out_d * s->out_h * s->out_w;
}

/* docs/semantics.md#pixel-strides: "0 means c (dense)"; NCHW is dense. */
static size_t x_stride(const simdpool_desc *d) {
  return d->layout == SIMDPOOL_NHWC && d->x_pixel_stride ? d->x_pixel_stride
                                                         : d->c;
}

static size_t y_stride(const simdpool_desc *d) {
  return d->layout == SIMDPOOL_NHWC && d->y_pixel_stride ? d->y_pixel_stride
                                                         : d->c;
}

/* "A tensor of P pixels spans (P - 1) * stride + c elements"; a pixel is
 * one (n, d, h, w). */
size_t model_x_span(const simdpool_desc *d) {
  if (d->layout == SIMDPOOL_NCHW)
    return model_x_count(d);
  return (d->n * d->d * d->h * d->w - 1) * x_stride(d) + d->c;
}

size_t model_y_span(const simdpool_desc *d, const model_shape *s) {
  if (d->layout == SIMDPOOL_NCHW)
    return model_y_count(d, s);
  return (d->n * s->out_d * s->out_h * s->out_w - 1) * y_stride(d) + d->c;
}

/* Dense channels-last offset off = pixel * c + channel lives at
 * pixel * stride + channel. */
size_t model_x_at(const simdpool_desc *d, size_t off) {
  if (d->layout == SIMDPOOL_NCHW)
    return off;
  return off / d->c * x_stride(d) + off % d->c;
}

size_t model_y_at(const simdpool_desc *d, size_t off) {
  if (d->layout == SIMDPOOL_NCHW)
    return off;
  return off / d->c * y_stride(d) + off % d->c;
}

/* "y = r < clamp_min ? clamp_min : (r > clamp_max ? clamp_max : r)" */
static float clamp_y(const simdpool_desc *d, float r) {
  if (!d->clamp)
    return r;
  if (r < d->clamp_min)
    return d->clamp_min;
  if (r > d->clamp_max)
    return d->clamp_max;
  return r;
}

/* ------------------------------------------------------------------------ */
/* Shapes                                                                   */
/* ------------------------------------------------------------------------ */

/* One spatial axis: "with input size in, kernel k, stride s, dilation d,
 * extent e = d*(k-1)+1, pads pb (begin) and pe (end)". Returns the reasons
 * this axis is rejected; stores out, pb, pe. */
static unsigned resolve_axis(simdpool_padding mode, int ceil_mode, long long in,
                             long long k, long long s, long long d,
                             long long pb_given, long long pe_given,
                             long long *out_p, long long *pb_p,
                             long long *pe_p) {
  unsigned reasons = 0;
  long long e = d * (k - 1) + 1;
  long long out, pb, pe;

  if (mode == SIMDPOOL_PAD_EXPLICIT) {
    /* "EXPLICIT: pb, pe as given. out = floor((in+pb+pe-e)/s)+1 in floor
     * mode; in ceil mode out = ceil((in+pb+pe-e)/s)+1, then out -= 1 if
     * (out-1)*s >= in+pb." */
    pb = pb_given;
    pe = pe_given;
    if (ceil_mode) {
      out = ceil_div(in + pb + pe - e, s) + 1;
      if ((out - 1) * s >= in + pb)
        out -= 1;
    } else {
      out = floor_div(in + pb + pe - e, s) + 1;
    }
  } else if (mode == SIMDPOOL_PAD_VALID) {
    /* "VALID: pb = pe = 0, floor mode." */
    pb = 0;
    pe = 0;
    out = floor_div(in - e, s) + 1;
  } else {
    /* "SAME_UPPER / SAME_LOWER: out = ceil(in/s); total = max((out-1)*s+e-in,
     * 0); SAME_UPPER puts floor(total/2) at the begin and the rest at the
     * end, SAME_LOWER the reverse." */
    long long total;
    out = ceil_div(in, s);
    total = (out - 1) * s + e - in;
    if (total < 0)
      total = 0;
    if (mode == SIMDPOOL_PAD_SAME_UPPER) {
      pb = total / 2;
      pe = total - pb;
    } else {
      pe = total / 2;
      pb = total - pe;
    }
  }

  /* "pb or pe >= e" */
  if (pb >= e || pe >= e)
    reasons |= MODEL_BAD_PAD_EXTENT;
  /* "out < 1" */
  if (out < 1) {
    reasons |= MODEL_BAD_OUT;
  } else {
    /* "a window that holds no input element": look at every window. */
    long long o;
    for (o = 0; o < out; o++) {
      long long start = o * s - pb;
      int holds = 0;
      long long t;
      for (t = 0; t < k; t++) {
        long long i = start + t * d;
        if (i >= 0 && i < in)
          holds = 1;
      }
      if (!holds) {
        reasons |= MODEL_BAD_WINDOW;
        break;
      }
    }
  }
  *out_p = out;
  *pb_p = pb;
  *pe_p = pe;
  return reasons;
}

/* The adaptive-window rules of DESIGN.md ("adaptive not 0 or 1; adaptive =
 * 0 with any output size; adaptive = 1 with a zero output size, a kernel,
 * stride or dilation other than 1, a padding mode other than EXPLICIT, any
 * pad, ceil mode, or LP"). */
static unsigned adaptive_reasons(const simdpool_desc *d) {
  if (d->adaptive != 0 && d->adaptive != 1)
    return MODEL_BAD_ADAPTIVE;
  if (d->adaptive == 0)
    return d->out_d || d->out_h || d->out_w ? MODEL_BAD_ADAPTIVE : 0u;
  if (d->out_d == 0 || d->out_h == 0 || d->out_w == 0)
    return MODEL_BAD_ADAPTIVE;
  if (d->kernel_d != 1 || d->kernel_h != 1 || d->kernel_w != 1 ||
      d->stride_d != 1 || d->stride_h != 1 || d->stride_w != 1 ||
      d->dilation_d != 1 || d->dilation_h != 1 || d->dilation_w != 1)
    return MODEL_BAD_ADAPTIVE;
  if (d->padding != SIMDPOOL_PAD_EXPLICIT || d->pad_front || d->pad_top ||
      d->pad_left || d->pad_back || d->pad_bottom || d->pad_right)
    return MODEL_BAD_ADAPTIVE;
  if (d->ceil_mode != 0 || d->method == SIMDPOOL_LP)
    return MODEL_BAD_ADAPTIVE;
  return 0;
}

size_t model_elem_size(simdpool_dtype t) {
  switch (t) {
  case SIMDPOOL_BF16:
  case SIMDPOOL_F16:
    return 2;
  case SIMDPOOL_S8:
  case SIMDPOOL_U8:
    return 1;
  default:
    return 4;
  }
}

static int is_int8(const simdpool_desc *d) {
  return d->dtype == SIMDPOOL_S8 || d->dtype == SIMDPOOL_U8;
}

/* "S8 and U8: forward only: backward and LP are UNSUPPORTED, and so is the
 * output clamp"; "Plan creation requires finite scales > 0, zero points and
 * clamp bounds inside the dtype's range, y_min <= y_max" (quant is read
 * only by S8/U8 AVG). */
static unsigned int8_reasons(const simdpool_desc *d) {
  if (!is_int8(d))
    return 0;
  unsigned r = 0;
  if (d->method == SIMDPOOL_LP || d->clamp == 1)
    r |= MODEL_UNSUP_INT8;
  if (d->method != SIMDPOOL_AVG)
    return r;
  const long long lo = d->dtype == SIMDPOOL_S8 ? -128 : 0;
  const long long hi = d->dtype == SIMDPOOL_S8 ? 127 : 255;
  const simdpool_quant *q = &d->quant;
  const long long ymin = q->y_min == INT32_MIN ? lo : q->y_min;
  const long long ymax = q->y_max == INT32_MAX ? hi : q->y_max;
  if (!(isfinite(q->x_scale) && q->x_scale > 0.0f) ||
      !(isfinite(q->y_scale) && q->y_scale > 0.0f) || q->x_zero_point < lo ||
      q->x_zero_point > hi || q->y_zero_point < lo || q->y_zero_point > hi ||
      ymin < lo || ymin > hi || ymax < lo || ymax > hi || ymin > ymax)
    r |= MODEL_BAD_QUANT;
  return r;
}

/* The windows' part of the S8/U8 AVG rules: at most 2^23 taps, and a
 * multiplier that is a normal f32 for divisors 1 and the largest window's
 * tap count ("kernel_d*kernel_h*kernel_w; adaptive: the largest window"),
 * found here by visiting every adaptive window (the test's sizes are
 * small). Only when the quantization's own fields passed (r). */
static unsigned quant_window_reasons(const simdpool_desc *d, unsigned r,
                                     const long long out[3]) {
  if (!is_int8(d) || d->method != SIMDPOOL_AVG ||
      (r & (MODEL_BAD_QUANT | MODEL_UNSUP_INT8)))
    return 0;
  const size_t in[3] = {d->d, d->h, d->w};
  const size_t k[3] = {d->kernel_d, d->kernel_h, d->kernel_w};
  double taps = 1.0;
  for (int ax = 0; ax < 3; ax++) {
    long long most = (long long)k[ax];
    if (d->adaptive == 1) {
      most = 0;
      for (long long o = 0; o < out[ax]; o++) {
        const long long start = o * (long long)in[ax] / out[ax];
        const long long end =
            ((o + 1) * (long long)in[ax] + out[ax] - 1) / out[ax];
        if (end - start > most)
          most = end - start;
      }
    }
    taps *= (double)most;
  }
  if (taps > 8388608.0)
    return MODEL_UNSUP_INT8;
  const float ratio = d->quant.x_scale / d->quant.y_scale;
  const float m = ratio / (float)taps;
  if (!isnormal(ratio) || !isnormal(m))
    return MODEL_BAD_QUANT;
  return 0;
}

void model_resolve(const simdpool_desc *d, model_shape *s) {
  unsigned r = 0;
  const size_t limit = (size_t)1 << 31;

  memset(s, 0, sizeof *s);

  /* Enum ranges. */
  if ((unsigned)d->method > (unsigned)SIMDPOOL_LP ||
      (unsigned)d->layout > (unsigned)SIMDPOOL_NHWC ||
      (unsigned)d->padding > (unsigned)SIMDPOOL_PAD_SAME_LOWER ||
      (unsigned)d->index_type > (unsigned)SIMDPOOL_INDEX_U8 ||
      (unsigned)d->isa > (unsigned)SIMDPOOL_ISA_NEON ||
      (unsigned)d->dtype > (unsigned)SIMDPOOL_U8)
    r |= MODEL_BAD_ENUM;

  /* "any zero size, stride or dilation" (the depth axis too) */
  if (d->n == 0 || d->c == 0 || d->d == 0 || d->h == 0 || d->w == 0 ||
      d->kernel_d == 0 || d->kernel_h == 0 || d->kernel_w == 0 ||
      d->stride_d == 0 || d->stride_h == 0 || d->stride_w == 0 ||
      d->dilation_d == 0 || d->dilation_h == 0 || d->dilation_w == 0)
    r |= MODEL_BAD_NULL_SIZE;

  /* docs/semantics.md#rejections: pads must be 0 unless padding == EXPLICIT */
  if (d->padding != SIMDPOOL_PAD_EXPLICIT &&
      (d->pad_front || d->pad_top || d->pad_left || d->pad_back ||
       d->pad_bottom || d->pad_right))
    r |= MODEL_BAD_PAD_MODE;

  /* "ceil_mode must be 0 or 1 (and 0 with VALID/SAME_*)" */
  if (d->ceil_mode != 0 && d->ceil_mode != 1)
    r |= MODEL_BAD_CEIL;
  if (d->ceil_mode != 0 && d->padding != SIMDPOOL_PAD_EXPLICIT)
    r |= MODEL_BAD_CEIL;

  /* "for AVG count_include_pad must be 0 or 1 (ignored by MAX and LP)" */
  if (d->method == SIMDPOOL_AVG && d->count_include_pad != 0 &&
      d->count_include_pad != 1)
    r |= MODEL_BAD_CIP;

  /* "an index type with AVG or LP" */
  if (d->method != SIMDPOOL_MAX && d->index_type != SIMDPOOL_INDEX_NONE)
    r |= MODEL_BAD_INDEX_TYPE;

  /* "LP with p not finite or <= 0" (p is checked only for LP) */
  if (d->method == SIMDPOOL_LP && !(isfinite(d->p) && d->p > 0.0f))
    r |= MODEL_BAD_P;

  /* Pixel strides: "NHWC only ... 0 or at least c". */
  if ((d->layout != SIMDPOOL_NHWC &&
       (d->x_pixel_stride || d->y_pixel_stride)) ||
      (d->x_pixel_stride && d->x_pixel_stride < d->c) ||
      (d->y_pixel_stride && d->y_pixel_stride < d->c))
    r |= MODEL_BAD_PIXEL_STRIDE;

  /* The clamp: "0 or 1; with 1 neither bound NaN, clamp_min <= clamp_max" */
  if ((d->clamp != 0 && d->clamp != 1) ||
      (d->clamp == 1 && (isnan(d->clamp_min) || isnan(d->clamp_max) ||
                         d->clamp_min > d->clamp_max)))
    r |= MODEL_BAD_CLAMP;

  r |= adaptive_reasons(d);
  r |= int8_reasons(d);

  /* Geometry, when the sizes make sense. */
  if (!(r & (MODEL_BAD_NULL_SIZE | MODEL_BAD_ENUM))) {
    long long out[3], pb[3], pe[3];
    unsigned geo = 0;
    const size_t elem = model_elem_size(d->dtype);
    size_t factors[5];
    int ax;
    /* The model's own limit (see model.h): it never sees larger values. */
    if (d->d >= limit || d->h >= limit || d->w >= limit ||
        d->kernel_d >= limit || d->kernel_h >= limit || d->kernel_w >= limit ||
        d->stride_d >= limit || d->stride_h >= limit || d->stride_w >= limit ||
        d->dilation_d >= limit || d->dilation_h >= limit ||
        d->dilation_w >= limit || d->pad_front >= limit ||
        d->pad_back >= limit || d->pad_top >= limit || d->pad_bottom >= limit ||
        d->pad_left >= limit || d->pad_right >= limit || d->out_d >= limit ||
        d->out_h >= limit || d->out_w >= limit) {
      /* Outside the model's domain; the test generator never goes there. */
      s->reasons = r | MODEL_BAD_OVERFLOW;
      return;
    }
    if (d->adaptive == 1) {
      /* "the output size is given": no padding, every window non-empty
       * (a zero output size is MODEL_BAD_ADAPTIVE). */
      out[0] = (long long)d->out_d;
      out[1] = (long long)d->out_h;
      out[2] = (long long)d->out_w;
      for (ax = 0; ax < 3; ax++) {
        pb[ax] = pe[ax] = 0;
        if (out[ax] < 1)
          geo |= MODEL_BAD_OUT;
      }
    } else {
      /* "Per spatial axis (depth, height, width alike)" */
      geo |= resolve_axis(d->padding, d->ceil_mode != 0, (long long)d->d,
                          (long long)d->kernel_d, (long long)d->stride_d,
                          (long long)d->dilation_d, (long long)d->pad_front,
                          (long long)d->pad_back, &out[0], &pb[0], &pe[0]);
      geo |= resolve_axis(d->padding, d->ceil_mode != 0, (long long)d->h,
                          (long long)d->kernel_h, (long long)d->stride_h,
                          (long long)d->dilation_h, (long long)d->pad_top,
                          (long long)d->pad_bottom, &out[1], &pb[1], &pe[1]);
      geo |= resolve_axis(d->padding, d->ceil_mode != 0, (long long)d->w,
                          (long long)d->kernel_w, (long long)d->stride_w,
                          (long long)d->dilation_w, (long long)d->pad_left,
                          (long long)d->pad_right, &out[2], &pb[2], &pe[2]);
    }
    r |= geo;
    s->pad_front = (size_t)pb[0];
    s->pad_top = (size_t)pb[1];
    s->pad_left = (size_t)pb[2];
    s->pad_back = (size_t)pe[0];
    s->pad_bottom = (size_t)pe[1];
    s->pad_right = (size_t)pe[2];
    if (!(geo & MODEL_BAD_OUT)) {
      s->out_d = (size_t)out[0];
      s->out_h = (size_t)out[1];
      s->out_w = (size_t)out[2];
    }

    /* "any byte count of x, y, dx, dy or indices above PTRDIFF_MAX"; x is
     * n*c*d*h*w floats, y n*c*out_d*out_h*out_w. */
    factors[0] = d->n;
    factors[1] = d->c;
    factors[2] = d->d;
    factors[3] = d->h;
    factors[4] = d->w;
    if (!bytes_fit(factors, 5, elem))
      r |= MODEL_BAD_OVERFLOW;
    if (!(geo & MODEL_BAD_OUT)) {
      factors[2] = s->out_d;
      factors[3] = s->out_h;
      factors[4] = s->out_w;
      if (!bytes_fit(factors, 5, elem))
        r |= MODEL_BAD_OVERFLOW;
      if (d->method == SIMDPOOL_MAX && model_index_size(d->index_type) != 0 &&
          !bytes_fit(factors, 5, model_index_size(d->index_type)))
        r |= MODEL_BAD_OVERFLOW;
    }
    /* Strided spans, in long double: the test draws strides far below any
     * limit, so only this coarse bound matters. */
    if (!(r & MODEL_BAD_PIXEL_STRIDE) && d->layout == SIMDPOOL_NHWC &&
        !(geo & MODEL_BAD_OUT)) {
      const long double lim = (long double)PTRDIFF_MAX;
      const long double xs = (long double)x_stride(d),
                        ys = (long double)y_stride(d);
      if (((long double)d->n * d->d * d->h * d->w - 1) * xs + d->c >
              lim / elem ||
          ((long double)d->n * s->out_d * s->out_h * s->out_w - 1) * ys + d->c >
              lim / elem ||
          xs > lim / elem || ys > lim / elem)
        r |= MODEL_BAD_OVERFLOW;
    }

    /* "an index type too narrow for the shape (I32 needs d*h*w <=
     * INT32_MAX; U8 needs kernel_d*kernel_h*kernel_w <= 256 and a
     * fixed-window plan)" */
    if (d->method == SIMDPOOL_MAX && d->index_type == SIMDPOOL_INDEX_I32 &&
        product_above(d->d, d->h, d->w, (size_t)INT32_MAX))
      r |= MODEL_UNSUP_I32;
    if (d->method == SIMDPOOL_MAX && d->index_type == SIMDPOOL_INDEX_U8 &&
        (product_above(d->kernel_d, d->kernel_h, d->kernel_w, 256u) ||
         d->adaptive == 1))
      r |= MODEL_UNSUP_U8;
    if (!(geo & MODEL_BAD_OUT))
      r |= quant_window_reasons(d, r, out);
  }
  s->reasons = r;
}

simdpool_status model_status(unsigned reasons) {
  if (reasons & MODEL_INVALID_MASK)
    return SIMDPOOL_INVALID_ARGUMENT;
  if (reasons & MODEL_UNSUP_MASK)
    return SIMDPOOL_UNSUPPORTED;
  return SIMDPOOL_OK;
}

int model_status_acceptable(unsigned reasons, simdpool_status got) {
  if (got == model_status(reasons))
    return 1;
  /* Both kinds of reason: the model does not rank them. */
  if ((reasons & MODEL_INVALID_MASK) && (reasons & MODEL_UNSUP_MASK))
    return got == SIMDPOOL_UNSUPPORTED;
  return 0;
}

const char *model_reason_string(unsigned reasons) {
  static const struct {
    unsigned bit;
    const char *text;
  } names[] = {
      {MODEL_BAD_NULL_SIZE, "zero size/stride/dilation"},
      {MODEL_BAD_ENUM, "enum out of range"},
      {MODEL_BAD_PAD_MODE, "pad with non-EXPLICIT padding"},
      {MODEL_BAD_CEIL, "ceil_mode"},
      {MODEL_BAD_CIP, "count_include_pad"},
      {MODEL_BAD_INDEX_TYPE, "index_type with AVG/LP"},
      {MODEL_BAD_P, "p"},
      {MODEL_BAD_PAD_EXTENT, "pad >= extent"},
      {MODEL_BAD_OUT, "out < 1"},
      {MODEL_BAD_WINDOW, "window without input"},
      {MODEL_BAD_OVERFLOW, "byte count overflow"},
      {MODEL_BAD_PIXEL_STRIDE, "bad pixel stride"},
      {MODEL_BAD_CLAMP, "bad clamp"},
      {MODEL_BAD_ADAPTIVE, "bad adaptive fields"},
      {MODEL_BAD_QUANT, "bad quantization"},
      {MODEL_UNSUP_I32, "I32 too narrow"},
      {MODEL_UNSUP_U8, "U8 too narrow"},
      {MODEL_UNSUP_INT8, "S8/U8 with LP, clamp or a huge window"},
  };
  size_t i;
  if (reasons == 0)
    return "accepted";
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (reasons & names[i].bit)
      return names[i].text;
  return "?";
}

/* ------------------------------------------------------------------------ */
/* Windows                                                                  */
/* ------------------------------------------------------------------------ */

/* One spatial axis of a resolved desc. */
typedef struct axis {
  long long in, k, s, dl; /* input size, kernel, stride, dilation */
  long long pb, pe;       /* resolved pads */
  long long out;
  int adaptive;
} axis;

static axis get_axis(const simdpool_desc *d, const model_shape *s, int ax) {
  axis a;
  if (ax == MODEL_AXIS_D) {
    a.in = (long long)d->d;
    a.k = (long long)d->kernel_d;
    a.s = (long long)d->stride_d;
    a.dl = (long long)d->dilation_d;
    a.pb = (long long)s->pad_front;
    a.pe = (long long)s->pad_back;
    a.out = (long long)s->out_d;
  } else if (ax == MODEL_AXIS_H) {
    a.in = (long long)d->h;
    a.k = (long long)d->kernel_h;
    a.s = (long long)d->stride_h;
    a.dl = (long long)d->dilation_h;
    a.pb = (long long)s->pad_top;
    a.pe = (long long)s->pad_bottom;
    a.out = (long long)s->out_h;
  } else {
    a.in = (long long)d->w;
    a.k = (long long)d->kernel_w;
    a.s = (long long)d->stride_w;
    a.dl = (long long)d->dilation_w;
    a.pb = (long long)s->pad_left;
    a.pe = (long long)s->pad_right;
    a.out = (long long)s->out_w;
  }
  a.adaptive = d->adaptive == 1;
  return a;
}

/* Adaptive window o: "[start_i, end_i) with start_i = floor(i*in/out),
 * end_i = ceil((i+1)*in/out), computed in integers" (in, out < 2^31: the
 * products fit in 64 bits). */
static long long adaptive_start(const axis *a, long long o) {
  return o * a->in / a->out;
}

static long long adaptive_end(const axis *a, long long o) {
  return ((o + 1) * a->in + a->out - 1) / a->out;
}

/* Taps of window o: the kernel, or the adaptive window's extent. */
static long long axis_taps(const axis *a, long long o) {
  if (a->adaptive)
    return adaptive_end(a, o) - adaptive_start(a, o);
  return a->k;
}

/* Input position of tap t of window o: "o*stride - pad_begin +
 * t*dilation", or the adaptive window's start + t. */
static long long axis_pos(const axis *a, long long o, long long t) {
  if (a->adaptive)
    return adaptive_start(a, o) + t;
  return o * a->s - a->pb + t * a->dl;
}

static int axis_inside(const axis *a, long long pos) {
  return pos >= 0 && pos < a->in;
}

/* AVG count of window o on one axis: "counted only with count_include_pad,
 * and then only the taps in [-pb, in+pe)"; else only the valid taps. */
static long long axis_count(const axis *a, long long o, int include_pad) {
  long long t, count = 0;
  for (t = 0; t < axis_taps(a, o); t++) {
    long long pos = axis_pos(a, o, t);
    if (include_pad ? (pos >= -a->pb && pos < a->in + a->pe)
                    : axis_inside(a, pos))
      count++;
  }
  return count;
}

size_t model_window_taps(const simdpool_desc *d, const model_shape *s,
                         int axis_index, size_t o) {
  axis a = get_axis(d, s, axis_index);
  return (size_t)axis_taps(&a, (long long)o);
}

long long model_tap_pos(const simdpool_desc *d, const model_shape *s,
                        int axis_index, size_t o, size_t t) {
  axis a = get_axis(d, s, axis_index);
  return axis_pos(&a, (long long)o, (long long)t);
}

/* The window of one output, scanned tap by tap in row-major order ("kd
 * outer, then kh, kw inner"), visiting only the valid taps. */
typedef struct window {
  axis a[3];
  long long o[3];    /* output coordinate per axis */
  long long taps[3]; /* taps per axis */
  long long t[3];    /* current tap per axis */
  long long pos[3];  /* current input position per axis */
  int started;
} window;

static void window_begin(window *win, const simdpool_desc *d,
                         const model_shape *s, size_t od, size_t oh,
                         size_t ow) {
  int ax;
  memset(win, 0, sizeof *win);
  win->o[0] = (long long)od;
  win->o[1] = (long long)oh;
  win->o[2] = (long long)ow;
  for (ax = 0; ax < 3; ax++) {
    win->a[ax] = get_axis(d, s, ax);
    win->taps[ax] = axis_taps(&win->a[ax], win->o[ax]);
  }
}

/* Advances to the next valid tap; 0 when the window is done. */
static int window_next(window *win) {
  int ax;
  for (;;) {
    if (!win->started) {
      win->started = 1;
    } else {
      win->t[2]++;
      if (win->t[2] == win->taps[2]) {
        win->t[2] = 0;
        win->t[1]++;
        if (win->t[1] == win->taps[1]) {
          win->t[1] = 0;
          win->t[0]++;
        }
      }
    }
    if (win->t[0] >= win->taps[0])
      return 0;
    for (ax = 0; ax < 3; ax++)
      win->pos[ax] = axis_pos(&win->a[ax], win->o[ax], win->t[ax]);
    if (axis_inside(&win->a[0], win->pos[0]) &&
        axis_inside(&win->a[1], win->pos[1]) &&
        axis_inside(&win->a[2], win->pos[2]))
      return 1;
  }
}

/* Offset in x of the window's current tap (n, c, id, ih, iw). */
static size_t tap_offset(const simdpool_desc *d, const window *win, size_t n,
                         size_t c) {
  return model_x_at(d, model_elem(d->layout, d->c, d->d, d->h, d->w, n, c,
                                  (size_t)win->pos[0], (size_t)win->pos[1],
                                  (size_t)win->pos[2]));
}

/* The winner of one MAX window: "scan the window's valid taps in row-major
 * order (kd outer, then kh, kw inner). The first valid tap is the running
 * max. A later tap replaces it when v > max || isnan(v)." */
typedef struct winner {
  size_t x_off;     /* offset in x */
  long long pos[3]; /* input position (id, ih, iw) */
  long long t[3];   /* tap position inside the window */
} winner;

static winner max_window(const simdpool_desc *d, const model_shape *s,
                         const float *x, size_t n, size_t c, size_t od,
                         size_t oh, size_t ow) {
  winner best;
  float best_value = 0.0f;
  int have = 0;
  window win;
  memset(&best, 0, sizeof best);
  window_begin(&win, d, s, od, oh, ow);
  while (window_next(&win)) {
    size_t off = tap_offset(d, &win, n, c);
    float v = x[off];
    if (!have || v > best_value || isnan(v)) {
      have = 1;
      best_value = v;
      best.x_off = off;
      memcpy(best.pos, win.pos, sizeof best.pos);
      memcpy(best.t, win.t, sizeof best.t);
    }
  }
  return best;
}

/* AVG of one window: "acc = 0.0f; acc += x for each counted input tap in
 * row-major order; y = acc / (float)divisor", the divisor "the product of
 * its three axes' counts"; adaptive: "y = ((acc / (float)kd) / (float)kh) /
 * (float)kw". NaN canonical. */
static float avg_window(const simdpool_desc *d, const model_shape *s,
                        const float *x, size_t n, size_t c, size_t od,
                        size_t oh, size_t ow) {
  float acc = 0.0f;
  window win;
  window_begin(&win, d, s, od, oh, ow);
  while (window_next(&win))
    acc = acc + x[tap_offset(d, &win, n, c)];
  if (d->adaptive == 1)
    return canon(((acc / (float)win.taps[0]) / (float)win.taps[1]) /
                 (float)win.taps[2]);
  return canon(acc /
               (float)(axis_count(&win.a[0], win.o[0], d->count_include_pad) *
                       axis_count(&win.a[1], win.o[1], d->count_include_pad) *
                       axis_count(&win.a[2], win.o[2], d->count_include_pad)));
}

/* The share of dy every tap of an AVG window gets: "dx[tap] += dy /
 * (float)divisor (adaptive: dx[tap] += ((dy / kd) / kh) / kw)". */
static float avg_share(const simdpool_desc *d, const model_shape *s, float dy,
                       size_t od, size_t oh, size_t ow) {
  window win;
  window_begin(&win, d, s, od, oh, ow);
  if (d->adaptive == 1)
    return ((dy / (float)win.taps[0]) / (float)win.taps[1]) /
           (float)win.taps[2];
  return dy / (float)(axis_count(&win.a[0], win.o[0], d->count_include_pad) *
                      axis_count(&win.a[1], win.o[1], d->count_include_pad) *
                      axis_count(&win.a[2], win.o[2], d->count_include_pad));
}

/* LP helpers (docs/semantics.md#lp-forward). */
static float lp_t(float p, float v) {
  if (p == 1.0f)
    return v;
  if (p == 2.0f)
    return v * v;
  return model_pow(v, p);
}

static float lp_r(float p, float a) {
  if (p == 1.0f)
    return a;
  if (p == 2.0f)
    return sqrtf(a);
  return model_pow(a, 1.0f / p);
}

static float lp_sign(float x) {
  if (x > 0.0f)
    return 1.0f;
  if (x < 0.0f)
    return -1.0f;
  if (x == 0.0f)
    return 0.0f;
  return x; /* NaN */
}

static float lp_window(const simdpool_desc *d, const model_shape *s,
                       const float *x, size_t n, size_t c, size_t od, size_t oh,
                       size_t ow) {
  float acc = 0.0f;
  window win;
  window_begin(&win, d, s, od, oh, ow);
  while (window_next(&win))
    acc = acc + lp_t(d->p, fabsf(x[tap_offset(d, &win, n, c)]));
  return canon(lp_r(d->p, acc));
}

/* ------------------------------------------------------------------------ */
/* Forward                                                                  */
/* ------------------------------------------------------------------------ */

/* "I32/I64: the flat index of the winner inside its input plane, (id*h +
 * ih)*w + iw; U8: the tap's position inside the window, (kd_i*kernel_h +
 * kh_i)*kernel_w + kw_i". */
static void store_index(simdpool_index_type t, void *indices, size_t off,
                        const simdpool_desc *d, const winner *win) {
  long long flat =
      (win->pos[0] * (long long)d->h + win->pos[1]) * (long long)d->w +
      win->pos[2];
  if (t == SIMDPOOL_INDEX_I32) {
    int32_t v = (int32_t)flat;
    memcpy((char *)indices + off * sizeof v, &v, sizeof v);
  } else if (t == SIMDPOOL_INDEX_I64) {
    int64_t v = (int64_t)flat;
    memcpy((char *)indices + off * sizeof v, &v, sizeof v);
  } else if (t == SIMDPOOL_INDEX_U8) {
    uint8_t v = (uint8_t)((win->t[0] * (long long)d->kernel_h + win->t[1]) *
                              (long long)d->kernel_w +
                          win->t[2]);
    memcpy((char *)indices + off * sizeof v, &v, sizeof v);
  }
}

void model_forward(const simdpool_desc *d, const model_shape *s, const float *x,
                   float *y, void *indices) {
  size_t total = model_y_count(d, s);
  size_t off;
  for (off = 0; off < total; off++) {
    size_t n, c, od, oh, ow;
    float r;
    model_coords(d->layout, d->c, s->out_d, s->out_h, s->out_w, off, &n, &c,
                 &od, &oh, &ow);
    if (d->method == SIMDPOOL_MAX) {
      winner win = max_window(d, s, x, n, c, od, oh, ow);
      /* "Output = the bits of the final winner" */
      memcpy(&r, &x[win.x_off], sizeof(float));
      if (indices != NULL)
        store_index(d->index_type, indices, off, d, &win);
    } else if (d->method == SIMDPOOL_AVG) {
      r = avg_window(d, s, x, n, c, od, oh, ow);
    } else {
      r = lp_window(d, s, x, n, c, od, oh, ow);
    }
    /* "clamps every output once it is final"; indices stay dense */
    y[model_y_at(d, off)] = clamp_y(d, r);
  }
}

/* ------------------------------------------------------------------------ */
/* Indices                                                                  */
/* ------------------------------------------------------------------------ */

/* Decodes the index at offset off into the input position it names; 0 when
 * it names no valid tap of window (od, oh, ow). */
static int decode_index(const simdpool_desc *d, const model_shape *s,
                        const void *indices, size_t off, size_t od, size_t oh,
                        size_t ow, long long pos[3]) {
  window win;
  int ax;
  window_begin(&win, d, s, od, oh, ow);
  if (d->index_type == SIMDPOOL_INDEX_U8) {
    uint8_t v;
    long long t[3];
    memcpy(&v, (const char *)indices + off, 1);
    if ((size_t)v >= d->kernel_d * d->kernel_h * d->kernel_w)
      return 0;
    t[0] = (long long)(v / (d->kernel_h * d->kernel_w));
    t[1] = (long long)(v / d->kernel_w % d->kernel_h);
    t[2] = (long long)(v % d->kernel_w);
    for (ax = 0; ax < 3; ax++) {
      if (t[ax] >= win.taps[ax])
        return 0;
      pos[ax] = axis_pos(&win.a[ax], win.o[ax], t[ax]);
      if (!axis_inside(&win.a[ax], pos[ax]))
        return 0;
    }
    return 1;
  } else {
    long long flat;
    long long plane = (long long)(d->d * d->h * d->w);
    if (d->index_type == SIMDPOOL_INDEX_I32) {
      int32_t v;
      memcpy(&v, (const char *)indices + off * 4, 4);
      flat = v;
    } else {
      int64_t v;
      memcpy(&v, (const char *)indices + off * 8, 8);
      if (v < 0 || v > (int64_t)1 << 62)
        return 0;
      flat = (long long)v;
    }
    if (flat < 0 || flat >= plane)
      return 0;
    pos[0] = flat / (long long)(d->h * d->w);
    pos[1] = flat / (long long)d->w % (long long)d->h;
    pos[2] = flat % (long long)d->w;
    /* Must be a tap of this window: on every axis some tap lands on it. */
    for (ax = 0; ax < 3; ax++) {
      long long t;
      int hit = 0;
      for (t = 0; t < win.taps[ax]; t++)
        if (axis_pos(&win.a[ax], win.o[ax], t) == pos[ax])
          hit = 1;
      if (!hit)
        return 0;
    }
    return 1;
  }
}

/* How an index at offset off (of output (od, oh, ow)) is read: to pos, 0
 * when it is not acceptable. */
typedef int (*index_reader)(const simdpool_desc *d, const model_shape *s,
                            const void *indices, size_t off, size_t od,
                            size_t oh, size_t ow, long long pos[3]);

/* The first index the reader refuses: 0 and *bad; 1 when there is none. */
static int first_refused(const simdpool_desc *d, const model_shape *s,
                         const void *indices, index_reader read, size_t *bad) {
  size_t total = model_y_count(d, s);
  size_t off;
  for (off = 0; off < total; off++) {
    size_t n, c, od, oh, ow;
    long long pos[3];
    model_coords(d->layout, d->c, s->out_d, s->out_h, s->out_w, off, &n, &c,
                 &od, &oh, &ow);
    if (!read(d, s, indices, off, od, oh, ow, pos)) {
      if (bad != NULL)
        *bad = off;
      return 0;
    }
  }
  return 1;
}

int model_indices_valid(const simdpool_desc *d, const model_shape *s,
                        const void *indices, size_t *bad) {
  return first_refused(d, s, indices, decode_index, bad);
}

/* ------------------------------------------------------------------------ */
/* Backward                                                                 */
/* ------------------------------------------------------------------------ */

/* dx[off] += v, with a NaN result written canonically. */
static void add_to(float *dx, size_t off, float v) {
  dx[off] = canon(dx[off] + v);
}

int model_backward(const simdpool_desc *d, const model_shape *s,
                   const float *dy, const void *indices, const float *x,
                   float *dx) {
  size_t total = model_y_count(d, s);
  size_t xtotal = model_x_count(d);
  size_t off;

  if (d->method == SIMDPOOL_MAX && indices != NULL &&
      !model_indices_valid(d, s, indices, NULL))
    return -1;

  /* "dx = +0.0f everywhere" */
  for (off = 0; off < xtotal; off++)
    dx[model_x_at(d, off)] = 0.0f;

  /* "for each output in row-major order (n, c, od, oh, ow for
   * channels-first; n, od, oh, ow, c for channels-last)": that is the
   * memory order of y. */
  for (off = 0; off < total; off++) {
    size_t n, c, od, oh, ow;
    const float dyv = dy[model_y_at(d, off)];
    model_coords(d->layout, d->c, s->out_d, s->out_h, s->out_w, off, &n, &c,
                 &od, &oh, &ow);
    if (d->method == SIMDPOOL_MAX) {
      size_t target;
      if (indices != NULL) {
        long long pos[3] = {0, 0, 0};
        decode_index(d, s, indices, off, od, oh, ow, pos);
        target = model_x_at(d, model_elem(d->layout, d->c, d->d, d->h, d->w, n,
                                          c, (size_t)pos[0], (size_t)pos[1],
                                          (size_t)pos[2]));
      } else {
        target = max_window(d, s, x, n, c, od, oh, ow).x_off;
      }
      /* "dx[winner] += dy" */
      add_to(dx, target, dyv);
    } else {
      float g;
      window win;
      if (d->method == SIMDPOOL_AVG) {
        g = avg_share(d, s, dyv, od, oh, ow);
      } else {
        /* "g is computed once: p == 1: g = dy; p == 2: g = y == 0 ? 0 :
         * dy / y; other p: g = y == 0 ? 0 : dy * pow(y, 1-p)" */
        float y = lp_window(d, s, x, n, c, od, oh, ow);
        if (d->p == 1.0f)
          g = dyv;
        else if (d->p == 2.0f)
          g = y == 0.0f ? 0.0f : dyv / y;
        else
          g = y == 0.0f ? 0.0f : dyv * model_pow(y, 1.0f - d->p);
      }
      window_begin(&win, d, s, od, oh, ow);
      while (window_next(&win)) {
        size_t xo = tap_offset(d, &win, n, c);
        if (d->method == SIMDPOOL_AVG) {
          add_to(dx, xo, g);
        } else {
          /* "p == 1: q = g * sign(x); p == 2: q = g * x; other p:
           * q = (g * sign(x)) * pow(|x|, p-1)" */
          float xv = x[xo];
          float q;
          if (d->p == 1.0f)
            q = g * lp_sign(xv);
          else if (d->p == 2.0f)
            q = g * xv;
          else
            q = (g * lp_sign(xv)) * model_pow(fabsf(xv), d->p - 1.0f);
          add_to(dx, xo, q);
        }
      }
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Unpooling                                                                */
/* ------------------------------------------------------------------------ */

/* The value of the index at offset off as an integer. */
static long long index_value(simdpool_index_type t, const void *indices,
                             size_t off) {
  if (t == SIMDPOOL_INDEX_I32) {
    int32_t v;
    memcpy(&v, (const char *)indices + off * 4, 4);
    return v;
  }
  if (t == SIMDPOOL_INDEX_I64) {
    int64_t v;
    memcpy(&v, (const char *)indices + off * 8, 8);
    return (long long)v;
  }
  return ((const uint8_t *)indices)[off];
}

/* The input position (id, ih, iw) the unpooling index at offset off names,
 * for output (od, oh, ow); 0 when it names none. "I32/I64: the flat
 * position in the input plane, (id*h + ih)*w + iw, any 0 <= v < d*h*w;
 * U8: the tap number within its own window, a valid tap." */
static int unpool_position(const simdpool_desc *d, const model_shape *s,
                           const void *indices, size_t off, size_t od,
                           size_t oh, size_t ow, long long pos[3]) {
  long long v, plane;
  if (d->index_type == SIMDPOOL_INDEX_U8)
    return decode_index(d, s, indices, off, od, oh, ow, pos);
  v = index_value(d->index_type, indices, off);
  plane = (long long)(d->d * d->h * d->w);
  if (v < 0 || v >= plane)
    return 0;
  pos[0] = v / (long long)(d->h * d->w);
  pos[1] = v / (long long)d->w % (long long)d->h;
  pos[2] = v % (long long)d->w;
  return 1;
}

int model_unpool_indices_valid(const simdpool_desc *d, const model_shape *s,
                               const void *indices, size_t *bad,
                               long long *value) {
  size_t at = 0;
  if (first_refused(d, s, indices, unpool_position, &at))
    return 1;
  if (bad != NULL)
    *bad = at;
  if (value != NULL)
    *value = index_value(d->index_type, indices, at);
  return 0;
}

/* Offset in x (strided) of the position the index at offset off of y
 * names; the index must be valid. */
static size_t unpool_target(const simdpool_desc *d, const model_shape *s,
                            const void *indices, size_t off) {
  size_t n, c, od, oh, ow;
  long long pos[3] = {0, 0, 0};
  model_coords(d->layout, d->c, s->out_d, s->out_h, s->out_w, off, &n, &c, &od,
               &oh, &ow);
  unpool_position(d, s, indices, off, od, oh, ow, pos);
  return model_x_at(d,
                    model_elem(d->layout, d->c, d->d, d->h, d->w, n, c,
                               (size_t)pos[0], (size_t)pos[1], (size_t)pos[2]));
}

int model_unpool(const simdpool_desc *d, const model_shape *s, const float *y,
                 const void *indices, float *x) {
  size_t total = model_y_count(d, s);
  size_t xtotal = model_x_count(d);
  size_t off;
  const float zero = 0.0f;
  /* "Every index is checked before anything is written" */
  if (!model_unpool_indices_valid(d, s, indices, NULL, NULL))
    return -1;
  /* "x = +0.0f everywhere" */
  for (off = 0; off < xtotal; off++)
    memcpy(&x[model_x_at(d, off)], &zero, sizeof zero);
  /* "for each element of y in output order, x_plane[index] = y (bits
   * copied unchanged)": output order is the memory order of dense y. */
  for (off = 0; off < total; off++)
    memcpy(&x[unpool_target(d, s, indices, off)], &y[model_y_at(d, off)],
           sizeof(float));
  return 0;
}

int model_unpool_backward(const simdpool_desc *d, const model_shape *s,
                          const float *dx, const void *indices, float *dy) {
  size_t total = model_y_count(d, s);
  size_t off;
  if (!model_unpool_indices_valid(d, s, indices, NULL, NULL))
    return -1;
  /* "dy[o] = dx_plane[index[o]] (bits copied)" */
  for (off = 0; off < total; off++)
    memcpy(&dy[model_y_at(d, off)], &dx[unpool_target(d, s, indices, off)],
           sizeof(float));
  return 0;
}

/* ------------------------------------------------------------ element types */

static float bits_to_float(uint32_t u) {
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static uint32_t float_to_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* A binary format with p significant bits (hidden bit included), emin the
 * exponent of its smallest normal and emax of its largest finite value. */
typedef struct small_format {
  int p, emin, emax, exp_bits;
} small_format;

static const small_format fmt_bf16 = {8, -126, 127, 8};
static const small_format fmt_f16 = {11, -14, 15, 5};

/* The value of pattern h of format f (sign, exponent, fraction fields),
 * as an exact double; NaN and inf are handled by the callers. */
static double small_value(const small_format *f, uint16_t h) {
  const int frac_bits = f->p - 1;
  const int bias = (1 << (f->exp_bits - 1)) - 1;
  const unsigned exp = (h >> frac_bits) & ((1u << f->exp_bits) - 1);
  const unsigned frac = h & ((1u << frac_bits) - 1);
  const double mag = exp == 0 ? ldexp((double)frac, f->emin - frac_bits)
                              : ldexp((double)((1u << frac_bits) | frac),
                                      (int)exp - bias - frac_bits);
  return (h >> 15) ? -mag : mag;
}

static uint32_t small_to_f32(const small_format *f, uint16_t h) {
  const int frac_bits = f->p - 1;
  const unsigned exp = (h >> frac_bits) & ((1u << f->exp_bits) - 1);
  const unsigned frac = h & ((1u << frac_bits) - 1);
  if (exp == (1u << f->exp_bits) - 1) /* inf or NaN: payload to the top */
    return ((uint32_t)(h >> 15) << 31) | 0x7f800000u |
           ((uint32_t)frac << (23 - frac_bits));
  return float_to_bits((float)small_value(f, h)); /* exact */
}

/* The pattern of format f nearest to the double v (finite), ties to even:
 * v scaled to units of the format's quantum at v's binade (never below
 * the subnormal quantum), rounded with nearbyint (the default mode: ties
 * to even), and encoded; at or above 2^(emax+1) it is inf. */
static uint16_t small_round(const small_format *f, double v) {
  const uint16_t sign = signbit(v) ? 0x8000u : 0;
  const double a = fabs(v);
  if (a == 0.0)
    return sign;
  int e;
  frexp(a, &e); /* a = m * 2^e, 0.5 <= m < 1: a's binade is 2^(e-1) */
  int be = e - 1 < f->emin ? f->emin : e - 1;
  const double quantum = ldexp(1.0, be - (f->p - 1));
  const double r = nearbyint(a / quantum) * quantum; /* exact scaling */
  const int frac_bits = f->p - 1;
  const uint16_t inf = (uint16_t)(((1u << f->exp_bits) - 1) << frac_bits);
  if (r >= ldexp(1.0, f->emax + 1))
    return sign | inf;
  /* Encode r: subnormal when below 2^emin, else exponent and fraction. */
  if (r < ldexp(1.0, f->emin))
    return sign | (uint16_t)(r / ldexp(1.0, f->emin - frac_bits));
  frexp(r, &e);
  const int bias = (1 << (f->exp_bits - 1)) - 1;
  const double frac = r / ldexp(1.0, e - 1) - 1.0; /* in [0, 1) */
  return sign | (uint16_t)((unsigned)(e - 1 + bias) << frac_bits) |
         (uint16_t)(frac * (double)(1u << frac_bits));
}

static uint16_t f32_to_small(const small_format *f, uint32_t u, int keep_nan,
                             uint16_t canonical) {
  const float v = bits_to_float(u);
  if (isnan(v)) {
    if (!keep_nan)
      return canonical;
    const int frac_bits = f->p - 1;
    const unsigned payload = (u >> (23 - frac_bits)) & ((1u << frac_bits) - 1);
    if (payload == 0)
      return canonical;
    return (uint16_t)((u >> 31) << 15) |
           (uint16_t)(((1u << f->exp_bits) - 1) << frac_bits) |
           (uint16_t)payload;
  }
  if (isinf(v))
    return (uint16_t)((u >> 31) << 15) |
           (uint16_t)(((1u << f->exp_bits) - 1) << (f->p - 1));
  return small_round(f, (double)v);
}

uint32_t model_bf16_to_f32_bits(uint16_t h) {
  return small_to_f32(&fmt_bf16, h);
}

uint32_t model_f16_to_f32_bits(uint16_t h) {
  return small_to_f32(&fmt_f16, h);
}

uint16_t model_f32_to_bf16(uint32_t u, int keep_nan) {
  return f32_to_small(&fmt_bf16, u, keep_nan, 0x7fc0u);
}

uint16_t model_f32_to_f16(uint32_t u, int keep_nan) {
  return f32_to_small(&fmt_f16, u, keep_nan, 0x7e00u);
}

/* ------------------------------------------------------------------------ */
/* Ops on the element types                                                 */
/* ------------------------------------------------------------------------ */

/* Element i of a tensor of dtype t, widened to f32 ("Widening to f32 is
 * exact"; S8/U8 values are integers, exact in f32), as bits. */
static uint32_t widen_at(simdpool_dtype t, const void *p, size_t i) {
  switch (t) {
  case SIMDPOOL_BF16:
    return model_bf16_to_f32_bits(((const uint16_t *)p)[i]);
  case SIMDPOOL_F16:
    return model_f16_to_f32_bits(((const uint16_t *)p)[i]);
  case SIMDPOOL_S8:
    return float_to_bits((float)((const int8_t *)p)[i]);
  case SIMDPOOL_U8:
    return float_to_bits((float)((const uint8_t *)p)[i]);
  default: {
    uint32_t u;
    memcpy(&u, (const char *)p + 4 * i, 4);
    return u;
  }
  }
}

/* Stores the f32 result u as element i of dtype t: "narrowed once ... with
 * round-to-nearest-even", a NaN canonical, or with keep (MAX forward,
 * unpooling: a winner's or a copied value) its own payload. S8/U8 results
 * are integers already. */
static void narrow_at(simdpool_dtype t, void *p, size_t i, uint32_t u,
                      int keep) {
  switch (t) {
  case SIMDPOOL_BF16:
    ((uint16_t *)p)[i] = model_f32_to_bf16(u, keep);
    return;
  case SIMDPOOL_F16:
    ((uint16_t *)p)[i] = model_f32_to_f16(u, keep);
    return;
  case SIMDPOOL_S8:
    ((int8_t *)p)[i] = (int8_t)bits_to_float(u);
    return;
  case SIMDPOOL_U8:
    ((uint8_t *)p)[i] = (uint8_t)bits_to_float(u);
    return;
  default:
    memcpy((char *)p + 4 * i, &u, 4);
    return;
  }
}

/* A whole tensor of `span` elements widened into a new f32 array. */
static float *widen_all(simdpool_dtype t, const void *p, size_t span) {
  float *f = malloc((span ? span : 1) * sizeof *f);
  if (!f)
    abort();
  for (size_t i = 0; i < span; i++) {
    const uint32_t u = widen_at(t, p, i);
    memcpy(&f[i], &u, 4);
  }
  return f;
}

/* The elements of an input-shaped f32 result f (only the pixels' c
 * channels: strides) narrowed into p. */
static void narrow_x(const simdpool_desc *d, const float *f, void *p,
                     int keep) {
  const size_t total = model_x_count(d);
  for (size_t off = 0; off < total; off++) {
    const size_t at = model_x_at(d, off);
    uint32_t u;
    memcpy(&u, &f[at], 4);
    narrow_at(d->dtype, p, at, u, keep);
  }
}

/* The same for an output-shaped result f (y's pixels and strides). */
static void narrow_y(const simdpool_desc *d, const model_shape *s,
                     const float *f, void *p, int keep) {
  const size_t total = model_y_count(d, s);
  for (size_t off = 0; off < total; off++) {
    const size_t at = model_y_at(d, off);
    uint32_t u;
    memcpy(&u, &f[at], 4);
    narrow_at(d->dtype, p, at, u, keep);
  }
}

/* "acc = sum over counted valid taps of (q - x_zero_point) in int32 ...
 * m = ratio / (float)divisor ... v = (float)acc * m; y = RNE(clamp(v,
 * y_min - y_zero_point, y_max - y_zero_point)) + y_zero_point" */
static void qavg_forward(const simdpool_desc *d, const model_shape *s,
                         const void *x, void *y) {
  const simdpool_quant *q = &d->quant;
  const int32_t lo = d->dtype == SIMDPOOL_S8 ? -128 : 0;
  const int32_t hi = d->dtype == SIMDPOOL_S8 ? 127 : 255;
  const int32_t ymin = q->y_min == INT32_MIN ? lo : q->y_min;
  const int32_t ymax = q->y_max == INT32_MAX ? hi : q->y_max;
  const float ratio = q->x_scale / q->y_scale;
  const size_t total = model_y_count(d, s);
  for (size_t off = 0; off < total; off++) {
    size_t n, c, od, oh, ow;
    model_coords(d->layout, d->c, s->out_d, s->out_h, s->out_w, off, &n, &c,
                 &od, &oh, &ow);
    window win;
    window_begin(&win, d, s, od, oh, ow);
    int32_t acc = 0;
    while (window_next(&win))
      acc += (int32_t)bits_to_float(
                 widen_at(d->dtype, x, tap_offset(d, &win, n, c))) -
             q->x_zero_point;
    const long long divisor =
        d->adaptive == 1
            ? win.taps[0] * win.taps[1] * win.taps[2]
            : axis_count(&win.a[0], win.o[0], d->count_include_pad) *
                  axis_count(&win.a[1], win.o[1], d->count_include_pad) *
                  axis_count(&win.a[2], win.o[2], d->count_include_pad);
    const float m = ratio / (float)divisor;
    float v = (float)acc * m;
    const float vlo = (float)(ymin - q->y_zero_point);
    const float vhi = (float)(ymax - q->y_zero_point);
    v = v < vlo ? vlo : v > vhi ? vhi : v;
    const int32_t r = (int32_t)nearbyintf(v) + q->y_zero_point;
    narrow_at(d->dtype, y, model_y_at(d, off), float_to_bits((float)r), 0);
  }
}

void model_forward_dtype(const simdpool_desc *d, const model_shape *s,
                         const void *x, void *y, void *indices) {
  const int int8 = d->dtype == SIMDPOOL_S8 || d->dtype == SIMDPOOL_U8;
  if (int8 && d->method == SIMDPOOL_AVG) {
    qavg_forward(d, s, x, y);
    return;
  }
  const size_t xs = model_x_span(d), ys = model_y_span(d, s);
  float *xf = widen_all(d->dtype, x, xs);
  float *yf = calloc(ys ? ys : 1, sizeof *yf);
  if (!yf)
    abort();
  model_forward(d, s, xf, yf, indices);
  narrow_y(d, s, yf, y, d->method == SIMDPOOL_MAX);
  free(xf);
  free(yf);
}

int model_backward_dtype(const simdpool_desc *d, const model_shape *s,
                         const void *dy, const void *indices, const void *x,
                         void *dx) {
  const size_t xs = model_x_span(d), ys = model_y_span(d, s);
  float *dyf = widen_all(d->dtype, dy, ys);
  float *xf = x ? widen_all(d->dtype, x, xs) : NULL;
  float *dxf = calloc(xs ? xs : 1, sizeof *dxf);
  if (!dxf)
    abort();
  /* "accumulate each dx element in f32 in the order of the f32 rules and
   * round it once" */
  const int r = model_backward(d, s, dyf, indices, xf, dxf);
  if (r == 0)
    narrow_x(d, dxf, dx, 0);
  free(dyf);
  free(xf);
  free(dxf);
  return r;
}

int model_unpool_backward_dtype(const simdpool_desc *d, const model_shape *s,
                                const void *dx, const void *indices, void *dy) {
  const size_t xs = model_x_span(d), ys = model_y_span(d, s);
  float *dxf = widen_all(d->dtype, dx, xs);
  float *dyf = calloc(ys ? ys : 1, sizeof *dyf);
  if (!dyf)
    abort();
  /* "dy[o] = dx_plane[index[o]] (bits copied)", as for unpooling */
  const int r = model_unpool_backward(d, s, dxf, indices, dyf);
  if (r == 0)
    narrow_y(d, s, dyf, dy, 1);
  free(dxf);
  free(dyf);
  return r;
}

int model_unpool_dtype(const simdpool_desc *d, const model_shape *s,
                       const void *y, const void *indices, void *x) {
  const size_t xs = model_x_span(d), ys = model_y_span(d, s);
  float *yf = widen_all(d->dtype, y, ys);
  float *xf = calloc(xs ? xs : 1, sizeof *xf);
  if (!xf)
    abort();
  /* "bits copied unchanged, in every dtype": exact widening there and the
   * payload-keeping narrowing back give the element's own bits. */
  const int r = model_unpool(d, s, yf, indices, xf);
  if (r == 0)
    narrow_x(d, xf, x, 1);
  free(yf);
  free(xf);
  return r;
}
