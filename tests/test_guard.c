/* SPDX-License-Identifier: MIT */
/* test_guard.c — guard-page tests: every registry kernel of every ISA this CPU
 * runs, and the public entry points of every supported ISA, on inputs and
 * outputs placed flush against a PROT_NONE page (tests/guard.h), the page
 * after the buffer and, in a second pass, the page before it. Shapes are
 * chosen so that vector tails end exactly at the page boundary (widths and
 * channel counts around every vector length, odd sizes, padding on every
 * side, ceil mode, dilation, every padding mode) plus seeded random ones.
 * An over-read or over-write is a SIGSEGV, which Check reports as a failed
 * test; a signal handler first names the kernel, the geometry and the buffer
 * whose guard was hit. Every result is compared bit for bit with the scalar
 * reference. */
#define _POSIX_C_SOURCE 200809L
#include "check_quiet.h"
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "internal.h"

#include "test_random.h"

/* ------------------------------------------------------------ names */

static const char *const op_names[SP_OP_COUNT] = {"fwd", "bwd", "bwd_idx",
                                                  "unpool", "unpool_bwd"};
static const char *const method_names[] = {"max", "avg", "lp"};
static const char *const index_names[] = {"none", "i32", "i64", "u8"};
static const char *layout_name(simdpool_layout l) {
  return l == SIMDPOOL_NCHW ? "nchw" : "nhwc";
}

/* ------------------------------------------------------------ buffers */

/* The tensors of one call, each in its own guarded region, per guard side. */
enum { B_X, B_Y, B_IDX, B_DY, B_DX, B_COUNT };
static const char *const buf_names[B_COUNT] = {"x", "y", "indices", "dy", "dx"};
static guard_buf gbuf[2][B_COUNT];

/* What is running, for the crash report. */
static struct {
  const char *what; /* kernel or entry point */
  const char *isa;
  char geom[400];
  int side; /* guard_side, -1 outside a guarded call */
} crash_ctx = {"", "", "", -1};

/* ------------------------------------------------------------ crash report
 * Async-signal-safe: fixed buffer, write(2), no stdio. */

static size_t put_str(char *dst, size_t at, size_t cap, const char *s) {
  while (*s && at + 1 < cap)
    dst[at++] = *s++;
  return at;
}

static size_t put_uint(char *dst, size_t at, size_t cap, uintmax_t v,
                       unsigned base) {
  char tmp[32];
  size_t n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v);
  while (n && at + 1 < cap)
    dst[at++] = tmp[--n];
  return at;
}

static void on_fault(int sig, siginfo_t *si, void *uctx) {
  (void)uctx;
  char m[1024];
  size_t at = 0;
  const size_t cap = sizeof m;
  at = put_str(m, at, cap, "\nguard: FAULT (signal ");
  at = put_uint(m, at, cap, (uintmax_t)sig, 10);
  at = put_str(m, at, cap, ") at 0x");
  at = put_uint(m, at, cap, (uintmax_t)(uintptr_t)si->si_addr, 16);
  int found = 0;
  for (int s = 0; s < 2 && !found; s++) {
    for (int b = 0; b < B_COUNT && !found; b++) {
      const guard_buf *g = &gbuf[s][b];
      if (!guard_hit(g, si->si_addr))
        continue;
      found = 1;
      const uintptr_t a = (uintptr_t)si->si_addr;
      const uintptr_t lo = (uintptr_t)g->guard;
      at = put_str(m, at, cap, ": ");
      if (s == GUARD_AFTER) {
        at = put_uint(m, at, cap, (uintmax_t)(a - lo), 10);
        at = put_str(m, at, cap, " byte(s) past the end of ");
      } else {
        at = put_uint(m, at, cap, (uintmax_t)(lo + guard_page_size() - a), 10);
        at = put_str(m, at, cap, " byte(s) before the start of ");
      }
      at = put_str(m, at, cap, buf_names[b]);
      at = put_str(m, at, cap, " (");
      at = put_uint(m, at, cap, (uintmax_t)g->bytes, 10);
      at = put_str(m, at, cap, " bytes, guard page ");
      at = put_str(m, at, cap, s == GUARD_AFTER ? "after" : "before");
      at = put_str(m, at, cap, " it)");
    }
  }
  if (!found)
    at = put_str(m, at, cap, ": not in any guard page");
  at = put_str(m, at, cap, "\nguard: while running ");
  at = put_str(m, at, cap, crash_ctx.what);
  at = put_str(m, at, cap, " [");
  at = put_str(m, at, cap, crash_ctx.isa);
  at = put_str(m, at, cap, "] on ");
  at = put_str(m, at, cap, crash_ctx.geom);
  at = put_str(m, at, cap, "\n");
  ssize_t ignored = write(STDERR_FILENO, m, at);
  (void)ignored;
  /* SA_RESETHAND restored the default action: returning re-runs the
   * faulting access, which now kills the process and Check reports it. */
}

static void install_fault_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
}

/* Places count elements of elem bytes in buffer b of side s. */
static void *place(int s, int b, size_t count, size_t elem) {
  void *p = guard_place(&gbuf[s][b], count, elem);
  ck_assert_msg(p != NULL, "guard_place(%s, %zu x %zu) failed", buf_names[b],
                count, elem);
  return p;
}

static void check_slack(int s, const char *what) {
  for (int b = 0; b < B_COUNT; b++)
    ck_assert_msg(guard_slack_intact(&gbuf[s][b]),
                  "%s wrote next to %s on its accessible side (guard %s); "
                  "seed %" PRIu64 "; %s",
                  what, buf_names[b], s == GUARD_AFTER ? "after" : "before",
                  seed, crash_ctx.geom);
}

