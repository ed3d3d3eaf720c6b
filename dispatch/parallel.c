/* SPDX-License-Identifier: MIT */
/* parallel.c — forward and backward over a caller's parallel-for: the work is
 * cut into chunks that write disjoint bytes, and every chunk runs the kernel
 * the plan's ISA picks for its sub-geometry, so the bits are those of the
 * single-threaded call whatever the thread count or the order of tasks. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernel_util.h"

/* Chunks smaller than this cost more in task overhead (waking a thread
 * takes microseconds) than they gain; calls under two chunks run inline. */
#define SP_CHUNK_MIN_BYTES ((size_t)256 << 10)
/* dx row bands span at least this many window extents (plan_chunks). */
#define SP_BAND_MIN_EXTENTS 4
/* Enough chunks for dynamic load balance over any pool we expect. */
#define SP_CHUNK_MAX 1024

typedef struct par_job {
  const simdpool_plan *plan;
  sp_op op;
  sp_io io;
  size_t planes;     /* independent planes: n*c (NCHW) or n (NHWC) */
  size_t in_plane;   /* elements of one dense input plane (h*w, or h*w*c) */
  size_t out_plane;  /* elements of one dense output plane */
  size_t row;        /* elements of one dense input row (w, or w*c) */
  size_t orow;       /* elements of one dense output row */
  size_t per_chunk;  /* planes per chunk when not splitting rows */
  size_t row_blocks; /* > 1: each plane is cut into this many row blocks */
  int bands;         /* row blocks are dx row bands of the whole plane */
  int colbands;      /* with bands: dx column bands (1D plans) */
  int slices;        /* row blocks are blocks of output slices (3D) */
  int cols;          /* row blocks are blocks of output columns (one output
                        row: 1D) */
  int general;       /* unpooling with indices that are not all taps of
                        their own windows: GENERAL/ND kernels only */
  atomic_size_t bad; /* index validation: the first bad element found */
  const sp_convert_entry *convert; /* widened plans: the ISA's conversions */
} par_job;

/* One chunk: its geometry, its tensors, and where it sits in the call. */
typedef struct chunk {
  sp_geom g;
  sp_io io;
  size_t out_off; /* its first output element in the whole call (dense) */
  size_t bias;    /* its first input element in the plane: what forward's
                     flat indices, counted from there, must add */
} chunk;

/* First row of row block b when `rows` rows (output rows, or dx rows for
 * bands) are dealt as evenly as possible (no product that could overflow). */
static size_t block_start(const par_job *j, size_t rows, size_t b) {
  const size_t q = rows / j->row_blocks, r = rows % j->row_blocks;
  return b * q + (b < r ? b : r);
}

/* Chunk i is a plane group [p0, p1) (the same geometry on fewer planes), a
 * block of one plane's outputs along one axis (output slices, rows, or the
 * columns of a 1D plan: sp_cut_axis), or a band of dx rows. */
