/* SPDX-License-Identifier: MIT */
/* test_model.c - random sweep of simdpool against the independent model.
 *
 * For every operation (MAX forward with each index type, MAX backward from
 * each index type and recomputed from x, AVG and LP forward and backward,
 * max unpooling and its backward from each index type, serial and
 * parallel),
 * every layout, every rank (1D, 2D, 3D; and adaptive windows in 1D, 2D and
 * 3D for MAX and AVG) and every ISA the build and CPU support, draws random
 * configurations and inputs, predicts with model.c what the library must do,
 * and compares bit for bit. One Check test case per operation, layout and
 * rank (2D: op_layout, the others op_layout_rank); inside it each
 * configuration is drawn and modelled once, then run on every ISA in turn
 * (a mismatch drops that ISA, the others go on). Rejected configurations
 * must be rejected with the model's status; outputs live in guarded,
 * sentinel-filled buffers; inputs are checked unmodified.
 *
 * Plans with a depth or adaptive windows (d > 1, kernel_d > 1 or
 * adaptive = 1) run on every ISA like the others.
 *
 * Unpooling (unpool_* and unpool_bwd_*; U8 not adaptive) takes indices as
 * the model's forward writes them, random valid taps of each output's own
 * window (both the 2x2/s2 kernels' input), or (I32/I64) random positions
 * anywhere in the plane with many equal ones; y and dx carry NaNs with
 * payloads, signed zeros, subnormals and infinities. Each configuration
 * runs serially against the model and in parallel (a 2-thread
 * simdpool_threadpool, or parallel_for NULL) against the serial call, and
 * again with one index altered: the model's output, or the rejection with
 * its exact message and nothing written. The sweep's tensors are one
 * parallel chunk each, so unpool_large_{nchw,nhwc} add configurations of
 * 0.6-2.4 MB that the parallel calls cut into several tasks.
 *
 * Environment:
 *   SIMDPOOL_TEST_SEED   base seed (decimal or 0x hex); default: from time
 *   SIMDPOOL_TEST_SCALE  multiplies the number of accepted configurations per
 *                        operation/layout/ISA (default 1 = 2000)
 *   SIMDPOOL_TEST_MAX_FAILURES  mismatches to report per op/layout/ISA before
 *                        dropping that ISA (default 1)
 *   CK_RUN_CASE          (Check) run one test case, e.g. avg_bwd_nhwc */
#define _POSIX_C_SOURCE 200809L

#include "check_quiet.h"
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "simdpool.h"

/* ------------------------------------------------------------------------ */
/* Random numbers: splitmix64 to seed, xorshift64* to draw                  */
/* ------------------------------------------------------------------------ */

typedef struct rng {
  uint64_t state;
} rng;

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void rng_seed(rng *r, uint64_t seed) {
  r->state = splitmix64(seed);
  if (r->state == 0)
    r->state = 0x2545f4914f6cdd1dull;
}

static uint64_t rng_next(rng *r) {
  uint64_t x = r->state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->state = x;
  return x * 0x2545f4914f6cdd1dull;
}

static uint32_t rng_u32(rng *r) {
  return (uint32_t)(rng_next(r) >> 32);
}

/* Uniform in [0, n) for n >= 1. */
static size_t rng_below(rng *r, size_t n) {
  return (size_t)(rng_next(r) % (uint64_t)n);
}

/* Uniform in [lo, hi]. */
static size_t rng_range(rng *r, size_t lo, size_t hi) {
  return lo + rng_below(r, hi - lo + 1);
}