/* A growable scratch array (host memory for inputs and references). */
typedef struct scratch {
  void *p;
  size_t bytes;
} scratch;

static void *scratch_get(scratch *s, size_t bytes) {
  if (bytes > s->bytes) {
    free(s->p);
    s->p = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(s->p);
    s->bytes = bytes;
  }
  return s->p;
}

static scratch sx, sdy, sy, sidx, sdx, sdx2, sclamp;

/* ------------------------------------------------------------ shapes */

/* A window: kernel, stride, dilation, padding. `global` makes the window the
 * whole plane. */
typedef struct tmpl {
  size_t kh, kw, sh, sw, dh, dw;
  simdpool_padding pad;
  size_t pt, pl, pb, pr;
  int ceil, global;
} tmpl;

static const tmpl templates[] = {
    {1, 1, 1, 1, 1, 1, SIMDPOOL_PAD_EXPLICIT, 0, 0, 0, 0, 0, 0},
    {2, 2, 2, 2, 1, 1, SIMDPOOL_PAD_EXPLICIT, 0, 0, 0, 0, 0, 0},
    {2, 2, 2, 2, 1, 1, SIMDPOOL_PAD_EXPLICIT, 0, 0, 0, 0, 1, 0},
    {3, 3, 1, 1, 1, 1, SIMDPOOL_PAD_EXPLICIT, 1, 1, 1, 1, 0, 0},
    {3, 3, 2, 2, 1, 1, SIMDPOOL_PAD_EXPLICIT, 1, 1, 1, 1, 1, 0},
    {3, 3, 2, 2, 1, 1, SIMDPOOL_PAD_EXPLICIT, 1, 1, 0, 0, 0, 0},
    {2, 3, 1, 2, 2, 2, SIMDPOOL_PAD_EXPLICIT, 1, 2, 0, 1, 1, 0},
    {3, 2, 2, 3, 1, 1, SIMDPOOL_PAD_EXPLICIT, 0, 1, 2, 0, 1, 0},
    {3, 3, 2, 2, 1, 1, SIMDPOOL_PAD_SAME_UPPER, 0, 0, 0, 0, 0, 0},
    {4, 4, 3, 3, 1, 1, SIMDPOOL_PAD_SAME_LOWER, 0, 0, 0, 0, 0, 0},
    {3, 2, 2, 1, 1, 1, SIMDPOOL_PAD_VALID, 0, 0, 0, 0, 0, 0},
    {1, 4, 1, 3, 1, 2, SIMDPOOL_PAD_EXPLICIT, 0, 3, 0, 2, 1, 0},
    {5, 5, 1, 1, 1, 1, SIMDPOOL_PAD_EXPLICIT, 2, 2, 2, 2, 0, 0},
    {3, 3, 3, 3, 3, 3, SIMDPOOL_PAD_EXPLICIT, 2, 5, 6, 1, 1, 0},
    {1, 1, 1, 1, 1, 1, SIMDPOOL_PAD_EXPLICIT, 0, 0, 0, 0, 0, 1},
};
#define N_TEMPLATES (sizeof templates / sizeof templates[0])

/* The lane dimension (NCHW row width, NHWC channels, NCHW planes) sweeps
 * every count up to three AVX-512 vectors plus one, and values around the
 * larger vector multiples (two, four and eight vectors, the four-block
 * NHWC unroll). */
static const size_t sweep_extra[] = {55, 63, 64,  65,  66,  79, 95,
                                     96, 97, 127, 128, 129, 131};
#define SWEEP_DENSE 49

static size_t sweep_count(void) {
  return SWEEP_DENSE + sizeof sweep_extra / sizeof sweep_extra[0];
}
static size_t sweep_at(size_t i) {
  return i < SWEEP_DENSE ? i + 1 : sweep_extra[i - SWEEP_DENSE];
}

/* The other spatial extent: small sizes in rotation, so bottom and right
 * borders, overhangs and single-row planes all come up. */
static const size_t small_sizes[] = {1, 2, 3, 5, 4, 7};
#define N_SMALL (sizeof small_sizes / sizeof small_sizes[0])

typedef struct desc_list {
  simdpool_desc *d;
  size_t count, cap;
} desc_list;

static desc_list lists[2]; /* per layout */

static void list_push(desc_list *l, const simdpool_desc *d) {
  if (l->count == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 1024;
    l->d = realloc(l->d, l->cap * sizeof *l->d);
    if (!l->d) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
  }
  l->d[l->count++] = *d;
}

static void apply_template(simdpool_desc *d, const tmpl *t) {
  d->kernel_h = t->global ? d->h : t->kh;
  d->kernel_w = t->global ? d->w : t->kw;
  d->stride_h = t->global ? d->h : t->sh;
  d->stride_w = t->global ? d->w : t->sw;
  d->dilation_h = t->dh;
  d->dilation_w = t->dw;
  d->padding = t->pad;
  d->pad_top = t->pt;
  d->pad_left = t->pl;
  d->pad_bottom = t->pb;
  d->pad_right = t->pr;
  d->ceil_mode = t->ceil;
}

/* Adds template t on (n, c, h, w). When the shape is impossible (a window
 * larger than the padded input), retries with the free extents (h only, or
 * h and w) grown to the window's extent plus 0..2. */
static void add_shape(desc_list *l, simdpool_layout layout, const tmpl *t,
                      size_t n, size_t c, size_t h, size_t w, int w_is_free,
                      size_t j) {
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, layout, n, c, h, w, 1, 1);
  d.isa = SIMDPOOL_ISA_SCALAR;
  apply_template(&d, t);
  sp_geom g;
  if (sp_resolve_geom(&d, &g) != SIMDPOOL_OK) {
    const size_t eh = t->dh * (t->kh - 1) + 1, ew = t->dw * (t->kw - 1) + 1;
    if (d.h < eh + j % 3)
      d.h = eh + j % 3;
    if (w_is_free && d.w < ew + j % 3)
      d.w = ew + j % 3;
    apply_template(&d, t);
    if (sp_resolve_geom(&d, &g) != SIMDPOOL_OK)
      return;
  }
  list_push(l, &d);
}

