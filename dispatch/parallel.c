/* parallel.c — forward and backward over a caller's parallel-for: the work is
 * cut into chunks that write disjoint bytes, and every chunk runs the kernel
 * the plan's ISA picks for its sub-geometry, so the bits are those of the
 * single-threaded call whatever the thread count or the order of tasks. */
#include <string.h>

#include "internal.h"

/* Chunks smaller than this cost more in task overhead (waking a thread
 * takes microseconds) than they gain; calls under two chunks run inline. */
#define SP_CHUNK_MIN_BYTES ((size_t)256 << 10)
/* Enough chunks for dynamic load balance over any pool we expect. */
#define SP_CHUNK_MAX 1024

typedef struct par_job {
  const simdpool_plan *plan;
  sp_op op;
  sp_io io;
  size_t planes;     /* independent planes: n*c (NCHW) or n (NHWC) */
  size_t in_plane;   /* elements of one input plane (h*w, or h*w*c) */
  size_t out_plane;  /* elements of one output plane */
  size_t row;        /* elements of one input row (w, or w*c) */
  size_t orow;       /* elements of one output row */
  size_t per_chunk;  /* planes per chunk when not splitting rows */
  size_t row_blocks; /* > 1: each plane is cut into this many row blocks */
} par_job;

/* One plane group [p0, p1): the same geometry on fewer planes. */
static void run_planes(const par_job *j, size_t p0, size_t p1) {
  sp_geom sub = j->plan->geom;
  if (sub.layout == SIMDPOOL_NCHW) {
    sub.n = 1;
    sub.c = p1 - p0;
  } else {
    sub.n = p1 - p0;
  }
  sp_io io = j->io;
  const size_t in_off = p0 * j->in_plane, out_off = p0 * j->out_plane;
  const size_t isz = sp_index_size(sub.index_type);
  if (io.x)
    io.x += in_off;
  if (io.y)
    io.y += out_off;
  if (io.dy)
    io.dy += out_off;
  if (io.dx)
    io.dx += in_off;
  if (io.indices)
    io.indices = (char *)io.indices + out_off * isz;
  sp_pick_kernel(j->plan->isa, &sub, j->op)->fn(&sub, &io);
}

/* Output rows [r0, r1) of plane p. The sub-geometry starts at input row
 * first = r0*sh - pt when that is >= 0 (then it has no top padding), else
 * keeps the remaining top padding. Every window sees exactly the taps,
 * padding and divisor it has in the whole plane. Forward reads to the bottom
 * of the input; backward owns the input rows up to the next block's first
 * row, which no other block's windows reach (checked by the caller). */
static void run_rows(const par_job *j, size_t p, size_t r0, size_t r1) {
  const sp_geom *g = &j->plan->geom;
  sp_geom sub = *g;
  sub.n = 1;
  if (sub.layout == SIMDPOOL_NCHW)
    sub.c = 1;
  const size_t top = r0 * g->sh; /* first window row, plus pt */
  const size_t first = top >= g->pt ? top - g->pt : 0;
  sub.pt = top >= g->pt ? 0 : g->pt - top;
  sub.oh = r1 - r0;
  size_t end = g->h; /* input rows [first, end) */
  if (j->op != SP_OP_FWD && r1 < g->oh) {
    end = r1 * g->sh - g->pt;
    sub.pb = 0;
  }
  sub.h = end - first;
  sp_io io = j->io;
  const size_t in_off = p * j->in_plane + first * j->row;
  const size_t out_off = p * j->out_plane + r0 * j->orow;
  const size_t isz = sp_index_size(sub.index_type);
  if (io.x)
    io.x += in_off;
  if (io.y)
    io.y += out_off;
  if (io.dy)
    io.dy += out_off;
  if (io.dx)
    io.dx += in_off;
  if (io.indices)
    io.indices = (char *)io.indices + out_off * isz;
  sp_pick_kernel(j->plan->isa, &sub, j->op)->fn(&sub, &io);
  /* Flat indices count from the top of the whole plane: the kernel counted
   * from row `first`. (Backward blocks never take flat indices.) */
  if (j->op == SP_OP_FWD && first > 0 &&
      (sub.index_type == SIMDPOOL_INDEX_I32 ||
       sub.index_type == SIMDPOOL_INDEX_I64)) {
    const size_t count = (r1 - r0) * j->orow;
    if (sub.index_type == SIMDPOOL_INDEX_I32) {
      int32_t *ix = io.indices;
      const int32_t bias = (int32_t)(first * g->w); /* < h*w <= INT32_MAX */
      for (size_t i = 0; i < count; i++)
        ix[i] += bias;
    } else {
      int64_t *ix = io.indices;
      const int64_t bias = (int64_t)(first * g->w);
      for (size_t i = 0; i < count; i++)
        ix[i] += bias;
    }
  }
}