/* Uniform in [0, 1). */
static double rng_unit(rng *r) {
  return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static int rng_chance(rng *r, double p) {
  return rng_unit(r) < p;
}

/* ------------------------------------------------------------------------ */
/* Global settings (set in main before the runner forks)                    */
/* ------------------------------------------------------------------------ */

static uint64_t g_seed;
static double g_scale = 1.0;
static size_t g_target = 2000; /* accepted configurations per sweep */
/* Mismatches reported per op/layout/ISA before that ISA is dropped from the
 * sweep (SIMDPOOL_TEST_MAX_FAILURES; a debugging aid). */
static size_t g_max_failures = 1;

#define NUM_ISAS 6
static const simdpool_isa g_isas[NUM_ISAS] = {
    SIMDPOOL_ISA_AUTO, SIMDPOOL_ISA_SCALAR, SIMDPOOL_ISA_SSE41,
    SIMDPOOL_ISA_AVX2, SIMDPOOL_ISA_AVX512, SIMDPOOL_ISA_NEON};
/* What a plan with desc.isa == AUTO must run (from SIMDPOOL_ISA or the best
 * supported), or the status plan creation must give when AUTO cannot run. */
static simdpool_isa g_auto_isa = SIMDPOOL_ISA_SCALAR;
static simdpool_status g_auto_status = SIMDPOOL_OK;
static const char *g_auto_note = "";
/* SIMDPOOL_ISA names an ISA: AUTO then behaves as forcing it. */
static int g_auto_forced = 0;
/* The best-first order in which AUTO picks an ISA. */
static const simdpool_isa g_best_first[] = {
    SIMDPOOL_ISA_AVX512, SIMDPOOL_ISA_AVX2, SIMDPOOL_ISA_SSE41,
    SIMDPOOL_ISA_NEON, SIMDPOOL_ISA_SCALAR};

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/* ------------------------------------------------------------------------ */

typedef enum {
  OP_MAX_FWD_NONE,
  OP_MAX_FWD_I32,
  OP_MAX_FWD_I64,
  OP_MAX_FWD_U8,
  OP_MAX_BWD_I32,
  OP_MAX_BWD_I64,
  OP_MAX_BWD_U8,
  OP_MAX_BWD_X,
  OP_AVG_FWD,
  OP_AVG_BWD,
  OP_LP_FWD,
  OP_LP_BWD,
  /* Max unpooling and its backward (simdpool_unpool*), serial and
   * parallel; appended, so the older ops keep their random streams. */
  OP_UNPOOL_I32,
  OP_UNPOOL_I64,
  OP_UNPOOL_U8,
  OP_UNPOOL_BWD_I32,
  OP_UNPOOL_BWD_I64,
  OP_UNPOOL_BWD_U8,
  OP_COUNT
} op_kind;

static const char *const g_op_names[OP_COUNT] = {
    "max_fwd_none",   "max_fwd_i32",  "max_fwd_i64", "max_fwd_u8",
    "max_bwd_i32",    "max_bwd_i64",  "max_bwd_u8",  "max_bwd_x",
    "avg_fwd",        "avg_bwd",      "lp_fwd",      "lp_bwd",
    "unpool_i32",     "unpool_i64",   "unpool_u8",   "unpool_bwd_i32",
    "unpool_bwd_i64", "unpool_bwd_u8"};

static int op_is_unpool(op_kind op) {
  return op >= OP_UNPOOL_I32 && op <= OP_UNPOOL_BWD_U8;
}

/* Unpooling's backward (simdpool_unpool_backward*). */
static int op_is_unpool_bwd(op_kind op) {
  return op >= OP_UNPOOL_BWD_I32 && op <= OP_UNPOOL_BWD_U8;
}

static simdpool_method op_method(op_kind op) {
  if (op <= OP_MAX_BWD_X || op_is_unpool(op))
    return SIMDPOOL_MAX;
  if (op <= OP_AVG_BWD)
    return SIMDPOOL_AVG;
  return SIMDPOOL_LP;
}

static int op_is_backward(op_kind op) {
  return (op >= OP_MAX_BWD_I32 && op <= OP_MAX_BWD_X) || op == OP_AVG_BWD ||
         op == OP_LP_BWD;
}

/* The ranks a sweep covers: the original 2D sweep, 1D and 3D fixed
 * windows, and adaptive windows of each rank. */
typedef enum {
  RANK_2D,
  RANK_1D,
  RANK_3D,
  RANK_ADAPTIVE_1D,
  RANK_ADAPTIVE_2D,
  RANK_ADAPTIVE_3D,
  RANK_COUNT
} rank_kind;

static const char *const g_rank_names[RANK_COUNT] = {
    "2d", "1d", "3d", "adaptive_1d", "adaptive_2d", "adaptive_3d"};

static int rank_is_adaptive(rank_kind rk) {
  return rk >= RANK_ADAPTIVE_1D;
}

/* Adaptive windows exist for MAX (without U8 indices) and AVG. */
static int rank_has_op(rank_kind rk, op_kind op) {
  if (!rank_is_adaptive(rk))
    return 1;
  return op != OP_LP_FWD && op != OP_LP_BWD && op != OP_MAX_FWD_U8 &&
         op != OP_MAX_BWD_U8 && op != OP_UNPOOL_U8 && op != OP_UNPOOL_BWD_U8;
}

static simdpool_index_type op_index_type(op_kind op) {
  switch (op) {
  case OP_MAX_FWD_I32:
  case OP_MAX_BWD_I32:
  case OP_UNPOOL_I32:
  case OP_UNPOOL_BWD_I32:
    return SIMDPOOL_INDEX_I32;
  case OP_MAX_FWD_I64:
  case OP_MAX_BWD_I64:
  case OP_UNPOOL_I64:
  case OP_UNPOOL_BWD_I64:
    return SIMDPOOL_INDEX_I64;
  case OP_MAX_FWD_U8:
  case OP_MAX_BWD_U8:
  case OP_UNPOOL_U8:
  case OP_UNPOOL_BWD_U8:
    return SIMDPOOL_INDEX_U8;
  default:
    return SIMDPOOL_INDEX_NONE;
  }
}

static const char *layout_name(simdpool_layout l) {
  return l == SIMDPOOL_NCHW ? "nchw" : l == SIMDPOOL_NHWC ? "nhwc" : "bad";
}

static const char *padding_name(simdpool_padding p) {
  switch (p) {
  case SIMDPOOL_PAD_EXPLICIT:
    return "EXPLICIT";
  case SIMDPOOL_PAD_VALID:
    return "VALID";
  case SIMDPOOL_PAD_SAME_UPPER:
    return "SAME_UPPER";
  case SIMDPOOL_PAD_SAME_LOWER:
    return "SAME_LOWER";
  default:
    return "bad";
  }
}

static const char *index_name(simdpool_index_type t) {
  switch (t) {
  case SIMDPOOL_INDEX_NONE:
    return "NONE";
  case SIMDPOOL_INDEX_I32:
    return "I32";
  case SIMDPOOL_INDEX_I64:
    return "I64";
  case SIMDPOOL_INDEX_U8:
    return "U8";
  default:
    return "bad";
  }
}

static const char *dtype_name(simdpool_dtype t) {
  static const char *const names[] = {"F32", "BF16", "F16", "S8", "U8"};
  return (unsigned)t < 5 ? names[t] : "?";
}

static const char *method_name(simdpool_method m) {
  return m == SIMDPOOL_MAX   ? "MAX"
         : m == SIMDPOOL_AVG ? "AVG"
         : m == SIMDPOOL_LP  ? "LP"
                             : "bad";
}

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ------------------------------------------------------------------------ */
/* One configuration                                                        */
/* ------------------------------------------------------------------------ */

/* How the input values of a configuration are drawn. */
typedef enum {
  VALUES_PLAIN, /* uniform in [-4, 4] */
  VALUES_TIES,  /* small integers and signed zeros: many equal values */
  VALUES_WIDE,  /* any finite magnitude */
  VALUES_COUNT
} value_class;

static const char *const g_value_names[VALUES_COUNT] = {"plain", "ties",
                                                        "wide"};

typedef struct config {
  op_kind op;
  rank_kind rank;
  int plan_only;    /* shape_rules: plan creation only */
  simdpool_isa isa; /* requested */
  size_t iteration;
  uint64_t iter_seed;
  simdpool_desc d;
  model_shape ms;
  value_class values;
  double nasty;      /* probability of a special value per input element */
  int nonnegative;   /* LP: inputs forced >= 0 */
  double dy_nasty;   /* the same for dy */
  int pass_x;        /* backward: whether x is passed */
  size_t misalign_x; /* elements of misalignment of the buffers */
  size_t misalign_y;
  int idx_source; /* unpooling: where its indices come from (IDX_*) */
  int par_null;   /* unpooling: the parallel call passes parallel_for NULL */
  int fast_2x2;   /* unpooling: the AUTO plan's kernel is a 2x2/s2 one */
} config;

/* Where the indices of an unpooling configuration come from. */
enum {
  IDX_FORWARD, /* as the model's MAX forward writes them (fast paths) */
  IDX_TAPS,    /* a random valid tap of each output's own window */
  IDX_PLANE,   /* random positions in the plane, many equal (I32/I64) */
  IDX_SOURCES
};

static const char *const g_idx_source_names[IDX_SOURCES] = {
    "forward", "window taps", "in-plane with duplicates"};

static void describe(const config *cf, char *buf, size_t size) {
  const simdpool_desc *d = &cf->d;
  snprintf(buf, size,
           "seed=%" PRIu64 " (SIMDPOOL_TEST_SEED) op=%s rank=%s isa=%s"
           " iteration=%zu"
           " iter_seed=0x%016" PRIx64 "\n"
           "  desc: method=%s layout=%s n=%zu c=%zu h=%zu w=%zu"
           " kernel=%zux%zu stride=%zux%zu dilation=%zux%zu\n"
           "        padding=%s pads(t,l,b,r)=(%zu,%zu,%zu,%zu) ceil_mode=%d"
           " count_include_pad=%d p=%.9g (0x%08" PRIx32 ") index_type=%s"
           " isa=%s\n"
           "        pixel strides (x,y)=(%zu,%zu) clamp=%d [%g, %g]\n"
           "        depth: d=%zu kernel_d=%zu stride_d=%zu dilation_d=%zu"
           " pads(front,back)=(%zu,%zu)\n"
           "        adaptive=%d out(d,h,w)=(%zu,%zu,%zu)\n"
           "  model: %s out(d,h,w)=(%zu,%zu,%zu)"
           " resolved pads(f,t,l,bk,b,r)=(%zu,%zu,%zu,%zu,%zu,%zu)"
           " reasons=0x%x\n"
           "  values=%s nasty=%.2f nonnegative=%d dy_nasty=%.2f pass_x=%d"
           " misalign(x,y)=(%zu,%zu)%s%s%s\n",
           g_seed, cf->plan_only ? "shape_rules" : g_op_names[cf->op],
           g_rank_names[cf->rank], simdpool_isa_name(cf->isa), cf->iteration,
           cf->iter_seed, method_name(d->method), layout_name(d->layout), d->n,
           d->c, d->h, d->w, d->kernel_h, d->kernel_w, d->stride_h, d->stride_w,
           d->dilation_h, d->dilation_w, padding_name(d->padding), d->pad_top,
           d->pad_left, d->pad_bottom, d->pad_right, d->ceil_mode,
           d->count_include_pad, (double)d->p, f2u(d->p),
           index_name(d->index_type), simdpool_isa_name(d->isa),
           d->x_pixel_stride, d->y_pixel_stride, d->clamp, (double)d->clamp_min,
           (double)d->clamp_max, d->d, d->kernel_d, d->stride_d, d->dilation_d,
           d->pad_front, d->pad_back, d->adaptive, d->out_d, d->out_h, d->out_w,
           model_reason_string(cf->ms.reasons), cf->ms.out_d, cf->ms.out_h,
           cf->ms.out_w, cf->ms.pad_front, cf->ms.pad_top, cf->ms.pad_left,
           cf->ms.pad_back, cf->ms.pad_bottom, cf->ms.pad_right, cf->ms.reasons,
           g_value_names[cf->values], cf->nasty, cf->nonnegative, cf->dy_nasty,
           cf->pass_x, cf->misalign_x, cf->misalign_y,
           op_is_unpool(cf->op) ? " indices: " : "",
           op_is_unpool(cf->op) ? g_idx_source_names[cf->idx_source] : "",
           op_is_unpool(cf->op) && cf->par_null ? " (parallel_for NULL)" : "");
  const size_t used = strlen(buf);
  if (d->dtype != SIMDPOOL_F32 && used < size)
    snprintf(buf + used, size - used,
             "  dtype=%s quant: x_scale=%a y_scale=%a x_zp=%d y_zp=%d "
             "y_min=%d y_max=%d\n",
             dtype_name(d->dtype), (double)d->quant.x_scale,
             (double)d->quant.y_scale, (int)d->quant.x_zero_point,
             (int)d->quant.y_zero_point, (int)d->quant.y_min,
             (int)d->quant.y_max);
}

/* While one ISA runs one configuration, a failure jumps back to the sweep,
 * which stops testing that ISA but goes on with the others. */
static jmp_buf *g_fail_jump;
/* Extra detail (a window dump) printed after the message of a failure. */
static char g_extra[4096];

/* Prints the configuration and the message, then fails (see g_fail_jump). */
static _Noreturn void fail_config(const config *cf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail_config(const config *cf, const char *fmt, ...) {
  char msg[1536];
  char desc[2560];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  describe(cf, desc, sizeof desc);
  printf("\n*** MISMATCH ***\n%s  %s\n%s", desc, msg, g_extra);
  fflush(stdout);
  g_extra[0] = '\0';
  if (g_fail_jump != NULL)
    longjmp(*g_fail_jump, 1);
  ck_abort_msg("%s %s/%s/%s iteration %zu: %s (seed %" PRIu64 ")",
               cf->plan_only ? "shape_rules" : g_op_names[cf->op],
               layout_name(cf->d.layout), g_rank_names[cf->rank],
               simdpool_isa_name(cf->isa), cf->iteration, msg, g_seed);
  abort();
}

/* The extent of a kernel axis. */
static size_t extent(size_t k, size_t d) {
  return d * (k - 1) + 1;
}

static void draw_params(rng *r, op_kind op, simdpool_layout layout, config *cf);

/* Draws a 2D desc for op. The generator mostly makes valid configurations
 * and sometimes breaks one rule (or several) on purpose. */
static void draw_desc(rng *r, op_kind op, simdpool_layout layout,
                      simdpool_isa isa, config *cf) {
  simdpool_desc *d = &cf->d;
  simdpool_method m = op_method(op);
  double u;
  size_t eh, ew;

  simdpool_desc_init(d, m, layout, 1, 1, 1, 1, 1, 1);
  d->method = m;
  d->layout = layout;
  d->isa = isa;

  /* Shape. */
  u = rng_unit(r);
  if (u < 0.62) { /* the basic ranges */
    d->n = rng_range(r, 1, 2);
    d->c = rng_range(r, 1, 9);
    d->h = rng_range(r, 1, 13);
    d->w = rng_range(r, 1, 13);
  } else if (u < 0.80) { /* wide rows: fills vectors over output columns */
    d->n = 1;
    d->c = rng_range(r, 1, 3);
    d->h = rng_range(r, 1, 7);
    d->w = rng_range(r, 14, 75);
  } else { /* many channels: fills vectors over channels (NHWC) */
    d->n = rng_range(r, 1, 2);
    d->c = rng_range(r, 10, 40);
    d->h = rng_range(r, 1, 8);
    d->w = rng_range(r, 1, 8);
  }

  /* Window. */
  d->padding = SIMDPOOL_PAD_EXPLICIT;
  d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = 0;
  d->ceil_mode = 0;
  u = rng_unit(r);
  if (u < 0.30) {
    /* The shapes with specialised kernels. */
    switch (rng_below(r, 8)) {
    case 0: /* 2x2 stride 2 */
    case 1:
      d->kernel_h = d->kernel_w = 2;
      d->stride_h = d->stride_w = 2;
      break;
    case 2: /* 3x3 stride 2 pad 1 (ResNet stem) */
      d->kernel_h = d->kernel_w = 3;
      d->stride_h = d->stride_w = 2;
      d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = 1;
      break;
    case 3: /* 3x3 stride 1 (Inception), pad 0 or 1 */
      d->kernel_h = d->kernel_w = 3;
      d->stride_h = d->stride_w = 1;
      if (rng_chance(r, 0.5))
        d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = 1;
      break;
    case 4: /* global pooling */
      d->kernel_h = d->h;
      d->kernel_w = d->w;
      d->stride_h = d->stride_w = 1;
      break;
    case 5: /* 2x2 stride 1 */
      d->kernel_h = d->kernel_w = 2;
      d->stride_h = d->stride_w = 1;
      break;
    case 6: /* 3x3 stride 2, no padding */
      d->kernel_h = d->kernel_w = 3;
      d->stride_h = d->stride_w = 2;
      break;
    default: /* 1x1 */
      d->kernel_h = d->kernel_w = 1;
      d->stride_h = d->stride_w = rng_range(r, 1, 2);
      break;
    }
    d->dilation_h = d->dilation_w = 1;
    if (rng_chance(r, 0.3))
      d->ceil_mode = 1;
    if (rng_chance(r, 0.1))
      d->padding = (simdpool_padding)rng_range(r, 1, 3);
    if (d->padding != SIMDPOOL_PAD_EXPLICIT) {
      d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = 0;
      d->ceil_mode = 0;
    }
  } else {
    d->kernel_h = rng_range(r, 1, 4);
    d->kernel_w = rng_range(r, 1, 4);
    if (rng_chance(r, 0.08)) /* larger than the input */
      d->kernel_h = rng_range(r, d->h, d->h + 3);
    if (rng_chance(r, 0.08))
      d->kernel_w = rng_range(r, d->w, d->w + 3);
    d->stride_h = rng_range(r, 1, 4);
    d->stride_w = rng_range(r, 1, 4);
    d->dilation_h = rng_chance(r, 0.5) ? 1 : rng_range(r, 1, 3);
    d->dilation_w = rng_chance(r, 0.5) ? 1 : rng_range(r, 1, 3);
    u = rng_unit(r);
    d->padding = u < 0.55   ? SIMDPOOL_PAD_EXPLICIT
                 : u < 0.70 ? SIMDPOOL_PAD_VALID
                 : u < 0.85 ? SIMDPOOL_PAD_SAME_UPPER
                            : SIMDPOOL_PAD_SAME_LOWER;
    eh = extent(d->kernel_h, d->dilation_h);
    ew = extent(d->kernel_w, d->dilation_w);
    if (d->padding == SIMDPOOL_PAD_EXPLICIT) {
      /* Pads 0..extent-1, independently per side; often 0. */
      d->pad_top = rng_chance(r, 0.4) ? 0 : rng_below(r, eh);
      d->pad_bottom = rng_chance(r, 0.4) ? 0 : rng_below(r, eh);
      d->pad_left = rng_chance(r, 0.4) ? 0 : rng_below(r, ew);
      d->pad_right = rng_chance(r, 0.4) ? 0 : rng_below(r, ew);
      d->ceil_mode = rng_chance(r, 0.5);
      if (rng_chance(r, 0.02)) /* pad >= extent: rejected */
        d->pad_top = eh + rng_below(r, 2);
      if (rng_chance(r, 0.02))
        d->pad_right = ew + rng_below(r, 2);
    } else {
      if (rng_chance(r, 0.03)) /* ceil with VALID/SAME: rejected */
        d->ceil_mode = 1;
      if (rng_chance(r, 0.03)) /* pad with VALID/SAME: rejected */
        d->pad_left = rng_range(r, 1, 2);
    }
  }

  draw_params(r, op, layout, cf);
}

/* Draws what every rank shares after the window: the method's parameters,
 * rare blunders, pixel strides, the clamp. */
static void draw_params(rng *r, op_kind op, simdpool_layout layout,
                        config *cf) {
  simdpool_desc *d = &cf->d;
  simdpool_method m = op_method(op);

  /* Method parameters, with the fields a method ignores set to junk. */
  d->index_type = SIMDPOOL_INDEX_NONE;
  d->count_include_pad = (int)rng_range(r, 0, 1);
  d->p = 2.0f;
  if (m == SIMDPOOL_MAX) {
    d->index_type = op_index_type(op);
    if (op == OP_MAX_BWD_X) /* recomputed from x whatever the index type */
      d->index_type = (simdpool_index_type)rng_below(r, 4);
    if (rng_chance(r, 0.1))
      d->count_include_pad = rng_chance(r, 0.5) ? 7 : -1;
    if (rng_chance(r, 0.1))
      d->p = rng_chance(r, 0.5) ? -1.0f : u2f(0x7fc00000u);
    if (d->index_type == SIMDPOOL_INDEX_U8 && rng_chance(r, 0.01)) {
      /* More than 256 taps: U8 too narrow (UNSUPPORTED). */
      d->kernel_h = 17;
      d->kernel_w = 16;
      d->stride_h = d->stride_w = rng_range(r, 1, 3);
      d->dilation_h = d->dilation_w = 1;
      d->h = rng_range(r, 17, 20);
      d->w = rng_range(r, 16, 20);
    }
  } else if (m == SIMDPOOL_AVG) {
    if (rng_chance(r, 0.01)) /* count_include_pad not 0/1: rejected */
      d->count_include_pad = rng_chance(r, 0.5) ? 2 : -1;
    if (rng_chance(r, 0.1))
      d->p = u2f(0xff800000u); /* ignored */
  } else {
    double pc = rng_unit(r);
    if (pc < 0.25)
      d->p = 1.0f;
    else if (pc < 0.50)
      d->p = 2.0f;
    else if (pc < 0.75) {
      static const float fixed[] = {0.5f, 1.5f, 3.0f, 2.5f, 0.25f, 4.0f};
      d->p = fixed[rng_below(r, sizeof fixed / sizeof fixed[0])];
    } else {
      d->p = (float)(0.25 + 3.75 * rng_unit(r));
    }
    if (rng_chance(r, 0.02)) { /* p not finite or <= 0: rejected */
      static const uint32_t bad[] = {0x00000000u, 0x80000000u, 0xbf800000u,
                                     0x7f800000u, 0xff800000u, 0x7fc00000u,
                                     0x7f800001u};
      d->p = u2f(bad[rng_below(r, sizeof bad / sizeof bad[0])]);
    }
    if (rng_chance(r, 0.1))
      d->count_include_pad = 5; /* ignored */
  }
  if (m != SIMDPOOL_MAX && rng_chance(r, 0.01)) /* rejected */
    d->index_type = (simdpool_index_type)rng_range(r, 1, 3);

  /* Rare blunders, all rejected. */
  if (rng_chance(r, 0.01)) {
    switch (rng_below(r, 10)) {
    case 0:
      d->n = 0;
      break;
    case 1:
      d->c = 0;
      break;
    case 2:
      d->h = 0;
      break;
    case 3:
      d->w = 0;
      break;
    case 4:
      d->kernel_h = 0;
      break;
    case 5:
      d->kernel_w = 0;
      break;
    case 6:
      d->stride_h = 0;
      break;
    case 7:
      d->stride_w = 0;
      break;
    case 8:
      d->dilation_h = 0;
      break;
    default:
      d->dilation_w = 0;
      break;
    }
  }
  if (rng_chance(r, 0.005))
    d->ceil_mode = rng_chance(r, 0.5) ? 2 : -1;
  if (rng_chance(r, 0.005))
    d->padding = (simdpool_padding)4;

  /* Pixel strides (NHWC; rarely a bad one: below c, or with NCHW). */
  if (layout == SIMDPOOL_NHWC && rng_chance(r, 0.35)) {
    if (rng_chance(r, 0.7))
      d->x_pixel_stride = d->c + rng_range(r, 0, 9);
    if (rng_chance(r, 0.7))
      d->y_pixel_stride = d->c + rng_range(r, rng_chance(r, 0.2) ? 0 : 1, 9);
  }
  if (rng_chance(r, 0.01)) {
    if (layout == SIMDPOOL_NCHW)
      d->x_pixel_stride = d->c + rng_below(r, 2);
    else if (d->c > 1)
      d->y_pixel_stride = rng_range(r, 1, d->c - 1);
  }
  /* The clamp: forward only (backward rejects it), often a ReLU or ReLU6;
   * rarely bad (clamp 2, a NaN bound, an empty range). */
  if (!op_is_backward(op) && !op_is_unpool(op) && rng_chance(r, 0.3)) {
    static const float lows[] = {-INFINITY, -1.0f, -0.0f, 0.0f, 0.5f, 6.0f};
    static const float highs[] = {INFINITY, 6.0f, 1.0f, 0.0f, -0.0f, 0.25f};
    d->clamp = 1;
    d->clamp_min = lows[rng_below(r, 6)];
    d->clamp_max = highs[rng_below(r, 6)];
    if (d->clamp_min > d->clamp_max) {
      const float t = d->clamp_min;
      d->clamp_min = d->clamp_max;
      d->clamp_max = t;
    }
  }
  if (rng_chance(r, 0.01)) {
    switch (rng_below(r, 3)) {
    case 0:
      d->clamp = 2;
      break;
    case 1:
      d->clamp = 1;
      d->clamp_max = NAN;
      break;
    default:
      d->clamp = 1;
      d->clamp_min = 1.0f;
      d->clamp_max = 0.5f;
      break;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Descs of the other ranks                                                 */
/* ------------------------------------------------------------------------ */

/* The window shapes with specialised kernels, per axis: 2 stride 2, 3
 * stride 2 pad 1 (ResNet stem), 3 stride 1 pad 0 or 1 (Inception), global,
 * 2 stride 1, 3 stride 2, 1 stride 1 or 2. */
#define SPECIAL_KINDS 9u

static void special_axis(size_t kind, size_t in, size_t *k, size_t *s,
                         size_t *pb, size_t *pe) {
  *pb = *pe = 0;
  switch (kind) {
  case 0:
    *k = 2;
    *s = 2;
    break;
  case 1:
    *k = 3;
    *s = 2;
    *pb = *pe = 1;
    break;
  case 2:
    *k = 3;
    *s = 1;
    break;
  case 3:
    *k = 3;
    *s = 1;
    *pb = *pe = 1;
    break;
  case 4: /* global */
    *k = in;
    *s = 1;
    break;
  case 5:
    *k = 2;
    *s = 1;
    break;
  case 6:
    *k = 3;
    *s = 2;
    break;
  case 7:
    *k = 1;
    *s = 1;
    break;
  default:
    *k = 1;
    *s = 2;
    break;
  }
}

static simdpool_padding random_padding(rng *r) {
  double u = rng_unit(r);
  return u < 0.55   ? SIMDPOOL_PAD_EXPLICIT
         : u < 0.70 ? SIMDPOOL_PAD_VALID
         : u < 0.85 ? SIMDPOOL_PAD_SAME_UPPER
                    : SIMDPOOL_PAD_SAME_LOWER;
}

/* A random window on one axis of input size in: kernel 1..kmax (8%: the
 * input's size up to 3 more), stride 1..smax, dilation often 1, else 1..3;
 * with EXPLICIT padding pads 0..extent-1 (rarely one at or beyond the
 * extent: rejected). */
static void random_axis(rng *r, size_t in, size_t kmax, size_t smax,
                        simdpool_padding padding, size_t *k, size_t *s,
                        size_t *dl, size_t *pb, size_t *pe) {
  size_t e;
  *k = rng_range(r, 1, kmax);
  if (rng_chance(r, 0.08))
    *k = rng_range(r, in, in + 3);
  *s = rng_range(r, 1, smax);
  *dl = rng_chance(r, 0.5) ? 1 : rng_range(r, 1, 3);
  e = extent(*k, *dl);
  *pb = *pe = 0;
  if (padding == SIMDPOOL_PAD_EXPLICIT) {
    *pb = rng_chance(r, 0.4) ? 0 : rng_below(r, e);
    *pe = rng_chance(r, 0.4) ? 0 : rng_below(r, e);
    if (rng_chance(r, 0.015)) /* pad >= extent: rejected */
      *pb = e + rng_below(r, 2);
    if (rng_chance(r, 0.015))
      *pe = e + rng_below(r, 2);
  }
}

/* Rare blunders of the depth and adaptive fields on a fixed-window desc,
 * all rejected. */
static void rank_blunders(rng *r, config *cf) {
  simdpool_desc *d = &cf->d;
  if (!rng_chance(r, 0.02))
    return;
  switch (rng_below(r, 8)) {
  case 0:
    d->d = 0;
    break;
  case 1:
    d->kernel_d = 0;
    break;
  case 2:
    d->stride_d = 0;
    break;
  case 3:
    d->dilation_d = 0;
    break;
  case 4: /* output sizes on a fixed-window plan */
    if (rng_chance(r, 0.5))
      d->out_w = rng_range(r, 1, 3);
    else
      d->out_d = rng_range(r, 1, 3);
    break;
  case 5: /* adaptive 1 without output sizes, or not 0/1 */
    d->adaptive = rng_chance(r, 0.5) ? 1 : (rng_chance(r, 0.5) ? 2 : -1);
    break;
  case 6: /* a depth pad with VALID or SAME */
    d->padding = (simdpool_padding)rng_range(r, 1, 3);
    d->ceil_mode = 0;
    if (rng_chance(r, 0.5))
      d->pad_front = 1;
    else
      d->pad_back = 1;
    break;
  default: /* a depth pad at or beyond the extent */
    d->padding = SIMDPOOL_PAD_EXPLICIT;
    if (d->kernel_d && d->dilation_d)
      d->pad_back = extent(d->kernel_d, d->dilation_d) + rng_below(r, 2);
    else
      d->pad_back = 1;
    break;
  }
}

/* Checks what simdpool_desc_init_1d/_3d/_adaptive promise to set, before
 * the draw varies it: the spatial sizes and kernels given, stride =
 * kernel (fixed windows) or 1 (adaptive), dilation 1, no pads, floor mode,
 * and the output sizes with adaptive = 1 only. */
static void check_init(const simdpool_desc *d, const char *helper,
                       simdpool_method m, simdpool_layout l, size_t n, size_t c,
                       const size_t in[3], const size_t k[3], int adaptive,
                       const size_t out[3]) {
  const size_t ks[3] = {d->kernel_d, d->kernel_h, d->kernel_w};
  const size_t ss[3] = {d->stride_d, d->stride_h, d->stride_w};
  const size_t dl[3] = {d->dilation_d, d->dilation_h, d->dilation_w};
  const size_t got_in[3] = {d->d, d->h, d->w};
  const size_t got_out[3] = {d->out_d, d->out_h, d->out_w};
  int ax;
  ck_assert_msg(d->method == m && d->layout == l && d->n == n && d->c == c,
                "%s: method, layout, n or c not as given", helper);
  ck_assert_msg(d->adaptive == adaptive, "%s: adaptive=%d, want %d", helper,
                d->adaptive, adaptive);
  ck_assert_msg(d->padding == SIMDPOOL_PAD_EXPLICIT && d->pad_front == 0 &&
                    d->pad_back == 0 && d->pad_top == 0 && d->pad_bottom == 0 &&
                    d->pad_left == 0 && d->pad_right == 0 && d->ceil_mode == 0,
                "%s: padding not EXPLICIT 0 in floor mode", helper);
  for (ax = 0; ax < 3; ax++) {
    ck_assert_msg(got_in[ax] == in[ax], "%s: axis %d input %zu, want %zu",
                  helper, ax, got_in[ax], in[ax]);
    ck_assert_msg(ks[ax] == k[ax], "%s: axis %d kernel %zu, want %zu", helper,
                  ax, ks[ax], k[ax]);
    ck_assert_msg(ss[ax] == k[ax], "%s: axis %d stride %zu, want %zu", helper,
                  ax, ss[ax], k[ax]);
    ck_assert_msg(dl[ax] == 1, "%s: axis %d dilation %zu, want 1", helper, ax,
                  dl[ax]);
    ck_assert_msg(got_out[ax] == (adaptive ? out[ax] : 0),
                  "%s: axis %d output size %zu, want %zu", helper, ax,
                  got_out[ax], adaptive ? out[ax] : 0);
  }
}

/* Draws a 1D desc (simdpool_desc_init_1d, then the width axis varied). */
static void draw_desc_1d(rng *r, op_kind op, simdpool_layout layout,
                         config *cf) {
  simdpool_desc *d = &cf->d;
  size_t n, c, w, kw, sw, dw = 1, pl = 0, pr = 0;
  simdpool_padding padding = SIMDPOOL_PAD_EXPLICIT;
  int ceil_mode = 0;
  double u = rng_unit(r);

  if (u < 0.6) { /* the basic ranges */
    n = rng_range(r, 1, 2);
    c = rng_range(r, 1, 9);
    w = rng_range(r, 1, 40);
  } else if (u < 0.8) { /* long rows: vectors over output columns */
    n = 1;
    c = rng_range(r, 1, 3);
    w = rng_range(r, 41, 96);
  } else { /* many channels: vectors over channels (channels-last) */
    n = rng_range(r, 1, 2);
    c = rng_range(r, 10, 40);
    w = rng_range(r, 1, 16);
  }
  if (rng_chance(r, 0.3)) {
    special_axis(rng_below(r, SPECIAL_KINDS), w, &kw, &sw, &pl, &pr);
    ceil_mode = rng_chance(r, 0.3);
    if (rng_chance(r, 0.1)) {
      padding = (simdpool_padding)rng_range(r, 1, 3);
      pl = pr = 0;
      ceil_mode = 0;
    }
  } else {
    padding = random_padding(r);
    random_axis(r, w, 5, 4, padding, &kw, &sw, &dw, &pl, &pr);
    if (padding == SIMDPOOL_PAD_EXPLICIT) {
      ceil_mode = rng_chance(r, 0.5);
    } else {
      if (rng_chance(r, 0.03)) /* ceil with VALID/SAME: rejected */
        ceil_mode = 1;
      if (rng_chance(r, 0.03)) /* pad with VALID/SAME: rejected */
        pl = rng_range(r, 1, 2);
    }
  }
  simdpool_desc_init_1d(d, op_method(op), layout, n, c, w, kw);
  {
    const size_t in3[3] = {1, 1, w}, k3[3] = {1, 1, kw}, o3[3] = {0, 0, 0};
    check_init(d, "simdpool_desc_init_1d", op_method(op), layout, n, c, in3, k3,
               0, o3);
  }
  d->isa = SIMDPOOL_ISA_AUTO;
  d->stride_w = sw;
  d->dilation_w = dw;
  d->padding = padding;
  d->pad_left = pl;
  d->pad_right = pr;
  d->ceil_mode = ceil_mode;
  draw_params(r, op, layout, cf);
  rank_blunders(r, cf);
}

/* Draws a 3D desc (simdpool_desc_init_3d, then every axis varied). */
static void draw_desc_3d(rng *r, op_kind op, simdpool_layout layout,
                         config *cf) {
  simdpool_desc *d = &cf->d;
  size_t n, c, in[3], k[3], s[3], dl[3] = {1, 1, 1}, pb[3], pe[3];
  simdpool_padding padding = SIMDPOOL_PAD_EXPLICIT;
  int ceil_mode = 0, ax;
  double u = rng_unit(r);

  if (u < 0.6) { /* the basic ranges */
    n = rng_range(r, 1, 2);
    c = rng_range(r, 1, 6);
    in[0] = rng_range(r, 1, 6);
    in[1] = rng_range(r, 1, 7);
    in[2] = rng_range(r, 1, 7);
  } else if (u < 0.8) { /* wide rows */
    n = 1;
    c = rng_range(r, 1, 3);
    in[0] = rng_range(r, 1, 4);
    in[1] = rng_range(r, 1, 4);
    in[2] = rng_range(r, 14, 48);
  } else { /* many channels */
    n = rng_range(r, 1, 2);
    c = rng_range(r, 10, 33);
    in[0] = rng_range(r, 1, 4);
    in[1] = rng_range(r, 1, 5);
    in[2] = rng_range(r, 1, 5);
  }
  if (rng_chance(r, 0.35)) {
    /* Video pooling: a specialised plane window (1x2x2, 2x2x2, 3x3x3,
     * global, ...) with a depth window of its own. */
    static const size_t depth_kinds[] = {7, 0, 1, 3, 4, 2};
    size_t kind = rng_below(r, SPECIAL_KINDS);
    size_t dkind = rng_chance(r, 0.5)
                       ? kind
                       : depth_kinds[rng_below(r, sizeof depth_kinds /
                                                      sizeof depth_kinds[0])];
    special_axis(dkind, in[0], &k[0], &s[0], &pb[0], &pe[0]);
    special_axis(kind, in[1], &k[1], &s[1], &pb[1], &pe[1]);
    special_axis(kind, in[2], &k[2], &s[2], &pb[2], &pe[2]);
    ceil_mode = rng_chance(r, 0.3);
    if (rng_chance(r, 0.1)) {
      padding = (simdpool_padding)rng_range(r, 1, 3);
      for (ax = 0; ax < 3; ax++)
        pb[ax] = pe[ax] = 0;
      ceil_mode = 0;
    }
  } else {
    padding = random_padding(r);
    for (ax = 0; ax < 3; ax++)
      random_axis(r, in[ax], ax == 0 ? 3 : 4, 3, padding, &k[ax], &s[ax],
                  &dl[ax], &pb[ax], &pe[ax]);
    if (padding == SIMDPOOL_PAD_EXPLICIT) {
      ceil_mode = rng_chance(r, 0.5);
    } else {
      if (rng_chance(r, 0.03)) /* ceil with VALID/SAME: rejected */
        ceil_mode = 1;
      if (rng_chance(r, 0.03)) /* pad with VALID/SAME: rejected */
        pb[rng_below(r, 3)] = rng_range(r, 1, 2);
    }
  }
  if (rng_chance(r, 0.3)) {
    /* A depth window of one slice (C3D's 1x2x2): the library runs it as 2D
     * over the slices; with rows that tile each slice (no row padding,
     * h = out_h * stride_h, extent <= stride) as one plane of d*h rows. */
    k[0] = s[0] = 1;
    pb[0] = pe[0] = 0;
    if (rng_chance(r, 0.5)) {
      dl[1] = 1;
      s[1] = k[1] + (rng_chance(r, 0.2) ? 1 : 0);
      pb[1] = pe[1] = 0;
      in[1] = s[1] * rng_range(r, 1, 3);
      if (padding != SIMDPOOL_PAD_EXPLICIT)
        padding = SIMDPOOL_PAD_VALID;
      for (ax = 0; ax < 3; ax += 2)
        if (padding != SIMDPOOL_PAD_EXPLICIT)
          pb[ax] = pe[ax] = 0;
    }
  }
  simdpool_desc_init_3d(d, op_method(op), layout, n, c, in[0], in[1], in[2],
                        k[0], k[1], k[2]);
  {
    const size_t o3[3] = {0, 0, 0};
    check_init(d, "simdpool_desc_init_3d", op_method(op), layout, n, c, in, k,
               0, o3);
  }
  d->isa = SIMDPOOL_ISA_AUTO;
  d->stride_d = s[0];
  d->stride_h = s[1];
  d->stride_w = s[2];
  d->dilation_d = dl[0];
  d->dilation_h = dl[1];
  d->dilation_w = dl[2];
  d->padding = padding;
  d->pad_front = pb[0];
  d->pad_back = pe[0];
  d->pad_top = pb[1];
  d->pad_bottom = pe[1];
  d->pad_left = pb[2];
  d->pad_right = pe[2];
  d->ceil_mode = ceil_mode;
  draw_params(r, op, layout, cf);
  rank_blunders(r, cf);
}

/* An adaptive output size for an axis of input size in: often 1 (global),
 * the input's size, half of it (14 -> 7), more than the input. */
static size_t draw_out(rng *r, size_t in) {
  double u = rng_unit(r);
  if (u < 0.2)
    return 1;
  if (u < 0.35)
    return in;
  if (u < 0.5)
    return in / 2 ? in / 2 : 1;
  if (u < 0.65)
    return in + rng_range(r, 1, 4);
  if (u < 0.75 && in >= 3 && in % 2) /* 13 -> 6: windows of 3, stride 2 */
    return (in - 1) / 2;
  return rng_range(r, 1, in + 2);
}

/* Draws an adaptive desc of the given rank (simdpool_desc_init_adaptive,
 * then rarely a field broken). */
static void draw_desc_adaptive(rng *r, op_kind op, simdpool_layout layout,
                               int dims, config *cf) {
  simdpool_desc *d = &cf->d;
  size_t n = rng_range(r, 1, 2), c, dd = 1, h = 1, w, od = 1, oh = 1, ow;

  c = rng_chance(r, 0.2) ? rng_range(r, 10, 33) : rng_range(r, 1, 8);
  if (dims == 1) {
    w = rng_range(r, 1, 48);
  } else if (dims == 2) {
    h = rng_range(r, 1, 14);
    w = rng_range(r, 1, 14);
  } else {
    dd = rng_range(r, 1, 6);
    h = rng_range(r, 1, 8);
    w = rng_range(r, 1, 8);
  }
  if (dims == 3)
    od = draw_out(r, dd);
  if (dims >= 2)
    oh = draw_out(r, h);
  ow = draw_out(r, w);
  simdpool_desc_init_adaptive(d, op_method(op), layout, n, c, dd, h, w, od, oh,
                              ow);
  {
    const size_t in3[3] = {dd, h, w}, k3[3] = {1, 1, 1}, o3[3] = {od, oh, ow};
    check_init(d, "simdpool_desc_init_adaptive", op_method(op), layout, n, c,
               in3, k3, 1, o3);
  }
  d->isa = SIMDPOOL_ISA_AUTO;
  draw_params(r, op, layout, cf);
  /* max_bwd_x: mostly an index type adaptive plans take (U8: UNSUPPORTED) */
  if (op == OP_MAX_BWD_X && d->index_type == SIMDPOOL_INDEX_U8 &&
      !rng_chance(r, 0.1))
    d->index_type = (simdpool_index_type)rng_below(r, 3);

  /* Rare blunders, all rejected. */
  if (rng_chance(r, 0.06)) {
    size_t *axis3[3];
    switch (rng_below(r, 12)) {
    case 0:
      d->adaptive = rng_chance(r, 0.5) ? 2 : -1;
      break;
    case 1: /* output sizes with adaptive = 0 */
      d->adaptive = 0;
      break;
    case 2:
      axis3[0] = &d->out_d;
      axis3[1] = &d->out_h;
      axis3[2] = &d->out_w;
      *axis3[rng_below(r, 3)] = 0;
      break;
    case 3:
      axis3[0] = &d->kernel_d;
      axis3[1] = &d->kernel_h;
      axis3[2] = &d->kernel_w;
      *axis3[rng_below(r, 3)] = 2;
      break;
    case 4:
      axis3[0] = &d->stride_d;
      axis3[1] = &d->stride_h;
      axis3[2] = &d->stride_w;
      *axis3[rng_below(r, 3)] = 2;
      break;
    case 5:
      axis3[0] = &d->dilation_d;
      axis3[1] = &d->dilation_h;
      axis3[2] = &d->dilation_w;
      *axis3[rng_below(r, 3)] = 2;
      break;
    case 6:
      d->padding = (simdpool_padding)rng_range(r, 1, 3);
      break;
    case 7: {
      size_t *pads[6];
      pads[0] = &d->pad_front;
      pads[1] = &d->pad_top;
      pads[2] = &d->pad_left;
      pads[3] = &d->pad_back;
      pads[4] = &d->pad_bottom;
      pads[5] = &d->pad_right;
      *pads[rng_below(r, 6)] = 1;
      break;
    }
    case 8:
      d->ceil_mode = 1;
      break;
    case 9: /* LP */
      d->method = SIMDPOOL_LP;
      d->index_type = SIMDPOOL_INDEX_NONE;
      d->p = 2.0f;
      break;
    case 10: /* U8 indices: UNSUPPORTED with adaptive windows (MAX) */
      d->index_type = SIMDPOOL_INDEX_U8;
      break;
    default:
      if (rng_chance(r, 0.5))
        d->d = 0;
      else
        d->kernel_d = 0;
      break;
    }
  }
}

/* Unpooling's 2x2/s2 kernels (the fast paths of PyTorch's max_unpool2d
 * after max_pool2d(2)): turns the plane window of a 2D or 3D desc into 2x2
 * stride 2 without dilation or begin padding (an odd last row or column
 * may stay uncovered, or be covered in ceil mode), in 3D with a depth
 * window of one slice and often an even height, so that the slices fold
 * into one plane. */
static void unpool_2x2s2_window(rng *r, rank_kind rk, config *cf) {
  simdpool_desc *d = &cf->d;
  d->kernel_h = d->kernel_w = 2;
  d->stride_h = d->stride_w = 2;
  d->dilation_h = d->dilation_w = 1;
  d->padding = SIMDPOOL_PAD_EXPLICIT;
  d->pad_top = d->pad_left = 0;
  d->pad_bottom = rng_chance(r, 0.2) ? 1 : 0;
  d->pad_right = rng_chance(r, 0.2) ? 1 : 0;
  d->ceil_mode = rng_chance(r, 0.2);
  if (d->h < 2)
    d->h = 2;
  if (d->w < 2)
    d->w = 2;
  if (rk == RANK_3D) {
    d->kernel_d = d->stride_d = d->dilation_d = 1;
    d->pad_front = d->pad_back = 0;
    if (rng_chance(r, 0.7)) {
      d->h += d->h % 2;
      d->pad_bottom = 0;
      d->ceil_mode = 0;
    }
  }
}

/* Draws the desc of one configuration of the given rank. */
static void draw_rank_desc(rng *r, op_kind op, simdpool_layout layout,
                           rank_kind rk, config *cf) {
  switch (rk) {
  case RANK_1D:
    draw_desc_1d(r, op, layout, cf);
    break;
  case RANK_3D:
    draw_desc_3d(r, op, layout, cf);
    break;
  case RANK_ADAPTIVE_1D:
    draw_desc_adaptive(r, op, layout, 1, cf);
    break;
  case RANK_ADAPTIVE_2D:
    draw_desc_adaptive(r, op, layout, 2, cf);
    break;
  case RANK_ADAPTIVE_3D:
    draw_desc_adaptive(r, op, layout, 3, cf);
    break;
  default:
    draw_desc(r, op, layout, SIMDPOOL_ISA_AUTO, cf);
    break;
  }
  /* Unpooling takes the 2x2/s2 window more often than the draw would. */
  if (op_is_unpool(op) && (rk == RANK_2D || rk == RANK_3D) &&
      rng_chance(r, 0.2))
    unpool_2x2s2_window(r, rk, cf);
}

/* A special value: NaNs with random payloads (quiet and signalling, both
 * signs), signed zeros and infinities, denormals, FLT_MAX, FLT_MIN. */
static uint32_t nasty_bits(rng *r) {
  uint32_t sign = (rng_u32(r) & 1u) << 31;
  uint32_t bits = rng_u32(r);
  switch (rng_below(r, 11)) {
  case 0: /* quiet NaN, random payload */
    return sign | 0x7fc00000u | (bits & 0x3fffffu);
  case 1: { /* signalling NaN, random nonzero payload */
    uint32_t payload = bits & 0x3fffffu;
    return sign | 0x7f800000u | (payload ? payload : 1u);
  }
  case 2: /* canonical quiet NaN, either sign */
    return sign | 0x7fc00000u;
  case 3:
  case 4: /* signed zero */
    return sign;
  case 5: /* infinity */
    return sign | 0x7f800000u;
  case 6:
  case 7: /* denormal */
    return sign | ((bits & 0x7fffffu) ? (bits & 0x7fffffu) : 1u);
  case 8: /* FLT_MAX */
    return sign | 0x7f7fffffu;
  case 9: /* FLT_MIN */
    return sign | 0x00800000u;
  default: /* huge finite */
    return sign | ((uint32_t)rng_range(r, 250, 254) << 23) | (bits & 0x7fffffu);
  }
}

static float draw_value(rng *r, value_class vc, double nasty) {
  if (nasty > 0.0 && rng_chance(r, nasty))
    return u2f(nasty_bits(r));
  switch (vc) {
  case VALUES_TIES: {
    static const float set[] = {-2.0f, -1.0f, -0.0f, 0.0f, 1.0f, 2.0f};
    return set[rng_below(r, sizeof set / sizeof set[0])];
  }
  case VALUES_WIDE: {
    uint32_t bits = rng_u32(r);
    uint32_t e = (uint32_t)rng_range(r, 1, 254);
    return u2f((bits & 0x807fffffu) | (e << 23));
  }
  default:
    return (float)(rng_unit(r) * 8.0 - 4.0);
  }
}

static float draw_dy(rng *r, double nasty) {
  if (nasty > 0.0 && rng_chance(r, nasty)) {
    uint32_t sign = (rng_u32(r) & 1u) << 31;
    switch (rng_below(r, 5)) {
    case 0:
      return u2f(sign | 0x7fc00000u | (rng_u32(r) & 0x3fffffu));
    case 1:
      return u2f(sign | 0x7f800000u);
    case 2:
      return u2f(0x80000000u);
    case 3:
      return u2f(sign | (rng_u32(r) & 0x7fffffu));
    default:
      return u2f(sign | 0x7f7fffffu);
    }
  }
  return (float)(rng_unit(r) * 8.0 - 4.0);
}

/* ------------------------------------------------------------------------ */
/* Guarded buffers                                                          */
/* ------------------------------------------------------------------------ */

#define GUARD_BYTES 64
#define GUARD_FILL 0xa5u
#define SENTINEL_F32 0xffa5a5a5u /* a signalling NaN nothing produces */

/* An output buffer with GUARD_BYTES of GUARD_FILL before and after the data
 * (plus `misalign` elements of fill), the data prefilled with a sentinel. */
typedef struct guarded {
  unsigned char *base;
  unsigned char *data;
  size_t bytes; /* of data */
  size_t front; /* bytes before data */
  size_t total;
} guarded;

static void guarded_alloc(guarded *g, size_t count, size_t elem_size,
                          size_t misalign) {
  size_t i;
  g->bytes = count * elem_size;
  g->front = GUARD_BYTES + misalign * elem_size;
  g->total = g->front + g->bytes + GUARD_BYTES;
  g->base = malloc(g->total);
  ck_assert_ptr_nonnull(g->base);
  memset(g->base, (int)GUARD_FILL, g->total);
  g->data = g->base + g->front;
  if (elem_size == sizeof(float))
    for (i = 0; i < count; i++)
      memcpy(g->data + i * 4, &(uint32_t){SENTINEL_F32}, 4);
}

/* Refills the data with the sentinel (float buffers) or the fill byte. */
static void guarded_refill(guarded *g, size_t elem_size) {
  size_t i;
  memset(g->data, (int)GUARD_FILL, g->bytes);
  if (elem_size == sizeof(float))
    for (i = 0; i < g->bytes / 4; i++)
      memcpy(g->data + i * 4, &(uint32_t){SENTINEL_F32}, 4);
}

/* 1 when the bytes around the data are intact. */
static int guarded_intact(const guarded *g, size_t *bad_pos) {
  size_t i;
  for (i = 0; i < g->front; i++)
    if (g->base[i] != GUARD_FILL) {
      *bad_pos = i;
      return 0;
    }
  for (i = g->front + g->bytes; i < g->total; i++)
    if (g->base[i] != GUARD_FILL) {
      *bad_pos = i;
      return 0;
    }
  return 1;
}

/* 1 when every data element still holds the sentinel. */
static int guarded_untouched(const guarded *g, size_t elem_size) {
  size_t i;
  for (i = 0; i < g->bytes; i++) {
    unsigned char want = GUARD_FILL;
    if (elem_size == sizeof(float) && i % 4 == 3)
      want = (unsigned char)(SENTINEL_F32 >> 24);
    if (g->data[i] != want)
      return 0;
  }
  return 1;
}

static void guarded_free(guarded *g) {
  free(g->base);
  g->base = g->data = NULL;
}

/* An input buffer: exactly `count` elements after `misalign` elements of
 * slack, so that reading past the end is caught by ASan. */
typedef struct input {
  void *base;
  float *data;
} input;

static void input_alloc(input *in, size_t count, size_t misalign) {
  in->base = malloc((count + misalign) * sizeof(float));
  ck_assert_ptr_nonnull(in->base);
  in->data = (float *)in->base + misalign;
}

#define CHECK_GUARDS(cf, g, what)                                              \
  do {                                                                         \
    size_t bad_pos_;                                                           \
    if (!guarded_intact((g), &bad_pos_))                                       \
      fail_config((cf), "%s: guard byte %zd (relative to data) overwritten",   \
                  (what), (ptrdiff_t)bad_pos_ - (ptrdiff_t)(g)->front);        \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Comparison                                                               */
/* ------------------------------------------------------------------------ */

/* Appends printf-style text to g_extra. */
static void extra(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void extra(const char *fmt, ...) {
  size_t used = strlen(g_extra);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_extra + used, sizeof g_extra - used, fmt, ap);
  va_end(ap);
}

/* Records the taps of the window of output (n, c, od, oh, ow) in g_extra
 * (x strided as the desc says). */
static void dump_window(const config *cf, const float *x, size_t n, size_t c,
                        size_t od, size_t oh, size_t ow) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  const size_t cap = 12; /* taps shown per plane axis */
  const size_t dcap = 4; /* depth taps shown */
  size_t td = model_window_taps(d, ms, MODEL_AXIS_D, od);
  size_t th = model_window_taps(d, ms, MODEL_AXIS_H, oh);
  size_t tw = model_window_taps(d, ms, MODEL_AXIS_W, ow);
  size_t a, i, j;
  extra("  window of that output, taps row-major ('-' = padding):\n");
  for (a = 0; a < td && a < dcap; a++) {
    long long id = model_tap_pos(d, ms, MODEL_AXIS_D, od, a);
    if (d->d > 1 || td > 1)
      extra("   depth tap %zu (input depth %lld):\n", a, id);
    for (i = 0; i < th && i < cap; i++) {
      long long ih = model_tap_pos(d, ms, MODEL_AXIS_H, oh, i);
      extra("   ");
      for (j = 0; j < tw && j < cap; j++) {
        long long iw = model_tap_pos(d, ms, MODEL_AXIS_W, ow, j);
        if (id < 0 || id >= (long long)d->d || ih < 0 ||
            ih >= (long long)d->h || iw < 0 || iw >= (long long)d->w)
          extra("     -     ");
        else
          extra(" 0x%08" PRIx32,
                f2u(x[model_x_at(d, model_elem(d->layout, d->c, d->d, d->h,
                                               d->w, n, c, (size_t)id,
                                               (size_t)ih, (size_t)iw))]));
      }
      extra("%s\n", tw > cap ? " ..." : "");
    }
    if (th > cap)
      extra("    ...\n");
  }
  if (td > dcap)
    extra("   ... (%zu depth taps)\n", td);
}

/* Compares the floats of a tensor of spatial shape D x H x W in the
 * config's layout bit for bit; on mismatch reports the first differing
 * coordinate and fails. count: the elements the tensor spans (pixel
 * strides); gaps must keep the sentinel both buffers start with. */
static void compare_f32(const config *cf, const char *what, const float *got,
                        const float *want, size_t count, size_t D, size_t H,
                        size_t W, size_t stride, const float *x_for_window) {
  const simdpool_desc *d = &cf->d;
  size_t i, first = 0, ndiff = 0;
  size_t n, c, z, h, w;
  if (memcmp(got, want, count * sizeof(float)) == 0)
    return;
  for (i = 0; i < count; i++)
    if (f2u(got[i]) != f2u(want[i])) {
      if (ndiff == 0)
        first = i;
      ndiff++;
    }
  if (d->layout == SIMDPOOL_NHWC && first % stride >= d->c)
    fail_config(cf,
                "%s: element %zu, in the gap after pixel %zu (stride %zu), "
                "was written: 0x%08" PRIx32,
                what, first, first / stride, stride, f2u(got[first]));
  model_coords(d->layout, d->c, D, H, W,
               d->layout == SIMDPOOL_NHWC
                   ? first / stride * d->c + first % stride
                   : first,
               &n, &c, &z, &h, &w);
  if (x_for_window != NULL)
    dump_window(cf, x_for_window, n, c, z, h, w);
  fail_config(cf,
              "%s differs in %zu of %zu elements; first at offset %zu = "
              "(n=%zu, c=%zu, d=%zu, h=%zu, w=%zu): want 0x%08" PRIx32
              " (%.9g) got 0x%08" PRIx32 " (%.9g)",
              what, ndiff, count, first, n, c, z, h, w, f2u(want[first]),
              (double)want[first], f2u(got[first]), (double)got[first]);
}

static long long index_at(simdpool_index_type t, const void *p, size_t i) {
  if (t == SIMDPOOL_INDEX_I32) {
    int32_t v;
    memcpy(&v, (const char *)p + 4 * i, 4);
    return v;
  }
  if (t == SIMDPOOL_INDEX_I64) {
    int64_t v;
    memcpy(&v, (const char *)p + 8 * i, 8);
    return (long long)v;
  }
  return ((const uint8_t *)p)[i];
}

static void compare_indices(const config *cf, const void *got, const void *want,
                            const float *x) {
  const simdpool_desc *d = &cf->d;
  size_t count = model_y_count(d, &cf->ms);
  size_t isz = model_index_size(d->index_type);
  size_t i, first = 0, ndiff = 0;
  size_t n, c, z, h, w;
  if (memcmp(got, want, count * isz) == 0)
    return;
  for (i = 0; i < count; i++)
    if (index_at(d->index_type, got, i) != index_at(d->index_type, want, i)) {
      if (ndiff == 0)
        first = i;
      ndiff++;
    }
  model_coords(d->layout, d->c, cf->ms.out_d, cf->ms.out_h, cf->ms.out_w, first,
               &n, &c, &z, &h, &w);
  dump_window(cf, x, n, c, z, h, w);
  fail_config(cf,
              "forward indices differ in %zu of %zu elements; first at "
              "offset %zu = (n=%zu, c=%zu, d=%zu, h=%zu, w=%zu): want %lld "
              "(0x%llx) got %lld (0x%llx)",
              ndiff, count, first, n, c, z, h, w,
              index_at(d->index_type, want, first),
              (unsigned long long)index_at(d->index_type, want, first),
              index_at(d->index_type, got, first),
              (unsigned long long)index_at(d->index_type, got, first));
}

/* ------------------------------------------------------------------------ */
/* The sweep                                                                */
/* ------------------------------------------------------------------------ */

/* What the model expects for one accepted configuration, computed once and
 * checked against every ISA. */
typedef struct expected {
  input x, dy;   /* the library's inputs */
  float *x_copy; /* pristine copies, to detect writes to inputs */
  float *dy_copy;
  float *ym;      /* forward y */
  void *im;       /* forward indices (MAX with an index type) */
  float *dxm;     /* backward dx */
  void *bad;      /* indices with one corrupted entry, or NULL */
  int bad_valid;  /* whether bad still names valid taps only */
  float *dxm_bad; /* backward dx from bad when bad_valid */
  /* Unpooling: y is read from dy (its backward reads dx from x); the
   * model's x is dxm (from bad: dxm_bad), its backward's dy dym (from
   * bad: dym_bad). ilib: the indices the library is given (exactly their
   * bytes, so that ASan catches an over-read), im's copy. */
  float *dym;
  float *dym_bad;
  void *ilib;
  size_t bad_at;       /* the first index unpooling rejects in bad */
  long long bad_value; /* its value */
} expected;

/* Corrupts one entry of a copy of indices. */
static void *corrupt_indices(rng *r, const config *cf, const void *indices) {
  const simdpool_desc *d = &cf->d;
  size_t count = model_y_count(d, &cf->ms);
  size_t isz = model_index_size(d->index_type);
  size_t plane = d->d * d->h * d->w;
  unsigned char *copy = malloc(count * isz);
  size_t at = rng_below(r, count);
  long long v;
  ck_assert_ptr_nonnull(copy);
  memcpy(copy, indices, count * isz);
  if (d->index_type == SIMDPOOL_INDEX_U8) {
    uint8_t b =
        (uint8_t)rng_below(r, d->kernel_d * d->kernel_h * d->kernel_w + 2);
    if (rng_chance(r, 0.1))
      b = 255;
    copy[at] = b;
    return copy;
  }
  switch (rng_below(r, 4)) {
  case 0:
    v = -1 - (long long)rng_below(r, 3);
    break;
  case 1:
    v = (long long)plane + (long long)rng_below(r, 3);
    break;
  default: /* anywhere in the plane: usually outside the window */
    v = (long long)rng_below(r, plane);
    break;
  }
  if (d->d > 1 && rng_chance(r, 0.3)) {
    /* The same row and column one depth slice away: inside the plane, in
     * the window's plane footprint, usually not in its depth range. */
    long long slice = (long long)(d->h * d->w);
    v = index_at(d->index_type, indices, at) +
        (rng_chance(r, 0.5) ? slice : -slice);
  }
  if (d->index_type == SIMDPOOL_INDEX_I32) {
    int32_t x32 = (int32_t)v;
    memcpy(copy + 4 * at, &x32, 4);
  } else {
    int64_t x64 = (int64_t)v;
    if (rng_chance(r, 0.1)) /* garbage in the high bits */
      x64 = (int64_t)((uint64_t)x64 ^ ((uint64_t)1 << 40));
    memcpy(copy + 8 * at, &x64, 8);
  }
  return copy;
}

/* 1 when the op runs the forward pass (all forward ops, and MAX backward
 * from indices, which feeds the forward's indices to the backward).
 * Unpooling does not run the library's forward: it gets the model's
 * indices (which max_fwd_* proves the library writes too). */
static int op_runs_forward(op_kind op) {
  if (op_is_unpool(op))
    return 0;
  return !op_is_backward(op) || (op >= OP_MAX_BWD_I32 && op <= OP_MAX_BWD_U8);
}

/* Stores the index of output off: flat (I32/I64) or tap (U8). */
static void store_index_at(simdpool_index_type t, void *p, size_t off,
                           long long flat, unsigned tap) {
  if (t == SIMDPOOL_INDEX_I32) {
    int32_t v = (int32_t)flat;
    memcpy((char *)p + 4 * off, &v, 4);
  } else if (t == SIMDPOOL_INDEX_I64) {
    int64_t v = (int64_t)flat;
    memcpy((char *)p + 8 * off, &v, 8);
  } else {
    ((uint8_t *)p)[off] = (uint8_t)tap;
  }
}

/* Fills indices with a random valid tap of each output's own window (what
 * the fast paths take, though rarely the max), as a flat position or, for
 * U8, as the tap's number (kd_i*kernel_h + kh_i)*kernel_w + kw_i. A tap is
 * valid when it is inside the input on every axis, so each axis is drawn
 * on its own. */
static void random_window_taps(rng *r, const config *cf, void *indices) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  const size_t total = model_y_count(d, ms);
  const size_t in[3] = {d->d, d->h, d->w};
  const size_t kern[3] = {d->kernel_d, d->kernel_h, d->kernel_w};
  size_t off;
  for (off = 0; off < total; off++) {
    size_t n, c, o[3], t[3];
    long long pos[3];
    int ax;
    model_coords(d->layout, d->c, ms->out_d, ms->out_h, ms->out_w, off, &n, &c,
                 &o[0], &o[1], &o[2]);
    for (ax = 0; ax < 3; ax++) {
      size_t taps = model_window_taps(d, ms, ax, o[ax]), valid = 0, k, pick;
      for (k = 0; k < taps; k++) {
        long long p = model_tap_pos(d, ms, ax, o[ax], k);
        valid += p >= 0 && p < (long long)in[ax];
      }
      ck_assert_uint_gt(valid, 0); /* every accepted window holds input */
      pick = rng_below(r, valid);
      for (k = 0; k < taps; k++) {
        long long p = model_tap_pos(d, ms, ax, o[ax], k);
        if (p >= 0 && p < (long long)in[ax] && pick-- == 0) {
          t[ax] = k;
          pos[ax] = p;
          break;
        }
      }
    }
    store_index_at(d->index_type, indices, off,
                   (pos[0] * (long long)d->h + pos[1]) * (long long)d->w +
                       pos[2],
                   (unsigned)((t[0] * kern[1] + t[1]) * kern[2] + t[2]));
  }
}

/* Fills I32/I64 indices with positions anywhere in the input plane: often
 * from a pool of one to four positions (many equal indices in one plane,
 * where the last must win), else uniform; sometimes only a few of them,
 * over window taps (one kernel call must take both). */
static void random_plane_positions(rng *r, const config *cf, void *indices) {
  const simdpool_desc *d = &cf->d;
  const size_t total = model_y_count(d, &cf->ms);
  const size_t plane = d->d * d->h * d->w;
  size_t pool[4], pool_size, off, i;
  double u = rng_unit(r), keep = 0.0;
  pool_size = u < 0.3 ? 1 : u < 0.7 ? rng_range(r, 2, 4) : 0; /* 0: uniform */
  for (i = 0; i < 4; i++)
    pool[i] = rng_below(r, plane);
  if (rng_chance(r, 0.25)) {
    random_window_taps(r, cf, indices);
    keep = rng_chance(r, 0.5) ? 0.9 : 0.99;
  }
  for (off = 0; off < total; off++) {
    long long v;
    if (keep > 0.0 && rng_chance(r, keep))
      continue;
    v = (long long)(pool_size ? pool[rng_below(r, pool_size)]
                              : rng_below(r, plane));
    store_index_at(d->index_type, indices, off, v, 0);
  }
}

/* A y (or dx) value of unpooling: plain numbers, and at rate nasty the
 * special ones (NaNs with payloads, quiet and signalling, both signs;
 * signed zeros, infinities, subnormals, FLT_MAX...), whose bits must
 * arrive unchanged. */
static float draw_unpool_value(rng *r, double nasty) {
  float v = rng_chance(r, nasty) ? u2f(nasty_bits(r))
                                 : (float)(rng_unit(r) * 8.0 - 4.0);
  return f2u(v) == SENTINEL_F32 ? -0.0f : v;
}

/* Makes bad (malloc'ed) the altered indices of an unpooling
 * configuration: whether unpooling takes them, the first one it rejects,
 * or the model's output from them. */
static void set_unpool_bad(const config *cf, expected *e, void *bad) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  const size_t xcount = model_x_span(d), ycount = model_y_span(d, ms);
  const int bwd = op_is_unpool_bwd(cf->op);
  float **want = bwd ? &e->dym_bad : &e->dxm_bad;
  const size_t count = bwd ? ycount : xcount;
  size_t i;
  free(e->bad);
  free(*want);
  *want = NULL;
  e->bad = bad;
  e->bad_valid =
      model_unpool_indices_valid(d, ms, e->bad, &e->bad_at, &e->bad_value);
  if (!e->bad_valid)
    return;
  *want = malloc(count * sizeof(float));
  ck_assert_ptr_nonnull(*want);
  for (i = 0; i < count; i++) /* the gaps keep the sentinel */
    (*want)[i] = u2f(SENTINEL_F32);
  if (bwd)
    ck_assert_int_eq(model_unpool_backward(d, ms, e->x_copy, e->bad, *want), 0);
  else
    ck_assert_int_eq(model_unpool(d, ms, e->dy_copy, e->bad, *want), 0);
}

/* The unpooling part of prepare(): indices from cf->idx_source, y (as dy)
 * or dx (as x) drawn anew, the model's outputs, and sometimes indices with
 * one entry corrupted (still in the plane, or not). x already holds the
 * values the forward indices are taken from. */
static void prepare_unpool(rng *r, config *cf, expected *e) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  const size_t xcount = model_x_span(d), ycount = model_y_span(d, ms);
  const size_t icount = model_y_count(d, ms);
  const size_t isz = model_index_size(d->index_type);
  const int bwd = op_is_unpool_bwd(cf->op);
  static const double nasty_levels[] = {0.02, 0.1, 0.3, 0.7};
  const double nasty = nasty_levels[rng_below(r, 4)];
  double u = rng_unit(r);
  size_t i;

  if (d->index_type == SIMDPOOL_INDEX_U8)
    cf->idx_source = u < 0.6 ? IDX_FORWARD : IDX_TAPS;
  else
    cf->idx_source = u < 0.35 ? IDX_FORWARD : u < 0.6 ? IDX_TAPS : IDX_PLANE;
  cf->par_null = rng_chance(r, 0.1);
  cf->dy_nasty = nasty;
  e->im = malloc(icount * isz);
  e->ilib = malloc(icount * isz);
  ck_assert_ptr_nonnull(e->im);
  ck_assert_ptr_nonnull(e->ilib);
  if (cf->idx_source == IDX_FORWARD) {
    float *y = malloc(ycount * sizeof(float));
    ck_assert_ptr_nonnull(y);
    model_forward(d, ms, e->x_copy, y, e->im);
    free(y);
  } else if (cf->idx_source == IDX_TAPS) {
    random_window_taps(r, cf, e->im);
  } else {
    random_plane_positions(r, cf, e->im);
  }

  if (bwd) {
    /* dx, read through e->x: new values, unrelated to the indices. */
    for (i = 0; i < xcount; i++)
      e->x.data[i] = draw_unpool_value(r, nasty);
    memcpy(e->x_copy, e->x.data, xcount * sizeof(float));
    e->dym = malloc(ycount * sizeof(float));
    ck_assert_ptr_nonnull(e->dym);
    for (i = 0; i < ycount; i++) /* the gaps keep the sentinel */
      e->dym[i] = u2f(SENTINEL_F32);
    ck_assert_int_eq(model_unpool_backward(d, ms, e->x_copy, e->im, e->dym), 0);
  } else {
    /* y, read through e->dy. */
    input_alloc(&e->dy, ycount, cf->misalign_y);
    e->dy_copy = malloc(ycount * sizeof(float));
    ck_assert_ptr_nonnull(e->dy_copy);
    for (i = 0; i < ycount; i++)
      e->dy.data[i] = draw_unpool_value(r, nasty);
    memcpy(e->dy_copy, e->dy.data, ycount * sizeof(float));
    e->dxm = malloc(xcount * sizeof(float));
    ck_assert_ptr_nonnull(e->dxm);
    for (i = 0; i < xcount; i++)
      e->dxm[i] = u2f(SENTINEL_F32);
    ck_assert_int_eq(model_unpool(d, ms, e->dy_copy, e->im, e->dxm), 0);
  }

  if (rng_chance(r, 0.3))
    set_unpool_bad(cf, e, corrupt_indices(r, cf, e->im));
}

/* Draws the values of an accepted configuration and computes the model's
 * outputs. */
static void prepare(rng *r, config *cf, expected *e) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  size_t xcount = model_x_span(d);      /* x, dx */
  size_t ycount = model_y_span(d, ms);  /* y, dy */
  size_t icount = model_y_count(d, ms); /* indices: dense */
  size_t isz = model_index_size(d->index_type);
  static const double nasty_levels[] = {0.0, 0.0, 0.01, 0.05, 0.2, 0.6};
  double u = rng_unit(r);
  size_t i;

  memset(e, 0, sizeof *e);
  cf->values = u < 0.55 ? VALUES_PLAIN : u < 0.85 ? VALUES_TIES : VALUES_WIDE;
  cf->nasty = nasty_levels[rng_below(r, 6)];
  cf->nonnegative = d->method == SIMDPOOL_LP && rng_chance(r, 0.4);
  cf->dy_nasty = rng_chance(r, 0.5) ? 0.0 : rng_chance(r, 0.5) ? 0.02 : 0.2;
  cf->pass_x = rng_chance(r, 0.5);
  cf->misalign_x = rng_chance(r, 0.5) ? 0 : rng_range(r, 1, 15);
  cf->misalign_y = rng_chance(r, 0.5) ? 0 : rng_range(r, 1, 15);

  input_alloc(&e->x, xcount, cf->misalign_x);
  e->x_copy = malloc(xcount * sizeof(float));
  ck_assert_ptr_nonnull(e->x_copy);
  for (i = 0; i < xcount; i++) {
    float v = draw_value(r, cf->values, cf->nasty);
    if (cf->nonnegative)
      v = u2f(f2u(v) & 0x7fffffffu);
    if (f2u(v) == SENTINEL_F32)
      v = 0.5f;
    e->x.data[i] = v;
  }
  memcpy(e->x_copy, e->x.data, xcount * sizeof(float));

  if (op_is_unpool(cf->op)) {
    prepare_unpool(r, cf, e);
    return;
  }
  if (op_runs_forward(cf->op)) {
    e->ym = malloc(ycount * sizeof(float));
    ck_assert_ptr_nonnull(e->ym);
    for (i = 0; i < ycount; i++) /* the gaps keep what the library's had */
      e->ym[i] = u2f(SENTINEL_F32);
    if (isz) {
      e->im = malloc(icount * isz);
      ck_assert_ptr_nonnull(e->im);
    }
    model_forward(d, ms, e->x_copy, e->ym, e->im);
  }
  if (op_is_backward(cf->op)) {
    /* MAX from indices uses the model's indices (the library's are checked
     * equal to them first); MAX_BWD_X, AVG and LP pass no indices. */
    const void *use_indices = cf->op == OP_MAX_BWD_X ? NULL : e->im;
    input_alloc(&e->dy, ycount, cf->misalign_y);
    e->dy_copy = malloc(ycount * sizeof(float));
    e->dxm = malloc(xcount * sizeof(float));
    ck_assert_ptr_nonnull(e->dy_copy);
    ck_assert_ptr_nonnull(e->dxm);
    for (i = 0; i < xcount; i++)
      e->dxm[i] = u2f(SENTINEL_F32);
    for (i = 0; i < ycount; i++)
      e->dy.data[i] = draw_dy(r, cf->dy_nasty);
    memcpy(e->dy_copy, e->dy.data, ycount * sizeof(float));
    ck_assert_int_eq(
        model_backward(d, ms, e->dy_copy, use_indices, e->x_copy, e->dxm), 0);
    if (use_indices != NULL && rng_chance(r, 0.25)) {
      e->bad = corrupt_indices(r, cf, e->im);
      e->bad_valid = model_indices_valid(d, ms, e->bad, NULL);
      if (e->bad_valid) {
        e->dxm_bad = malloc(xcount * sizeof(float));
        ck_assert_ptr_nonnull(e->dxm_bad);
        for (i = 0; i < xcount; i++)
          e->dxm_bad[i] = u2f(SENTINEL_F32);
        ck_assert_int_eq(
            model_backward(d, ms, e->dy_copy, e->bad, NULL, e->dxm_bad), 0);
      }
    }
  }
}

static void expected_free(expected *e) {
  free(e->x.base);
  free(e->dy.base);
  free(e->x_copy);
  free(e->dy_copy);
  free(e->ym);
  free(e->im);
  free(e->dxm);
  free(e->bad);
  free(e->dxm_bad);
  free(e->dym);
  free(e->dym_bad);
  free(e->ilib);
}

static void check_inputs_intact(const config *cf, const expected *e,
                                const char *call) {
  size_t xcount = model_x_span(&cf->d);
  size_t ycount = model_y_span(&cf->d, &cf->ms);
  if (memcmp(e->x.data, e->x_copy, xcount * sizeof(float)) != 0)
    fail_config(cf, "%s modified x", call);
  if (e->dy_copy != NULL &&
      memcmp(e->dy.data, e->dy_copy, ycount * sizeof(float)) != 0)
    fail_config(cf, "%s modified dy", call);
}

/* The ISA a plan of d (accepted by the model) must run: the one forced, or
 * for AUTO the best this build and CPU run (g_auto_isa); every ISA
 * computes every dtype. */
static simdpool_isa expected_isa(const simdpool_desc *desc) {
  return desc->isa != SIMDPOOL_ISA_AUTO ? desc->isa : g_auto_isa;
}

/* The 2-thread pool the parallel unpooling calls run on (made by sweep()
 * in the test's own process: Check forks after main). */
static simdpool_threadpool *g_pool;

/* What the parallel calls asked of their parallel-for: calls, and calls
 * whose range (tasks: index checks, then chunks) was above 1. */
static size_t g_par_calls, g_par_split;

/* simdpool_threadpool_parallel_for, counted. */
static void counting_parallel_for(void *pool, simdpool_task_fn task, void *ctx,
                                  size_t range) {
  g_par_calls++;
  g_par_split += range > 1;
  simdpool_threadpool_parallel_for(pool, task, ctx, range);
}

/* One unpooling call (bwd: its backward), serial or parallel (over
 * g_pool, or with parallel_for NULL when cf->par_null). */
static simdpool_status call_unpool(const config *cf, const simdpool_plan *plan,
                                   int parallel, const float *src,
                                   const void *indices, float *dst) {
  simdpool_parallel_for_fn pf = cf->par_null ? NULL : counting_parallel_for;
  if (op_is_unpool_bwd(cf->op))
    return parallel ? simdpool_unpool_backward_parallel(plan, src, indices, dst,
                                                        pf, g_pool)
                    : simdpool_unpool_backward(plan, src, indices, dst);
  return parallel
             ? simdpool_unpool_parallel(plan, src, indices, dst, pf, g_pool)
             : simdpool_unpool(plan, src, indices, dst);
}

/* Compares the output of an unpooling call (x-shaped for unpooling,
 * y-shaped for its backward) with want. */
static void compare_unpool(const config *cf, const char *what,
                           const guarded *got, const float *want) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  if (op_is_unpool_bwd(cf->op))
    compare_f32(cf, what, (const float *)(const void *)got->data, want,
                model_y_span(d, ms), ms->out_d, ms->out_h, ms->out_w,
                d->y_pixel_stride ? d->y_pixel_stride : d->c, NULL);
  else
    compare_f32(cf, what, (const float *)(const void *)got->data, want,
                model_x_span(d), d->d, d->h, d->w,
                d->x_pixel_stride ? d->x_pixel_stride : d->c, NULL);
}