/* The deterministic shapes of a layout. NCHW: the row width sweeps (lanes
 * over output columns) with one or two planes, then the plane count sweeps
 * on short rows (lanes over planes for global pooling, plane after plane
 * through the scratch for the others). NHWC: the channel count sweeps. */
static void build_lists(void) {
  size_t j = 0;
  for (size_t ti = 0; ti < N_TEMPLATES; ti++) {
    const tmpl *t = &templates[ti];
    for (size_t i = 0; i < sweep_count(); i++, j++) {
      const size_t v = sweep_at(i), n = 1 + (j % 7 == 6);
      const size_t small = small_sizes[j % N_SMALL];
      add_shape(&lists[SIMDPOOL_NCHW], SIMDPOOL_NCHW, t, n, 1 + (j % 5 == 4),
                small, v, 0, j);
      add_shape(&lists[SIMDPOOL_NCHW], SIMDPOOL_NCHW, t, n, v,
                small_sizes[(j + 3) % N_SMALL], small_sizes[(j + 1) % N_SMALL],
                1, j);
      add_shape(&lists[SIMDPOOL_NHWC], SIMDPOOL_NHWC, t, n, v, small,
                small_sizes[(j + 2) % N_SMALL], 1, j);
    }
  }
}

static void describe(char *s, size_t len, const sp_geom *g) {
  snprintf(s, len,
           "%s %s n=%zu c=%zu h=%zu w=%zu -> %zux%zu k=%zux%zu s=%zux%zu "
           "d=%zux%zu pads t%zu l%zu b%zu r%zu cip=%d p=%g idx=%s beyond_l2=%d",
           method_names[g->method], layout_name(g->layout), g->n, g->c, g->h,
           g->w, g->oh, g->ow, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw, g->pt,
           g->pl, g->pb, g->pr, g->count_include_pad, (double)g->p,
           index_names[g->index_type], g->beyond_l2);
}

/* Per-shape parameters that do not change the geometry, in rotation. p other
 * than 1 and 2 costs a SLEEF pow per tap and lane (slow under emulation) and
 * takes the same loads and stores as p = 1: one shape in six. */
static void vary(simdpool_desc *d, size_t j) {
  static const float ps[] = {2.0f, 1.0f, 2.0f, 1.0f, 2.0f, 1.0f,
                             2.0f, 1.0f, 2.0f, 1.0f, 3.0f, 0.5f};
  d->count_include_pad = (int)(j / 2 % 2);
  d->p = ps[j % 12];
}

/* Fills x and dy of geometry g; nasty values at a rate that varies. Other
 * dtypes than f32: random bytes (every bf16/f16 pattern, NaN payloads
 * included; every integer). */
static void fill_inputs(const sp_geom *g, float *x, float *dy, size_t j) {
  const size_t nx = g->n * g->c * sp_in_plane(g),
               ny = g->n * g->c * sp_out_plane(g);
  if (g->dtype != SIMDPOOL_F32) {
    const size_t es = sp_dtype_size(g->dtype);
    for (size_t i = 0; i < nx * es; i++)
      ((unsigned char *)x)[i] = (unsigned char)rnd();
    for (size_t i = 0; i < ny * es; i++)
      ((unsigned char *)dy)[i] = (unsigned char)rnd();
    return;
  }
  static const int rates[] = {0, 10, 30, 60};
  const int nasty = rates[j % 4];
  const int zeros = j % 7 == 3; /* mostly signed zeros: MAX ties */
  for (size_t i = 0; i < nx; i++) {
    float v = rnd_value(nasty);
    if (zeros && rnd() % 8)
      v = rnd() % 2 ? 0.0f : -0.0f;
    x[i] = v;
  }
  for (size_t i = 0; i < ny; i++)
    dy[i] = rnd_value(nasty / 3);
}

/* ------------------------------------------------------------ comparison */

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static void expect_same_floats(const char *what, const char *tensor,
                               const float *want, const float *got,
                               size_t count, int side) {
  if (memcmp(want, got, count * sizeof *want) == 0)
    return;
  for (size_t i = 0; i < count; i++)
    if (bits_of(want[i]) != bits_of(got[i]))
      ck_abort_msg(
          "%s [%s]: %s differs at element %zu: reference 0x%08" PRIx32
          " (%g), got 0x%08" PRIx32 " (%g); guard %s; seed %" PRIu64 "; %s",
          what, crash_ctx.isa, tensor, i, bits_of(want[i]), (double)want[i],
          bits_of(got[i]), (double)got[i],
          side == GUARD_AFTER ? "after" : "before", seed, crash_ctx.geom);
}

static void expect_same_bytes(const char *what, const char *tensor,
                              const void *want, const void *got, size_t bytes,
                              int side) {
  ck_assert_msg(memcmp(want, got, bytes) == 0,
                "%s [%s]: %s differ from the reference; guard %s; seed %" PRIu64
                "; %s",
                what, crash_ctx.isa, tensor,
                side == GUARD_AFTER ? "after" : "before", seed, crash_ctx.geom);
}

/* ------------------------------------------------------------ kernels */

