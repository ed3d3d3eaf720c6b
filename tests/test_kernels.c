/* SPDX-License-Identifier: MIT */
/* test_kernels.c — checkasm-style: every registry kernel of every runnable ISA
 * vs the scalar reference, memcmp; NHWC kernels again with pixel strides,
 * SIMD forward kernels again with the fused output clamp. */
#define _POSIX_C_SOURCE 200809L
#include "check_quiet.h"
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtype.h"
#include "internal.h"
#include "kernel_util.h"

#include "fpenv_test.h"
#include "test_random.h"

/* ------------------------------------------------------------ guarded buffers
 */

#define GUARD 64 /* bytes of sentinel on each side */
#define SENTINEL 0xA5

typedef struct buf {
  unsigned char *mem;
  unsigned char *data; /* misaligned on purpose by a random multiple of elem */
  size_t bytes;
} buf;

static buf buf_new(size_t count, size_t elem) {
  buf b;
  b.bytes = count * elem;
  const size_t shift = rnd_range(0, 15) * elem;
  b.mem = malloc(b.bytes + 2 * GUARD + 16 * 8 + 64);
  ck_assert_ptr_nonnull(b.mem);
  unsigned char *aligned =
      (unsigned char *)(((uintptr_t)b.mem + GUARD + 63) & ~(uintptr_t)63);
  b.data = aligned + shift;
  memset(b.mem, SENTINEL, b.bytes + 2 * GUARD + 16 * 8 + 64);
  return b;
}

static int guards_intact(const buf *b) {
  for (const unsigned char *p = b->data - GUARD; p < b->data; p++)
    if (*p != SENTINEL)
      return 0;
  for (const unsigned char *p = b->data + b->bytes;
       p < b->data + b->bytes + GUARD; p++)
    if (*p != SENTINEL)
      return 0;
  return 1;
}

/* ------------------------------------------------------------ geometries */

static const char *const op_names[SP_OP_COUNT] = {"fwd", "bwd", "bwd_idx",
                                                  "unpool", "unpool_bwd"};
static const char *const method_names[] = {"max", "avg", "lp"};

/* The scalar GENERAL kernel that defines the bits of e's op. */
static const sp_kernel_entry *reference_of(const sp_kernel_entry *e,
                                           simdpool_index_type it) {
  for (size_t i = 0; i < sp_registry_size; i++) {
    const sp_kernel_entry *r = &sp_registry[i];
    if (r->isa == SIMDPOOL_ISA_SCALAR && r->shape == SP_SHAPE_GENERAL &&
        r->method == e->method && r->layout == e->layout && r->op == e->op &&
        (r->index_mask & SP_IDX_BIT(it)))
      return r;
  }
  return NULL;
}

static void describe(char *s, size_t len, const sp_geom *g) {
  const int n = snprintf(
      s, len,
      "n=%zu c=%zu h=%zu w=%zu -> %zux%zu k=%zux%zu s=%zux%zu d=%zux%zu "
      "pads t%zu l%zu b%zu r%zu cip=%d p=%g idx=%d beyond_l2=%d",
      g->n, g->c, g->h, g->w, g->oh, g->ow, g->kh, g->kw, g->sh, g->sw, g->dh,
      g->dw, g->pt, g->pl, g->pb, g->pr, g->count_include_pad, (double)g->p,
      (int)g->index_type, g->beyond_l2);
  if (!sp_geom_2d(g) && n > 0 && (size_t)n < len)
    snprintf(s + n, len - (size_t)n,
             "; depth %zu -> %zu k%zu s%zu d%zu pads f%zu b%zu; adaptive=%d",
             g->d, g->od, g->kd, g->sd, g->dd, g->pf, g->pk, g->adaptive);
}

/* Reports the first differing element of two float tensors. */
static void report_diff(const char *what, const float *want, const float *got,
                        size_t count, const char *geom) {
  for (size_t i = 0; i < count; i++) {
    if (float_bits(want[i]) != float_bits(got[i])) {
      ck_abort_msg("%s differs at element %zu: reference 0x%08" PRIx32
                   " (%g), got 0x%08" PRIx32 " (%g); seed %" PRIu64 "; %s",
                   what, i, float_bits(want[i]), (double)want[i],
                   float_bits(got[i]), (double)got[i], seed, geom);
    }
  }
  ck_abort_msg("%s differs (bytes outside elements); seed %" PRIu64 "; %s",
               what, seed, geom);
}

/* ------------------------------------------------------------ pixel strides
 * NHWC kernels with pixel strides above c: the same inputs, scattered into
 * pixels `stride` elements apart whose gaps hold NaN, inf and huge values
 * (which would change any result that read them), against the dense
 * reference's outputs; the gaps of the outputs must keep their sentinel
 * bits (never written). */

#define GAP_BITS 0xA5A5A5A5u /* output gap sentinel (a float: -2.9e-16) */

/* A strided copy of `pixels` dense pixels of c floats: stride apart. */
static buf strided_in(const float *dense, size_t pixels, size_t c,
                      size_t stride) {
  const size_t count = (pixels - 1) * stride + c;
  buf b = buf_new(count, 4);
  float *p = (float *)b.data;
  static const uint32_t gap[] = {0x7fc00000u, 0xffa00001u, 0x7f800000u,
                                 0xff800000u, 0x7f7fffffu, 0x00000001u};
  for (size_t i = 0; i < count; i++) {
    const uint32_t bits = gap[rnd() % (sizeof gap / sizeof gap[0])];
    memcpy(&p[i], &bits, sizeof bits);
  }
  for (size_t q = 0; q < pixels; q++)
    memcpy(p + q * stride, dense + q * c, c * sizeof *p);
  return b;
}

static buf strided_out(size_t pixels, size_t c, size_t stride) {
  buf b = buf_new((pixels - 1) * stride + c, 4);
  const uint32_t bits = GAP_BITS;
  for (size_t i = 0; i < (pixels - 1) * stride + c; i++)
    memcpy((float *)b.data + i, &bits, sizeof bits);
  return b;
}

/* The strided output against the dense reference, gaps untouched. */
static void check_strided(const char *what, const float *want, const buf *got,
                          size_t pixels, size_t c, size_t stride,
                          const char *geom) {
  const float *p = (const float *)got->data;
  ck_assert_msg(guards_intact(got),
                "%s wrote outside its strided output; seed %" PRIu64 "; %s",
                what, seed, geom);
  for (size_t q = 0; q < pixels; q++) {
    for (size_t i = 0; i < stride && q * stride + i < (pixels - 1) * stride + c;
         i++) {
      const uint32_t b = float_bits(p[q * stride + i]);
      /* ck_assert records every check it passes: test, then abort. */
      if (i >= c && b != GAP_BITS)
        ck_abort_msg("%s wrote 0x%08" PRIx32 " into the gap of pixel %zu "
                     "(element %zu of stride %zu); seed %" PRIu64 "; %s",
                     what, b, q, i, stride, seed, geom);
      if (i < c && float_bits(want[q * c + i]) != b)
        ck_abort_msg("%s with pixel stride %zu: pixel %zu channel %zu is "
                     "0x%08" PRIx32 ", the dense reference 0x%08" PRIx32
                     "; seed %" PRIu64 "; %s",
                     what, stride, q, i, b, float_bits(want[q * c + i]), seed,
                     geom);
    }
  }
}

/* Runs e on g with pixel strides xs, ys (NHWC) on the dense inputs x, dy
 * (indices: the dense ones backward reads) and compares with the dense
 * reference outputs want / want_idx. */
static void run_strided(const sp_kernel_entry *e, const sp_geom *dense,
                        size_t xs, size_t ys, const float *x, const float *dy,
                        const void *bwd_idx, const float *want,
                        const void *want_idx, size_t idx_bytes,
                        const char *geom) {
  sp_geom g = *dense;
  g.xs = xs;
  g.ys = ys;
  const size_t c = g.c, xp = g.n * sp_in_plane(&g), yp = g.n * sp_out_plane(&g);
  char label[160];
  snprintf(label, sizeof label, "%s (x stride %zu, y stride %zu)", e->name, xs,
           ys);
  buf sx = strided_in(x, xp, c, xs), sdy = strided_in(dy, yp, c, ys);
  sp_io io = {.x = (const float *)sx.data, .dy = (const float *)sdy.data};
  if (e->op == SP_OP_FWD) {
    buf sy = strided_out(yp, c, ys);
    buf si = buf_new(yp * c, idx_bytes ? idx_bytes : 1);
    io.y = (float *)sy.data;
    io.indices = idx_bytes ? si.data : NULL;
    e->fn(&g, &io);
    check_strided(label, want, &sy, yp, c, ys, geom);
    if (idx_bytes) {
      ck_assert_msg(guards_intact(&si), "%s wrote outside its indices; %s",
                    label, geom);
      ck_assert_msg(memcmp(si.data, want_idx, yp * c * idx_bytes) == 0,
                    "%s: indices differ from the dense reference; seed "
                    "%" PRIu64 "; %s",
                    label, seed, geom);
    }
    free(sy.mem);
    free(si.mem);
  } else if (e->op == SP_OP_UNPOOL_BWD) {
    buf sy = strided_out(yp, c, ys);
    io.y = (float *)sy.data;
    io.indices = (void *)(uintptr_t)bwd_idx;
    e->fn(&g, &io);
    check_strided(label, want, &sy, yp, c, ys, geom);
    free(sy.mem);
  } else {
    buf sdx = strided_out(xp, c, xs);
    io.dx = (float *)sdx.data;
    io.indices = (void *)(uintptr_t)bwd_idx;
    e->fn(&g, &io);
    check_strided(label, want, &sdx, xp, c, xs, geom);
    free(sdx.mem);
  }
  free(sx.mem);
  free(sdy.mem);
}