/* Runs unpooling (or its backward) of an accepted configuration on plan:
 * the serial call against the model, the parallel call against the serial
 * one (bit for bit, gaps included), then, when the configuration has
 * corrupted indices, both calls with them: the model's output, or the
 * rejection with its exact message and the output untouched. */
static void run_unpool(config *cf, expected *e, const simdpool_plan *plan) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  const int bwd = op_is_unpool_bwd(cf->op);
  const size_t icount = model_y_count(d, ms);
  const size_t ibytes = icount * model_index_size(d->index_type);
  const size_t ocount = bwd ? model_y_span(d, ms) : model_x_span(d);
  const size_t omis = bwd ? cf->misalign_y : cf->misalign_x;
  const float *src = bwd ? e->x.data : e->dy.data;
  const char *const fns[2][2] = {
      {"unpool", "unpool_parallel"},
      {"unpool_backward", "unpool_backward_parallel"}};
  guarded out = {0}, par = {0};
  simdpool_status st;
  int parallel;

  memcpy(e->ilib, e->im, ibytes);
  guarded_alloc(&out, ocount, sizeof(float), omis);
  guarded_alloc(&par, ocount, sizeof(float), omis);
  for (parallel = 0; parallel < 2; parallel++) {
    guarded *g = parallel ? &par : &out;
    const char *fn = fns[bwd][parallel];
    st =
        call_unpool(cf, plan, parallel, src, e->ilib, (float *)(void *)g->data);
    if (st != SIMDPOOL_OK)
      fail_config(cf, "simdpool_%s returned %s (%s)", fn,
                  simdpool_status_string(st), simdpool_last_error());
    CHECK_GUARDS(cf, g, fn);
    check_inputs_intact(cf, e, fn);
    if (memcmp(e->ilib, e->im, ibytes) != 0)
      fail_config(cf, "simdpool_%s modified indices", fn);
  }
  compare_unpool(cf, bwd ? "unpool_backward dy" : "unpool x", &out,
                 bwd ? e->dym : e->dxm);
  compare_unpool(cf,
                 bwd ? "unpool_backward_parallel dy vs the serial call"
                     : "unpool_parallel x vs the serial call",
                 &par, (const float *)(const void *)out.data);

  if (e->bad != NULL) {
    char want_msg[256];
    memcpy(e->ilib, e->bad, ibytes);
    for (parallel = 0; parallel < 2; parallel++) {
      guarded *g = parallel ? &par : &out;
      const char *fn = fns[bwd][parallel];
      guarded_refill(g, sizeof(float));
      st = call_unpool(cf, plan, parallel, src, e->ilib,
                       (float *)(void *)g->data);
      CHECK_GUARDS(cf, g, fn);
      check_inputs_intact(cf, e, fn);
      if (memcmp(e->ilib, e->bad, ibytes) != 0)
        fail_config(cf, "simdpool_%s modified (corrupted) indices", fn);
      if (e->bad_valid) {
        if (st != SIMDPOOL_OK)
          fail_config(cf,
                      "simdpool_%s with altered but acceptable indices "
                      "returned %s (%s)",
                      fn, simdpool_status_string(st), simdpool_last_error());
        compare_unpool(cf,
                       parallel ? "parallel output (altered indices)"
                                : "output (altered indices)",
                       g, bwd ? e->dym_bad : e->dxm_bad);
        continue;
      }
      if (d->index_type == SIMDPOOL_INDEX_U8)
        snprintf(want_msg, sizeof want_msg,
                 "%s: indices[%zu] = %lld names no valid tap of its window", fn,
                 e->bad_at, e->bad_value);
      else
        snprintf(want_msg, sizeof want_msg,
                 "%s: indices[%zu] = %lld is outside its input plane (0 <= "
                 "index < d*h*w = %zu)",
                 fn, e->bad_at, e->bad_value, d->d * d->h * d->w);
      if (st != SIMDPOOL_INVALID_ARGUMENT)
        fail_config(cf,
                    "simdpool_%s with a bad index returned %s, want "
                    "invalid argument (\"%s\")",
                    fn, simdpool_status_string(st), want_msg);
      if (strcmp(simdpool_last_error(), want_msg) != 0)
        fail_config(cf, "simdpool_%s: last error \"%s\", want \"%s\"", fn,
                    simdpool_last_error(), want_msg);
      if (!guarded_untouched(g, sizeof(float)))
        fail_config(cf,
                    "simdpool_%s wrote its output although it rejected "
                    "the indices",
                    fn);
    }
  }
  guarded_free(&out);
  guarded_free(&par);
}