static void chunk_of(const par_job *j, size_t i, chunk *c) {
  const sp_geom *g = &j->plan->geom;
  c->g = *g;
  c->bias = 0;
  size_t in_off, out_off;
  if (j->slices || j->cols || (!j->bands && j->row_blocks > 1)) {
    /* The axis (0 depth, 1 rows, 2 columns), its fields, and the elements
     * (dense) and flat positions one step along it moves. */
    const int ax = j->slices ? 0 : j->cols ? 2 : 1;
    size_t *const in[3] = {&c->g.d, &c->g.h, &c->g.w};
    size_t *const out[3] = {&c->g.od, &c->g.oh, &c->g.ow};
    size_t *const lead[3] = {&c->g.pf, &c->g.pt, &c->g.pl};
    size_t *const trail[3] = {&c->g.pk, &c->g.pb, &c->g.pr};
    const size_t stride[3] = {g->sd, g->sh, g->sw};
    const size_t lanes = g->layout == SIMDPOOL_NHWC ? g->c : 1;
    const size_t in_step[3] = {g->h * j->row, j->row, lanes};
    const size_t out_step[3] = {g->oh * j->orow, j->orow, lanes};
    const size_t flat_step[3] = {g->h * g->w, g->w, 1};
    const size_t p = i / j->row_blocks, b = i % j->row_blocks;
    const size_t o0 = block_start(j, *out[ax], b),
                 o1 = block_start(j, *out[ax], b + 1);
    c->g.n = 1;
    if (c->g.layout == SIMDPOOL_NCHW)
      c->g.c = 1;
    /* Every window keeps its taps, padding and divisor (sp_cut_axis). */
    /* Widened forward blocks keep only the inputs their windows read:
     * those are the ones converted. */
    const size_t ext[3] = {g->dd * (g->kd - 1) + 1, g->dh * (g->kh - 1) + 1,
                           g->dw * (g->kw - 1) + 1};
    const int mode = j->op != SP_OP_FWD ? SP_CUT_OWN
                     : j->plan->widen   ? SP_CUT_SPAN
                                        : SP_CUT_TO_END;
    const size_t first =
        sp_cut_axis(g->adaptive, in[ax], out[ax], lead[ax], trail[ax],
                    stride[ax], ext[ax], &c->g.acut[ax], o0, o1, mode);
    in_off = p * j->in_plane + first * in_step[ax];
    out_off = p * j->out_plane + o0 * out_step[ax];
    c->bias = first * flat_step[ax];
    if (j->op != SP_OP_FWD)
      c->g.fbase = c->bias; /* SP_K_FBASE kernels (plan_chunks) */
  } else if (j->bands) {
    /* dx rows [row0, row1) of plane p, or of a 1D plan dx columns [col0,
     * col1): the whole plane's geometry, so every covering output and
     * every flat index stays as it is. */
    const size_t p = i / j->row_blocks, b = i % j->row_blocks;
    c->g.n = 1;
    if (c->g.layout == SIMDPOOL_NCHW)
      c->g.c = 1;
    if (j->colbands) {
      c->g.col0 = block_start(j, g->w, b);
      c->g.col1 = block_start(j, g->w, b + 1);
    } else {
      c->g.row0 = block_start(j, g->h, b);
      c->g.row1 = block_start(j, g->h, b + 1);
    }
    in_off = p * j->in_plane;
    out_off = p * j->out_plane;
  } else {
    const size_t p0 = i * j->per_chunk;
    const size_t p1 =
        p0 + j->per_chunk < j->planes ? p0 + j->per_chunk : j->planes;
    if (c->g.layout == SIMDPOOL_NCHW) {
      c->g.n = 1;
      c->g.c = c->g.xs = c->g.ys = p1 - p0;
    } else {
      c->g.n = p1 - p0;
    }
    in_off = p0 * j->in_plane;
    out_off = p0 * j->out_plane;
  }
  c->out_off = out_off;
  /* Offsets above count dense elements, at pixel boundaries; x, dx, y and
   * dy step by the pixel strides (NHWC). */
  const size_t x_off =
      g->layout == SIMDPOOL_NHWC ? in_off / g->c * g->xs : in_off;
  const size_t y_off =
      g->layout == SIMDPOOL_NHWC ? out_off / g->c * g->ys : out_off;
  /* In bytes: elements of the plan's dtype. */
  const size_t es = sp_dtype_size(g->dtype);
  c->io = j->io;
  if (c->io.xv)
    c->io.xv = (const char *)c->io.xv + x_off * es;
  if (c->io.yv)
    c->io.yv = (char *)c->io.yv + y_off * es;
  if (c->io.dyv)
    c->io.dyv = (const char *)c->io.dyv + y_off * es;
  if (c->io.dxv)
    c->io.dxv = (char *)c->io.dxv + x_off * es;
  if (c->io.indices)
    c->io.indices =
        (char *)c->io.indices + out_off * sp_index_size(g->index_type);
}