/* First output row of row block b: the oh rows dealt as evenly as possible
 * (no product that could overflow). */
static size_t block_start(const par_job *j, size_t b) {
  const size_t oh = j->plan->geom.oh, q = oh / j->row_blocks;
  const size_t r = oh % j->row_blocks;
  return b * q + (b < r ? b : r);
}

static void run_chunk(void *ctx, size_t i) {
  const par_job *j = ctx;
  if (j->row_blocks > 1) {
    const size_t p = i / j->row_blocks, b = i % j->row_blocks;
    run_rows(j, p, block_start(j, b), block_start(j, b + 1));
  } else {
    const size_t p0 = i * j->per_chunk;
    const size_t p1 =
        p0 + j->per_chunk < j->planes ? p0 + j->per_chunk : j->planes;
    run_planes(j, p0, p1);
  }
}

void sp_run_parallel(const simdpool_plan *plan, sp_op op, const sp_io *io,
                     simdpool_parallel_for_fn parallel_for, void *pool) {
  sp_run_chunked(plan, op, io, parallel_for, pool, SP_CHUNK_MIN_BYTES);
}

void sp_run_chunked(const simdpool_plan *plan, sp_op op, const sp_io *io,
                    simdpool_parallel_for_fn parallel_for, void *pool,
                    size_t chunk_bytes) {
  const sp_geom *g = &plan->geom;
  par_job j;
  memset(&j, 0, sizeof j);
  j.plan = plan;
  j.op = op;
  j.io = *io;
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t lanes = nhwc ? g->c : 1;
  j.planes = nhwc ? g->n : g->n * g->c;
  j.row = g->w * lanes;
  j.orow = g->ow * lanes;
  j.in_plane = g->h * j.row;
  j.out_plane = g->oh * j.orow;

  /* Bytes the call moves (plan creation bounded each count by PTRDIFF_MAX). */
  const double bytes = 4.0 * ((double)j.planes * (double)j.in_plane +
                              (double)j.planes * (double)j.out_plane);
  double want = bytes / (double)(chunk_bytes ? chunk_bytes : 1);
  if (want > SP_CHUNK_MAX)
    want = SP_CHUNK_MAX;
  const size_t chunks = want < 1.0 ? 1 : (size_t)want;

  /* Rows may be split when planes are too few. Backward blocks must own
   * their input rows: windows of different output rows may not share a row
   * (extent <= stride), and flat indices would need rebasing. */
  const size_t eh = g->dh * (g->kh - 1) + 1;
  const int flat_idx =
      op == SP_OP_BWD_IDX && g->index_type != SIMDPOOL_INDEX_U8;
  const int rows_ok = op == SP_OP_FWD || (eh <= g->sh && !flat_idx);
  size_t range;
  if (j.planes >= chunks || !rows_ok || g->oh == 1) {
    j.per_chunk = (j.planes + chunks - 1) / chunks;
    range = (j.planes + j.per_chunk - 1) / j.per_chunk;
    j.row_blocks = 1;
  } else {
    size_t blocks = (chunks + j.planes - 1) / j.planes;
    if (blocks > g->oh)
      blocks = g->oh;
    j.row_blocks = blocks;
    range = j.planes * blocks;
  }
  if (!parallel_for || range == 1) {
    for (size_t i = 0; i < range; i++)
      run_chunk(&j, i);
    return;
  }
  parallel_for(pool, run_chunk, &j, range);
}