/* Runs one configuration on the ISA cf->isa and compares with e (NULL for a
 * configuration the model rejects, or to check plan creation only). */
static void run_on_isa(config *cf, expected *e) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  size_t xcount, ycount, isz;
  simdpool_status want = model_status(ms->reasons), st;
  static int dummy;
  simdpool_plan *plan = (simdpool_plan *)(void *)&dummy;
  guarded y = {0}, idx = {0}, dx = {0};

  cf->d.isa = cf->isa;
  st = simdpool_plan_create(d, &plan);
  if (want != SIMDPOOL_OK) {
    if (!model_status_acceptable(ms->reasons, st))
      fail_config(cf,
                  "simdpool_plan_create returned %s, the model predicts %s "
                  "(%s); last error: \"%s\"",
                  simdpool_status_string(st), simdpool_status_string(want),
                  model_reason_string(ms->reasons),
                  st == SIMDPOOL_OK ? "" : simdpool_last_error());
    if (plan != NULL)
      fail_config(cf, "rejected simdpool_plan_create left *out non-NULL");
    if (simdpool_last_error()[0] == '\0')
      fail_config(cf, "empty simdpool_last_error() after rejection (%s)",
                  simdpool_status_string(st));
    return;
  }
  if (st != SIMDPOOL_OK)
    fail_config(cf,
                "simdpool_plan_create returned %s, the model accepts; last "
                "error: \"%s\"",
                simdpool_status_string(st), simdpool_last_error());
  {
    size_t oh = 0, ow = 0, dd = 0, dh = 0, dw = 0;
    simdpool_isa got_isa = simdpool_plan_isa(plan);
    simdpool_isa want_isa;
    simdpool_plan_output_shape(plan, &oh, &ow);
    simdpool_plan_output_dims(plan, &dd, &dh, &dw);
    if (oh != ms->out_h || ow != ms->out_w)
      fail_config(cf, "output shape %zux%zu, the model says %zux%zu", oh, ow,
                  ms->out_h, ms->out_w);
    if (dd != ms->out_d || dh != ms->out_h || dw != ms->out_w)
      fail_config(cf,
                  "simdpool_plan_output_dims() %zux%zux%zu, the model says "
                  "%zux%zux%zu",
                  dd, dh, dw, ms->out_d, ms->out_h, ms->out_w);
    want_isa = expected_isa(d);
    if (got_isa != want_isa)
      fail_config(cf, "simdpool_plan_isa() = %s, want %s",
                  simdpool_isa_name(got_isa), simdpool_isa_name(want_isa));
  }
  if (e == NULL) { /* plan creation only */
    simdpool_plan_destroy(plan);
    return;
  }

  xcount = model_x_span(d);
  ycount = model_y_span(d, ms);
  /* Fresh inputs, in case an earlier ISA scribbled on them. */
  memcpy(e->x.data, e->x_copy, xcount * sizeof(float));
  if (e->dy_copy != NULL)
    memcpy(e->dy.data, e->dy_copy, ycount * sizeof(float));
  isz = cf->op == OP_MAX_BWD_X ? 0 : model_index_size(d->index_type);

  if (op_is_unpool(cf->op)) {
    if (cf->isa == SIMDPOOL_ISA_AUTO) {
      const char *k = simdpool_plan_kernel_name(
          plan, op_is_unpool_bwd(cf->op) ? SIMDPOOL_OP_UNPOOL_BACKWARD
                                         : SIMDPOOL_OP_UNPOOL);
      if (k == NULL)
        fail_config(cf, "no kernel name for unpooling on a MAX plan with "
                        "indices");
      cf->fast_2x2 = strstr(k, "2x2s2") != NULL;
    }
    run_unpool(cf, e, plan);
    simdpool_plan_destroy(plan);
    return;
  }
  if (op_runs_forward(cf->op)) {
    guarded_alloc(&y, ycount, sizeof(float), cf->misalign_y);
    if (isz)
      guarded_alloc(&idx, model_y_count(d, ms), isz, cf->misalign_y);
    st = simdpool_forward(plan, e->x.data, (float *)(void *)y.data,
                          isz ? idx.data : NULL);
    if (st != SIMDPOOL_OK)
      fail_config(cf, "simdpool_forward returned %s (%s)",
                  simdpool_status_string(st), simdpool_last_error());
    CHECK_GUARDS(cf, &y, "forward y");
    if (isz)
      CHECK_GUARDS(cf, &idx, "forward indices");
    check_inputs_intact(cf, e, "simdpool_forward");
    compare_f32(cf, "forward y", (const float *)(const void *)y.data, e->ym,
                ycount, ms->out_d, ms->out_h, ms->out_w,
                d->y_pixel_stride ? d->y_pixel_stride : d->c, e->x_copy);
    if (isz)
      compare_indices(cf, idx.data, e->im, e->x_copy);
  }

  if (op_is_backward(cf->op)) {
    const void *indices = isz ? idx.data : NULL; /* the library's own */
    const float *xarg = e->x.data;
    if (d->method != SIMDPOOL_LP && cf->op != OP_MAX_BWD_X && !cf->pass_x)
      xarg = NULL; /* AVG and MAX-from-indices do not need x */
    guarded_alloc(&dx, xcount, sizeof(float), cf->misalign_x);
    st = simdpool_backward(plan, e->dy.data, indices, xarg,
                           (float *)(void *)dx.data);
    if (st != SIMDPOOL_OK)
      fail_config(cf, "simdpool_backward returned %s (%s)",
                  simdpool_status_string(st), simdpool_last_error());
    CHECK_GUARDS(cf, &dx, "backward dx");
    check_inputs_intact(cf, e, "simdpool_backward");
    compare_f32(cf, indices ? "backward dx (from indices)" : "backward dx",
                (const float *)(const void *)dx.data, e->dxm, xcount, d->d,
                d->h, d->w, d->x_pixel_stride ? d->x_pixel_stride : d->c, NULL);

    if (e->bad != NULL) {
      guarded_refill(&dx, sizeof(float));
      st = simdpool_backward(plan, e->dy.data, e->bad, xarg,
                             (float *)(void *)dx.data);
      CHECK_GUARDS(cf, &dx, "backward dx (corrupted index)");
      if (!e->bad_valid) {
        if (st != SIMDPOOL_INVALID_ARGUMENT)
          fail_config(cf,
                      "backward with an index naming no valid tap of its "
                      "window returned %s, want invalid argument",
                      simdpool_status_string(st));
        if (simdpool_last_error()[0] == '\0')
          fail_config(cf, "empty simdpool_last_error() after a bad index");
        if (!guarded_untouched(&dx, sizeof(float)))
          fail_config(cf, "backward wrote dx although it rejected the "
                          "indices");
      } else {
        if (st != SIMDPOOL_OK)
          fail_config(cf,
                      "backward with valid (altered) indices returned %s "
                      "(%s)",
                      simdpool_status_string(st), simdpool_last_error());
        compare_f32(cf, "backward dx (altered but valid indices)",
                    (const float *)(const void *)dx.data, e->dxm_bad, xcount,
                    d->d, d->h, d->w,
                    d->x_pixel_stride ? d->x_pixel_stride : d->c, NULL);
      }
    }
    guarded_free(&dx);
  }
  if (op_runs_forward(cf->op)) {
    guarded_free(&y);
    if (isz)
      guarded_free(&idx);
  }
  simdpool_plan_destroy(plan);
}