/* ------------------------------------------------ widened chunks
 * A BF16/F16 plan or an S8/U8 MAX plan on a SIMD ISA (plan->widen) runs,
 * where the ISA has no kernel of its dtype (the fast paths have:
 * kernels/tmpl/elem.h), that ISA's f32 kernels: each chunk's inputs are
 * widened (exactly) into a dense f32 scratch, the kernel runs on the
 * chunk's geometry there, and its output is narrowed once, to nearest even (MAX
 * forward and unpooling: MAX's narrowing, which gives a widened value back its
 * own bits; 8-bit integers come back exactly). The f32 kernel's bits are the
 * f32 rules on the widened values, so the result is the dtype's
 * (docs/semantics.md#element-types). Chunks are at most about
 * SP_CHUNK_MIN_BYTES of the dtype's data where the call can be cut
 * (forward blocks read only their windows' inputs: SP_CUT_SPAN), so the
 * scratch stays in cache; a chunk whose scratch cannot be allocated runs
 * the scalar reference instead (the same bits). */

typedef struct widen_task {
  const par_job *j;
  const chunk *c;
  const sp_kernel_entry *k; /* the f32 kernel */
} widen_task;

/* Converts a chunk's x-shaped (x_shape) or y-shaped tensor between its
 * storage (elements of its dtype, the caller's pixel strides) and the
 * dense f32 scratch f (NHWC: c floats a pixel): widen src to f32 (to_f32),
 * else narrow into dst (keep: MAX's narrowing). */
static void convert_tensor(const sp_convert_entry *cv, const sp_geom *g,
                           int x_shape, const void *src, void *dst, float *f,
                           int to_f32, int keep) {
  const size_t s = x_shape ? g->xs : g->ys;
  const size_t plane = x_shape ? sp_in_plane(g) : sp_out_plane(g);
  size_t runs = 1, run = g->n * g->c * plane;
  if (g->layout == SIMDPOOL_NHWC && s != g->c) {
    runs = g->n * plane;
    run = g->c;
  }
  const size_t es = sp_dtype_size(g->dtype);
  for (size_t r = 0; r < runs; r++) {
    if (to_f32)
      cv->widen(g->dtype, (const char *)src + r * s * es, f + r * run, run);
    else
      cv->narrow(g->dtype, keep, f + r * run, (char *)dst + r * s * es, run);
  }
}

static void widened_chunk(void *ctx) {
  const widen_task *t = ctx;
  const par_job *j = t->j;
  const chunk *c = t->c;
  const sp_op op = j->op;
  sp_geom f = c->g;
  f.dtype = SIMDPOOL_F32;
  if (f.layout == SIMDPOOL_NHWC)
    f.xs = f.ys = f.c;
  /* The tensors op reads (x, dy) and the one it writes (y or dx). */
  const int rd_x = op == SP_OP_FWD || op == SP_OP_UNPOOL_BWD ||
                   (op == SP_OP_BWD && f.method != SIMDPOOL_AVG);
  const int rd_dy =
      op == SP_OP_BWD || op == SP_OP_BWD_IDX || op == SP_OP_UNPOOL;
  const int wr_y = op == SP_OP_FWD || op == SP_OP_UNPOOL_BWD;
  const int keep = (op == SP_OP_FWD && f.method == SIMDPOOL_MAX) ||
                   op == SP_OP_UNPOOL || op == SP_OP_UNPOOL_BWD;
  const size_t nx = sp_x_elems(&f), ny = sp_y_elems(&f);
  const size_t total =
      (rd_x ? nx : 0) + (rd_dy ? ny : 0) + (wr_y ? ny : nx); /* bounded */
  float *const buf = malloc(total * sizeof *buf);
  if (!buf) {
    const simdpool_plan scalar = {.isa = SIMDPOOL_ISA_SCALAR};
    sp_plan_kernel(&scalar, &c->g, op, j->general)->fn(&c->g, &c->io);
    return;
  }
  const sp_kernel_entry *k = t->k;
  float *p = buf;
  sp_io io = {.indices = c->io.indices};
  if (rd_x) {
    convert_tensor(j->convert, &c->g, 1, c->io.xv, NULL, p, 1, 0);
    io.x = p;
    p += nx;
  }
  if (rd_dy) {
    convert_tensor(j->convert, &c->g, 0, c->io.dyv, NULL, p, 1, 0);
    io.dy = p;
    p += ny;
  }
  if (wr_y)
    io.y = p;
  else
    io.dx = p;
  k->fn(&f, &io);
  if (wr_y)
    convert_tensor(j->convert, &c->g, 0, NULL, c->io.yv, p, 0, keep);
  else
    convert_tensor(j->convert, &c->g, 1, NULL, c->io.dxv, p, 0, keep);
  free(buf);
}