/* The scalar GENERAL kernel of (method, layout, op) for index type it. */
static const sp_kernel_entry *reference_for(simdpool_method m,
                                            simdpool_layout l, sp_op op,
                                            simdpool_index_type it,
                                            simdpool_dtype t) {
  for (size_t i = 0; i < sp_registry_size; i++) {
    const sp_kernel_entry *r = &sp_registry[i];
    if (r->isa == SIMDPOOL_ISA_SCALAR && r->shape == SP_SHAPE_GENERAL &&
        r->method == m && r->layout == l && r->op == op &&
        (r->index_mask & SP_IDX_BIT(it)) && (r->dtype_mask & SP_DT_BIT(t)))
      return r;
  }
  return NULL;
}

/* Would dispatch hand geometry g to kernel e? Its shape class and index
 * types, and for SIMD ISAs sp_pick_kernel's int32-lane limits. */
static int kernel_accepts(const sp_kernel_entry *e, const sp_geom *g) {
  if (e->method != g->method || e->layout != g->layout)
    return 0;
  if (!(e->index_mask & SP_IDX_BIT(g->index_type)) ||
      !(e->dtype_mask & SP_DT_BIT(g->dtype)))
    return 0;
  if (e->isa != SIMDPOOL_ISA_SCALAR &&
      !(sp_in_plane(g) <= INT32_MAX && g->kh <= INT32_MAX / g->kw))
    return 0;
  return sp_shape_matches(e->shape, g);
}

/* Runs kernel e on geometry g with every tensor it touches guarded, on both
 * sides, and compares with the scalar reference. */
static void run_kernel_shape(const sp_kernel_entry *e, const sp_geom *g,
                             size_t j) {
  const simdpool_index_type it = g->index_type;
  const size_t isz = sp_index_size(it), es = sp_dtype_size(g->dtype);
  const size_t nx = g->n * g->c * sp_in_plane(g),
               ny = g->n * g->c * sp_out_plane(g);
  float *x = scratch_get(&sx, nx * es);
  float *dy = scratch_get(&sdy, ny * es);
  fill_inputs(g, x, dy, j);

  /* References on ordinary memory. */
  const sp_kernel_entry *ref =
      reference_for(g->method, g->layout, e->op, it, g->dtype);
  ck_assert_msg(ref != NULL, "no scalar reference for %s", e->name);
  /* Unpooling's backward writes an output-shaped tensor (from x, as dx),
   * unpooling an input-shaped one (from dy, as y), like backward. */
  const int to_y = e->op == SP_OP_FWD || e->op == SP_OP_UNPOOL_BWD;
  const int reads_idx = e->op == SP_OP_BWD_IDX || e->op == SP_OP_UNPOOL ||
                        e->op == SP_OP_UNPOOL_BWD;
  float *want = scratch_get(&sy, (to_y ? ny : nx) * es);
  void *want_idx = scratch_get(&sidx, isz ? ny * isz : 1);
  if (reads_idx) {
    /* Backward from indices and unpooling read the winners of the scalar
     * forward. */
    const sp_kernel_entry *rf =
        reference_for(SIMDPOOL_MAX, g->layout, SP_OP_FWD, it, g->dtype);
    ck_assert_ptr_nonnull(rf);
    float *ytmp = scratch_get(&sdx2, ny * es);
    const sp_io io = {.x = x, .y = ytmp, .indices = want_idx};
    rf->fn(g, &io);
  }
  const int reads_x = e->op == SP_OP_FWD || e->op == SP_OP_UNPOOL_BWD ||
                      (e->op == SP_OP_BWD && g->method != SIMDPOOL_AVG);
  sp_io rio = {.x = reads_x ? x : NULL};
  if (e->op == SP_OP_FWD) {
    rio.y = want;
    rio.indices = isz ? want_idx : NULL;
  } else if (to_y) {
    rio.y = want;
    rio.indices = want_idx;
  } else {
    rio.dy = dy;
    rio.dx = want;
    rio.indices = reads_idx ? want_idx : NULL;
  }
  ref->fn(g, &rio);

  for (int s = 0; s < 2; s++) {
    sp_io io = {};
    if (reads_x) {
      float *gx = place(s, B_X, nx, es);
      memcpy(gx, x, nx * es);
      io.x = gx;
    }
    if (to_y) {
      io.y = place(s, B_Y, ny, es);
      memset(io.y, 0xff, ny * es);
    } else {
      float *gdy = place(s, B_DY, ny, es);
      memcpy(gdy, dy, ny * es);
      io.dy = gdy;
      io.dx = place(s, B_DX, nx, es);
      memset(io.dx, 0xff, nx * es);
    }
    if (e->op == SP_OP_FWD && isz) {
      io.indices = place(s, B_IDX, ny, isz);
      memset(io.indices, 0xee, ny * isz);
    } else if (reads_idx) {
      io.indices = place(s, B_IDX, ny, isz);
      memcpy(io.indices, want_idx, ny * isz);
    }
    crash_ctx.side = s;
    e->fn(g, &io);
    crash_ctx.side = -1;
    check_slack(s, e->name);
    if (es != sizeof(float)) {
      expect_same_bytes(e->name, to_y ? "y" : "dx", want, to_y ? io.y : io.dx,
                        (to_y ? ny : nx) * es, s);
      if (e->op == SP_OP_FWD && isz)
        expect_same_bytes(e->name, "indices", want_idx, io.indices, ny * isz,
                          s);
    } else if (to_y) {
      expect_same_floats(e->name, "y", want, io.y, ny, s);
      if (e->op == SP_OP_FWD && isz)
        expect_same_bytes(e->name, "indices", want_idx, io.indices, ny * isz,
                          s);
    } else {
      expect_same_floats(e->name, "dx", want, io.dx, nx, s);
    }
  }
}

static double scale = 1.0;
/* With SIMDPOOL_TEST_SCALE below 1, every thin-th deterministic shape. */
static size_t thin = 1;
#define API_STRIDE 16 /* the public-API pass takes every 16th shape */
static int random_per_kernel = 40; /* times scale */