/* Runs run_on_isa and returns 0, or 1 when it failed. */
static int run_on_isa_guarded(config *cf, expected *e) {
  jmp_buf jb;
  if (setjmp(jb) != 0) {
    g_fail_jump = NULL;
    return 1;
  }
  g_fail_jump = &jb;
  run_on_isa(cf, e);
  g_fail_jump = NULL;
  return 0;
}

typedef struct tally {
  size_t accepted, rejected, attempts;
  size_t ambiguous; /* rejected with both an invalid and unsupported reason */
  size_t sub[4];    /* per-op breakdown, see print_tally */
  size_t special;   /* accepted with special input values */
  size_t corrupt_tested, corrupt_rejected;
  size_t strided, clamped; /* accepted with pixel strides, with a clamp */
  size_t deep;             /* accepted with d > 1 or kernel_d > 1 */
  size_t upsampled; /* adaptive, accepted, some output size above its input */
  size_t global;    /* adaptive, accepted, every output size 1 */
  size_t par_null;  /* unpooling: parallel calls with parallel_for NULL */
  size_t fast_2x2;  /* unpooling: AUTO plans with a 2x2/s2 kernel */
} tally;

static void count_accepted(const config *cf, const expected *e, tally *t) {
  const simdpool_desc *d = &cf->d;
  if (op_is_unpool(cf->op)) {
    t->sub[cf->idx_source]++;
    t->par_null += cf->par_null;
    t->fast_2x2 += cf->fast_2x2;
  } else if (d->method == SIMDPOOL_AVG)
    t->sub[d->count_include_pad ? 1 : 0]++;
  else if (d->method == SIMDPOOL_LP)
    t->sub[d->p == 1.0f ? 0 : d->p == 2.0f ? 1 : 2]++;
  else if (cf->op == OP_MAX_BWD_X)
    t->sub[d->index_type & 3]++;
  else if (d->adaptive == 1) /* by windows per axis: overlapping or not */
    t->sub[(d->d % cf->ms.out_d != 0 || d->h % cf->ms.out_h != 0 ||
            d->w % cf->ms.out_w != 0)
               ? 1
               : 0]++;
  else
    t->sub[d->padding & 3]++;
  if (op_is_unpool(cf->op) ? cf->dy_nasty > 0.0 : cf->nasty > 0.0)
    t->special++;
  t->strided += d->x_pixel_stride > d->c || d->y_pixel_stride > d->c;
  t->clamped += d->clamp == 1;
  t->deep += d->d > 1 || d->kernel_d > 1;
  if (d->adaptive == 1) {
    t->upsampled +=
        cf->ms.out_d > d->d || cf->ms.out_h > d->h || cf->ms.out_w > d->w;
    t->global += cf->ms.out_d == 1 && cf->ms.out_h == 1 && cf->ms.out_w == 1;
  }
  if (e->bad != NULL) {
    t->corrupt_tested++;
    if (!e->bad_valid)
      t->corrupt_rejected++;
  }
  t->accepted++;
}

static void print_tally(op_kind op, simdpool_layout layout, rank_kind rk,
                        const tally *t, const char *isas) {
  char sub[256];
  simdpool_method m = op_method(op);
  if (op_is_unpool(op))
    snprintf(sub, sizeof sub,
             "indices as forward writes them %zu, random window taps %zu, "
             "in-plane with duplicates %zu; 2x2/s2 kernel (auto) %zu; serial "
             "and parallel (%zu with parallel_for NULL)",
             t->sub[IDX_FORWARD], t->sub[IDX_TAPS], t->sub[IDX_PLANE],
             t->fast_2x2, t->par_null);
  else if (m == SIMDPOOL_AVG)
    snprintf(sub, sizeof sub, "count_include_pad 0: %zu, 1: %zu", t->sub[0],
             t->sub[1]);
  else if (m == SIMDPOOL_LP)
    snprintf(sub, sizeof sub, "p==1: %zu, p==2: %zu, other p: %zu", t->sub[0],
             t->sub[1], t->sub[2]);
  else if (op == OP_MAX_BWD_X)
    snprintf(sub, sizeof sub, "plan index NONE %zu, I32 %zu, I64 %zu, U8 %zu",
             t->sub[0], t->sub[1], t->sub[2], t->sub[3]);
  else if (rank_is_adaptive(rk))
    snprintf(sub, sizeof sub,
             "every input size a multiple of its output %zu, some not "
             "(uneven or overlapping windows) %zu",
             t->sub[0], t->sub[1]);
  else
    snprintf(sub, sizeof sub,
             "EXPLICIT %zu, VALID %zu, SAME_UPPER %zu, SAME_LOWER %zu",
             t->sub[0], t->sub[1], t->sub[2], t->sub[3]);
  printf("[model] %-12s %s %s: accepted %zu, rejected %zu (%zu ambiguous) "
         "on each of [%s]\n        %s; with special values %zu",
         g_op_names[op], layout_name(layout), g_rank_names[rk], t->accepted,
         t->rejected, t->ambiguous, isas, sub, t->special);
  if (t->corrupt_tested)
    printf("; %s-index runs %zu (%zu must be rejected)",
           op_is_unpool(op) ? "altered" : "corrupted", t->corrupt_tested,
           t->corrupt_rejected);
  if (t->strided || t->clamped)
    printf("; with pixel strides %zu, with a clamp %zu", t->strided,
           t->clamped);
  if (rk == RANK_3D || rk == RANK_ADAPTIVE_3D)
    printf("; with a depth (d or kernel_d > 1) %zu", t->deep);
  if (rank_is_adaptive(rk))
    printf("; outputs above the input %zu, global (all outputs 1) %zu",
           t->upsampled, t->global);
  printf("\n");
  fflush(stdout);
}

/* Checks that forcing an ISA the build or CPU lacks is rejected. */
static void check_unsupported_isa(simdpool_isa isa, simdpool_status want) {
  static int dummy;
  simdpool_desc d;
  simdpool_plan *plan = (simdpool_plan *)(void *)&dummy;
  simdpool_status st;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  d.isa = isa;
  st = simdpool_plan_create(&d, &plan);
  ck_assert_msg(st == want, "plan with isa %s: got %s, want %s (%s)",
                simdpool_isa_name(isa), simdpool_status_string(st),
                simdpool_status_string(want), simdpool_last_error());
  ck_assert_ptr_null(plan);
  ck_assert_msg(simdpool_last_error()[0] != '\0',
                "empty simdpool_last_error() after rejecting isa %s",
                simdpool_isa_name(isa));
}

static void sweep(op_kind op, simdpool_layout layout, rank_kind rk) {
  tally t;
  size_t k, i;
  size_t max_attempts = g_target * 4 + 2000;
  int active[NUM_ISAS];
  size_t failed[NUM_ISAS];
  int n_active = 0, n_dropped = 0;
  size_t n_failed = 0;
  char isas[128] = "", failed_names[128] = "";

  memset(&t, 0, sizeof t);
  if (op_is_unpool(op))
    ck_assert_int_eq(simdpool_threadpool_create(2, &g_pool), SIMDPOOL_OK);
  for (i = 0; i < NUM_ISAS; i++) {
    simdpool_isa isa = g_isas[i];
    active[i] = 0;
    failed[i] = 0;
    if (!simdpool_isa_supported(isa)) {
      check_unsupported_isa(isa, SIMDPOOL_UNSUPPORTED);
    } else if (isa == SIMDPOOL_ISA_AUTO && g_auto_status != SIMDPOOL_OK) {
      check_unsupported_isa(isa, g_auto_status);
    } else {
      active[i] = 1;
      n_active++;
      snprintf(isas + strlen(isas), sizeof isas - strlen(isas), "%s%s",
               isas[0] ? " " : "", simdpool_isa_name(isa));
    }
  }

  for (k = 0; t.accepted < g_target && k < max_attempts && n_dropped < n_active;
       k++) {
    config cf;
    expected e;
    rng r;
    int accepted;

    memset(&cf, 0, sizeof cf);
    cf.op = op;
    cf.rank = rk;
    cf.iteration = k;
    /* One stream per (seed, op, layout, rank, iteration): any configuration
     * can be regenerated alone from the seed (2D keeps its old streams). */
    cf.iter_seed = splitmix64(g_seed ^ splitmix64(((uint64_t)rk << 16) |
                                                  ((uint64_t)op << 8) |
                                                  (uint64_t)layout)) ^
                   splitmix64((uint64_t)k * 0x100000001b3ull);
    rng_seed(&r, cf.iter_seed);
    t.attempts++;

    draw_rank_desc(&r, op, layout, rk, &cf);
    model_resolve(&cf.d, &cf.ms);
    accepted = model_status(cf.ms.reasons) == SIMDPOOL_OK;
    if (accepted)
      prepare(&r, &cf, &e);

    for (i = 0; i < NUM_ISAS; i++) {
      if (!active[i] || failed[i] >= g_max_failures)
        continue;
      cf.isa = g_isas[i];
      if (run_on_isa_guarded(&cf, accepted ? &e : NULL)) {
        if (failed[i] == 0)
          snprintf(failed_names + strlen(failed_names),
                   sizeof failed_names - strlen(failed_names), "%s%s",
                   failed_names[0] ? " " : "", simdpool_isa_name(g_isas[i]));
        failed[i]++;
        n_failed++;
        if (failed[i] >= g_max_failures)
          n_dropped++;
      }
    }

    if (accepted) {
      count_accepted(&cf, &e, &t);
      expected_free(&e);
    } else {
      t.rejected++;
      if ((cf.ms.reasons & MODEL_INVALID_MASK) &&
          (cf.ms.reasons & MODEL_UNSUP_MASK))
        t.ambiguous++;
    }
  }
  print_tally(op, layout, rk, &t, isas);
  simdpool_threadpool_destroy(g_pool);
  g_pool = NULL;
  ck_assert_msg(n_failed == 0,
                "%s %s %s: %zu mismatches on [%s] (details above; seed %" PRIu64
                ")",
                g_op_names[op], layout_name(layout), g_rank_names[rk], n_failed,
                failed_names, g_seed);
  ck_assert_msg(t.accepted >= g_target,
                "only %zu of %zu configurations accepted in %zu attempts",
                t.accepted, g_target, t.attempts);
}