static void run_chunk(void *ctx, size_t i) {
  const par_job *j = ctx;
  chunk c;
  chunk_of(j, i, &c);
  const sp_kernel_entry *k = sp_plan_kernel(j->plan, &c.g, j->op, j->general);
  if (!sp_kernel_takes(k, c.g.dtype)) {
    widen_task t = {j, &c, k};
    sp_call_default_env(widened_chunk, &t);
  } else {
    sp_call_kernel(k->fn, &c.g, &c.io);
  }
  /* Forward's flat indices count from the start of the whole plane: the
   * kernel counted from its first row or slice. (Backward and unpooling
   * blocks read them relative to c.g.fbase instead: SP_K_FBASE kernels.) */
  if (j->op != SP_OP_FWD || c.bias == 0)
    return;
  const size_t lanes = c.g.layout == SIMDPOOL_NHWC ? c.g.c : 1;
  const size_t count = c.g.od * c.g.oh * c.g.ow * lanes;
  const size_t bias = c.bias; /* < d*h*w */
  if (c.g.index_type == SIMDPOOL_INDEX_I32) {
    int32_t *ix = c.io.indices;
    for (size_t k = 0; k < count; k++)
      ix[k] += (int32_t)bias; /* I32 plans have h*w <= INT32_MAX */
  } else if (c.g.index_type == SIMDPOOL_INDEX_I64) {
    int64_t *ix = c.io.indices;
    for (size_t k = 0; k < count; k++)
      ix[k] += (int64_t)bias;
  }
}

/* Index validation of chunk i: lowers j->bad to its first bad element. */
static void check_chunk(void *ctx, size_t i) {
  par_job *j = ctx;
  chunk c;
  chunk_of(j, i, &c);
  long long value;
  const size_t local =
      sp_find_bad_index(&c.g, j->plan->isa, c.io.indices, &value);
  if (local == SIZE_MAX)
    return;
  const size_t at = c.out_off + local;
  size_t cur = atomic_load_explicit(&j->bad, memory_order_relaxed);
  while (at < cur &&
         !atomic_compare_exchange_weak_explicit(
             &j->bad, &cur, at, memory_order_relaxed, memory_order_relaxed)) {
  }
}

/* Cuts the call into chunks of about chunk_bytes; returns their count.
 * check: the chunks of index validation, which reads outputs only (no dx
 * bands). */
