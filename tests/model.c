/* SPDX-License-Identifier: MIT */
/* model.c - the independent brute-force reference of simdpool (see model.h).
 *
 * Every formula below is a rule of docs/semantics.md ("Shapes", "Numerics",
 * "Rejections"); the comments quote the rule they implement. Clarity over
 * speed: no precomputed tables, no fast paths. */
#include "model.h"

#include <math.h>
#include <stdint.h>
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

/* 1 when a*b*c*d*elem_size fits in ptrdiff_t (all factors nonzero). */
static int bytes_fit(size_t a, size_t b, size_t c, size_t d, size_t elem_size) {
  size_t t;
  if (!mul_fits(a, b, &t) || !mul_fits(t, c, &t) || !mul_fits(t, d, &t) ||
      !mul_fits(t, elem_size, &t))
    return 0;
  return t <= (size_t)PTRDIFF_MAX;
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

size_t model_elem(simdpool_layout layout, size_t C, size_t H, size_t W,
                  size_t n, size_t c, size_t h, size_t w) {
  if (layout == SIMDPOOL_NCHW)
    return ((n * C + c) * H + h) * W + w;
  return ((n * H + h) * W + w) * C + c;
}

void model_coords(simdpool_layout layout, size_t C, size_t H, size_t W,
                  size_t off, size_t *n, size_t *c, size_t *h, size_t *w) {
  if (layout == SIMDPOOL_NCHW) {
    *w = off % W;
    off /= W;
    *h = off % H;
    off /= H;
    *c = off % C;
    *n = off / C;
  } else {
    *c = off % C;
    off /= C;
    *w = off % W;
    off /= W;
    *h = off % H;
    *n = off / H;
  }
}

size_t model_x_count(const simdpool_desc *d) {
  return d->n * d->c * d->h * d->w;
}

size_t model_y_count(const simdpool_desc *d, const model_shape *s) {
  return d->n * d->c * s->out_h * s->out_w;
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

/* "A tensor of P pixels spans (P - 1) * stride + c elements". */
size_t model_x_span(const simdpool_desc *d) {
  if (d->layout == SIMDPOOL_NCHW)
    return model_x_count(d);
  return (d->n * d->h * d->w - 1) * x_stride(d) + d->c;
}

size_t model_y_span(const simdpool_desc *d, const model_shape *s) {
  if (d->layout == SIMDPOOL_NCHW)
    return model_y_count(d, s);
  return (d->n * s->out_h * s->out_w - 1) * y_stride(d) + d->c;
}

/* Dense NHWC offset off = pixel * c + channel lives at pixel * stride +
 * channel. */
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

void model_resolve(const simdpool_desc *d, model_shape *s) {
  unsigned r = 0;
  const long long limit = (long long)1 << 31;

  memset(s, 0, sizeof *s);

  /* Enum ranges. */
  if ((unsigned)d->method > (unsigned)SIMDPOOL_LP ||
      (unsigned)d->layout > (unsigned)SIMDPOOL_NHWC ||
      (unsigned)d->padding > (unsigned)SIMDPOOL_PAD_SAME_LOWER ||
      (unsigned)d->index_type > (unsigned)SIMDPOOL_INDEX_U8 ||
      (unsigned)d->isa > (unsigned)SIMDPOOL_ISA_NEON)
    r |= MODEL_BAD_ENUM;

  /* "any zero size, stride or dilation" */
  if (d->n == 0 || d->c == 0 || d->h == 0 || d->w == 0 || d->kernel_h == 0 ||
      d->kernel_w == 0 || d->stride_h == 0 || d->stride_w == 0 ||
      d->dilation_h == 0 || d->dilation_w == 0)
    r |= MODEL_BAD_NULL_SIZE;

  /* docs/semantics.md#rejections: pads must be 0 unless padding == EXPLICIT */
  if (d->padding != SIMDPOOL_PAD_EXPLICIT &&
      (d->pad_top || d->pad_left || d->pad_bottom || d->pad_right))
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

  /* Geometry, when the sizes make sense. */
  if (!(r & (MODEL_BAD_NULL_SIZE | MODEL_BAD_ENUM))) {
    long long oh, ow, pt, pb, pl, pr;
    unsigned geo = 0;
    /* The model's own limit (see model.h): it never sees larger values. */
    if (d->h >= (size_t)limit || d->w >= (size_t)limit ||
        d->kernel_h >= (size_t)limit || d->kernel_w >= (size_t)limit ||
        d->stride_h >= (size_t)limit || d->stride_w >= (size_t)limit ||
        d->dilation_h >= (size_t)limit || d->dilation_w >= (size_t)limit ||
        d->pad_top >= (size_t)limit || d->pad_bottom >= (size_t)limit ||
        d->pad_left >= (size_t)limit || d->pad_right >= (size_t)limit) {
      /* Outside the model's domain; the test generator never goes there. */
      s->reasons = r | MODEL_BAD_OVERFLOW;
      return;
    }
    geo |= resolve_axis(d->padding, d->ceil_mode != 0, (long long)d->h,
                        (long long)d->kernel_h, (long long)d->stride_h,
                        (long long)d->dilation_h, (long long)d->pad_top,
                        (long long)d->pad_bottom, &oh, &pt, &pb);
    geo |= resolve_axis(d->padding, d->ceil_mode != 0, (long long)d->w,
                        (long long)d->kernel_w, (long long)d->stride_w,
                        (long long)d->dilation_w, (long long)d->pad_left,
                        (long long)d->pad_right, &ow, &pl, &pr);
    r |= geo;
    s->pad_top = (size_t)pt;
    s->pad_bottom = (size_t)pb;
    s->pad_left = (size_t)pl;
    s->pad_right = (size_t)pr;
    if (!(geo & MODEL_BAD_OUT)) {
      s->out_h = (size_t)oh;
      s->out_w = (size_t)ow;
    }

    /* "any byte count of x, y, dx, dy or indices above PTRDIFF_MAX" */
    if (!bytes_fit(d->n, d->c, d->h, d->w, sizeof(float)))
      r |= MODEL_BAD_OVERFLOW;
    if (!(geo & MODEL_BAD_OUT)) {
      if (!bytes_fit(d->n, d->c, s->out_h, s->out_w, sizeof(float)))
        r |= MODEL_BAD_OVERFLOW;
      if (d->method == SIMDPOOL_MAX && model_index_size(d->index_type) != 0 &&
          !bytes_fit(d->n, d->c, s->out_h, s->out_w,
                     model_index_size(d->index_type)))
        r |= MODEL_BAD_OVERFLOW;
    }
    /* Strided spans, in long double: the test draws strides far below any
     * limit, so only this coarse bound matters. */
    if (!(r & MODEL_BAD_PIXEL_STRIDE) && d->layout == SIMDPOOL_NHWC &&
        !(geo & MODEL_BAD_OUT)) {
      const long double lim = (long double)PTRDIFF_MAX;
      const long double xs = (long double)x_stride(d),
                        ys = (long double)y_stride(d);
      if (((long double)d->n * d->h * d->w - 1) * xs + d->c > lim / 4 ||
          ((long double)d->n * s->out_h * s->out_w - 1) * ys + d->c > lim / 4 ||
          xs > lim / 4 || ys > lim / 4)
        r |= MODEL_BAD_OVERFLOW;
    }

    /* "an index type too narrow for the shape (I32 needs h*w <= INT32_MAX;
     * U8 needs k_h*k_w <= 256)" */
    if (d->method == SIMDPOOL_MAX && d->index_type == SIMDPOOL_INDEX_I32 &&
        (unsigned long long)d->h * (unsigned long long)d->w >
            (unsigned long long)INT32_MAX)
      r |= MODEL_UNSUP_I32;
    if (d->method == SIMDPOOL_MAX && d->index_type == SIMDPOOL_INDEX_U8 &&
        (unsigned long long)d->kernel_h * (unsigned long long)d->kernel_w >
            256u)
      r |= MODEL_UNSUP_U8;
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
      {MODEL_UNSUP_I32, "I32 too narrow"},
      {MODEL_UNSUP_U8, "U8 too narrow"},
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

/* Input row of tap i of output row oh (may be outside [0, h)). */
static long long tap_row(const simdpool_desc *d, const model_shape *s,
                         size_t oh, size_t i) {
  return (long long)(oh * d->stride_h) - (long long)s->pad_top +
         (long long)(i * d->dilation_h);
}

static long long tap_col(const simdpool_desc *d, const model_shape *s,
                         size_t ow, size_t j) {
  return (long long)(ow * d->stride_w) - (long long)s->pad_left +
         (long long)(j * d->dilation_w);
}

static int row_inside(const simdpool_desc *d, long long ih) {
  return ih >= 0 && ih < (long long)d->h;
}

static int col_inside(const simdpool_desc *d, long long iw) {
  return iw >= 0 && iw < (long long)d->w;
}

/* Offset in x of a tap known to be inside the input. */
static size_t x_offset(const simdpool_desc *d, size_t n, size_t c, long long ih,
                       long long iw) {
  return model_x_at(
      d, model_elem(d->layout, d->c, d->h, d->w, n, c, (size_t)ih, (size_t)iw));
}

/* The winner of one MAX window: "scan the window's valid taps in row-major
 * order (kh outer, kw inner). The first valid tap is the running max. A later
 * tap replaces it when v > max || isnan(v)." */
typedef struct winner {
  size_t x_off;     /* offset in x */
  long long ih, iw; /* input position */
  size_t i, j;      /* tap position inside the window */
} winner;

static winner max_window(const simdpool_desc *d, const model_shape *s,
                         const float *x, size_t n, size_t c, size_t oh,
                         size_t ow) {
  winner best;
  float best_value = 0.0f;
  int have = 0;
  size_t i, j;
  memset(&best, 0, sizeof best);
  for (i = 0; i < d->kernel_h; i++) {
    long long ih = tap_row(d, s, oh, i);
    if (!row_inside(d, ih))
      continue;
    for (j = 0; j < d->kernel_w; j++) {
      long long iw = tap_col(d, s, ow, j);
      size_t off;
      float v;
      if (!col_inside(d, iw))
        continue;
      off = x_offset(d, n, c, ih, iw);
      v = x[off];
      if (!have || v > best_value || isnan(v)) {
        have = 1;
        best_value = v;
        best.x_off = off;
        best.ih = ih;
        best.iw = iw;
        best.i = i;
        best.j = j;
      }
    }
  }
  return best;
}

/* AVG divisor (docs/semantics.md#avg-forward). */
static size_t avg_divisor(const simdpool_desc *d, const model_shape *s,
                          size_t oh, size_t ow) {
  size_t rows = 0, cols = 0, valid_rows = 0, valid_cols = 0;
  size_t i, j;
  for (i = 0; i < d->kernel_h; i++) {
    long long ih = tap_row(d, s, oh, i);
    if (ih >= -(long long)s->pad_top && ih < (long long)(d->h + s->pad_bottom))
      rows++;
    if (row_inside(d, ih))
      valid_rows++;
  }
  for (j = 0; j < d->kernel_w; j++) {
    long long iw = tap_col(d, s, ow, j);
    if (iw >= -(long long)s->pad_left && iw < (long long)(d->w + s->pad_right))
      cols++;
    if (col_inside(d, iw))
      valid_cols++;
  }
  if (d->count_include_pad)
    return rows * cols;
  return valid_rows * valid_cols;
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
                       const float *x, size_t n, size_t c, size_t oh,
                       size_t ow) {
  float acc = 0.0f;
  size_t i, j;
  for (i = 0; i < d->kernel_h; i++) {
    long long ih = tap_row(d, s, oh, i);
    if (!row_inside(d, ih))
      continue;
    for (j = 0; j < d->kernel_w; j++) {
      long long iw = tap_col(d, s, ow, j);
      if (!col_inside(d, iw))
        continue;
      acc = acc + lp_t(d->p, fabsf(x[x_offset(d, n, c, ih, iw)]));
    }
  }
  return canon(lp_r(d->p, acc));
}

/* ------------------------------------------------------------------------ */
/* Forward                                                                  */
/* ------------------------------------------------------------------------ */

static void store_index(simdpool_index_type t, void *indices, size_t off,
                        const simdpool_desc *d, const winner *win) {
  if (t == SIMDPOOL_INDEX_I32) {
    int32_t v = (int32_t)(win->ih * (long long)d->w + win->iw);
    memcpy((char *)indices + off * sizeof v, &v, sizeof v);
  } else if (t == SIMDPOOL_INDEX_I64) {
    int64_t v = (int64_t)(win->ih * (long long)d->w + win->iw);
    memcpy((char *)indices + off * sizeof v, &v, sizeof v);
  } else if (t == SIMDPOOL_INDEX_U8) {
    uint8_t v = (uint8_t)(win->i * d->kernel_w + win->j);
    memcpy((char *)indices + off * sizeof v, &v, sizeof v);
  }
}

void model_forward(const simdpool_desc *d, const model_shape *s, const float *x,
                   float *y, void *indices) {
  size_t total = model_y_count(d, s);
  size_t off;
  for (off = 0; off < total; off++) {
    size_t n, c, oh, ow;
    model_coords(d->layout, d->c, s->out_h, s->out_w, off, &n, &c, &oh, &ow);
    float r;
    if (d->method == SIMDPOOL_MAX) {
      winner win = max_window(d, s, x, n, c, oh, ow);
      /* "Output = the bits of the final winner" */
      memcpy(&r, &x[win.x_off], sizeof(float));
      if (indices != NULL)
        store_index(d->index_type, indices, off, d, &win);
    } else if (d->method == SIMDPOOL_AVG) {
      float acc = 0.0f;
      size_t i, j;
      for (i = 0; i < d->kernel_h; i++) {
        long long ih = tap_row(d, s, oh, i);
        if (!row_inside(d, ih))
          continue;
        for (j = 0; j < d->kernel_w; j++) {
          long long iw = tap_col(d, s, ow, j);
          if (!col_inside(d, iw))
            continue;
          acc = acc + x[x_offset(d, n, c, ih, iw)];
        }
      }
      r = canon(acc / (float)avg_divisor(d, s, oh, ow));
    } else {
      r = lp_window(d, s, x, n, c, oh, ow);
    }
    /* "clamps every output once it is final"; indices stay dense */
    y[model_y_at(d, off)] = clamp_y(d, r);
  }
}

/* ------------------------------------------------------------------------ */
/* Indices                                                                  */
/* ------------------------------------------------------------------------ */

/* Decodes the index at offset off into the input tap it names; 0 when it
 * names no valid tap of window (oh, ow). */
static int decode_index(const simdpool_desc *d, const model_shape *s,
                        const void *indices, size_t off, size_t oh, size_t ow,
                        long long *ih_p, long long *iw_p) {
  if (d->index_type == SIMDPOOL_INDEX_U8) {
    uint8_t v;
    size_t i, j;
    memcpy(&v, (const char *)indices + off, 1);
    if ((size_t)v >= d->kernel_h * d->kernel_w)
      return 0;
    i = v / d->kernel_w;
    j = v % d->kernel_w;
    *ih_p = tap_row(d, s, oh, i);
    *iw_p = tap_col(d, s, ow, j);
    return row_inside(d, *ih_p) && col_inside(d, *iw_p);
  } else {
    long long flat, ih, iw;
    int row_ok = 0, col_ok = 0;
    size_t i, j;
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
    if (flat < 0 || flat >= (long long)(d->h * d->w))
      return 0;
    ih = flat / (long long)d->w;
    iw = flat % (long long)d->w;
    /* Must be a tap of this window: some i and j land on it. */
    for (i = 0; i < d->kernel_h; i++)
      if (tap_row(d, s, oh, i) == ih)
        row_ok = 1;
    for (j = 0; j < d->kernel_w; j++)
      if (tap_col(d, s, ow, j) == iw)
        col_ok = 1;
    *ih_p = ih;
    *iw_p = iw;
    return row_ok && col_ok;
  }
}

int model_indices_valid(const simdpool_desc *d, const model_shape *s,
                        const void *indices, size_t *bad) {
  size_t total = model_y_count(d, s);
  size_t off;
  for (off = 0; off < total; off++) {
    size_t n, c, oh, ow;
    long long ih = 0, iw = 0;
    model_coords(d->layout, d->c, s->out_h, s->out_w, off, &n, &c, &oh, &ow);
    if (!decode_index(d, s, indices, off, oh, ow, &ih, &iw)) {
      if (bad != NULL)
        *bad = off;
      return 0;
    }
  }
  return 1;
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

  /* "for each output in row-major order (n, c, oh, ow for NCHW; n, oh, ow, c
   * for NHWC)": that is the memory order of y. */
  for (off = 0; off < total; off++) {
    size_t n, c, oh, ow;
    model_coords(d->layout, d->c, s->out_h, s->out_w, off, &n, &c, &oh, &ow);
    if (d->method == SIMDPOOL_MAX) {
      size_t target;
      if (indices != NULL) {
        long long ih = 0, iw = 0;
        decode_index(d, s, indices, off, oh, ow, &ih, &iw);
        target = x_offset(d, n, c, ih, iw);
      } else {
        target = max_window(d, s, x, n, c, oh, ow).x_off;
      }
      /* "dx[winner] += dy" */
      add_to(dx, target, dy[model_y_at(d, off)]);
    } else {
      float g;
      size_t i, j;
      if (d->method == SIMDPOOL_AVG) {
        /* "dx[tap] += dy / (float)divisor" */
        g = dy[model_y_at(d, off)] / (float)avg_divisor(d, s, oh, ow);
      } else {
        /* "g is computed once: p == 1: g = dy; p == 2: g = y == 0 ? 0 :
         * dy / y; other p: g = y == 0 ? 0 : dy * pow(y, 1-p)" */
        float y = lp_window(d, s, x, n, c, oh, ow);
        const float dyv = dy[model_y_at(d, off)];
        if (d->p == 1.0f)
          g = dyv;
        else if (d->p == 2.0f)
          g = y == 0.0f ? 0.0f : dyv / y;
        else
          g = y == 0.0f ? 0.0f : dyv * model_pow(y, 1.0f - d->p);
      }
      for (i = 0; i < d->kernel_h; i++) {
        long long ih = tap_row(d, s, oh, i);
        if (!row_inside(d, ih))
          continue;
        for (j = 0; j < d->kernel_w; j++) {
          long long iw = tap_col(d, s, ow, j);
          size_t xo;
          if (!col_inside(d, iw))
            continue;
          xo = x_offset(d, n, c, ih, iw);
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
  }
  return 0;
}