/* Loop index: (rank * OP_COUNT + op) * 2 + layout. */
START_TEST(test_sweep) {
  sweep((op_kind)(_i / 2 % OP_COUNT), (simdpool_layout)(_i % 2),
        (rank_kind)(_i / 2 / OP_COUNT));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Unpooling on tensors cut into several parallel chunks                    */
/* ------------------------------------------------------------------------ */

/* Draws an unpooling configuration whose tensors move 0.6 to 2.4 MB, so
 * that the parallel calls (chunks of a few hundred KB, whole planes each:
 * n*c of them channels-first, n channels-last) cut it into several tasks,
 * which the sweep's small shapes never are: the 2x2/s2 window (often on an
 * odd input), 3x3/s2/pad 1, an overlapping 1D window (equal indices from
 * forward), 1x2x2 or 2x2x2 3D windows, adaptive 2D (not with U8). */
static void draw_unpool_large(rng *r, op_kind op, simdpool_layout layout,
                              config *cf) {
  simdpool_desc *d = &cf->d;
  const int u8 = op_index_type(op) == SIMDPOOL_INDEX_U8;
  const size_t shape = rng_below(r, u8 ? 4 : 5);
  const size_t total = rng_range(r, 150000, 600000); /* x's elements */
  const size_t n =
      layout == SIMDPOOL_NHWC ? rng_range(r, 2, 6) : rng_range(r, 1, 3);
  const size_t c =
      layout == SIMDPOOL_NHWC ? rng_range(r, 3, 40) : rng_range(r, 8, 48);
  size_t h = rng_range(r, 9, 48), w, dd;
  switch (shape) {
  case 0: /* 2x2/s2 */
    w = total / (n * c * h);
    simdpool_desc_init(d, SIMDPOOL_MAX, layout, n, c, h, w < 2 ? 2 : w, 2, 2);
    d->ceil_mode = rng_chance(r, 0.2);
    break;
  case 1: /* 3x3/s2/pad 1 (ResNet stem) */
    w = total / (n * c * h);
    simdpool_desc_init(d, SIMDPOOL_MAX, layout, n, c, h, w < 2 ? 2 : w, 3, 3);
    d->stride_h = d->stride_w = 2;
    d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = 1;
    break;
  case 2: /* 1D, kernel 3 stride 1 or 2: windows overlap */
    simdpool_desc_init_1d(d, SIMDPOOL_MAX, layout, n, c, total / (n * c), 3);
    d->stride_w = rng_range(r, 1, 2);
    d->pad_left = rng_below(r, 2);
    break;
  case 3: /* 3D: 1x2x2 (the slices fold into one plane when h is even) or
           * 2x2x2 */
    dd = rng_range(r, 2, 6);
    h = rng_range(r, 4, 16);
    if (rng_chance(r, 0.6))
      h += h % 2;
    w = total / (n * c * dd * h);
    simdpool_desc_init_3d(d, SIMDPOOL_MAX, layout, n, c, dd, h, w < 2 ? 2 : w,
                          rng_chance(r, 0.5) ? 1 : 2, 2, 2);
    break;
  default: /* adaptive 2D: half size (uniform 2x2/s2) or anything */
    w = total / (n * c * h);
    if (w < 2)
      w = 2;
    if (rng_chance(r, 0.5))
      simdpool_desc_init_adaptive(d, SIMDPOOL_MAX, layout, n, c, 1, h, w, 1,
                                  h / 2, w / 2);
    else
      simdpool_desc_init_adaptive(d, SIMDPOOL_MAX, layout, n, c, 1, h, w, 1,
                                  rng_range(r, 1, h + 3),
                                  rng_range(r, 1, w / 2 + 3));
    break;
  }
  d->index_type = op_index_type(op);
  if (layout == SIMDPOOL_NHWC && rng_chance(r, 0.3)) {
    d->x_pixel_stride = c + rng_range(r, 0, 5);
    d->y_pixel_stride = c + rng_range(r, 0, 5);
  }
}

/* Loop index: layout. Configurations of every unpooling op, each run on
 * every ISA: the serial call against the model, the parallel calls against
 * the serial one; altered indices (sometimes two, the first bad one to be
 * reported) checked as in the sweep. */
START_TEST(test_unpool_large) {
  const simdpool_layout layout = (simdpool_layout)_i;
  const size_t target = (size_t)ceil(24.0 * g_scale);
  size_t k, i, fast = 0, bad_runs = 0, rejected = 0;
  size_t per_op[OP_UNPOOL_BWD_U8 - OP_UNPOOL_I32 + 1] = {0};
  size_t n_failed = 0;
  ck_assert_int_eq(simdpool_threadpool_create(2, &g_pool), SIMDPOOL_OK);
  g_par_calls = g_par_split = 0;
  for (k = 0; k < target; k++) {
    config cf;
    expected e;
    rng r;
    memset(&cf, 0, sizeof cf);
    cf.rank = RANK_2D;
    cf.iteration = k;
    cf.iter_seed = splitmix64(g_seed ^ splitmix64(0x756e706f6f6cull + layout)) ^
                   splitmix64((uint64_t)k * 0x100000001b3ull);
    rng_seed(&r, cf.iter_seed);
    cf.op = (op_kind)(OP_UNPOOL_I32 + rng_below(&r, 6));
    draw_unpool_large(&r, cf.op, layout, &cf);
    cf.rank = cf.d.adaptive ? RANK_ADAPTIVE_2D
              : cf.d.d > 1  ? RANK_3D
              : cf.d.h == 1 ? RANK_1D
                            : RANK_2D;
    model_resolve(&cf.d, &cf.ms);
    ck_assert_msg(cf.ms.reasons == 0, "large unpooling desc rejected: %s",
                  model_reason_string(cf.ms.reasons));
    prepare(&r, &cf, &e);
    if (rng_chance(&r, 0.5)) { /* a second index altered, or a first one */
      void *src = e.bad != NULL ? e.bad : e.im;
      set_unpool_bad(&cf, &e, corrupt_indices(&r, &cf, src));
    }
    per_op[cf.op - OP_UNPOOL_I32]++;
    bad_runs += e.bad != NULL;
    rejected += e.bad != NULL && !e.bad_valid;
    for (i = 0; i < NUM_ISAS; i++) {
      if (!simdpool_isa_supported(g_isas[i]) ||
          (g_isas[i] == SIMDPOOL_ISA_AUTO && g_auto_status != SIMDPOOL_OK))
        continue;
      cf.isa = g_isas[i];
      n_failed += run_on_isa_guarded(&cf, &e);
    }
    fast += cf.fast_2x2;
    expected_free(&e);
  }
  simdpool_threadpool_destroy(g_pool);
  g_pool = NULL;
  printf("[model] unpool_large %s: %zu configurations of 0.6-2.4 MB (i32 "
         "%zu, i64 %zu, u8 %zu, bwd i32 %zu, bwd i64 %zu, bwd u8 %zu), 2x2/s2 "
         "kernel (auto) %zu; altered-index runs %zu (%zu must be rejected); "
         "%zu of %zu parallel-fors ran more than one task\n",
         layout_name(layout), target, per_op[0], per_op[1], per_op[2],
         per_op[3], per_op[4], per_op[5], fast, bad_runs, rejected, g_par_split,
         g_par_calls);
  fflush(stdout);
  ck_assert_msg(g_par_split > 0 || g_par_calls == 0,
                "no parallel call was cut into more than one task");
  ck_assert_msg(n_failed == 0,
                "unpool_large %s: %zu mismatches (details above; seed %" PRIu64
                ")",
                layout_name(layout), n_failed, g_seed);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Shape rules alone: wider and extreme parameters, plan creation only      */
/* ------------------------------------------------------------------------ */

/* Hand-computed cases of the element types
 * (docs/semantics.md#element-types), 1D NCHW, one plane: x (or, for backward
 * rows, dy) as raw patterns (bf16/f16 bits, s8/u8 values), the expected output
 * as raw patterns, the winner's I32 index for MAX. Each is checked against the
 * model, and against the library on every ISA once the library accepts the
 * dtype (until then its plan must be refused for the missing kernels). */
typedef struct dtype_case {
  const char *what;
  simdpool_dtype dtype;
  simdpool_method method;
  int backward; /* AVG backward from dy = x */
  size_t w, k, stride, pad;
  int cip;
  float p;
  float x_scale;
  int32_t x_zp, y_zp, y_min, y_max;
  int32_t x[5];
  int32_t y[5]; /* outputs, or dx for backward rows */
  int32_t index;
} dtype_case;

#define BF SIMDPOOL_BF16
#define FH SIMDPOOL_F16
#define QS SIMDPOOL_S8
#define QU SIMDPOOL_U8
#define QDEF 1.0f, 0, 0, INT32_MIN, INT32_MAX
// clang-format off
static const dtype_case dtype_cases[] = {
    /* (1 + (1 + 2^-7)) / 2 = 1 + 2^-8: a tie, to the even 1 */
    {"bf16 avg tie to even", BF, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x3f80, 0x3f81}, {0x3f80}, -1},
    /* (1 + 2^-7 + 1 + 2^-6) / 2 = 1 + 3 * 2^-8: a tie, up to the even 0x3f82 */
    {"bf16 avg tie up", BF, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x3f81, 0x3f82}, {0x3f82}, -1},
    /* (2^-24 + 2^-23) / 2 = 1.5 * 2^-24: subnormal tie, to even 2 * 2^-24 */
    {"f16 subnormal tie", FH, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x0001, 0x0002}, {0x0002}, -1},
    /* 2^-24 / 2 = 2^-25: a tie between 0 and 2^-24, to 0 */
    {"f16 underflow to 0", FH, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x0001, 0x0000}, {0x0000}, -1},
    /* 65504 + 16 = 65520: the tie between 65504 and 2^16, to even inf */
    {"f16 overflow to inf", FH, SIMDPOOL_LP, 0, 2, 2, 2, 0, 1, 1, QDEF, {0x7bff, 0x4c00}, {0x7c00}, -1},
    /* 65504 + 14 = 65518 rounds to 65504 */
    {"f16 largest finite", FH, SIMDPOOL_LP, 0, 2, 2, 2, 0, 1, 1, QDEF, {0x7bff, 0x4b00}, {0x7bff}, -1},
    /* MAX keeps the winning NaN's bits, signalling ones too */
    {"f16 max keeps a signalling NaN", FH, SIMDPOOL_MAX, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x7c01, 0x3c00}, {0x7c01}, 0},
    {"bf16 max keeps a NaN's sign and payload", BF, SIMDPOOL_MAX, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x3f80, 0xff81}, {0xff81}, 1},
    {"bf16 max tie keeps -0", BF, SIMDPOOL_MAX, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x8000, 0x0000}, {0x8000}, 0},
    /* arithmetic NaNs are canonical */
    {"f16 avg NaN canonical", FH, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {0x7d00, 0x3c00}, {0x7e00}, -1},
    {"bf16 avg NaN canonical", BF, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {0xff81, 0x3f80}, {0x7fc0}, -1},
    /* backward, k3/s1 over 5, dy = 1 each: each share 1/3 = 0x3eaaaaab in
     * f32; dx sums 1, 2, 3, 2, 1 shares in f32 (0x3eaaaaab, 0x3f2aaaab, and
     * 0x3f2aaaab + 0x3eaaaaab = 1.0000000298 -> 1.0f), each rounded once:
     * 0x3eab, 0x3f2b, 0x3f80 */
    {"bf16 avg backward sums in f32", BF, SIMDPOOL_AVG, 1, 5, 3, 1, 0, 1, 2, QDEF, {0x3f80, 0x3f80, 0x3f80}, {0x3eab, 0x3f2b, 0x3f80, 0x3f2b, 0x3eab}, -1},
    /* quantized: acc 5, m = 1 / 2, v = 2.5: RNE to even 2; 3.5 to 4 */
    {"u8 avg tie to even", QU, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {2, 3}, {2}, -1},
    {"u8 avg tie up", QU, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, QDEF, {3, 4}, {4}, -1},
    /* v = 5, clamped to [0 - 10, 12 - 10] = 2, plus y_zero_point 10 */
    {"u8 avg clamp", QU, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, 1.0f, 0, 10, INT32_MIN, 12, {4, 6}, {12}, -1},
    /* k3 pad 1 over {10, 20, 30}, x_zero_point 5: taps pad, 10, 20, acc =
     * 5 + 15 = 20; counting the pad, m = 1/3 (0x3eaaaaab), v = 6.6666670
     * -> 7, plus 5: 12; without it m = 1/2, v = 10 -> 15 */
    {"u8 avg count_include_pad", QU, SIMDPOOL_AVG, 0, 3, 3, 3, 1, 1, 2, 1.0f, 5, 5, INT32_MIN, INT32_MAX, {10, 20, 30}, {12}, -1},
    {"u8 avg without the pad", QU, SIMDPOOL_AVG, 0, 3, 3, 3, 1, 0, 2, 1.0f, 5, 5, INT32_MIN, INT32_MAX, {10, 20, 30}, {15}, -1},
    /* acc = 0 + 255 with x_zero_point -128, v = 127.5: clamped to 127
     * first, so no tie to round */
    {"s8 avg clamps before rounding", QS, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, 1.0f, -128, 0, INT32_MIN, INT32_MAX, {-128, 127}, {127}, -1},
    /* x_scale 0.5: m = 0.25, acc = 6: v = 1.5 -> 2 */
    {"s8 avg scale", QS, SIMDPOOL_AVG, 0, 2, 2, 2, 0, 1, 2, 0.5f, 0, 0, INT32_MIN, INT32_MAX, {-1, 7}, {2}, -1},
    {"s8 max ties keep the first", QS, SIMDPOOL_MAX, 0, 4, 4, 4, 0, 1, 2, QDEF, {-3, 5, 5, -128}, {5}, 1},
    {"u8 max", QU, SIMDPOOL_MAX, 0, 3, 3, 3, 0, 1, 2, QDEF, {7, 255, 0}, {255}, 1},
};
// clang-format on
#undef BF
#undef FH
#undef QS
#undef QU
#undef QDEF

/* Raw element i of a dtype's buffer as an int (bf16/f16 bits, s8/u8). */
static int32_t raw_get(simdpool_dtype t, const void *p, size_t i) {
  if (t == SIMDPOOL_S8)
    return ((const int8_t *)p)[i];
  if (t == SIMDPOOL_U8)
    return ((const uint8_t *)p)[i];
  return ((const uint16_t *)p)[i];
}

static void raw_set(simdpool_dtype t, void *p, size_t i, int32_t v) {
  if (t == SIMDPOOL_S8)
    ((int8_t *)p)[i] = (int8_t)v;
  else if (t == SIMDPOOL_U8)
    ((uint8_t *)p)[i] = (uint8_t)v;
  else
    ((uint16_t *)p)[i] = (uint16_t)v;
}

START_TEST(test_dtype_by_hand) {
  size_t library_checked = 0;
  for (size_t k = 0; k < sizeof dtype_cases / sizeof dtype_cases[0]; k++) {
    const dtype_case *t = &dtype_cases[k];
    simdpool_desc d;
    simdpool_desc_init_1d(&d, t->method, SIMDPOOL_NCHW, 1, 1, t->w, t->k);
    d.stride_w = t->stride;
    d.pad_left = d.pad_right = t->pad;
    d.count_include_pad = t->cip;
    d.p = t->p;
    d.dtype = t->dtype;
    d.quant.x_scale = t->x_scale;
    d.quant.x_zero_point = t->x_zp;
    d.quant.y_zero_point = t->y_zp;
    d.quant.y_min = t->y_min;
    d.quant.y_max = t->y_max;
    if (t->method == SIMDPOOL_MAX)
      d.index_type = SIMDPOOL_INDEX_I32;
    model_shape ms;
    model_resolve(&d, &ms);
    ck_assert_msg(ms.reasons == 0, "%s: the model rejects it (%s)", t->what,
                  model_reason_string(ms.reasons));
    const size_t nin = t->w, nout = ms.out_w;
    unsigned char in[16] = {0}, out[16], want[16] = {0};
    int32_t idx = -1;
    const size_t nres = t->backward ? nin : nout;
    for (size_t i = 0; i < (t->backward ? nout : nin); i++)
      raw_set(t->dtype, in, i, t->x[i]);
    for (size_t i = 0; i < nres; i++)
      raw_set(t->dtype, want, i, t->y[i]);
    memset(out, 0xa5, sizeof out);
    if (t->backward)
      ck_assert_int_eq(model_backward_dtype(&d, &ms, in, NULL, NULL, out), 0);
    else
      model_forward_dtype(&d, &ms, in, out,
                          t->method == SIMDPOOL_MAX ? &idx : NULL);
    for (size_t i = 0; i < nres; i++)
      ck_assert_msg(raw_get(t->dtype, out, i) == t->y[i],
                    "%s: the model gives 0x%x at %zu, by hand 0x%x", t->what,
                    (unsigned)raw_get(t->dtype, out, i), i, (unsigned)t->y[i]);
    if (t->method == SIMDPOOL_MAX)
      ck_assert_msg(idx == t->index, "%s: the model's index %d, by hand %d",
                    t->what, (int)idx, (int)t->index);
    /* The library: every ISA this machine runs. */
    for (int isa = SIMDPOOL_ISA_SCALAR; isa <= SIMDPOOL_ISA_NEON; isa++) {
      if (!simdpool_isa_supported((simdpool_isa)isa))
        continue;
      d.isa = (simdpool_isa)isa;
      simdpool_plan *plan = NULL;
      const simdpool_status st = simdpool_plan_create(&d, &plan);
      ck_assert_msg(st == SIMDPOOL_OK, "%s: plan_create %d: %s", t->what,
                    (int)st, simdpool_last_error());
      memset(out, 0xa5, sizeof out);
      int32_t lidx = -1;
      const simdpool_status cs =
          t->backward
              ? simdpool_backward(plan, in, NULL, NULL, out)
              : simdpool_forward(plan, in, out,
                                 t->method == SIMDPOOL_MAX ? &lidx : NULL);
      simdpool_plan_destroy(plan);
      ck_assert_msg(cs == SIMDPOOL_OK, "%s: %s", t->what,
                    simdpool_last_error());
      ck_assert_msg(memcmp(out, want, nres * model_elem_size(t->dtype)) == 0,
                    "%s on %s: the library differs from the hand result",
                    t->what, simdpool_isa_name((simdpool_isa)isa));
      ck_assert(t->method != SIMDPOOL_MAX || lidx == t->index);
      library_checked++;
    }
  }
  printf("[model] dtype_by_hand: %zu cases on the model, %zu library runs\n",
         sizeof dtype_cases / sizeof dtype_cases[0], library_checked);
}
END_TEST

/* A quantized AVG descriptor (S8 or U8, sometimes adaptive) whose
 * quantization fields sit near their limits: scales among 0, negatives,
 * inf, NaN, subnormals and values whose ratio or multiplier under- or
 * overflows; zero points and clamp bounds around the dtype's ends and the
 * INT32_MIN / INT32_MAX sentinels. */