/* When set, the kernel under test runs through dispatch's sp_call_kernel()
 * with this caller environment set, and the environment must read back
 * unchanged; the reference always runs directly in the default environment.
 * Inputs then come from rnd_value_subnormal(). */
static const tenv *call_env;
static const char *call_env_name;
static int strided_runs; /* run_strided calls of the current test */
static int self_runs;    /* dense runs skipped: the kernel is the reference */

/* ------------------------------------------------------------ inputs and
 * reference outputs, shared by the variants of a kernel
 *
 * Every variant of one (method, layout, op, shape) -- each ISA's kernel and the
 * scalar specialised one -- sees the same inputs, and under kernel_fpenv every
 * caller environment too, so their seeded inputs and the scalar reference's
 * outputs are made once and kept (the tests run a kernel's variants one after
 * another: see `order`). Making them is most of the suite's time (the random
 * fill, and powf in the LP reference). The random stream is the same whether
 * they are made or found: whatever is drawn up to the reference call is, and
 * the stream then continues from the state recorded after it. */
typedef struct prepared {
  sp_geom g; /* beyond_l2 drawn */
  buf x, dy, want, want_idx;
  uint64_t state_out; /* rng_state after the reference */
  uint64_t sum;       /* of x, dy and want_idx: kernels only read them */
} prepared;

typedef struct memo_ent {
  /* The descriptor as drawn (simdpool_desc_init* zero its padding). */
  simdpool_desc d;
  simdpool_index_type it;
  int env; /* inputs for a caller environment (rnd_value_subnormal) */
  uint64_t state_in;
  prepared p;
} memo_ent;

static memo_ent *memo;
static size_t memo_len, memo_cap, memo_pos, memo_bytes;
static int memo_family[4] = {-1, -1, -1, -1};
static size_t memo_hits, memo_misses;
#define MEMO_MOST_BYTES ((size_t)256 << 20)

static void prepared_free(prepared *p) {
  free(p->x.mem);
  free(p->dy.mem);
  free(p->want.mem);
  free(p->want_idx.mem);
}