static size_t plan_chunks(par_job *j, const simdpool_plan *plan, sp_op op,
                          const sp_io *io, size_t chunk_bytes, int check,
                          int general) {
  const sp_geom *g = &plan->geom;
  memset(j, 0, sizeof *j);
  j->plan = plan;
  j->op = op;
  j->io = *io;
  j->general = general;
  atomic_init(&j->bad, SIZE_MAX);
  for (size_t i = 0; plan->widen && i < sp_convert_table_size; i++)
    if (sp_convert_table[i].isa == plan->isa)
      j->convert = &sp_convert_table[i];
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t lanes = nhwc ? g->c : 1;
  j->planes = nhwc ? g->n : g->n * g->c;
  j->row = g->w * lanes;
  j->orow = g->ow * lanes;
  j->in_plane = g->d * g->h * j->row;
  j->out_plane = g->od * g->oh * j->orow;

  /* Bytes the call moves: plan creation bounded each tensor's byte count by
   * PTRDIFF_MAX, so their sum fits in size_t. Integer arithmetic, so the
   * split never depends on the caller's floating-point environment. */
  const size_t esize = sp_dtype_size(g->dtype);
  const size_t bytes =
      esize * j->planes * j->in_plane + esize * j->planes * j->out_plane;
  size_t chunks = bytes / (chunk_bytes ? chunk_bytes : 1);
  if (chunks > SP_CHUNK_MAX)
    chunks = SP_CHUNK_MAX;
  if (chunks < 1)
    chunks = 1;

  /* Rows may be split when planes are too few. Backward blocks of output
   * rows must own their input rows: windows of different output rows may
   * not share a row (extent <= stride). Flat indices then count from the
   * block's first element (sp_geom.fbase): only kernels with SP_K_FBASE
   * take them, and only those take unpooling's blocks (the GENERAL and ND
   * kernels take an index anywhere in its plane). The index check's chunks
   * (check) are planes. Otherwise backward kernels that write any band of
   * dx rows by themselves (SP_K_ROWS) take bands of the whole plane's dx
   * rows (with a depth axis, the same rows of every slice). */
  const size_t eh = g->dh * (g->kh - 1) + 1, ew = g->dw * (g->kw - 1) + 1;
  const size_t ed = g->dd * (g->kd - 1) + 1;
  /* Each output block owns its inputs along an axis: fixed windows no
   * wider than the stride, or adaptive windows where out divides in (then
   * window o is [o*in/out, (o+1)*in/out)). */
  const int own_d = g->adaptive ? g->d % g->od == 0 : ed <= g->sd;
  const int own_h = g->adaptive ? g->h % g->oh == 0 : eh <= g->sh;
  const int own_w = g->adaptive ? g->w % g->ow == 0 : ew <= g->sw;
  const int unpool = op == SP_OP_UNPOOL || op == SP_OP_UNPOOL_BWD;
  const int flat_idx =
      (op == SP_OP_BWD_IDX || unpool) && g->index_type != SIMDPOOL_INDEX_U8;
  const sp_kernel_entry *k =
      op == SP_OP_FWD || check || general || (!flat_idx && !unpool && own_h)
          ? NULL
          : sp_plan_kernel(plan, g, op, 0);
  const int fbase_ok = k && (k->flags & SP_K_FBASE);
  /* Blocks of outputs along an axis whose windows do not overlap. */
  const int blocks_ok = op == SP_OP_FWD || (!flat_idx && !unpool) || fbase_ok;
  const int sub_rows = blocks_ok && (op == SP_OP_FWD || own_h);
  /* Bands read the whole plane's dy: not for widened chunks, which
   * convert everything they read. */
  j->bands = !sub_rows && k && (k->flags & SP_K_ROWS) && sp_bwd_rows_ok(g) &&
             g->h > 1 && sp_kernel_takes(k, g->dtype);
  /* 3D plans split into blocks of output slices by the rules of row blocks
   * on the depth axis. */
  if (j->planes < chunks && g->od > 1 && blocks_ok &&
      (op == SP_OP_FWD || own_d)) {
    size_t blocks = (chunks + j->planes - 1) / j->planes;
    j->slices = 1;
    j->row_blocks = blocks < g->od ? blocks : g->od;
    return j->planes * j->row_blocks;
  }
  /* 1D plans (one input and one output row: a flat index is the column)
   * with too few planes (channels-last, one image): blocks of output
   * columns by the rules of row blocks on the width axis. */
  if (j->planes < chunks && g->d == 1 && g->od == 1 && g->h == 1 &&
      g->oh == 1 && g->ow > 1 && blocks_ok && (op == SP_OP_FWD || own_w)) {
    size_t blocks = (chunks + j->planes - 1) / j->planes;
    j->bands = 0;
    j->cols = 1;
    j->row_blocks = blocks < g->ow ? blocks : g->ow;
    return j->planes * j->row_blocks;
  }
  /* 1D plans with too few planes whose backward kernel writes any band of
   * dx columns by itself (SP_K_COLS; overlapping windows): bands of dx
   * columns, each at least SP_BAND_MIN_EXTENTS window extents wide. */
  const sp_kernel_entry *kc =
      (op == SP_OP_BWD || op == SP_OP_BWD_IDX) && !check && !general &&
              j->planes < chunks && g->h == 1 && g->oh == 1 && g->w > 1
          ? sp_plan_kernel(plan, g, op, 0)
          : NULL;
  if (kc && (kc->flags & SP_K_COLS) && sp_kernel_takes(kc, g->dtype)) {
    size_t blocks = (chunks + j->planes - 1) / j->planes;
    const size_t cap = g->w / (SP_BAND_MIN_EXTENTS * ew);
    if (blocks > cap)
      blocks = cap ? cap : 1;
    j->bands = j->colbands = 1;
    j->row_blocks = blocks;
    return j->planes * blocks;
  }
  if (j->planes >= chunks || !(sub_rows || j->bands) ||
      (g->oh == 1 && !j->bands) || ((g->d > 1 || g->od > 1) && !j->bands)) {
    j->bands = 0;
    j->per_chunk = (j->planes + chunks - 1) / chunks;
    j->row_blocks = 1;
    return (j->planes + j->per_chunk - 1) / j->per_chunk;
  }
  size_t blocks = (chunks + j->planes - 1) / j->planes;
  const size_t rows = j->bands ? g->h : g->oh;
  if (blocks > rows)
    blocks = rows;
  /* A band re-reads the outputs that straddle its edges and filters their
   * indices: bands of fewer than SP_BAND_MIN_EXTENTS window extents cost
   * more than their parallelism gains (the stem's 15 bands of 7 rows made
   * NHWC backward from I64 1.6x the work of one call). */
  const size_t band_cap = rows / (SP_BAND_MIN_EXTENTS * eh);
  if (j->bands && blocks > band_cap)
    blocks = band_cap ? band_cap : 1;
  j->row_blocks = blocks;
  return j->planes * blocks;
}