static void draw_quant(simdpool_desc *d, rng *r) {
  static const float scales[] = {
      1.0f,   0.5f,   3.0f,      0.0f,  -1.0f,  INFINITY, NAN,       0x1p-140f,
      1e-38f, 2e-38f, 0x1p-120f, 1e30f, 1e-30f, 0x1p127f, 0x1p-126f, 0.01f};
  static const int32_t ints[] = {0,   -1,  1,   -128,      127,
                                 128, 255, 256, -129,      100,
                                 -5,  7,   6,   INT32_MIN, INT32_MAX};
  d->method = SIMDPOOL_AVG;
  d->index_type = SIMDPOOL_INDEX_NONE;
  d->dtype = rng_chance(r, 0.5) ? SIMDPOOL_S8 : SIMDPOOL_U8;
  d->clamp = rng_chance(r, 0.05);
  if (rng_chance(r, 0.3)) { /* adaptive: the largest window varies */
    d->adaptive = 1;
    d->kernel_h = d->kernel_w = d->stride_h = d->stride_w = 1;
    d->dilation_h = d->dilation_w = 1;
    d->padding = SIMDPOOL_PAD_EXPLICIT;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 0;
    d->ceil_mode = 0;
    d->out_d = 1;
    d->out_h = rng_range(r, 1, 50);
    d->out_w = rng_range(r, 1, 50);
  }
  simdpool_quant *q = &d->quant;
  q->x_scale = scales[rng_below(r, 16)];
  q->y_scale = rng_chance(r, 0.5) ? 1.0f : scales[rng_below(r, 16)];
  q->x_zero_point = rng_chance(r, 0.5) ? 0 : ints[rng_below(r, 15)];
  q->y_zero_point = rng_chance(r, 0.5) ? 0 : ints[rng_below(r, 15)];
  q->y_min = rng_chance(r, 0.5) ? INT32_MIN : ints[rng_below(r, 15)];
  q->y_max = rng_chance(r, 0.5) ? INT32_MAX : ints[rng_below(r, 15)];
  if (rng_chance(r, 0.2)) { /* the empty range's edge: y_max = y_min - {0,1} */
    q->y_min = d->dtype == SIMDPOOL_S8 ? (int32_t)rng_range(r, 0, 255) - 128
                                       : (int32_t)rng_range(r, 0, 255);
    q->y_max = q->y_min - (int32_t)rng_below(r, 2);
  }
  if (rng_chance(r, 0.4)) {
    /* The multiplier's edge: x_scale = 2^-126 * T, y_scale 1, T one off the
     * largest window's tap count t either way, so that m = x_scale / t is
     * 2^-126 (normal) or just below (subnormal). t by brute force over the
     * windows here; the model and the library each find it their own way. */
    double t = 1.0;
    const size_t in[3] = {d->d, d->h, d->w};
    const size_t out[3] = {d->out_d, d->out_h, d->out_w};
    const size_t k[3] = {d->kernel_d, d->kernel_h, d->kernel_w};
    for (int ax = 0; ax < 3; ax++) {
      size_t most = k[ax];
      if (d->adaptive == 1) {
        most = 0;
        for (size_t o = 0; o < out[ax]; o++) {
          const size_t a = o * in[ax] / out[ax];
          const size_t b = ((o + 1) * in[ax] + out[ax] - 1) / out[ax];
          most = b - a > most ? b - a : most;
        }
      }
      t *= (double)most;
    }
    q->x_scale = 0x1p-126f * (float)(t - 1.0 + (double)rng_below(r, 3));
    q->y_scale = 1.0f;
    if (rng_chance(r, 0.8)) { /* and every other field valid */
      q->x_zero_point = q->y_zero_point = 0;
      q->y_min = INT32_MIN;
      q->y_max = INT32_MAX;
      d->clamp = 0;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Element types: every op, dtype, layout and rank against the model        */
/* ------------------------------------------------------------------------ */

static const simdpool_dtype g_dtypes[] = {SIMDPOOL_BF16, SIMDPOOL_F16,
                                          SIMDPOOL_S8, SIMDPOOL_U8};
#define NUM_DTYPES 4

/* docs/semantics.md#element-types: S8/U8 have MAX forward, quantized AVG
 * forward and unpooling (both ways); bf16/f16 every op. */
static int dtype_has_op(simdpool_dtype t, op_kind op) {
  if (t != SIMDPOOL_S8 && t != SIMDPOOL_U8)
    return 1;
  return !op_is_backward(op) && op != OP_LP_FWD;
}

/* One raw element of dtype t: 16-bit types mostly values in (-4, 4) (sums
 * that round, ties of MAX), now and then any pattern (NaN payloads, quiet
 * and signalling, infinities, subnormals, the largest values) or a signed
 * zero; 8-bit types any value, often one of a few (ties). */
static void draw_raw(rng *r, simdpool_dtype t, void *p, size_t i) {
  if (t == SIMDPOOL_S8 || t == SIMDPOOL_U8) {
    static const uint8_t few[] = {0, 1, 0x7f, 0x80, 0xff, 0x81};
    ((uint8_t *)p)[i] =
        rng_chance(r, 0.3) ? few[rng_below(r, 6)] : (uint8_t)rng_u32(r);
    return;
  }
  uint16_t h;
  const double u = rng_unit(r);
  if (u < 0.15) {
    h = (uint16_t)rng_u32(r); /* anything */
  } else if (u < 0.2) {
    h = (uint16_t)((rng_u32(r) & 1u) << 15); /* ±0 */
  } else if (u < 0.3) {                      /* a few values: ties */
    static const uint16_t bf[] = {0x3f80, 0xbf80, 0x4000, 0x3f80, 0x0000};
    static const uint16_t fh[] = {0x3c00, 0xbc00, 0x4000, 0x3c00, 0x0000};
    h = t == SIMDPOOL_BF16 ? bf[rng_below(r, 5)] : fh[rng_below(r, 5)];
  } else { /* |v| in [2^-2, 4), random mantissa, either sign */
    const uint32_t sign = rng_u32(r) & 1u;
    if (t == SIMDPOOL_BF16)
      h = (uint16_t)(sign << 15 | (uint32_t)rng_range(r, 125, 128) << 7 |
                     (rng_u32(r) & 0x7fu));
    else
      h = (uint16_t)(sign << 15 | (uint32_t)rng_range(r, 13, 16) << 10 |
                     (rng_u32(r) & 0x3ffu));
  }
  ((uint16_t *)p)[i] = h;
}

/* A valid quantization for an S8/U8 AVG plan most of the time (the sweep
 * is about results; test_shape_rules draws the edges), at times one of
 * draw_quant's edges. */
static void draw_quant_valid(rng *r, simdpool_desc *d) {
  static const float scales[] = {1.0f,  0.5f, 3.0f,  0.01f,
                                 0.37f, 2.5f, 1e-3f, 7.0f};
  const int32_t lo = d->dtype == SIMDPOOL_S8 ? -128 : 0, hi = lo + 255;
  simdpool_quant *q = &d->quant;
  q->x_scale = scales[rng_below(r, 8)];
  q->y_scale = rng_chance(r, 0.4) ? 1.0f : scales[rng_below(r, 8)];
  q->x_zero_point = rng_chance(r, 0.3) ? 0 : (int32_t)rng_range(r, 0, 255) + lo;
  q->y_zero_point = rng_chance(r, 0.3) ? 0 : (int32_t)rng_range(r, 0, 255) + lo;
  if (d->dtype == SIMDPOOL_U8 && rng_chance(r, 0.5))
    q->x_zero_point = q->y_zero_point = 128;
  q->y_min = INT32_MIN;
  q->y_max = INT32_MAX;
  if (rng_chance(r, 0.3)) {
    const int32_t a = (int32_t)rng_range(r, 0, 255) + lo;
    const int32_t b = (int32_t)rng_range(r, 0, 255) + lo;
    q->y_min = a < b ? a : b;
    q->y_max = a < b ? b : a;
  }
  (void)hi;
}

/* A zero-filled-then-patterned buffer of n elements of size es with
 * GUARD_BYTES on each side. */
typedef struct dbuf {
  unsigned char *mem, *p;
  size_t bytes;
} dbuf;

static dbuf dbuf_new(size_t n, size_t es) {
  dbuf b;
  b.bytes = (n ? n : 1) * es;
  b.mem = malloc(b.bytes + 2 * GUARD_BYTES);
  ck_assert_ptr_nonnull(b.mem);
  memset(b.mem, GUARD_FILL, b.bytes + 2 * GUARD_BYTES);
  b.p = b.mem + GUARD_BYTES;
  return b;
}

static int dbuf_guards_intact(const dbuf *b) {
  for (size_t i = 0; i < GUARD_BYTES; i++)
    if (b->mem[i] != GUARD_FILL || b->p[b->bytes + i] != GUARD_FILL)
      return 0;
  return 1;
}

/* Runs one accepted configuration of dtype cf->d.dtype on the library
 * (AUTO, serial or parallel) and on the model; 0 when they agree bit for
 * bit, else prints why and returns 1. */
static int dtype_run(rng *r, config *cf) {
  const simdpool_desc *d = &cf->d;
  const model_shape *ms = &cf->ms;
  const op_kind op = cf->op;
  const size_t es = model_elem_size(d->dtype);
  const size_t xs = model_x_span(d), ys = model_y_span(d, ms);
  const size_t ny = model_y_count(d, ms), isz = model_index_size(d->index_type);
  char desc[1024];
  describe(cf, desc, sizeof desc);
  dbuf x = dbuf_new(xs, es), y = dbuf_new(ys, es), idx = dbuf_new(ny, 8);
  for (size_t i = 0; i < xs; i++)
    draw_raw(r, d->dtype, x.p, i);
  for (size_t i = 0; i < ys; i++)
    draw_raw(r, d->dtype, y.p, i);
  /* Indices (and the plan's forward, for the ops that read them): the
   * model's forward on x. */
  if (d->index_type != SIMDPOOL_INDEX_NONE) {
    dbuf tmp = dbuf_new(ys, es);
    model_forward_dtype(d, ms, x.p, tmp.p, idx.p);
    free(tmp.mem);
  }
  const int fwd = !op_is_backward(op) && !op_is_unpool(op);
  const int to_x =
      op_is_backward(op) || (op_is_unpool(op) && !op_is_unpool_bwd(op));
  const size_t out_n = to_x ? xs : ys;
  dbuf want = dbuf_new(out_n, es), got = dbuf_new(out_n, es);
  dbuf want_i = dbuf_new(ny, 8), got_i = dbuf_new(ny, 8);
  /* Backward's inputs, the same for the model and the library: indices
   * only from them, x only where the op reads it. */
  const void *bwd_idx =
      op == OP_MAX_BWD_X || op == OP_AVG_BWD || op == OP_LP_BWD ? NULL : idx.p;
  const void *bwd_x = op == OP_AVG_BWD ? NULL : x.p;
  int rc = 0;
  if (fwd)
    model_forward_dtype(d, ms, x.p, want.p, d->index_type ? want_i.p : NULL);
  else if (op_is_unpool_bwd(op))
    rc = model_unpool_backward_dtype(d, ms, x.p, idx.p, want.p);
  else if (op_is_unpool(op))
    rc = model_unpool_dtype(d, ms, y.p, idx.p, want.p);
  else
    rc = model_backward_dtype(d, ms, y.p, bwd_idx, bwd_x, want.p);
  ck_assert_msg(rc == 0, "the model refused its own indices; %s", desc);

  simdpool_plan *plan = NULL;
  simdpool_status st = simdpool_plan_create(d, &plan);
  int bad = 0;
  if (st != SIMDPOOL_OK) {
    printf("FAIL dtype %s: plan_create %s: %s; seed %" PRIu64 "\n", desc,
           simdpool_status_string(st), simdpool_last_error(), g_seed);
    bad = 1;
  } else {
    const int par = rng_chance(r, 0.3);
    simdpool_parallel_for_fn pf =
        rng_chance(r, 0.2) ? NULL : simdpool_threadpool_parallel_for;
    const void *ix = d->index_type ? idx.p : NULL;
    if (fwd)
      st = par ? simdpool_forward_parallel(plan, x.p, got.p,
                                           d->index_type ? got_i.p : NULL, pf,
                                           g_pool)
               : simdpool_forward(plan, x.p, got.p,
                                  d->index_type ? got_i.p : NULL);
    else if (op_is_unpool_bwd(op))
      st = par ? simdpool_unpool_backward_parallel(plan, x.p, ix, got.p, pf,
                                                   g_pool)
               : simdpool_unpool_backward(plan, x.p, ix, got.p);
    else if (op_is_unpool(op))
      st = par ? simdpool_unpool_parallel(plan, y.p, ix, got.p, pf, g_pool)
               : simdpool_unpool(plan, y.p, ix, got.p);
    else
      st = par ? simdpool_backward_parallel(plan, y.p, bwd_idx, bwd_x, got.p,
                                            pf, g_pool)
               : simdpool_backward(plan, y.p, bwd_idx, bwd_x, got.p);
    if (st != SIMDPOOL_OK) {
      printf("FAIL dtype %s: call %s: %s; seed %" PRIu64 "\n", desc,
             simdpool_status_string(st), simdpool_last_error(), g_seed);
      bad = 1;
    } else if (!dbuf_guards_intact(&got) || !dbuf_guards_intact(&got_i)) {
      printf("FAIL dtype %s: wrote outside its output; seed %" PRIu64 "\n",
             desc, g_seed);
      bad = 1;
    } else if (memcmp(got.p, want.p, out_n * es) != 0) {
      size_t at = 0;
      while (memcmp(got.p + at * es, want.p + at * es, es) == 0)
        at++;
      uint32_t gv = 0, wv = 0;
      memcpy(&gv, got.p + at * es, es);
      memcpy(&wv, want.p + at * es, es);
      printf("FAIL dtype %s (%s%s): element %zu is 0x%x, the model's 0x%x; "
             "seed %" PRIu64 "\n",
             desc, par ? "parallel" : "serial", par && !pf ? ", NULL pool" : "",
             at, (unsigned)gv, (unsigned)wv, g_seed);
      bad = 1;
    } else if (fwd && d->index_type &&
               memcmp(got_i.p, want_i.p, ny * isz) != 0) {
      printf("FAIL dtype %s: indices differ from the model's; seed %" PRIu64
             "\n",
             desc, g_seed);
      bad = 1;
    }
    simdpool_plan_destroy(plan);
  }
  free(x.mem);
  free(y.mem);
  free(idx.mem);
  free(want.mem);
  free(got.mem);
  free(want_i.mem);
  free(got_i.mem);
  return bad;
}

/* bf16/f16 backward on planes larger than the scalar reference's f32 tile
 * (4096 elements, kernels/scalar/pool_scalar.c), which the sweep's small
 * shapes never reach: whole slices per box (3D), bands of rows (2D), pieces
 * of one row (1D), and adaptive windows; every backward op, both layouts. */
START_TEST(test_dtype_large) {
  typedef struct big {
    int rank; /* 1, 2, 3, or 4: adaptive 2D */
    size_t c, d, h, w, kd, k, s, pad;
  } big;
  static const big bigs[] = {
      {2, 2, 1, 80, 70, 1, 3, 2, 1},  /* 5600 per plane: row bands */
      {1, 2, 1, 1, 9000, 1, 5, 3, 2}, /* 9000 in one row: row pieces */
      {3, 2, 5, 30, 40, 2, 3, 2, 1},  /* 6000: boxes of 3 slices */
      {4, 3, 1, 70, 70, 1, 1, 1, 0},  /* adaptive 70x70 -> 9x7 */
      {2, 1, 1, 2, 5000, 1, 2, 1, 0}, /* overlapping rows across pieces */
  };
  static const op_kind ops[] = {OP_MAX_BWD_X,  OP_MAX_BWD_I32, OP_MAX_BWD_I64,
                                OP_MAX_BWD_U8, OP_AVG_BWD,     OP_LP_BWD};
  const simdpool_dtype t = _i % 2 ? SIMDPOOL_F16 : SIMDPOOL_BF16;
  const simdpool_layout layout = (simdpool_layout)(_i / 2 % 2);
  ck_assert_int_eq(simdpool_threadpool_create(2, &g_pool), SIMDPOOL_OK);
  size_t runs = 0, failures = 0;
  for (size_t b = 0; b < sizeof bigs / sizeof bigs[0]; b++)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      const big *g = &bigs[b];
      const op_kind op = ops[o];
      if (g->rank == 4 && (op == OP_MAX_BWD_U8 || op == OP_LP_BWD))
        continue;
      config cf;
      memset(&cf, 0, sizeof cf);
      cf.op = op;
      cf.isa = SIMDPOOL_ISA_AUTO;
      cf.iter_seed = splitmix64(g_seed ^ (uint64_t)(_i * 100 + b * 10 + o));
      rng r;
      rng_seed(&r, cf.iter_seed);
      simdpool_desc *d = &cf.d;
      const simdpool_method m = op_method(op);
      if (g->rank == 4)
        simdpool_desc_init_adaptive(d, m, layout, 1, g->c, 1, g->h, g->w, 1, 9,
                                    7);
      else
        simdpool_desc_init_3d(d, m, layout, 1, g->c, g->d, g->h, g->w, g->kd,
                              g->h == 1 ? 1 : g->k, g->k);
      if (g->rank != 4) {
        d->stride_w = g->s;
        d->pad_left = d->pad_right = g->pad;
        if (g->h > 1) {
          d->stride_h = g->s;
          d->pad_top = d->pad_bottom = g->pad < g->k ? g->pad : 0;
        }
        if (g->d > 1)
          d->stride_d = 1;
      }
      d->index_type = op_index_type(op);
      d->p = 2.0f;
      d->count_include_pad = (int)(b % 2);
      d->dtype = t;
      model_resolve(d, &cf.ms);
      ck_assert_msg(model_status(cf.ms.reasons) == SIMDPOOL_OK,
                    "large shape %zu refused by the model: %s", b,
                    model_reason_string(cf.ms.reasons));
      failures += (size_t)dtype_run(&r, &cf);
      runs++;
    }
  simdpool_threadpool_destroy(g_pool);
  g_pool = NULL;
  printf("[model] dtype_large %s %s: %zu backward calls bit-exact\n",
         dtype_name(t), layout_name(layout), runs - failures);
  ck_assert_msg(failures == 0, "%zu mismatches (details above)", failures);
}
END_TEST

/* Loop index: (dtype * OP_COUNT + op) * 2 + layout; the ranks take turns. */
START_TEST(test_dtype_sweep) {
  const simdpool_dtype t = g_dtypes[_i / 2 / OP_COUNT];
  const op_kind op = (op_kind)(_i / 2 % OP_COUNT);
  const simdpool_layout layout = (simdpool_layout)(_i % 2);
  ck_assert_int_eq(simdpool_threadpool_create(2, &g_pool), SIMDPOOL_OK);
  size_t accepted = 0, rejected = 0, failures = 0, k;
  size_t per_rank[RANK_COUNT] = {0};
  /* Until SIMD kernels take these dtypes, one kernel per op computes them
   * (the scalar reference, the same C on every target): at a reduced scale
   * (emulated CPUs, sanitizers; CI's time budget) a quarter of the
   * configurations; natively g_target (2000) each. */
  const size_t target = g_scale < 1.0 ? (g_target + 3) / 4 : g_target;
  const size_t max_attempts = target * 8 + 2000;
  simdpool_isa isas[NUM_ISAS];
  size_t n_isas = 0;
  for (size_t i = 0; i < NUM_ISAS; i++)
    if (g_isas[i] == SIMDPOOL_ISA_AUTO ? g_auto_status == SIMDPOOL_OK
                                       : simdpool_isa_supported(g_isas[i]))
      isas[n_isas++] = g_isas[i];
  for (k = 0; accepted < target && k < max_attempts && failures < 3; k++) {
    const rank_kind rk = (rank_kind)(k % RANK_COUNT);
    if (!rank_has_op(rk, op))
      continue;
    config cf;
    rng r;
    memset(&cf, 0, sizeof cf);
    cf.op = op;
    cf.rank = rk;
    cf.iteration = k;
    cf.isa = SIMDPOOL_ISA_AUTO;
    cf.iter_seed =
        splitmix64(g_seed ^ splitmix64(0xd7e0000ull | (uint64_t)_i)) ^
        splitmix64((uint64_t)k * 0x100000001b3ull);
    rng_seed(&r, cf.iter_seed);
    draw_rank_desc(&r, op, layout, rk, &cf);
    cf.d.dtype = t;
    cf.d.isa = SIMDPOOL_ISA_AUTO;
    /* Every ISA computes every dtype: AUTO and each one this CPU runs
     * take turns (ranks turn fastest). */
    if (n_isas > 1)
      cf.d.isa = cf.isa = isas[k / RANK_COUNT % n_isas];
    if (t == SIMDPOOL_S8 || t == SIMDPOOL_U8) {
      cf.d.clamp = 0;
      if (cf.d.method == SIMDPOOL_AVG)
        draw_quant_valid(&r, &cf.d);
    }
    model_resolve(&cf.d, &cf.ms);
    if (model_status(cf.ms.reasons) != SIMDPOOL_OK) {
      /* The library must refuse it too, as the model says. */
      simdpool_plan *plan = NULL;
      const simdpool_status st = simdpool_plan_create(&cf.d, &plan);
      simdpool_plan_destroy(plan);
      if (!model_status_acceptable(cf.ms.reasons, st)) {
        char desc[1024];
        describe(&cf, desc, sizeof desc);
        printf("FAIL dtype %s: plan_create %s, the model says %s; seed %" PRIu64
               "\n",
               desc, simdpool_status_string(st),
               model_reason_string(cf.ms.reasons), g_seed);
        failures++;
      }
      rejected++;
      continue;
    }
    failures += (size_t)dtype_run(&r, &cf);
    accepted++;
    per_rank[rk]++;
  }
  simdpool_threadpool_destroy(g_pool);
  g_pool = NULL;
  printf("[model] dtype %s %s %s: %zu configurations bit-exact (2d %zu, 1d "
         "%zu, 3d %zu, adaptive %zu/%zu/%zu), %zu rejected as the model "
         "says\n",
         dtype_name(t), g_op_names[op], layout_name(layout), accepted,
         per_rank[RANK_2D], per_rank[RANK_1D], per_rank[RANK_3D],
         per_rank[RANK_ADAPTIVE_1D], per_rank[RANK_ADAPTIVE_2D],
         per_rank[RANK_ADAPTIVE_3D], rejected);
  fflush(stdout);
  ck_assert_msg(
      failures == 0,
      "dtype %s %s %s: %zu mismatches (details above; seed %" PRIu64 ")",
      dtype_name(t), g_op_names[op], layout_name(layout), failures, g_seed);
  ck_assert_msg(accepted >= target,
                "only %zu of %zu configurations accepted in %zu attempts",
                accepted, target, k);
}
END_TEST

START_TEST(test_shape_rules) {
  size_t k, target = g_target * 10;
  size_t accepted = 0, rejected = 0, ambiguous = 0, huge = 0, failures = 0;
  size_t quantized = 0, bad_quant = 0;
  for (k = 0; k < target; k++) {
    config cf;
    rng r;
    simdpool_desc *d = &cf.d;
    memset(&cf, 0, sizeof cf);
    cf.op = OP_MAX_FWD_NONE;
    cf.plan_only = 1;
    cf.isa = SIMDPOOL_ISA_SCALAR;
    cf.iteration = k;
    cf.iter_seed = splitmix64(g_seed ^ 0x5ea9e5ull) ^ splitmix64(k);
    rng_seed(&r, cf.iter_seed);
    simdpool_desc_init(d, (simdpool_method)rng_below(&r, 3),
                       (simdpool_layout)rng_below(&r, 2), 1, 1, 1, 1, 1, 1);
    d->isa = SIMDPOOL_ISA_SCALAR;
    d->n = rng_range(&r, 1, 3);
    d->c = rng_range(&r, 1, 3);
    d->h = rng_range(&r, 1, 40);
    d->w = rng_range(&r, 1, 40);
    d->kernel_h = rng_range(&r, 1, 12);
    d->kernel_w = rng_range(&r, 1, 12);
    d->stride_h = rng_range(&r, 1, 6);
    d->stride_w = rng_range(&r, 1, 6);
    d->dilation_h = rng_range(&r, 1, 5);
    d->dilation_w = rng_range(&r, 1, 5);
    d->padding = (simdpool_padding)rng_below(&r, 4);
    d->ceil_mode = d->padding == SIMDPOOL_PAD_EXPLICIT ? (int)rng_below(&r, 2)
                                                       : rng_chance(&r, 0.05);
    if (d->padding == SIMDPOOL_PAD_EXPLICIT || rng_chance(&r, 0.05)) {
      size_t eh = extent(d->kernel_h, d->dilation_h);
      size_t ew = extent(d->kernel_w, d->dilation_w);
      d->pad_top = rng_below(&r, eh + 1);
      d->pad_bottom = rng_below(&r, eh + 1);
      d->pad_left = rng_below(&r, ew + 1);
      d->pad_right = rng_below(&r, ew + 1);
    }
    d->count_include_pad = (int)rng_below(&r, 2);
    d->p = d->method == SIMDPOOL_LP ? 1.0f + (float)rng_below(&r, 4) : 2.0f;
    d->index_type = d->method == SIMDPOOL_MAX
                        ? (simdpool_index_type)rng_below(&r, 4)
                        : SIMDPOOL_INDEX_NONE;
    switch (rng_below(&r, 40)) {
    case 0: /* x bytes above PTRDIFF_MAX / beyond size_t */
      d->n = (size_t)1 << (sizeof(size_t) * 8 - 3 - rng_below(&r, 3));
      huge++;
      break;
    case 1: /* n*c overflow */
      d->n = SIZE_MAX / 2 + rng_below(&r, 5);
      d->c = rng_range(&r, 2, 5);
      huge++;
      break;
    case 2: /* large but fitting tensors */
      d->n = (size_t)1 << 20;
      d->c = (size_t)1 << 10;
      huge++;
      break;
    case 3: /* I32 too narrow: planes of more than INT32_MAX elements */
      d->method = SIMDPOOL_MAX;
      d->index_type = rng_chance(&r, 0.5)
                          ? SIMDPOOL_INDEX_I32
                          : (simdpool_index_type)rng_below(&r, 4);
      d->h = 65536;
      d->w = rng_range(&r, 32767, 32769);
      d->n = d->c = 1;
      huge++;
      break;
    case 4: /* U8 too narrow */
      d->method = SIMDPOOL_MAX;
      d->index_type = SIMDPOOL_INDEX_U8;
      d->kernel_h = rng_range(&r, 15, 18);
      d->kernel_w = rng_range(&r, 15, 18);
      d->dilation_h = d->dilation_w = 1;
      d->h = rng_range(&r, 14, 40);
      d->w = rng_range(&r, 14, 40);
      break;
    case 5: /* out of range enums */
      switch (rng_below(&r, 5)) {
      case 0:
        d->method = (simdpool_method)3;
        break;
      case 1:
        d->layout = (simdpool_layout)2;
        break;
      case 2:
        d->padding = (simdpool_padding)4;
        break;
      case 3:
        d->index_type = (simdpool_index_type)4;
        break;
      default:
        d->isa = (simdpool_isa)6;
        break;
      }
      break;
    case 6: /* element types, one out of range */
    case 7:
      d->dtype = (simdpool_dtype)rng_below(&r, 6);
      d->clamp = rng_chance(&r, 0.2);
      break;
    case 8: /* quantized AVG, every field near its limits */
    case 9:
    case 10:
    case 11:
    case 12:
    case 13:
    case 14:
    case 15:
      draw_quant(d, &r);
      quantized++;
      break;
    default:
      break;
    }
    cf.isa = d->isa; /* run_on_isa copies cf.isa into the desc */
    model_resolve(d, &cf.ms);
    if (run_on_isa_guarded(&cf, NULL) && ++failures >= g_max_failures)
      break;
    if (cf.ms.reasons & MODEL_BAD_QUANT)
      bad_quant++;
    if (model_status(cf.ms.reasons) == SIMDPOOL_OK) {
      accepted++;
    } else {
      rejected++;
      if ((cf.ms.reasons & MODEL_INVALID_MASK) &&
          (cf.ms.reasons & MODEL_UNSUP_MASK))
        ambiguous++;
    }
  }
  printf("[model] shape_rules (plan creation only): accepted %zu, rejected "
         "%zu (%zu with both invalid and unsupported reasons), extreme sizes "
         "%zu, quantized AVG %zu (%zu with a bad quantization)\n",
         accepted, rejected, ambiguous, huge, quantized, bad_quant);
  fflush(stdout);
  ck_assert_msg(failures == 0,
                "shape_rules: %zu mismatches (details above; seed %" PRIu64 ")",
                failures, g_seed);
}
END_TEST

/* The same for descriptors with a depth (3D), 1D descriptors and adaptive
 * windows: status against the model, and the output dims. */
START_TEST(test_shape_rules_nd) {
  size_t k, target = g_target * 10;
  size_t accepted = 0, rejected = 0, ambiguous = 0, huge = 0, failures = 0;
  size_t kinds[3] = {0, 0, 0}, kinds_accepted[3] = {0, 0, 0};
  for (k = 0; k < target; k++) {
    config cf;
    rng r;
    simdpool_desc *d = &cf.d;
    simdpool_method m;
    simdpool_layout l;
    size_t kind, n, c;
    memset(&cf, 0, sizeof cf);
    cf.op = OP_MAX_FWD_NONE;
    cf.plan_only = 1;
    cf.isa = SIMDPOOL_ISA_SCALAR;
    cf.iteration = k;
    cf.iter_seed = splitmix64(g_seed ^ 0x5ea9e5d3ull) ^ splitmix64(k);
    rng_seed(&r, cf.iter_seed);
    m = (simdpool_method)rng_below(&r, 3);
    l = (simdpool_layout)rng_below(&r, 2);
    n = rng_range(&r, 1, 3);
    c = rng_range(&r, 1, 3);
    kind = rng_below(&r, 10);
    kind = kind < 2 ? 0 : kind < 6 ? 1 : 2; /* 1D, 3D, adaptive */
    kinds[kind]++;
    if (kind == 0) {
      cf.rank = RANK_1D;
      simdpool_desc_init_1d(d, m, l, n, c, rng_range(&r, 1, 60),
                            rng_range(&r, 1, 12));
      d->stride_w = rng_range(&r, 1, 6);
      d->dilation_w = rng_range(&r, 1, 5);
    } else if (kind == 1) {
      cf.rank = RANK_3D;
      simdpool_desc_init_3d(d, m, l, n, c, rng_range(&r, 1, 24),
                            rng_range(&r, 1, 24), rng_range(&r, 1, 24),
                            rng_range(&r, 1, 8), rng_range(&r, 1, 8),
                            rng_range(&r, 1, 8));
      d->stride_d = rng_range(&r, 1, 5);
      d->stride_h = rng_range(&r, 1, 5);
      d->stride_w = rng_range(&r, 1, 5);
      d->dilation_d = rng_range(&r, 1, 4);
      d->dilation_h = rng_range(&r, 1, 4);
      d->dilation_w = rng_range(&r, 1, 4);
    } else {
      size_t dims = rng_range(&r, 1, 3);
      size_t dd = dims == 3 ? rng_range(&r, 1, 30) : 1;
      size_t h = dims >= 2 ? rng_range(&r, 1, 30) : 1;
      size_t w = rng_range(&r, 1, 30);
      cf.rank = dims == 1   ? RANK_ADAPTIVE_1D
                : dims == 2 ? RANK_ADAPTIVE_2D
                            : RANK_ADAPTIVE_3D;
      simdpool_desc_init_adaptive(
          d, m, l, n, c, dd, h, w, dims == 3 ? rng_range(&r, 1, 40) : 1,
          dims >= 2 ? rng_range(&r, 1, 40) : 1, rng_range(&r, 1, 40));
    }
    d->isa = SIMDPOOL_ISA_SCALAR;
    if (kind != 2) {
      d->padding = (simdpool_padding)rng_below(&r, 4);
      d->ceil_mode = d->padding == SIMDPOOL_PAD_EXPLICIT ? (int)rng_below(&r, 2)
                                                         : rng_chance(&r, 0.05);
      if (d->padding == SIMDPOOL_PAD_EXPLICIT || rng_chance(&r, 0.05)) {
        size_t ed = extent(d->kernel_d, d->dilation_d);
        size_t eh = extent(d->kernel_h, d->dilation_h);
        size_t ew = extent(d->kernel_w, d->dilation_w);
        d->pad_front = rng_below(&r, ed + 1);
        d->pad_back = rng_below(&r, ed + 1);
        d->pad_top = rng_below(&r, eh + 1);
        d->pad_bottom = rng_below(&r, eh + 1);
        d->pad_left = rng_below(&r, ew + 1);
        d->pad_right = rng_below(&r, ew + 1);
      }
      if (rng_chance(&r, 0.03))
        d->adaptive = (int)rng_range(&r, 1, 2);
      if (rng_chance(&r, 0.03))
        d->out_h = rng_range(&r, 1, 4);
    } else {
      /* Each rule of adaptive windows broken now and then. */
      if (rng_chance(&r, 0.03))
        d->adaptive = rng_chance(&r, 0.3) ? 0 : rng_chance(&r, 0.5) ? 2 : -1;
      if (rng_chance(&r, 0.03))
        d->out_d = 0;
      if (rng_chance(&r, 0.03))
        d->out_w = 0;
      if (rng_chance(&r, 0.03))
        d->kernel_d = rng_range(&r, 2, 3);
      if (rng_chance(&r, 0.03))
        d->kernel_h = rng_range(&r, 2, 3);
      if (rng_chance(&r, 0.03))
        d->stride_w = rng_range(&r, 2, 3);
      if (rng_chance(&r, 0.03))
        d->dilation_d = rng_range(&r, 2, 3);
      if (rng_chance(&r, 0.03))
        d->padding = (simdpool_padding)rng_range(&r, 1, 3);
      if (rng_chance(&r, 0.03))
        d->pad_back = 1;
      if (rng_chance(&r, 0.03))
        d->pad_left = 1;
      if (rng_chance(&r, 0.03))
        d->ceil_mode = 1;
    }
    d->count_include_pad = (int)rng_below(&r, 2);
    d->p = d->method == SIMDPOOL_LP ? 1.0f + (float)rng_below(&r, 4) : 2.0f;
    d->index_type = d->method == SIMDPOOL_MAX || rng_chance(&r, 0.05)
                        ? (simdpool_index_type)rng_below(&r, 4)
                        : SIMDPOOL_INDEX_NONE;
    switch (rng_below(&r, 40)) {
    case 0: /* x bytes above PTRDIFF_MAX / beyond size_t */
      d->n = (size_t)1 << (sizeof(size_t) * 8 - 3 - rng_below(&r, 3));
      huge++;
      break;
    case 1: /* n*c overflow */
      d->n = SIZE_MAX / 2 + rng_below(&r, 5);
      d->c = rng_range(&r, 2, 5);
      huge++;
      break;
    case 2: /* large tensors, fitting or not */
      d->n = (size_t)1 << 20;
      d->c = (size_t)1 << rng_range(&r, 10, 24);
      huge++;
      break;
    case 3: /* I32 too narrow: planes of about INT32_MAX elements */
      d->method = SIMDPOOL_MAX;
      d->index_type = rng_chance(&r, 0.5)
                          ? SIMDPOOL_INDEX_I32
                          : (simdpool_index_type)rng_below(&r, 4);
      d->d = 2;
      d->h = 32768;
      d->w = rng_range(&r, 32767, 32769);
      d->n = d->c = 1;
      huge++;
      break;
    case 4: /* U8 too narrow: windows of about 256 taps */
      d->method = SIMDPOOL_MAX;
      d->index_type = SIMDPOOL_INDEX_U8;
      if (kind != 2) {
        d->kernel_d = rng_range(&r, 2, 4);
        d->kernel_h = rng_range(&r, 7, 10);
        d->kernel_w = rng_range(&r, 7, 10);
        d->dilation_d = d->dilation_h = d->dilation_w = 1;
        d->d = rng_range(&r, 4, 10);
        d->h = rng_range(&r, 10, 20);
        d->w = rng_range(&r, 10, 20);
      }
      break;
    case 5: /* out of range enums */
      switch (rng_below(&r, 5)) {
      case 0:
        d->method = (simdpool_method)3;
        break;
      case 1:
        d->layout = (simdpool_layout)2;
        break;
      case 2:
        d->padding = (simdpool_padding)4;
        break;
      case 3:
        d->index_type = (simdpool_index_type)4;
        break;
      default:
        d->isa = (simdpool_isa)6;
        break;
      }
      break;
    case 6: /* a zero depth field */
      switch (rng_below(&r, 4)) {
      case 0:
        d->d = 0;
        break;
      case 1:
        d->kernel_d = 0;
        break;
      case 2:
        d->stride_d = 0;
        break;
      default:
        d->dilation_d = 0;
        break;
      }
      break;
    case 7: /* many adaptive outputs */
      if (kind == 2) {
        d->out_w = rng_range(&r, 1000, 70000);
        d->n = d->c = 1;
        huge++;
      }
      break;
    default:
      break;
    }
    cf.isa = d->isa; /* run_on_isa copies cf.isa into the desc */
    model_resolve(d, &cf.ms);
    if (run_on_isa_guarded(&cf, NULL) && ++failures >= g_max_failures)
      break;
    if (model_status(cf.ms.reasons) == SIMDPOOL_OK) {
      accepted++;
      kinds_accepted[kind]++;
    } else {
      rejected++;
      if ((cf.ms.reasons & MODEL_INVALID_MASK) &&
          (cf.ms.reasons & MODEL_UNSUP_MASK))
        ambiguous++;
    }
  }
  printf("[model] shape_rules_nd (plan creation only): accepted %zu, "
         "rejected %zu (%zu with both invalid and unsupported reasons), "
         "extreme sizes %zu; 1D %zu (%zu accepted), 3D %zu (%zu accepted), "
         "adaptive %zu (%zu accepted)\n",
         accepted, rejected, ambiguous, huge, kinds[0], kinds_accepted[0],
         kinds[1], kinds_accepted[1], kinds[2], kinds_accepted[2]);
  fflush(stdout);
  ck_assert_msg(failures == 0,
                "shape_rules_nd: %zu mismatches (details above; seed %" PRIu64
                ")",
                failures, g_seed);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* main                                                                     */
/* ------------------------------------------------------------------------ */

static simdpool_isa isa_from_name(const char *s, int *known) {
  size_t i;
  *known = 1;
  if (s[0] == '\0' || strcmp(s, "auto") == 0)
    return SIMDPOOL_ISA_AUTO;
  for (i = 1; i < NUM_ISAS; i++)
    if (strcmp(s, simdpool_isa_name(g_isas[i])) == 0)
      return g_isas[i];
  *known = 0;
  return SIMDPOOL_ISA_AUTO;
}

static void setup_auto(void) {
  const char *env = getenv("SIMDPOOL_ISA");
  size_t i;
  g_auto_isa = SIMDPOOL_ISA_SCALAR;
  for (i = 0; i < sizeof g_best_first / sizeof g_best_first[0]; i++)
    if (simdpool_isa_supported(g_best_first[i])) {
      g_auto_isa = g_best_first[i];
      break;
    }
  if (env != NULL) {
    int known;
    simdpool_isa named = isa_from_name(env, &known);
    if (!known) {
      g_auto_status = SIMDPOOL_INVALID_ARGUMENT;
      g_auto_note = "SIMDPOOL_ISA names no ISA (plan creation must fail)";
    } else if (named != SIMDPOOL_ISA_AUTO) {
      g_auto_forced = 1;
      if (simdpool_isa_supported(named)) {
        g_auto_isa = named;
      } else {
        g_auto_status = SIMDPOOL_UNSUPPORTED;
        g_auto_note = "SIMDPOOL_ISA names an ISA this build/CPU lacks";
      }
    }
  }
}

int main(void) {
  const char *seed_env = getenv("SIMDPOOL_TEST_SEED");
  const char *scale_env = getenv("SIMDPOOL_TEST_SCALE");
  Suite *s;
  SRunner *sr;
  int op, layout, rk, i, failed;

  if (seed_env != NULL && seed_env[0] != '\0') {
    g_seed = (uint64_t)strtoull(seed_env, NULL, 0);
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    g_seed =
        splitmix64((uint64_t)ts.tv_sec * 1000000007ull + (uint64_t)ts.tv_nsec) %
        1000000000000ull;
  }
  if (scale_env != NULL && scale_env[0] != '\0') {
    char *end;
    double v = strtod(scale_env, &end);
    if (end != scale_env && v > 0.0 && v < 1e6)
      g_scale = v;
  }
  {
    const char *mf = getenv("SIMDPOOL_TEST_MAX_FAILURES");
    if (mf != NULL && atoi(mf) > 0)
      g_max_failures = (size_t)atoi(mf);
  }
  g_target = (size_t)ceil(2000.0 * g_scale);
  if (g_target < 1)
    g_target = 1;
  setup_auto();

  printf("test_model: seed %" PRIu64 " (rerun with SIMDPOOL_TEST_SEED=%" PRIu64
         "), scale %g: %zu accepted configurations per op/layout/ISA\n",
         g_seed, g_seed, g_scale, g_target);
  printf("test_model: simdpool %s\n", simdpool_version());
  for (i = 0; i < NUM_ISAS; i++) {
    simdpool_isa isa = g_isas[i];
    if (!simdpool_isa_supported(isa))
      printf("  isa %-6s skipped: not supported by this build/CPU\n",
             simdpool_isa_name(isa));
    else if (isa == SIMDPOOL_ISA_AUTO && g_auto_status != SIMDPOOL_OK)
      printf("  isa %-6s skipped: %s\n", simdpool_isa_name(isa), g_auto_note);
    else if (isa == SIMDPOOL_ISA_AUTO)
      printf("  isa %-6s runs (expects %s)\n", simdpool_isa_name(isa),
             simdpool_isa_name(g_auto_isa));
    else
      printf("  isa %-6s runs\n", simdpool_isa_name(isa));
  }
  fflush(stdout);

  s = suite_create("model");
  for (rk = 0; rk < RANK_COUNT; rk++)
    for (op = 0; op < OP_COUNT; op++)
      for (layout = 0; layout < 2; layout++) {
        /* Check keeps the pointer: the names must outlive the runner. */
        static char names[RANK_COUNT * OP_COUNT * 2][48];
        const int at = (rk * OP_COUNT + op) * 2 + layout;
        char *name = names[at];
        TCase *tc;
        if (!rank_has_op((rank_kind)rk, (op_kind)op))
          continue;
        if (rk == RANK_2D) /* the original names */
          snprintf(name, sizeof names[0], "%s_%s", g_op_names[op],
                   layout_name((simdpool_layout)layout));
        else
          snprintf(name, sizeof names[0], "%s_%s_%s", g_op_names[op],
                   layout_name((simdpool_layout)layout), g_rank_names[rk]);
        tc = tcase_create(name);
        tcase_set_timeout(tc, 300);
        tcase_add_loop_test(tc, test_sweep, at, at + 1);
        suite_add_tcase(s, tc);
      }
  for (layout = 0; layout < 2; layout++) {
    static char names[2][32];
    TCase *tc;
    snprintf(names[layout], sizeof names[0], "unpool_large_%s",
             layout_name((simdpool_layout)layout));
    tc = tcase_create(names[layout]);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_unpool_large, layout, layout + 1);
    suite_add_tcase(s, tc);
  }
  for (int t = 0; t < NUM_DTYPES; t++)
    for (op = 0; op < OP_COUNT; op++)
      for (layout = 0; layout < 2; layout++) {
        static char names[NUM_DTYPES * OP_COUNT * 2][48];
        const int at = (t * OP_COUNT + op) * 2 + layout;
        if (!dtype_has_op(g_dtypes[t], (op_kind)op))
          continue;
        snprintf(names[at], sizeof names[0], "dtype_%s_%s_%s",
                 dtype_name(g_dtypes[t]), g_op_names[op],
                 layout_name((simdpool_layout)layout));
        TCase *tc = tcase_create(names[at]);
        tcase_set_timeout(tc, 300);
        tcase_add_loop_test(tc, test_dtype_sweep, at, at + 1);
        suite_add_tcase(s, tc);
      }
  {
    TCase *tc = tcase_create("dtype_large");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_dtype_large, 0, 4);
    suite_add_tcase(s, tc);
  }
  {
    TCase *tc = tcase_create("dtype_by_hand");
    tcase_add_test(tc, test_dtype_by_hand);
    suite_add_tcase(s, tc);
  }
  {
    TCase *tc = tcase_create("shape_rules");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_shape_rules);
    suite_add_tcase(s, tc);
  }
  {
    TCase *tc = tcase_create("shape_rules_nd");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_shape_rules_nd);
    suite_add_tcase(s, tc);
  }

  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  printf("test_model: seed %" PRIu64 ", %s\n", g_seed,
         failed ? "FAILED" : "all passed");
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