/* Resolves d for kernel e with index type it; 1 and *g when e accepts it. */
static int geometry_for(const sp_kernel_entry *e, simdpool_desc d,
                        simdpool_index_type it, simdpool_dtype t, size_t j,
                        sp_geom *g) {
  d.method = e->method;
  d.index_type = it;
  vary(&d, j);
  d.dtype = t;
  if (t == SIMDPOOL_S8 || t == SIMDPOOL_U8) {
    /* A quantization with zero points and an output range of their own
     * (the values are the sweep's business, here only the memory). */
    d.clamp = 0;
    d.quant.x_scale = 0.75f;
    d.quant.y_scale = 0.5f;
    d.quant.x_zero_point = t == SIMDPOOL_S8 ? -3 : 100;
    d.quant.y_zero_point = t == SIMDPOOL_S8 ? 5 : 90;
  }
  if (sp_resolve_geom(&d, g) != SIMDPOOL_OK)
    return 0;
  /* With beyond_l2, software prefetch runs past a tensor's end (harmless:
   * a prefetch never faults); half the shapes take it, whatever their
   * size. */
  g->beyond_l2 = (int)(j / 4 % 2);
  return kernel_accepts(e, g);
}

START_TEST(kernel_under_guard) {
  const sp_kernel_entry *e = &sp_registry[_i];
  if (!sp_cpu_runs(e->isa)) {
    printf("guard: %s [%s]: skipped, this CPU cannot run %s\n", e->name,
           simdpool_isa_name(e->isa), simdpool_isa_name(e->isa));
    fflush(stdout);
    return;
  }
  install_fault_handler();
  crash_ctx.what = e->name;
  crash_ctx.isa = simdpool_isa_name(e->isa);
  rng_state = seed ^ (0x6a09e667f3bcc908ull * (uint64_t)(_i + 1));
  simdpool_index_type types[4];
  const int ntypes = index_types_of(e, types);
  const desc_list *l = &lists[e->layout];
  size_t shapes = 0;
  size_t dtypes = 0;
  for (int t = SIMDPOOL_F32; t <= SIMDPOOL_U8; t++) {
    if (!(e->dtype_mask & SP_DT_BIT(t)))
      continue;
    dtypes++;
    for (int k = 0; k < ntypes; k++) {
      for (size_t j = (size_t)_i % thin; j < l->count; j += thin) {
        sp_geom g;
        if (!geometry_for(e, l->d[j], types[k], (simdpool_dtype)t, j, &g))
          continue;
        describe(crash_ctx.geom, sizeof crash_ctx.geom, &g);
        run_kernel_shape(e, &g, j);
        shapes++;
      }
      /* Random geometries, seeded: SIMDPOOL_TEST_SEED repeats them. */
      const int want = (int)(random_per_kernel * scale + 0.5);
      for (int got = 0, drawn = 0; got < want && drawn < 200 * want; drawn++) {
        simdpool_desc d;
        rnd_desc(&d, e, types[k]);
        sp_geom g;
        const size_t j = (size_t)rnd();
        if (!geometry_for(e, d, types[k], (simdpool_dtype)t, j, &g))
          continue;
        describe(crash_ctx.geom, sizeof crash_ctx.geom, &g);
        snprintf(crash_ctx.geom + strlen(crash_ctx.geom),
                 sizeof crash_ctx.geom - strlen(crash_ctx.geom),
                 " (random, seed %" PRIu64 ")", seed);
        run_kernel_shape(e, &g, j);
        shapes++;
        got++;
      }
    }
  }
  ck_assert_msg(shapes > 0, "%s: no shape fits", e->name);
  printf("guard: %s [%s]: %zu shapes, both guards, bit-exact (%s %s %s %s, "
         "%d index type(s), %zu dtype(s))\n",
         e->name, simdpool_isa_name(e->isa), shapes, method_names[e->method],
         layout_name(e->layout), op_names[e->op], shape_names[e->shape], ntypes,
         dtypes);
  fflush(stdout);
}
END_TEST

/* ------------------------------------------------------------ public API */

static simdpool_plan *plan_for(const simdpool_desc *d0, simdpool_isa isa) {
  simdpool_desc d = *d0;
  d.isa = isa;
  simdpool_plan *p = NULL;
  const simdpool_status st = simdpool_plan_create(&d, &p);
  ck_assert_msg(st == SIMDPOOL_OK, "plan_create(isa=%s): %s: %s; %s",
                simdpool_isa_name(isa), simdpool_status_string(st),
                simdpool_last_error(), crash_ctx.geom);
  return p;
}

static void expect_ok(simdpool_status st, const char *call) {
  ck_assert_msg(st == SIMDPOOL_OK, "%s [%s]: %s: %s; %s", call, crash_ctx.isa,
                simdpool_status_string(st), simdpool_last_error(),
                crash_ctx.geom);
}

/* ------------------------------------------------------------ pixel strides */

/* The dense pixels of src (c floats each) into dst, stride apart, the gaps
 * holding values that would change any result reading them. */
static void scatter_pixels(float *dst, const float *src, size_t pixels,
                           size_t c, size_t stride) {
  static const uint32_t gap[] = {0x7fc00000u, 0xff800000u, 0x7f800000u,
                                 0x7f7fffffu};
  for (size_t q = 0; q < pixels; q++)
    for (size_t i = 0; i < stride && q * stride + i < (pixels - 1) * stride + c;
         i++) {
      if (i < c)
        dst[q * stride + i] = src[q * c + i];
      else
        memcpy(&dst[q * stride + i], &gap[(q + i) % 4], 4);
    }
}