static uint64_t bytes_sum(const buf *b, uint64_t h) {
  size_t i = 0;
  for (; i + 8 <= b->bytes; i += 8) {
    uint64_t w;
    memcpy(&w, b->data + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < b->bytes; i++)
    h = (h ^ b->data[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t inputs_sum(const prepared *p) {
  return bytes_sum(&p->want_idx, bytes_sum(&p->dy, bytes_sum(&p->x, 1)));
}

static void memo_clear(void) {
  for (size_t i = 0; i < memo_len; i++)
    prepared_free(&memo[i].p);
  memo_len = memo_pos = memo_bytes = 0;
}

/* Drops everything kept when e's family is not the kept one. */
static void memo_family_of(const sp_kernel_entry *e) {
  const int f[4] = {(int)e->method, (int)e->layout, (int)e->op, (int)e->shape};
  if (memcmp(f, memo_family, sizeof f) == 0)
    return;
  memo_clear();
  memcpy(memo_family, f, sizeof f);
}

static int memo_match(const memo_ent *m, const simdpool_desc *d,
                      simdpool_index_type it, uint64_t state) {
  return m->state_in == state && m->it == it && m->env == (call_env != NULL) &&
         memcmp(&m->d, d, sizeof *d) == 0;
}

/* The kept inputs of (d, it) drawn from `state`, or NULL. The variants draw
 * in the same order: the next entry is tried first. */
static const prepared *memo_find(const simdpool_desc *d, simdpool_index_type it,
                                 uint64_t state) {
  if (memo_pos < memo_len && memo_match(&memo[memo_pos], d, it, state))
    return &memo[memo_pos++].p;
  for (size_t i = 0; i < memo_len; i++)
    if (memo_match(&memo[i], d, it, state)) {
      memo_pos = i + 1;
      return &memo[i].p;
    }
  return NULL;
}

/* Keeps p (which the memo then owns) and returns where it is, or NULL when
 * the memo is full (the caller keeps and frees p). */
static const prepared *memo_keep(const simdpool_desc *d, simdpool_index_type it,
                                 uint64_t state, const prepared *p) {
  const size_t bytes =
      p->x.bytes + p->dy.bytes + p->want.bytes + p->want_idx.bytes;
  if (memo_bytes + bytes > MEMO_MOST_BYTES)
    return NULL;
  if (memo_len == memo_cap) {
    const size_t cap = memo_cap ? 2 * memo_cap : 1024;
    memo_ent *m = realloc(memo, cap * sizeof *m);
    ck_assert_ptr_nonnull(m);
    memo = m;
    memo_cap = cap;
  }
  memo_ent *m = &memo[memo_len++];
  m->d = *d;
  m->it = it;
  m->env = call_env != NULL;
  m->state_in = state;
  m->p = *p;
  memo_bytes += bytes;
  memo_pos = memo_len;
  return &m->p;
}

/* Unpooling's backward writes an output-shaped tensor, like forward;
 * backward and unpooling an input-shaped one. */
static int op_writes_y(const sp_kernel_entry *e) {
  return e->op == SP_OP_FWD || e->op == SP_OP_UNPOOL_BWD;
}
/* Backward from indices and both unpooling ops read indices. */
static int op_reads_idx(const sp_kernel_entry *e) {
  return e->op == SP_OP_BWD_IDX || e->op == SP_OP_UNPOOL ||
         e->op == SP_OP_UNPOOL_BWD;
}

/* Seeded inputs for kernel e on g (index type it) and the reference ref's
 * outputs from them. */
static void prepare(prepared *p, const sp_kernel_entry *e,
                    simdpool_index_type it, const sp_geom *g0,
                    const sp_kernel_entry *ref) {
  p->g = *g0;
  sp_geom *const gp = &p->g;
  const sp_geom g = *g0;
  /* Plan creation sets beyond_l2 by size (these tensors mostly fit L2):
   * every kernel runs either way. */
  gp->beyond_l2 = (int)(rnd() % 2);
  const size_t nx = g.n * g.c * sp_in_plane(&g),
               ny = g.n * g.c * sp_out_plane(&g);
  const int nasty = (int)rnd_range(0, 3) * 10;
  const int nonneg = e->method == SIMDPOOL_LP && rnd() % 3 == 0;
  p->x = buf_new(nx, 4);
  p->dy = buf_new(ny, 4);
  /* A quarter of the inputs are mostly signed zeros: +0 and -0 tie under
   * MAX with different bits, so any reduction that reorders taps or breaks
   * ties the wrong way shows up as a bit difference. */
  const int zeros = rnd() % 4 == 0;
  float *const x = (float *)p->x.data;
  for (size_t i = 0; i < nx; i++) {
    float v = call_env ? rnd_value_subnormal() : rnd_value(nasty);
    if (zeros && rnd() % 8 != 0)
      v = rnd() % 2 ? 0.0f : -0.0f;
    x[i] = nonneg ? fabsf(v) : v;
  }
  for (size_t i = 0; i < ny; i++)
    ((float *)p->dy.data)[i] =
        call_env ? rnd_value_subnormal() : rnd_value(nasty / 2);

  const int fwd = e->op == SP_OP_FWD;
  const int to_y = op_writes_y(e), reads_idx = op_reads_idx(e);
  p->want = buf_new(to_y ? ny : nx, 4);
  p->want_idx = buf_new(ny, sp_index_size(it) ? sp_index_size(it) : 1);
  void *const want_idx = p->want_idx.data;

  if (reads_idx) {
    /* Backward from indices and unpooling read the winners of the
     * reference forward. */
    const sp_kernel_entry *rf = NULL;
    for (size_t i = 0; i < sp_registry_size && !rf; i++) {
      const sp_kernel_entry *r = &sp_registry[i];
      if (r->isa == SIMDPOOL_ISA_SCALAR && r->shape == SP_SHAPE_GENERAL &&
          r->method == SIMDPOOL_MAX && r->layout == e->layout &&
          r->op == SP_OP_FWD)
        rf = r;
    }
    ck_assert_ptr_nonnull(rf);
    float *ytmp = malloc(ny * sizeof *ytmp);
    ck_assert_ptr_nonnull(ytmp);
    sp_io io = {.x = x, .y = ytmp, .indices = want_idx};
    rf->fn(gp, &io);
    free(ytmp);
    /* Unpooling kernels that take any in-plane index (GENERAL, ND) get,
     * half the time, random flat positions drawn from a few, so that
     * equal indices (the last wins) and indices outside their windows
     * occur. */
    if (e->op != SP_OP_BWD_IDX && it != SIMDPOOL_INDEX_U8 &&
        (e->shape == SP_SHAPE_GENERAL || e->shape == SP_SHAPE_ND) &&
        rnd() % 2) {
      const size_t plane = sp_in_plane(&g);
      const size_t few = rnd() % 2 ? rnd_range(1, 4) : plane;
      const size_t lo = rnd_range(0, plane - (few < plane ? few : plane));
      for (size_t i = 0; i < ny; i++) {
        const size_t v = lo + rnd() % (few < plane ? few : plane);
        if (it == SIMDPOOL_INDEX_I32)
          ((int32_t *)want_idx)[i] = (int32_t)v;
        else
          ((int64_t *)want_idx)[i] = (int64_t)v;
      }
    }
  }

  sp_io io_ref = {.x = x, .dy = (const float *)p->dy.data};
  if (to_y) { /* forward; unpooling's backward (x as dx) */
    io_ref.y = (float *)p->want.data;
    io_ref.indices = fwd ? (it ? want_idx : NULL) : want_idx;
  } else {
    io_ref.dx = (float *)p->want.data;
    io_ref.indices = reads_idx ? want_idx : NULL;
  }
  ref->fn(gp, &io_ref);
  p->state_out = rng_state;
  p->sum = inputs_sum(p);
}

/* The output clamp of docs/semantics.md#output-clamp over `pixels` pixels
 * of c elements, `stride` apart: what the SIMD kernels' fused clamp must
 * give on the reference's unclamped outputs. */
static void clamp_outputs(float *y, size_t pixels, size_t c, size_t stride,
                          float lo, float hi) {
  for (size_t p = 0; p < pixels; p++)
    for (size_t i = p * stride; i < p * stride + c; i++)
      y[i] = y[i] < lo ? lo : y[i] > hi ? hi : y[i];
}

/* Runs kernel e and its scalar reference on the geometry of d with seeded
 * inputs and compares their outputs bit for bit; 0 when e does not take d. */
static int run_desc(const sp_kernel_entry *e, simdpool_index_type it,
                    const simdpool_desc *dp) {
  simdpool_desc d = *dp;
  d.index_type = it;
  sp_geom g0;
  if (sp_resolve_geom(&d, &g0) != SIMDPOOL_OK ||
      !sp_shape_matches(e->shape, &g0))
    return 0;
  const sp_kernel_entry *ref = reference_of(e, it);
  ck_assert_msg(ref != NULL, "no scalar reference for %s", e->name);

  memo_family_of(e);
  const uint64_t state_in = rng_state;
  prepared fresh;
  const prepared *pr = memo_find(dp, it, state_in);
  int owned = 0;
  if (pr) {
    rng_state = pr->state_out;
    memo_hits++;
  } else {
    prepare(&fresh, e, it, &g0, ref);
    pr = memo_keep(dp, it, state_in, &fresh);
    if (!pr) {
      pr = &fresh;
      owned = 1;
    }
    memo_misses++;
  }
  const sp_geom g = pr->g;
  const buf x = pr->x, dy = pr->dy, want = pr->want, want_idx = pr->want_idx;

  char geom[320], label[128];
  describe(geom, sizeof geom, &g);
  snprintf(label, sizeof label, "%s%s%s", e->name, call_env ? " under " : "",
           call_env ? call_env_name : "");

  const size_t ny = g.n * g.c * sp_out_plane(&g);
  const int fwd = e->op == SP_OP_FWD;
  const int to_y = op_writes_y(e), reads_idx = op_reads_idx(e);
  const size_t out_count = want.bytes / 4;
  buf got = buf_new(out_count, 4);
  buf got_idx = buf_new(ny, sp_index_size(it) ? sp_index_size(it) : 1);

  sp_io io_got = {.x = (const float *)x.data, .dy = (const float *)dy.data};
  if (fwd) {
    io_got.y = (float *)got.data;
    io_got.indices = it ? got_idx.data : NULL;
  } else if (to_y) { /* unpooling's backward: x as dx */
    io_got.y = (float *)got.data;
    io_got.indices = want_idx.data;
  } else {
    io_got.dx = (float *)got.data;
    io_got.indices = reads_idx ? want_idx.data : NULL;
  }
  if (call_env) {
    char a[64], b[64];
    tenv_write(*call_env);
    sp_call_kernel(e->fn, &g, &io_got);
    const tenv after = tenv_read();
    tenv_write(tenv_default());
    ck_assert_msg(tenv_equal(after, *call_env),
                  "%s under %s: the caller's environment %s came back as %s; "
                  "seed %" PRIu64 "; %s",
                  e->name, call_env_name, tenv_text(*call_env, a, sizeof a),
                  tenv_text(after, b, sizeof b), seed, geom);
  } else if (e->fn == ref->fn) {
    /* The scalar ND entries are the reference's function: the dense run
     * would compare it with itself (and cost a second reference run, a
     * quarter of the emulated sweep's LP time). Its strided and caller-
     * environment runs below still check it. */
    self_runs++;
  } else {
    e->fn(&g, &io_got);
  }

  if (call_env || e->fn != ref->fn) {
    ck_assert_msg(guards_intact(&got),
                  "%s wrote outside its output; seed %" PRIu64 "; %s", e->name,
                  seed, geom);
    if (fwd && it)
      ck_assert_msg(guards_intact(&got_idx),
                    "%s wrote outside its indices; seed %" PRIu64 "; %s",
                    e->name, seed, geom);
    if (memcmp(want.data, got.data, want.bytes) != 0)
      report_diff(label, (const float *)want.data, (const float *)got.data,
                  out_count, geom);
    if (fwd && it && memcmp(want_idx.data, got_idx.data, want_idx.bytes) != 0)
      ck_abort_msg("%s: indices differ from the reference; seed %" PRIu64
                   "; %s",
                   e->name, seed, geom);
  }
  /* SIMD forward kernels fuse the output clamp into their stores; the
   * scalar reference's is dispatch's pass after the kernel, as here. The
   * bounds come from the outputs themselves (so some clamp, some do not),
   * at times a signed zero (-0 inside [+0, ...] stays -0) or lo == hi. */
  if (fwd && e->isa != SIMDPOOL_ISA_SCALAR && !call_env && ny > 0) {
    const float *wy = (const float *)want.data;
    float lo = wy[rnd() % ny], hi = wy[rnd() % ny];
    switch (rnd() % 6) {
    case 0:
      lo = rnd() % 2 ? 0.0f : -0.0f;
      hi = INFINITY;
      break;
    case 1:
      hi = lo;
      break;
    case 2:
      lo = -INFINITY;
      break;
    default:
      break;
    }
    if (isnan(lo))
      lo = -1.0f;
    if (isnan(hi))
      hi = 1.0f;
    if (lo > hi) {
      const float t = lo;
      lo = hi;
      hi = t;
    }
    sp_geom gc = g;
    gc.clamp = 1;
    gc.clamp_lo = lo;
    gc.clamp_hi = hi;
    float *cw = malloc(want.bytes); /* want stays for the strided runs */
    ck_assert_ptr_nonnull(cw);
    memcpy(cw, want.data, want.bytes);
    if (g.layout == SIMDPOOL_NHWC)
      clamp_outputs(cw, g.n * sp_out_plane(&g), g.c, g.c, lo, hi);
    else
      clamp_outputs(cw, 1, ny, 0, lo, hi);
    buf cy = buf_new(ny, 4),
        ci = buf_new(ny, sp_index_size(it) ? sp_index_size(it) : 1);
    sp_io io_c = io_got;
    io_c.y = (float *)cy.data;
    io_c.indices = it ? ci.data : NULL;
    e->fn(&gc, &io_c);
    char cl[200];
    snprintf(cl, sizeof cl, "%s with clamp [%a, %a]", label, (double)lo,
             (double)hi);
    ck_assert_msg(guards_intact(&cy),
                  "%s wrote outside its output; seed %" PRIu64 "; %s", cl, seed,
                  geom);
    if (memcmp(cw, cy.data, want.bytes) != 0)
      report_diff(cl, cw, (const float *)cy.data, ny, geom);
    if (it && memcmp(want_idx.data, ci.data, want_idx.bytes) != 0)
      ck_abort_msg("%s: indices differ from the unclamped ones; seed %" PRIu64
                   "; %s",
                   cl, seed, geom);
    free(cw);
    free(cy.mem);
    free(ci.mem);
  }
  /* NHWC: the same again with pixel strides (one of them dense at times),
   * which the scalar general kernels get too. */
  if (e->layout == SIMDPOOL_NHWC && !call_env) {
    const size_t xs = g.c + (rnd() % 3 ? rnd_range(1, 9) : 0);
    const size_t ys = g.c + (xs == g.c || rnd() % 3 ? rnd_range(1, 9) : 0);
    run_strided(e, &g, xs, ys, (const float *)x.data, (const float *)dy.data,
                reads_idx ? want_idx.data : NULL, (const float *)want.data,
                want_idx.data, fwd && it ? sp_index_size(it) : 0, geom);
    strided_runs++;
  }
  ck_assert_msg(inputs_sum(pr) == pr->sum,
                "%s wrote into its inputs (x, dy or indices); seed %" PRIu64
                "; %s",
                e->name, seed, geom);
  free(got.mem);
  free(got_idx.mem);
  if (owned)
    prepared_free(&fresh);
  return 1;
}

static int run_one(const sp_kernel_entry *e, simdpool_index_type it) {
  simdpool_desc d;
  rnd_desc(&d, e, it);
  return run_desc(e, it, &d);
}

/* ------------------------------------------------------------ tests */

/* The loop tests' order of the registry: by (method, layout, op, shape),
 * then ISA, so that the variants of a kernel run one after another and share
 * their inputs and reference outputs (memo_find). */
static size_t *order;

static int order_cmp(const void *a, const void *b) {
  const sp_kernel_entry *p = &sp_registry[*(const size_t *)a];
  const sp_kernel_entry *q = &sp_registry[*(const size_t *)b];
  const int kp[5] = {(int)p->method, (int)p->layout, (int)p->op, (int)p->shape,
                     (int)p->isa};
  const int kq[5] = {(int)q->method, (int)q->layout, (int)q->op, (int)q->shape,
                     (int)q->isa};
  for (int i = 0; i < 5; i++)
    if (kp[i] != kq[i])
      return kp[i] < kq[i] ? -1 : 1;
  return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* SIMDPOOL_TEST_PART=k/n (tests/meson.build runs the sweep in two parts at
 * once): part k draws its configurations from seed + k - 1, runs 1/n of
 * them and of the large shapes, the environment sweep of 1/n of the
 * families, and alone the tests that are not sweeps.
 * Splitting configurations rather than kernels keeps the parts even on
 * every machine (a family's variants share inputs and references, and
 * families differ in cost by 100x: LP's powers under emulation). */
static unsigned part = 1, parts = 1;
static uint64_t part_seed;

/* A number of e's family (method, layout, op, shape), for the parts. */
static size_t family_no(const sp_kernel_entry *e) {
  return (size_t)e->method * 3 + (size_t)e->layout * 5 + (size_t)e->op * 7 +
         (size_t)e->shape;
}
static int configs_per_kernel = 1000;
static size_t big_stride = 1; /* under SIMDPOOL_TEST_SCALE < 1: see below */

static const char *only_isa; /* SIMDPOOL_ISA: test that ISA's kernels only */
/* SIMDPOOL_TEST_ISA_BRIEF=1 with SIMDPOOL_ISA (every isa-* run of
 * tests/meson.build): the forced run checks the forcing and a few
 * configurations per kernel, without the large shapes and environments,
 * which the `kernels` run sweeps for every ISA the CPU has. */
static int isa_brief;

START_TEST(kernel_matches_reference) {
  const sp_kernel_entry *e = &sp_registry[order[_i]];
  const char *layout = e->layout == SIMDPOOL_NCHW ? "nchw" : "nhwc";
  if (only_isa && strcmp(only_isa, simdpool_isa_name(e->isa)) != 0)
    return;
  if (!(e->dtype_mask & SP_DT_F32))
    return; /* kernels of S8/U8 only: int8_kernel_matches_reference */
  if (e->isa == SIMDPOOL_ISA_SCALAR && e->shape == SP_SHAPE_GENERAL &&
      e->layout == SIMDPOOL_NCHW) {
    printf("  ref     %-38s [scalar %s %s %s general]: the reference itself "
           "(checked by test_model and test_cases)\n",
           e->name, method_names[e->method], layout, op_names[e->op]);
    fflush(stdout);
    return;
  }
  if (!sp_cpu_runs(e->isa)) {
    printf("  skipped %-38s [%s %s %s %s %s]: this CPU cannot run %s\n",
           e->name, simdpool_isa_name(e->isa), method_names[e->method], layout,
           op_names[e->op], shape_names[e->shape], simdpool_isa_name(e->isa));
    fflush(stdout);
    return;
  }
  simdpool_index_type types[4];
  const int ntypes = index_types_of(e, types);
  rng_state = part_seed; /* every variant sees the same inputs */
  int ran = 0, drawn = 0;
  strided_runs = self_runs = 0;
  while (ran < configs_per_kernel) {
    ck_assert_msg(++drawn < configs_per_kernel * 200,
                  "could not draw geometries for %s", e->name);
    /* One geometry and one set of inputs, once per index type. */
    const uint64_t state = rng_state;
    int fits = 0;
    for (int k = 0; k < ntypes; k++) {
      rng_state = state;
      fits = run_one(e, types[k]);
    }
    ran += fits;
  }
  printf("  ran     %-38s [%s %s %s %s %s]: %d configurations x %d index "
         "type(s) bit-exact, %d with pixel strides",
         e->name, simdpool_isa_name(e->isa), method_names[e->method], layout,
         op_names[e->op], shape_names[e->shape], ran, ntypes, strided_runs);
  if (self_runs)
    printf(" (%d dense runs are the reference's own: not compared)", self_runs);
  printf("\n");
  fflush(stdout);
}
END_TEST

/* Shapes larger than the random ones, for kernel paths that cut a plane
 * into pieces: the NCHW sums go through a 16 KiB scratch in bands of rows
 * and tiles of columns (pad_plan_of in kernels/tmpl/nchw.h), so these give
 * several bands, several tiles, both, every stride class, and kernels too
 * tall or too wide for the scratch. Every general kernel runs them all, and
 * every specialised kernel the ones of its shape. */
typedef struct big_shape {
  size_t h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
  int ceil_mode, cip;
} big_shape;

static const big_shape big_shapes[] = {
    {190, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},  /* 3 bands */
    {5, 1400, 3, 2, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},  /* 3 tiles */
    {6, 2700, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 1, 0},  /* stride 2, 5 tiles */
    {40, 1000, 4, 4, 3, 3, 2, 2, 2, 1, 2, 3, 1, 1}, /* stride 3, dilated */
    {30, 700, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* 8 bands x 2 tiles */
    {300, 30, 90, 2, 2, 1, 3, 1, 0, 0, 0, 0, 0, 0}, /* too tall: no scratch */
    {8, 800, 2, 100, 1, 1, 1, 8, 1, 0, 0, 0, 0, 1}, /* too wide: no scratch */
    /* Stride 1 under a window of 128 rows over narrow rows: the NCHW gather
     * backward's ring fits, but its groups would have more covering rows
     * than its tables (GATHER_MAX); found by the fuzzer. */
    {130, 2, 128, 2, 1, 1, 1, 1, 64, 64, 0, 0, 0, 0},
    /* AVG divisors: more border blocks per row than col_divs keeps. */
    {3, 310, 1, 301, 1, 1, 1, 1, 0, 0, 150, 150, 0, 0},
    /* The specialised shapes, large enough for several bands and tiles. */
    {61, 700, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}, /* 3x3/s2/p1 */
    {150, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0}, /* 3x3/s2/p1, tall bands */
    {50, 900, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0}, /* 2x2/s2 */
    {33, 47, 33, 47, 33, 47, 1, 1, 0, 0, 0, 0, 0, 0}, /* global */
    {1, 3001, 1, 3, 1, 2, 1, 1, 0, 0, 1, 1, 0, 0},    /* 1x3/s2/p1: strips */
    {3, 1030, 1, 3, 1, 2, 1, 1, 0, 0, 1, 0, 1, 0},    /* 1x3, ceil mode */
};

START_TEST(kernel_matches_reference_big) {
  if (!(sp_registry[order[_i]].dtype_mask & SP_DT_F32))
    return; /* int8_kernel_matches_reference */
  const sp_kernel_entry *e = &sp_registry[order[_i]];
  if (isa_brief ||
      (only_isa && strcmp(only_isa, simdpool_isa_name(e->isa)) != 0) ||
      e->isa == SIMDPOOL_ISA_SCALAR || !sp_cpu_runs(e->isa))
    return;
  simdpool_index_type types[4];
  const int ntypes = index_types_of(e, types);
  rng_state = part_seed;
  int ran = 0;
  /* The shapes this kernel takes, numbered from a number of its family (a
   * kernel may take one: the first of every kernel in part 1 left part 2
   * half as long under emulation; variants of a family share their inputs
   * and references only in one part): which part runs each. */
  const size_t fam_no = family_no(e);
  size_t shape_no = fam_no;
  if (e->shape == SP_SHAPE_ND || e->shape == SP_SHAPE_2X2X2S2 ||
      e->shape == SP_SHAPE_3X3X3S1) {
    /* Video-sized windows: 3x3x3/s1/p1 and 2x2x2/s2 over 12 slices of
     * 20x24, and an adaptive 9x20x24 -> 4x7x5 (MAX, AVG); 19 channels, 3 at
     * a reduced scale (emulators, sanitizers). And 3x3x3/s1 on rows of 131
     * columns with uneven pads: too long for the channels-last backward's
     * ring, which then goes in column tiles. */
    const size_t bc = big_stride > 1 ? 3 : 19;
    for (int v = 0; v < 4; v++) {
      simdpool_desc d;
      if (e->shape == SP_SHAPE_2X2X2S2 && v != 1)
        continue; /* the 2x2x2/s2 shape only */
      if (e->shape == SP_SHAPE_3X3X3S1 && v != 0 && v != 3)
        continue; /* the 3x3x3/s1 shapes only */
      if (e->shape != SP_SHAPE_3X3X3S1 && v == 3)
        continue;
      if (e->method == SIMDPOOL_LP && v == 2)
        continue; /* (no adaptive LP) */
      if (shape_no++ % parts != part - 1)
        continue;
      if (v == 3) {
        simdpool_desc_init_3d(&d, e->method, e->layout, 1, bc, 3, 5, 131, 3, 3,
                              3);
        d.stride_d = d.stride_h = d.stride_w = 1;
        d.pad_front = d.pad_top = d.pad_right = 2;
        d.pad_bottom = 1;
        d.count_include_pad = 1;
      } else if (v == 2) {
        simdpool_desc_init_adaptive(&d, e->method, e->layout, 1, bc, 9, 20, 24,
                                    4, 7, 5);
      } else {
        const size_t k = v ? 2 : 3;
        simdpool_desc_init_3d(&d, e->method, e->layout, 1, bc, 12, 20, 24, k, k,
                              k);
        if (!v) {
          d.stride_d = d.stride_h = d.stride_w = 1;
          d.pad_front = d.pad_back = d.pad_top = d.pad_bottom = 1;
          d.pad_left = d.pad_right = 1;
          d.count_include_pad = 0;
        }
      }
      d.isa = SIMDPOOL_ISA_SCALAR;
      int took = 0;
      for (int k = 0; k < ntypes; k++) {
        if (v == 2 && types[k] == SIMDPOOL_INDEX_U8)
          continue;
        took |= run_desc(e, types[k], &d);
      }
      ck_assert_msg(took, "%s rejects big ND shape %d", e->name, v);
      ran += took;
    }
    printf("  big     %-38s: %d large shapes bit-exact\n", e->name, ran);
    fflush(stdout);
    return;
  }
  for (size_t i = 0; i < sizeof big_shapes / sizeof big_shapes[0]; i++) {
    const big_shape *b = &big_shapes[i];
    /* A reduced scale (emulated CPUs) gives each general kernel every
     * big_stride-th shape, rotating with the kernel, so every shape still
     * runs on some kernels; specialised kernels keep their few. In parts,
     * a general kernel's shapes alternate between them (a part may have
     * none), and a specialised kernel runs its shapes in its family's
     * part. */
    if (e->shape == SP_SHAPE_GENERAL && (i + (size_t)_i) % big_stride != 0)
      continue;
    if (e->shape == SP_SHAPE_GENERAL ? shape_no++ % parts != part - 1
                                     : fam_no % parts != part - 1)
      continue;
    simdpool_desc d;
    simdpool_desc_init(&d, e->method, e->layout, 1, 2, b->h, b->w, b->kh,
                       b->kw);
    d.isa = SIMDPOOL_ISA_SCALAR;
    d.stride_h = b->sh;
    d.stride_w = b->sw;
    d.dilation_h = b->dh;
    d.dilation_w = b->dw;
    d.pad_top = b->pt;
    d.pad_bottom = b->pb;
    d.pad_left = b->pl;
    d.pad_right = b->pr;
    d.ceil_mode = b->ceil_mode;
    d.count_include_pad = b->cip;
    d.p = i == 0 || i == 3 ? 1.5f : 2.0f; /* pow is slow in the reference */
    int took = 0;
    for (int k = 0; k < ntypes; k++) {
      const uint64_t state = rng_state;
      const int r = run_desc(e, types[k], &d);
      /* A general kernel takes every shape; U8 indices name at most 256
       * taps. */
      ck_assert_msg(r || e->shape != SP_SHAPE_GENERAL ||
                        (types[k] == SIMDPOOL_INDEX_U8 && b->kh * b->kw > 256),
                    "%s rejects big shape %zu", e->name, i);
      took |= r;
      rng_state = state + 1;
    }
    ran += took;
  }
  /* Each specialised shape has a big shape of its own. */
  ck_assert_msg(ran > 0 || e->shape == SP_SHAPE_GENERAL ||
                    fam_no % parts != part - 1,
                "%s: no big shape fits", e->name);
  printf("  big     %-38s: %d large shapes x %d index type(s) bit-exact\n",
         e->name, ran, ntypes);
  fflush(stdout);
}
END_TEST

/* ------------------------------------------------------------ FP environment
 */

/* The caller environments every kernel must be immune to (docs/semantics.md,
 * "Floating-point environment"), as tenv_decode() codes: bits 0-1
 * rounding, 2 FTZ/FZ, 3 DAZ/FZ16, 4 every status flag set, 5 traps
 * unmasked (x86) / DN (AArch64). */
typedef struct caller_env {
  const char *name;
  unsigned code;
} caller_env;

static const caller_env caller_envs[] = {
    {"default", 0},
#if defined(__aarch64__)
    {"FPCR.FZ", 4},
    {"FPCR.FZ16", 8},
    {"FPCR.DN", 32},
    {"FZ|FZ16|DN", 4 | 8 | 32},
#else
    {"MXCSR.FTZ", 4},
    {"MXCSR.DAZ", 8},
    {"FTZ|DAZ", 4 | 8},
    {"invalid/div0/overflow traps unmasked", 32},
#endif
    {"round upward", 1},
    {"round downward", 2},
    {"round toward zero", 3},
    {"status flags set", 16},
    {"all at once, round upward", 1 | 4 | 8 | 16 | 32},
};
#define N_CALLER_ENVS ((int)(sizeof caller_envs / sizeof caller_envs[0]))

static int configs_fpenv = 30;

/* Every registry kernel of every ISA the CPU runs, called the way the entry
 * points call it (sp_call_kernel), under each caller environment on
 * subnormal-rich inputs: bit for bit the scalar reference run in the
 * default environment, and the caller's control and status state intact. */
START_TEST(kernel_fpenv) {
  const sp_kernel_entry *e = &sp_registry[order[_i]];
  /* In parts, by family: with a few configurations each, one costly draw
   * (LP backward, 10 environments) outweighed the rest of a part. S8/U8
   * kernels: int8_kernel_matches_reference. */
  if (family_no(e) % parts != part - 1 || isa_brief ||
      !(e->dtype_mask & SP_DT_F32) ||
      (only_isa && strcmp(only_isa, simdpool_isa_name(e->isa)) != 0) ||
      !sp_cpu_runs(e->isa))
    return;
  if (!TENV_SUPPORTED) {
    printf("  fpenv   %-38s: skipped: no environment access on this machine "
           "in the test\n",
           e->name);
    return;
  }
  tenv_write(tenv_default());
  simdpool_index_type types[4];
  const int ntypes = index_types_of(e, types);
  tenv envs[N_CALLER_ENVS];
  for (int k = 0; k < N_CALLER_ENVS; k++)
    envs[k] = tenv_decode(caller_envs[k].code);
  rng_state = part_seed ^ 0xfe5e7ull;
  int ran = 0, drawn = 0;
  while (ran < configs_fpenv) {
    ck_assert_msg(++drawn < configs_fpenv * 200,
                  "could not draw geometries for %s", e->name);
    const uint64_t state = rng_state;
    int fits = 0;
    for (int k = 0; k < N_CALLER_ENVS; k++) {
      call_env = &envs[k];
      call_env_name = caller_envs[k].name;
      for (int t = 0; t < ntypes; t++) {
        rng_state = state;
        fits = run_one(e, types[t]);
      }
      if (!fits)
        break;
    }
    call_env = NULL;
    ran += fits;
  }
  printf("  fpenv   %-38s [%s]: %d configurations x %d environments x %d "
         "index type(s) = %d checks bit-exact, caller state restored\n",
         e->name, simdpool_isa_name(e->isa), ran, N_CALLER_ENVS, ntypes,
         ran * N_CALLER_ENVS * ntypes);
  fflush(stdout);
}
END_TEST

/* Kernels of S8/U8 only (the quantized average) against the scalar
 * reference of the same op, on random geometries of their class with
 * random bytes and random valid quantizations (zero points, scales whose
 * ratio is not 1, output ranges that clamp), both dtypes, pixel strides in
 * NHWC, unaligned tensors, guard bands; memcmp of the outputs, under the
 * default environment and one caller environment with FTZ/DAZ and another
 * rounding mode set (through dispatch's switch). */
/* Run k of a configuration: 0 calls e directly, 1 through dispatch's
 * switch under a random caller environment (where the test can set one). */
static void call_direct_or_in_env(const sp_kernel_entry *e, const sp_geom *g,
                                  const sp_io *io, int k) {
  if (k == 0 || !TENV_SUPPORTED) {
    e->fn(g, io);
    return;
  }
  tenv_write(tenv_decode(caller_envs[rnd() % N_CALLER_ENVS].code));
  sp_call_kernel(e->fn, g, io);
  tenv_write(tenv_default());
}

/* Is e a quantized average (S8/U8 AVG: int8_kernel_matches_reference)? */
static int is_qavg(const sp_kernel_entry *e) {
  return e->method == SIMDPOOL_AVG && !(e->dtype_mask & ~SP_DT_INT8);
}

START_TEST(int8_kernel_matches_reference) {
  const sp_kernel_entry *e = &sp_registry[order[_i]];
  if (!is_qavg(e) || family_no(e) % parts != part - 1 ||
      (only_isa && strcmp(only_isa, simdpool_isa_name(e->isa)) != 0) ||
      !sp_cpu_runs(e->isa))
    return;
  const sp_kernel_entry *ref = NULL;
  for (size_t i = 0; i < sp_registry_size && !ref; i++) {
    const sp_kernel_entry *r = &sp_registry[i];
    if (r->isa == SIMDPOOL_ISA_SCALAR && r->shape == e->shape &&
        r->method == e->method && r->layout == e->layout && r->op == e->op &&
        (r->dtype_mask & e->dtype_mask) == e->dtype_mask)
      ref = r;
  }
  ck_assert_msg(ref != NULL, "no scalar reference for %s", e->name);
  rng_state = part_seed ^ 0x1e8ull;
  int ran = 0, drawn = 0, strided = 0;
  while (ran < configs_per_kernel) {
    ck_assert_msg(++drawn < configs_per_kernel * 200,
                  "could not draw geometries for %s", e->name);
    simdpool_desc d;
    rnd_desc(&d, e, SIMDPOOL_INDEX_NONE);
    d.dtype = rnd() % 2 ? SIMDPOOL_S8 : SIMDPOOL_U8;
    const int s8 = d.dtype == SIMDPOOL_S8;
    d.clamp = 0;
    d.quant.x_scale = (float)rnd_range(1, 400) / 64.0f;
    d.quant.y_scale = (float)rnd_range(1, 400) / 64.0f;
    d.quant.x_zero_point = (int32_t)rnd_range(0, 255) - (s8 ? 128 : 0);
    d.quant.y_zero_point = (int32_t)rnd_range(0, 255) - (s8 ? 128 : 0);
    if (rnd() % 3 == 0) {
      const int32_t a = (int32_t)rnd_range(0, 255) - (s8 ? 128 : 0);
      const int32_t b = (int32_t)rnd_range(0, 255) - (s8 ? 128 : 0);
      d.quant.y_min = a < b ? a : b;
      d.quant.y_max = a < b ? b : a;
    }
    sp_geom g;
    if (sp_resolve_geom(&d, &g) != SIMDPOOL_OK ||
        !sp_shape_matches(e->shape, &g))
      continue;
    const int nhwc = g.layout == SIMDPOOL_NHWC;
    if (nhwc && rnd() % 3 == 0) { /* pixel strides */
      g.xs = g.c + rnd_range(1, 9);
      g.ys = g.c + rnd_range(0, 9);
      strided++;
    }
    const size_t nx = sp_x_elems(&g), ny = sp_y_elems(&g);
    const size_t off = rnd_range(0, 3); /* unaligned */
    buf x = buf_new(nx + off, 1), want = buf_new(ny, 1), got = buf_new(ny, 1);
    unsigned char *const xb = (unsigned char *)x.data + off;
    for (size_t i = 0; i < nx; i++)
      xb[i] = (unsigned char)rnd();
    memset(want.data, 0x5a, ny);
    memset(got.data, 0x5a, ny);
    const sp_io io_ref = {.xv = xb, .yv = want.data};
    const sp_io io_got = {.xv = xb, .yv = got.data};
    ref->fn(&g, &io_ref);
    char geom[320];
    describe(geom, sizeof geom, &g);
    for (int k = 0; k < 2; k++) {
      memset(got.data, 0x5a, ny);
      call_direct_or_in_env(e, &g, &io_got, k);
      ck_assert_msg(guards_intact(&got),
                    "%s wrote outside its output; seed %" PRIu64 "; %s",
                    e->name, seed, geom);
      if (memcmp(want.data, got.data, ny) != 0) {
        size_t i = 0;
        while (((unsigned char *)want.data)[i] ==
               ((unsigned char *)got.data)[i])
          i++;
        ck_abort_msg(
            "%s (%s, x_zp %d, y_zp %d, ratio %a): byte %zu is %d, "
            "the reference %d; seed %" PRIu64 "; %s",
            e->name, s8 ? "S8" : "U8", (int)g.q_xzp, (int)g.q_yzp,
            (double)g.q_ratio, i,
            s8 ? (int)((int8_t *)got.data)[i] : (int)((uint8_t *)got.data)[i],
            s8 ? (int)((int8_t *)want.data)[i] : (int)((uint8_t *)want.data)[i],
            seed, geom);
      }
    }
    free(x.mem);
    free(want.mem);
    free(got.mem);
    ran++;
  }
  printf("  ran     %-38s [%s S8/U8 %s %s]: %d configurations bit-exact "
         "(%d with pixel strides), each also under a caller environment\n",
         e->name, simdpool_isa_name(e->isa),
         e->layout == SIMDPOOL_NCHW ? "nchw" : "nhwc", shape_names[e->shape],
         ran, strided);
  fflush(stdout);
}
END_TEST

static const char *const dtype_names[] = {"f32", "bf16", "f16", "s8", "u8"};

/* n random elements of dtype t at p: for bf16 and f16 mostly floats of
 * every kind (rnd_value: ties, signed zeros, infinities, NaN, subnormals)
 * rounded to the type, else any bit pattern (NaN payloads, signalling
 * NaNs, the type's own subnormals); for 8-bit integers any byte. */
static void rnd_elems(simdpool_dtype t, void *p, size_t n, int nasty) {
  for (size_t i = 0; i < n; i++) {
    if (sp_dtype_integer(t)) {
      ((uint8_t *)p)[i] = (uint8_t)rnd();
      continue;
    }
    uint16_t h = (uint16_t)rnd();
    if (rnd() % 8 != 0) {
      const uint32_t b = float_bits(rnd_value(nasty));
      h = t == SIMDPOOL_BF16 ? sp_bf16_round_bits(b) : sp_f16_round_bits(b);
    }
    ((uint16_t *)p)[i] = h;
  }
}

static uint64_t hash_bytes(const void *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
  return h;
}

/* Kernels of bf16, f16, s8 or u8 elements (the parts compiled per element
 * type: kernels/tmpl/elem.h) against the scalar reference of the same op
 * in the same dtype, which computes the dtype's rules on its own: random
 * geometries of the kernel's class, every index type it takes, random
 * elements of every kind, pixel strides (whose gaps hold random elements
 * that must not be read) and unaligned tensors in NHWC, an output clamp on
 * a third of the forward runs, guard bands; memcmp of outputs and indices,
 * and the inputs unchanged. Each configuration runs twice, the second time
 * under a caller environment (FTZ/DAZ, another rounding mode) through
 * dispatch's switch. */
START_TEST(dtype_kernel_matches_reference) {
  const sp_kernel_entry *e = &sp_registry[order[_i]];
  if ((e->dtype_mask & SP_DT_F32) || is_qavg(e) ||
      family_no(e) % parts != part - 1 ||
      (only_isa && strcmp(only_isa, simdpool_isa_name(e->isa)) != 0) ||
      !sp_cpu_runs(e->isa))
    return;
  simdpool_dtype t = SIMDPOOL_BF16;
  while (!(e->dtype_mask & SP_DT_BIT(t)))
    t = (simdpool_dtype)((int)t + 1);
  const size_t es = sp_dtype_size(t);
  simdpool_index_type types[4];
  const int ntypes = index_types_of(e, types);
  const int to_y = op_writes_y(e), reads_idx = op_reads_idx(e);
  const int fwd = e->op == SP_OP_FWD;
  rng_state = part_seed ^ 0xd7e5ull;
  /* A quarter of the f32 sweep's count: the bodies are the f32 kernels',
   * which that sweep runs at full count. */
  const int configs = isa_brief ? 4 : configs_per_kernel / 4 + 1;
  int ran = 0, drawn = 0, strided = 0, clamped = 0;
  while (ran < configs) {
    ck_assert_msg(++drawn < configs * 200, "could not draw geometries for %s",
                  e->name);
    const simdpool_index_type it = types[drawn % ntypes];
    simdpool_desc d;
    rnd_desc(&d, e, it);
    d.index_type = it;
    d.dtype = t;
    if (sp_dtype_integer(t) && ran % 4 == 3) {
      /* Rows of several byte vectors (kernels/tmpl/bmax.c takes NCHW
       * rows of at least one or two), up to thousands of columns. */
      d.w = rnd() % 2 ? rnd_range(60, 300) : rnd_range(2040, 4640);
      d.h = d.h < 5 ? d.h : 5;
      d.n = 1;
      d.c = d.c < 3 ? d.c : 3;
    } else if (!sp_dtype_integer(t) && fwd && e->layout == SIMDPOOL_NCHW &&
               ran % 8 == 5) {
      /* Planes of more than 8192 elements: kernels that widen a plane's
       * rows in bands (kernels/tmpl/nchw_3x3s1.c's band3 holds 8192
       * floats) move their band at least once. */
      d.w = rnd_range(20, 60);
      d.h = 8192 / d.w + rnd_range(10, 120);
      d.n = 1;
      d.c = d.c < 2 ? d.c : 2;
    }
    sp_geom g;
    if (sp_resolve_geom(&d, &g) != SIMDPOOL_OK ||
        !sp_shape_matches(e->shape, &g))
      continue;
    const sp_kernel_entry *ref = reference_of(e, it);
    ck_assert_msg(ref && (ref->dtype_mask & SP_DT_BIT(t)),
                  "no scalar reference for %s", e->name);
    g.beyond_l2 = (int)(rnd() % 2);
    if (g.layout == SIMDPOOL_NHWC && rnd() % 3 == 0) { /* pixel strides */
      g.xs = g.c + rnd_range(1, 9);
      g.ys = g.c + rnd_range(0, 9);
      strided++;
    }
    const size_t nx = sp_x_elems(&g), ny = sp_y_elems(&g);
    const size_t nidx = g.n * g.c * sp_out_plane(&g), isz = sp_index_size(it);
    const int nasty = (int)rnd_range(0, 3) * 10;
    buf x = buf_new(nx, es), dy = buf_new(ny, es);
    rnd_elems(t, x.data, nx, nasty);
    rnd_elems(t, dy.data, ny, nasty);
    buf idx = buf_new(nidx, isz ? isz : 1);
    if (reads_idx) { /* the winners of the reference forward */
      const sp_kernel_entry *rf = NULL;
      for (size_t i = 0; i < sp_registry_size && !rf; i++) {
        const sp_kernel_entry *r = &sp_registry[i];
        if (r->isa == SIMDPOOL_ISA_SCALAR && r->shape == SP_SHAPE_GENERAL &&
            r->method == SIMDPOOL_MAX && r->layout == e->layout &&
            r->op == SP_OP_FWD && (r->dtype_mask & SP_DT_BIT(t)))
          rf = r;
      }
      ck_assert_ptr_nonnull(rf);
      buf ytmp = buf_new(ny, es);
      const sp_io io = {.xv = x.data, .yv = ytmp.data, .indices = idx.data};
      rf->fn(&g, &io);
      free(ytmp.mem);
    }
    if (fwd && !sp_dtype_integer(t) && rnd() % 3 == 0) {
      float lo = sp_elem(x.data, rnd() % nx, t);
      float hi = rnd() % 4 ? sp_elem(x.data, rnd() % nx, t) : lo;
      if (isnan(lo))
        lo = -1.0f;
      if (isnan(hi))
        hi = 0.5f;
      g.clamp = 1;
      g.clamp_lo = lo < hi ? lo : hi;
      g.clamp_hi = lo < hi ? hi : lo;
      clamped++;
    }
    const uint64_t sum_in = hash_bytes(x.data, nx * es) ^
                            hash_bytes(dy.data, ny * es) ^
                            (reads_idx ? hash_bytes(idx.data, nidx * isz) : 0);
    const size_t nout = to_y ? ny : nx;
    buf want = buf_new(nout, es), got = buf_new(nout, es);
    buf want_i = buf_new(nidx, isz ? isz : 1),
        got_i = buf_new(nidx, isz ? isz : 1);
    sp_io io_ref = {.xv = x.data, .dyv = dy.data}, io_got = io_ref;
    if (to_y) {
      io_ref.yv = want.data;
      io_got.yv = got.data;
      io_ref.indices = fwd ? (it ? want_i.data : NULL) : idx.data;
      io_got.indices = fwd ? (it ? got_i.data : NULL) : idx.data;
    } else {
      io_ref.dxv = want.data;
      io_got.dxv = got.data;
      io_ref.indices = io_got.indices = reads_idx ? idx.data : NULL;
    }
    memset(want.data, 0x5a, nout * es); /* pixel gaps: never written */
    ref->fn(&g, &io_ref);
    char geom[320];
    describe(geom, sizeof geom, &g);
    for (int k = 0; k < 2; k++) {
      memset(got.data, 0x5a, nout * es); /* as want's before the reference */
      call_direct_or_in_env(e, &g, &io_got, k);
      ck_assert_msg(guards_intact(&got) && guards_intact(&got_i),
                    "%s wrote outside its output; seed %" PRIu64 "; %s",
                    e->name, seed, geom);
      if (memcmp(want.data, got.data, nout * es) != 0) {
        size_t i = 0;
        while (!memcmp((const char *)want.data + i * es,
                       (const char *)got.data + i * es, es))
          i++;
        ck_abort_msg("%s (%s%s): element %zu is %a, the reference %a (bits "
                     "0x%x, 0x%x); seed %" PRIu64 "; %s",
                     e->name, k ? "under a caller environment" : "direct",
                     g.clamp ? ", clamped" : "", i,
                     (double)sp_elem(got.data, i, t),
                     (double)sp_elem(want.data, i, t),
                     es == 2 ? ((const uint16_t *)got.data)[i]
                             : ((const uint8_t *)got.data)[i],
                     es == 2 ? ((const uint16_t *)want.data)[i]
                             : ((const uint8_t *)want.data)[i],
                     seed, geom);
      }
      if (fwd && it)
        ck_assert_msg(memcmp(want_i.data, got_i.data, nidx * isz) == 0,
                      "%s: indices differ from the reference; seed %" PRIu64
                      "; %s",
                      e->name, seed, geom);
    }
    const uint64_t sum_out = hash_bytes(x.data, nx * es) ^
                             hash_bytes(dy.data, ny * es) ^
                             (reads_idx ? hash_bytes(idx.data, nidx * isz) : 0);
    ck_assert_msg(sum_out == sum_in,
                  "%s wrote into its inputs; seed %" PRIu64 "; %s", e->name,
                  seed, geom);
    free(x.mem);
    free(dy.mem);
    free(idx.mem);
    free(want.mem);
    free(got.mem);
    free(want_i.mem);
    free(got_i.mem);
    ran++;
  }
  printf("  ran     %-38s [%s %s %s %s]: %d configurations bit-exact (%d "
         "with pixel strides, %d clamped), each also under a caller "
         "environment\n",
         e->name, simdpool_isa_name(e->isa), dtype_names[t],
         e->layout == SIMDPOOL_NCHW ? "nchw" : "nhwc", shape_names[e->shape],
         ran, strided, clamped);
  fflush(stdout);
}
END_TEST

/* The environments above are not idle: called directly, without dispatch's
 * switch, the scalar reference's results change under them on the same
 * kind of inputs. Rounding modes must show (every emulator honours them);
 * which flush modes show is printed. */
START_TEST(fpenv_has_effect) {
  if (!TENV_SUPPORTED || only_isa)
    return;
  tenv_write(tenv_default());
  int changed[N_CALLER_ENVS] = {0};
  static const simdpool_method methods[] = {SIMDPOOL_MAX, SIMDPOOL_AVG,
                                            SIMDPOOL_LP};
  rng_state = seed ^ 0xeffec7ull;
  for (int iter = 0; iter < 60; iter++) {
    const sp_kernel_entry probe = {.name = "probe",
                                   .isa = SIMDPOOL_ISA_SCALAR,
                                   .method = methods[iter % 3],
                                   .layout = SIMDPOOL_NCHW,
                                   .op = SP_OP_FWD,
                                   .shape = SP_SHAPE_GENERAL,
                                   .index_mask = SP_IDX_NONE_ONLY,
                                   .dtype_mask = SP_DT_F32};
    const sp_kernel_entry *ref = reference_of(&probe, SIMDPOOL_INDEX_NONE);
    simdpool_desc d;
    rnd_desc(&d, &probe, SIMDPOOL_INDEX_NONE);
    d.p = 2.0f;
    sp_geom g;
    if (sp_resolve_geom(&d, &g) != SIMDPOOL_OK)
      continue;
    const size_t nx = g.n * g.c * sp_in_plane(&g),
                 ny = g.n * g.c * sp_out_plane(&g);
    float *x = malloc(nx * sizeof *x), *want = malloc(ny * sizeof *want),
          *got = malloc(ny * sizeof *got);
    ck_assert(x && want && got);
    for (size_t i = 0; i < nx; i++)
      x[i] = rnd_value_subnormal();
    sp_io io = {.x = x, .y = want};
    ref->fn(&g, &io);
    io.y = got;
    for (int k = 1; k < N_CALLER_ENVS; k++) {
      tenv_write(tenv_decode(caller_envs[k].code & ~32u)); /* no traps */
      ref->fn(&g, &io);
      tenv_write(tenv_default());
      changed[k] += memcmp(want, got, ny * sizeof *got) != 0;
    }
    free(x);
    free(want);
    free(got);
  }
  printf("  fpenv: the scalar reference called without the switch changes "
         "its results (of 60 random MAX/AVG/LP forward calls) under:");
  for (int k = 1; k < N_CALLER_ENVS; k++)
    printf(" %s %d,", caller_envs[k].name, changed[k]);
  printf(" (%s)\n", TENV_MACHINE);
  fflush(stdout);
  for (int k = 1; k < N_CALLER_ENVS; k++)
    if (caller_envs[k].code == 1 || caller_envs[k].code == 2 ||
        caller_envs[k].code == 3)
      ck_assert_msg(changed[k] > 0,
                    "%s never changed a result: the test's inputs or its "
                    "environment switch are idle",
                    caller_envs[k].name);
}
END_TEST

/* Every built ISA covers every (method, layout, op, index type) with a
 * GENERAL kernel, so a plan never lacks a kernel. */
START_TEST(registry_is_complete) {
  for (int isa = SIMDPOOL_ISA_SCALAR; isa <= SIMDPOOL_ISA_NEON; isa++) {
    if (!sp_isa_built((simdpool_isa)isa))
      continue;
    for (int m = 0; m <= SIMDPOOL_LP; m++)
      for (int l = 0; l <= SIMDPOOL_NHWC; l++)
        for (int op = 0; op < SP_OP_COUNT; op++)
          for (int it = 0; it <= SIMDPOOL_INDEX_U8; it++) {
            if (op == SP_OP_BWD && it != SIMDPOOL_INDEX_NONE)
              continue;
            const int idx_op = op == SP_OP_BWD_IDX || op == SP_OP_UNPOOL ||
                               op == SP_OP_UNPOOL_BWD;
            if ((m != SIMDPOOL_MAX && (it || idx_op)) || (idx_op && !it))
              continue;
            int found = 0;
            for (size_t i = 0; i < sp_registry_size; i++) {
              const sp_kernel_entry *e = &sp_registry[i];
              found |= (int)e->isa == isa && (int)e->method == m &&
                       (int)e->layout == l && (int)e->op == op &&
                       e->shape == SP_SHAPE_GENERAL &&
                       (e->index_mask & SP_IDX_BIT(it));
            }
            ck_assert_msg(found,
                          "%s lacks a general kernel: method %d layout %d "
                          "op %s index %d",
                          simdpool_isa_name((simdpool_isa)isa), m, l,
                          op_names[op], it);
          }
  }
}
END_TEST

/* Run under SIMDPOOL_ISA=<name> by meson: AUTO plans must run that ISA. */
START_TEST(forced_isa_is_used) {
  const char *env = getenv("SIMDPOOL_ISA");
  if (!env || !*env)
    return;
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 8, 8, 8, 2, 2);
  simdpool_plan *plan = NULL;
  simdpool_status st = simdpool_plan_create(&d, &plan);
  ck_assert_msg(st == SIMDPOOL_OK, "SIMDPOOL_ISA=%s: %s", env,
                simdpool_last_error());
  ck_assert_str_eq(simdpool_isa_name(simdpool_plan_isa(plan)), env);
  printf("  SIMDPOOL_ISA=%s: AUTO plan runs %s\n", env,
         simdpool_isa_name(simdpool_plan_isa(plan)));
  simdpool_plan_destroy(plan);
}
END_TEST

/* simdpool_backward's index check, against brute force: corrupt one index
 * of a valid set and expect rejection exactly when the new value names no
 * valid tap of that output's window (enumerated tap by tap here). */
static int brute_valid(const sp_geom *g, size_t o, long long v) {
  size_t oy, ox;
  if (g->layout == SIMDPOOL_NCHW) {
    ox = o % g->ow;
    oy = o / g->ow % g->oh;
  } else {
    ox = o / g->c % g->ow;
    oy = o / g->c / g->ow % g->oh;
  }
  for (size_t ki = 0; ki < g->kh; ki++) {
    for (size_t kj = 0; kj < g->kw; kj++) {
      const long long iy =
          (long long)(oy * g->sh + ki * g->dh) - (long long)g->pt;
      const long long ix =
          (long long)(ox * g->sw + kj * g->dw) - (long long)g->pl;
      if (iy < 0 || iy >= (long long)g->h || ix < 0 || ix >= (long long)g->w)
        continue;
      const long long want = g->index_type == SIMDPOOL_INDEX_U8
                                 ? (long long)(ki * g->kw + kj)
                                 : iy * (long long)g->w + ix;
      if (v == want)
        return 1;
    }
  }
  return 0;
}

START_TEST(index_check_matches_brute_force) {
  rng_state = seed ^ 0x1dc0ffee;
  int rejected = 0, accepted = 0;
  for (int iter = 0; iter < 3000; iter++) {
    const simdpool_index_type types[] = {SIMDPOOL_INDEX_I32, SIMDPOOL_INDEX_I64,
                                         SIMDPOOL_INDEX_U8};
    const simdpool_index_type it = types[iter % 3];
    const sp_kernel_entry probe = {.name = "probe",
                                   .isa = SIMDPOOL_ISA_SCALAR,
                                   .method = SIMDPOOL_MAX,
                                   .layout =
                                       iter % 2 ? SIMDPOOL_NHWC : SIMDPOOL_NCHW,
                                   .op = SP_OP_BWD_IDX,
                                   .shape = SP_SHAPE_GENERAL,
                                   .index_mask = SP_IDX_TYPED,
                                   .dtype_mask = SP_DT_F32};
    simdpool_desc d;
    rnd_desc(&d, &probe, it);
    d.c = rnd_range(1, 5);
    d.w = rnd_range(1, 12);
    /* The bulk pass has three NCHW forms: whole small planes, rows of a
     * larger plane, runs along rows wider than its tables; two NHWC ones:
     * up to 1024 channels and more; and it runs at the plan's ISA's width:
     * every ISA the CPU runs in turn. */
    if (iter % 20 == 7) { /* NHWC pixels of more than 1024 channels */
      d.layout = SIMDPOOL_NHWC;
      d.c = rnd_range(1025, 1040);
      d.h = rnd_range(1, 6);
      d.w = rnd_range(1, 6);
    } else if (iter % 10 == 8) { /* NCHW planes of more than 1024 outputs */
      d.c = rnd_range(1, 2);
      d.h = rnd_range(40, 80);
      d.w = rnd_range(40, 80);
      d.stride_h = d.stride_w = 1;
    } else if (iter % 10 == 9) {
      d.c = 1;
      d.h = rnd_range(1, 5);
      d.w = rnd_range(1030, 1100);
    }
    simdpool_isa runnable[SIMDPOOL_ISA_NEON + 1];
    int nrun = 0;
    for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; i++)
      if (simdpool_isa_supported((simdpool_isa)i))
        runnable[nrun++] = (simdpool_isa)i;
    d.isa = runnable[(iter / 10) % nrun];
    simdpool_plan *plan = NULL;
    if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK)
      continue;
    const sp_geom *g = &plan->geom;
    const size_t nx = g->n * g->c * sp_in_plane(g),
                 ny = g->n * g->c * sp_out_plane(g);
    float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    float *dy = malloc(ny * sizeof *dy), *dx = malloc(nx * sizeof *dx);
    void *ind = malloc(ny * 8);
    ck_assert(x && y && dy && dx && ind);
    for (size_t i = 0; i < nx; i++)
      x[i] = rnd_value(10);
    for (size_t i = 0; i < ny; i++)
      dy[i] = rnd_value(0);
    ck_assert_int_eq(simdpool_forward(plan, x, y, ind), SIMDPOOL_OK);
    size_t o = rnd_range(0, ny - 1);
    /* A third of the time an output of a row's first or last column, where
     * the bulk pass's runs and tables end. */
    if (rnd() % 3 == 0)
      o = o - o % g->ow + (rnd() % 2 ? g->ow - 1 : 0);
    /* Near-miss values are the interesting ones: small offsets, the plane's
     * ends, far-out values, and (I64) values that are valid modulo 2^32. */
    long long v;
    const long long plane = (long long)sp_in_plane(g);
    switch (rnd() % 7) {
    case 5:
    case 6: {
      /* A near miss of the index forward wrote: one step off in a row or
       * a column, or a kernel's width or height away. */
      const long long w = (long long)g->w, kw = (long long)g->kw;
      const long long kh = (long long)g->kh;
      const long long offs[] = {-1,     1,       -w,         w,      -w - 1,
                                -w + 1, w - 1,   w + 1,      kw,     -kw,
                                kh * w, -kh * w, kh * w + 1, -1 - kw};
      const long long base = it == SIMDPOOL_INDEX_U8 ? ((const uint8_t *)ind)[o]
                             : it == SIMDPOOL_INDEX_I32
                                 ? ((const int32_t *)ind)[o]
                                 : (long long)((const int64_t *)ind)[o];
      v = base + offs[rnd() % (sizeof offs / sizeof offs[0])];
      break;
    }
    case 4:
      /* I64: a valid position plus 2^32, whose low half alone is valid. */
      if (it == SIMDPOOL_INDEX_I64) {
        v = ((const int64_t *)ind)[o] + ((long long)1 << 32);
        break;
      }
      /* fall through */
    case 0:
      v = (long long)rnd_range(0, it == SIMDPOOL_INDEX_U8 ? 255
                                                          : (size_t)plane + 2);
      break;
    case 1:
      v = (long long)rnd_range(0, g->kh * g->kw + 2);
      break;
    case 2:
      v = -(long long)rnd_range(1, 3);
      break;
    default:
      v = plane - 1 + (long long)rnd_range(0, 2);
      break;
    }
    if (it == SIMDPOOL_INDEX_U8) {
      v &= 0xff;
      ((uint8_t *)ind)[o] = (uint8_t)v;
    } else if (it == SIMDPOOL_INDEX_I32) {
      ((int32_t *)ind)[o] = (int32_t)v;
    } else {
      ((int64_t *)ind)[o] = v;
    }
    const int want_ok = brute_valid(g, o, v);
    const simdpool_status st = simdpool_backward(plan, dy, ind, NULL, dx);
    char geom[320];
    describe(geom, sizeof geom, g);
    ck_assert_msg((st == SIMDPOOL_OK) == want_ok,
                  "index %lld at output %zu: brute force says %s, backward "
                  "returned %s; seed %" PRIu64 "; %s",
                  v, o, want_ok ? "valid" : "invalid",
                  simdpool_status_string(st), seed, geom);
    rejected += !want_ok;
    accepted += want_ok;
    free(x);
    free(y);
    free(dy);
    free(dx);
    free(ind);
    simdpool_plan_destroy(plan);
  }
  printf("  index check: %d corrupted index sets rejected, %d accepted, all as "
         "brute force says\n",
         rejected, accepted);
  fflush(stdout);
  ck_assert(rejected > 100 && accepted > 100);
}
END_TEST

int main(void) {
  const double scale = test_random_init();
  const char *pe = getenv("SIMDPOOL_TEST_PART");
  if (pe && *pe &&
      (sscanf(pe, "%u/%u", &part, &parts) != 2 || parts < 1 || part < 1 ||
       part > parts)) {
    printf("SIMDPOOL_TEST_PART=%s: want k/n with 1 <= k <= n\n", pe);
    return 1;
  }
  part_seed = seed + part - 1;
  configs_per_kernel = (int)(configs_per_kernel * scale);
  configs_fpenv =
      (int)(configs_fpenv * scale) > 3 ? (int)(configs_fpenv * scale) : 3;
  if (scale < 1.0) /* at most the number of shapes: every kernel runs one */
    big_stride = scale > 0.1 ? (size_t)(1.0 / scale + 0.5) : 10;
  if (big_stride > sizeof big_shapes / sizeof big_shapes[0])
    big_stride = sizeof big_shapes / sizeof big_shapes[0];
  configs_per_kernel /= (int)parts;
  if (configs_per_kernel < 1)
    configs_per_kernel = 1;

  /* Under SIMDPOOL_ISA=<isa>, an ISA this machine cannot run skips the whole
   * suite (exit 77: meson reports SKIP), and an unknown name must be a clean
   * plan-creation error. */
  const char *env = getenv("SIMDPOOL_ISA");
  if (env && *env) {
    only_isa = env;
    const char *brief = getenv("SIMDPOOL_TEST_ISA_BRIEF");
    isa_brief = brief && strcmp(brief, "1") == 0;
    if (isa_brief && configs_per_kernel > 5)
      configs_per_kernel = 5;
    simdpool_desc d;
    simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 1, 2, 2, 2, 2);
    simdpool_plan *plan = NULL;
    simdpool_status st = simdpool_plan_create(&d, &plan);
    simdpool_plan_destroy(plan);
    if (st == SIMDPOOL_UNSUPPORTED) {
      printf("SIMDPOOL_ISA=%s: skipped: %s\n", env, simdpool_last_error());
      return 77;
    }
    if (st != SIMDPOOL_OK) {
      printf("SIMDPOOL_ISA=%s: plan creation fails cleanly: %s: %s\n", env,
             simdpool_status_string(st), simdpool_last_error());
      return st == SIMDPOOL_INVALID_ARGUMENT && *simdpool_last_error() ? 0 : 1;
    }
  }

  printf("test_kernels: seed %" PRIu64 " (set SIMDPOOL_TEST_SEED to repeat), "
         "%d configurations per kernel\n",
         seed, configs_per_kernel);
  if (parts > 1)
    printf("part %u of %u (SIMDPOOL_TEST_PART; the same to repeat): its "
           "configurations from seed %" PRIu64 ", its share of the large "
           "shapes\n",
           part, parts, part_seed);
  print_isas();

  order = malloc(sp_registry_size * sizeof *order);
  ck_assert_ptr_nonnull(order);
  for (size_t i = 0; i < sp_registry_size; i++)
    order[i] = i;
  qsort(order, sp_registry_size, sizeof *order, order_cmp);
  Suite *suite = suite_create("kernels");
  TCase *tc = tcase_create("registry");
  tcase_set_timeout(tc, 600);
  if (part == 1) {
    tcase_add_test(tc, registry_is_complete);
    tcase_add_test(tc, forced_isa_is_used);
    if (!only_isa)
      tcase_add_test(tc, index_check_matches_brute_force);
  }
  tcase_add_loop_test(tc, kernel_matches_reference, 0, (int)sp_registry_size);
  tcase_add_loop_test(tc, kernel_matches_reference_big, 0,
                      (int)sp_registry_size);
  if (part == 1)
    tcase_add_test(tc, fpenv_has_effect);
  tcase_add_loop_test(tc, kernel_fpenv, 0, (int)sp_registry_size);
  tcase_add_loop_test(tc, int8_kernel_matches_reference, 0,
                      (int)sp_registry_size);
  tcase_add_loop_test(tc, dtype_kernel_matches_reference, 0,
                      (int)sp_registry_size);
  suite_add_tcase(suite, tc);
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  printf("test_kernels: inputs and reference outputs made %zu times, reused "
         "%zu times\n",
         memo_misses, memo_hits);
  memo_clear();
  free(memo);
  free(order);
  return failed ? 1 : 0;
}