static void for_each_chunk(par_job *j, size_t range, simdpool_task_fn task,
                           simdpool_parallel_for_fn parallel_for, void *pool) {
  if (!parallel_for || range == 1) {
    for (size_t i = 0; i < range; i++)
      task(j, i);
    return;
  }
  parallel_for(pool, task, j, range);
}

size_t sp_find_bad_parallel(const simdpool_plan *plan, const void *indices,
                            simdpool_parallel_for_fn parallel_for, void *pool) {
  par_job j;
  const sp_io io = {.indices = (void *)(uintptr_t)indices};
  const size_t range =
      plan_chunks(&j, plan, SP_OP_BWD_IDX, &io, SP_CHUNK_MIN_BYTES, 1, 0);
  for_each_chunk(&j, range, check_chunk, parallel_for, pool);
  return atomic_load(&j.bad);
}

void sp_run_parallel(const simdpool_plan *plan, sp_op op, const sp_io *io,
                     simdpool_parallel_for_fn parallel_for, void *pool) {
  sp_run_chunked(plan, op, io, parallel_for, pool, SP_CHUNK_MIN_BYTES);
}

void sp_run_chunked(const simdpool_plan *plan, sp_op op, const sp_io *io,
                    simdpool_parallel_for_fn parallel_for, void *pool,
                    size_t chunk_bytes) {
  sp_run_job(plan, op, io, 0, parallel_for, pool, chunk_bytes);
}

void sp_run_job(const simdpool_plan *plan, sp_op op, const sp_io *io,
                int general, simdpool_parallel_for_fn parallel_for, void *pool,
                size_t chunk_bytes) {
  par_job j;
  if (!chunk_bytes)
    chunk_bytes = SP_CHUNK_MIN_BYTES;
  const size_t range = plan_chunks(&j, plan, op, io, chunk_bytes, 0, general);
  for_each_chunk(&j, range, run_chunk, parallel_for, pool);
}