/* got (pixels stride apart) against the dense want; gaps keep 0xffffffff. */
static void expect_pixels(const char *what, const char *tensor,
                          const float *want, const float *got, size_t pixels,
                          size_t c, size_t stride, int side) {
  for (size_t q = 0; q < pixels; q++)
    for (size_t i = 0; i < stride && q * stride + i < (pixels - 1) * stride + c;
         i++) {
      const uint32_t b = bits_of(got[q * stride + i]);
      const uint32_t w = i < c ? bits_of(want[q * c + i]) : 0xffffffffu;
      if (b != w)
        ck_abort_msg("%s [%s]: %s (pixel stride %zu) pixel %zu element %zu%s "
                     "is 0x%08" PRIx32 ", want 0x%08" PRIx32
                     "; guard %s; seed %" PRIu64 "; %s",
                     what, crash_ctx.isa, tensor, stride, q, i,
                     i < c ? "" : " (a gap)", b, w,
                     side == GUARD_AFTER ? "after" : "before", seed,
                     crash_ctx.geom);
    }
}

/* The NHWC plan of d with pixel strides xs, ys (and, for forward, the clamp
 * [-0.5, 0.5]) through the public API, each tensor exactly
 * simdpool_plan_tensor_bytes() long and flush against a guard page, so the
 * last pixel's c channels end at it: against the dense reference outputs. */
static void run_api_strided(const simdpool_desc *d0, simdpool_isa isa,
                            size_t xs, size_t ys, const float *x,
                            const float *dy, const float *y_ref,
                            const void *idx_ref, const float *dx_ref,
                            const float *dx_idx_ref) {
  simdpool_desc d = *d0;
  d.x_pixel_stride = xs;
  d.y_pixel_stride = ys;
  simdpool_desc dc = d;
  dc.clamp = 1;
  dc.clamp_min = -0.5f;
  dc.clamp_max = 0.5f;
  simdpool_plan *plan = plan_for(&d, isa), *clamped = plan_for(&dc, isa);
  const sp_geom *g = &plan->geom;
  const size_t c = g->c, xp = g->n * sp_in_plane(g),
               yp = g->n * sp_out_plane(g);
  const size_t isz = sp_index_size(g->index_type);
  /* docs/semantics.md#pixel-strides: (P - 1) * stride + c elements. */
  const size_t nx = (xp - 1) * xs + c, ny = (yp - 1) * ys + c;
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_X),
                    nx * 4);
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_DX),
                    nx * 4);
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_Y),
                    ny * 4);
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_DY),
                    ny * 4);
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_INDICES),
                    yp * c * isz);
  float *y_clamped = scratch_get(&sclamp, yp * c * sizeof *y_clamped);
  for (size_t i = 0; i < yp * c; i++) /* the rule, NaN staying */
    y_clamped[i] = y_ref[i] < -0.5f ? -0.5f : y_ref[i] > 0.5f ? 0.5f : y_ref[i];
  const int needs_x = g->method != SIMDPOOL_AVG;
  for (int s = 0; s < 2; s++) {
    float *gx = place(s, B_X, nx, sizeof *gx);
    scatter_pixels(gx, x, xp, c, xs);
    float *gdy = place(s, B_DY, ny, sizeof *gdy);
    scatter_pixels(gdy, dy, yp, c, ys);
    float *gy = place(s, B_Y, ny, sizeof *gy);
    float *gdx = place(s, B_DX, nx, sizeof *gdx);
    void *gi = isz ? place(s, B_IDX, yp * c, isz) : NULL;
    crash_ctx.side = s;
    for (int par = 0; par < 4; par++) {
      const int clamp = par >= 2, para = par % 2;
      const char *fwd = para ? "simdpool_forward_parallel (strided)"
                             : "simdpool_forward (strided)";
      simdpool_plan *p = clamp ? clamped : plan;
      memset(gy, 0xff, ny * sizeof *gy);
      if (gi)
        memset(gi, 0xee, yp * c * isz);
      crash_ctx.what = fwd;
      expect_ok(para ? simdpool_forward_parallel(p, gx, gy, gi, NULL, NULL)
                     : simdpool_forward(p, gx, gy, gi),
                fwd);
      check_slack(s, fwd);
      expect_pixels(fwd, clamp ? "clamped y" : "y", clamp ? y_clamped : y_ref,
                    gy, yp, c, ys, s);
      if (gi)
        expect_same_bytes(fwd, "indices", idx_ref, gi, yp * c * isz, s);
      if (clamp)
        continue;
      const char *bwd = para ? "simdpool_backward_parallel (strided)"
                             : "simdpool_backward (strided)";
      memset(gdx, 0xff, nx * sizeof *gdx);
      crash_ctx.what = bwd;
      const float *bx = needs_x ? gx : NULL;
      expect_ok(para ? simdpool_backward_parallel(plan, gdy, NULL, bx, gdx,
                                                  NULL, NULL)
                     : simdpool_backward(plan, gdy, NULL, bx, gdx),
                bwd);
      check_slack(s, bwd);
      expect_pixels(bwd, "dx", dx_ref, gdx, xp, c, xs, s);
      if (gi) {
        memset(gdx, 0xff, nx * sizeof *gdx);
        expect_ok(para ? simdpool_backward_parallel(plan, gdy, gi, NULL, gdx,
                                                    NULL, NULL)
                       : simdpool_backward(plan, gdy, gi, NULL, gdx),
                  bwd);
        check_slack(s, bwd);
        expect_pixels(bwd, "dx (from indices)", dx_idx_ref, gdx, xp, c, xs, s);
      }
    }
    crash_ctx.side = -1;
  }
  simdpool_plan_destroy(clamped);
  simdpool_plan_destroy(plan);
}

/* Forward, backward and (MAX with indices) backward from indices through
 * the public API on plan, every tensor guarded on both sides, against the
 * scalar plan's results on ordinary memory. Also the _parallel entry points
 * with a NULL parallel_for. */
static void run_api_shape(const simdpool_desc *d, simdpool_isa isa, size_t j) {
  simdpool_plan *ref = plan_for(d, SIMDPOOL_ISA_SCALAR);
  const sp_geom *g = &ref->geom;
  describe(crash_ctx.geom, sizeof crash_ctx.geom, g);
  simdpool_plan *plan = plan_for(d, isa);
  const simdpool_index_type it = g->index_type;
  const size_t isz = sp_index_size(it);
  const size_t nx = g->n * g->c * sp_in_plane(g),
               ny = g->n * g->c * sp_out_plane(g);
  float *x = scratch_get(&sx, nx * sizeof *x);
  float *dy = scratch_get(&sdy, ny * sizeof *dy);
  fill_inputs(g, x, dy, j);
  const int needs_x = g->method != SIMDPOOL_AVG;

  float *y_ref = scratch_get(&sy, ny * sizeof *y_ref);
  void *idx_ref = scratch_get(&sidx, isz ? ny * isz : 1);
  float *dx_ref = scratch_get(&sdx, nx * sizeof *dx_ref);
  float *dx_idx_ref = scratch_get(&sdx2, nx * sizeof *dx_idx_ref);
  crash_ctx.what = "reference plan";
  expect_ok(simdpool_forward(ref, x, y_ref, isz ? idx_ref : NULL), "forward");
  expect_ok(simdpool_backward(ref, dy, NULL, needs_x ? x : NULL, dx_ref),
            "backward");
  if (isz)
    expect_ok(simdpool_backward(ref, dy, idx_ref, NULL, dx_idx_ref),
              "backward from indices");

  for (int s = 0; s < 2; s++) {
    float *gx = place(s, B_X, nx, sizeof *gx);
    memcpy(gx, x, nx * sizeof *x);
    float *gdy = place(s, B_DY, ny, sizeof *gdy);
    memcpy(gdy, dy, ny * sizeof *dy);
    float *gy = place(s, B_Y, ny, sizeof *gy);
    float *gdx = place(s, B_DX, nx, sizeof *gdx);
    void *gi = isz ? place(s, B_IDX, ny, isz) : NULL;
    crash_ctx.side = s;
    for (int par = 0; par < 2; par++) {
      const char *fwd = par ? "simdpool_forward_parallel" : "simdpool_forward";
      const char *bwd =
          par ? "simdpool_backward_parallel" : "simdpool_backward";
      memset(gy, 0xff, ny * sizeof *gy);
      if (gi)
        memset(gi, 0xee, ny * isz);
      crash_ctx.what = fwd;
      expect_ok(par ? simdpool_forward_parallel(plan, gx, gy, gi, NULL, NULL)
                    : simdpool_forward(plan, gx, gy, gi),
                fwd);
      check_slack(s, fwd);
      expect_same_floats(fwd, "y", y_ref, gy, ny, s);
      if (gi)
        expect_same_bytes(fwd, "indices", idx_ref, gi, ny * isz, s);

      memset(gdx, 0xff, nx * sizeof *gdx);
      crash_ctx.what = bwd;
      const float *bx = needs_x ? gx : NULL;
      expect_ok(
          par ? simdpool_backward_parallel(plan, gdy, NULL, bx, gdx, NULL, NULL)
              : simdpool_backward(plan, gdy, NULL, bx, gdx),
          bwd);
      check_slack(s, bwd);
      expect_same_floats(bwd, "dx", dx_ref, gdx, nx, s);

      if (gi) {
        /* The indices just written sit flush against the guard: the index
         * validation pass and the kernel both read them there. */
        memset(gdx, 0xff, nx * sizeof *gdx);
        expect_ok(par ? simdpool_backward_parallel(plan, gdy, gi, NULL, gdx,
                                                   NULL, NULL)
                      : simdpool_backward(plan, gdy, gi, NULL, gdx),
                  bwd);
        check_slack(s, bwd);
        expect_same_floats(bwd, "dx (from indices)", dx_idx_ref, gdx, nx, s);
      }
    }
    crash_ctx.side = -1;
  }
  /* NHWC: again with pixel strides above c (and forward with a clamp). */
  if (g->layout == SIMDPOOL_NHWC)
    run_api_strided(d, isa, g->c + 1 + j % 5, g->c + 1 + j % 3, x, dy, y_ref,
                    idx_ref, dx_ref, dx_idx_ref);
  simdpool_plan_destroy(plan);
  simdpool_plan_destroy(ref);
}

/* Larger tensors (over 128 KiB moved), so that the parallel entry points cut
 * the work into row blocks, the last of which ends at the guard. */
static const size_t big_shapes[2][4] = {
    /* n, c, h, w */
    {1, 1, 130, 131}, /* NCHW */
    {1, 33, 31, 33},  /* NHWC */
};

START_TEST(api_under_guard) {
  const simdpool_isa isa = (simdpool_isa)_i;
  if (!simdpool_isa_supported(isa)) {
    printf("guard: public API [%s]: skipped, not built or not runnable here\n",
           simdpool_isa_name(isa));
    fflush(stdout);
    return;
  }
  install_fault_handler();
  crash_ctx.isa = simdpool_isa_name(isa);
  rng_state = seed ^ (0xbb67ae8584caa73bull * (uint64_t)(_i + 1));
  size_t shapes = 0;
  /* Every API_STRIDE-th deterministic shape of each layout (the kernel tests
   * run them all), every method and index type, then one large shape. */
  for (int l = 0; l < 2; l++) {
    for (int m = SIMDPOOL_MAX; m <= SIMDPOOL_LP; m++) {
      const int ntypes = m == SIMDPOOL_MAX ? 4 : 1;
      for (int t = 0; t < ntypes; t++) {
        for (size_t j = (size_t)(t + 3 * m); j < lists[l].count;
             j += API_STRIDE * thin) {
          simdpool_desc d = lists[l].d[j];
          d.method = (simdpool_method)m;
          d.index_type = (simdpool_index_type)t;
          vary(&d, j);
          sp_geom g;
          if (sp_resolve_geom(&d, &g) != SIMDPOOL_OK)
            continue;
          run_api_shape(&d, isa, j);
          shapes++;
        }
        const size_t *b = big_shapes[l];
        simdpool_desc d;
        simdpool_desc_init(&d, (simdpool_method)m, (simdpool_layout)l, b[0],
                           b[1], b[2], b[3], 1, 1);
        apply_template(&d, &templates[(size_t)(t + 3 * m + 4 * l) % 12]);
        d.index_type = (simdpool_index_type)t;
        vary(&d, (size_t)t);
        run_api_shape(&d, isa, (size_t)t);
        shapes++;
      }
    }
  }
  printf("guard: public API [%s]: %zu shapes x (forward, backward, backward "
         "from indices where MAX has them; plain and _parallel; NHWC again "
         "with pixel strides and a forward clamp), both guards, "
         "bit-exact\n",
         simdpool_isa_name(isa), shapes);
  fflush(stdout);
}
END_TEST

/* ------------------------------------------------------------ the helper */

/* Runs fn(p) in a child; returns 1 when the child died of SIGSEGV/SIGBUS,
 * 0 when it returned normally. */
static int child_faults(void (*fn)(volatile unsigned char *),
                        volatile unsigned char *p) {
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    fn(p);
    _exit(0);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status))
    return WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS;
  /* A sanitizer's own fault handler may exit nonzero instead. */
  return WIFEXITED(status) && WEXITSTATUS(status) != 0;
}

static void read_byte(volatile unsigned char *p) {
  unsigned char v = *p;
  (void)v;
}
static void write_byte(volatile unsigned char *p) {
  *p = 1;
}

/* The helper itself: buffers of every element size end (or start) exactly
 * at the guard page, the bytes inside are accessible, one byte beyond is a
 * fault, and the slack sentinel notices a write next to the buffer. */
START_TEST(helper_traps) {
  const size_t page = guard_page_size();
  const size_t elems[] = {1, 4, 8};
  const size_t counts[] = {1, 3, 17, 1023, 1025, 5000};
  for (int s = 0; s < 2; s++) {
    for (size_t e = 0; e < 3; e++) {
      for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        guard_buf b;
        unsigned char *p = guard_alloc(&b, (guard_side)s, counts[c], elems[e]);
        ck_assert_ptr_nonnull(p);
        const size_t bytes = counts[c] * elems[e];
        if (s == GUARD_AFTER)
          ck_assert_uint_eq(((uintptr_t)p + bytes) % page, 0);
        else
          ck_assert_uint_eq((uintptr_t)p % page, 0);
        memset(p, 0x3c, bytes); /* every byte of the buffer is writable */
        ck_assert(guard_slack_intact(&b));
        volatile unsigned char *beyond = s == GUARD_AFTER ? p + bytes : p - 1;
        ck_assert(guard_hit(&b, (const void *)beyond));
        if (c == 0 || c == 4) {
          ck_assert_msg(child_faults(read_byte, beyond),
                        "reading one byte %s the buffer did not fault",
                        s == GUARD_AFTER ? "past" : "before");
          ck_assert_msg(child_faults(write_byte, beyond),
                        "writing one byte %s the buffer did not fault",
                        s == GUARD_AFTER ? "past" : "before");
        }
        /* A write on the accessible side is caught by the sentinel. */
        unsigned char *near = s == GUARD_AFTER ? p - 1 : p + bytes;
        *near ^= 0xff;
        ck_assert(!guard_slack_intact(&b));
        /* Re-placing a larger buffer remaps and stays flush. */
        p = guard_place(&b, 3 * page + 5, 1);
        ck_assert_ptr_nonnull(p);
        if (s == GUARD_AFTER)
          ck_assert_uint_eq(((uintptr_t)p + 3 * page + 5) % page, 0);
        else
          ck_assert_uint_eq((uintptr_t)p % page, 0);
        ck_assert(guard_slack_intact(&b));
        guard_free(&b);
        ck_assert_ptr_null(b.map);
      }
    }
  }
  printf("guard: helper: buffers of 1-, 4- and 8-byte elements sit flush "
         "against the guard page (page size %zu); one byte beyond faults\n",
         page);
  fflush(stdout);
}
END_TEST

int main(void) {
  scale = test_random_init();
  if (scale < 1)
    thin = (size_t)(1 / scale + 0.5);
  build_lists();

  printf("test_guard: seed %" PRIu64 " (set SIMDPOOL_TEST_SEED to repeat), "
         "scale %g: %zu NCHW and %zu NHWC deterministic shapes (every %zu) + "
         "%d random per kernel and index type; page size %zu\n",
         seed, scale, lists[SIMDPOOL_NCHW].count, lists[SIMDPOOL_NHWC].count,
         thin, (int)(random_per_kernel * scale + 0.5), guard_page_size());
  print_isas();

  Suite *suite = suite_create("guard");
  TCase *tc = tcase_create("guard");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, helper_traps);
  /* One Check test (one forked child) per registry kernel and per ISA: a
   * crash fails that test alone and the fault handler names the kernel. */
  tcase_add_loop_test(tc, kernel_under_guard, 0, (int)sp_registry_size);
  tcase_add_loop_test(tc, api_under_guard, SIMDPOOL_ISA_SCALAR,
                      SIMDPOOL_ISA_NEON + 1);
  suite_add_tcase(suite, tc);
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
