/* SPDX-License-Identifier: MIT */
/* internal.h — dispatch's internal interface: errors, CPU detection, plans;
 * used by tests too. */
#ifndef SIMDPOOL_INTERNAL_H
#define SIMDPOOL_INTERNAL_H

#include "kernel.h"

/* Records the detail of a failure for simdpool_last_error() and returns st. */
simdpool_status sp_fail(simdpool_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The names messages print for enum values: the enumerator without its
 * prefix ("MAX", "SAME_UPPER", "I32"); "?" for a value out of range
 * (messages print those as numbers). */
const char *sp_method_name(simdpool_method m);
const char *sp_padding_name(simdpool_padding p);
const char *sp_index_type_name(simdpool_index_type t);
const char *sp_dtype_name(simdpool_dtype t);

/* Nonzero when the CPU and OS can run kernels of isa (detected once). */
int sp_cpu_runs(simdpool_isa isa);
/* Bytes of the L2 cache of the core running the caller (the size the
 * OS reports for cpu0), read once; 0 when it cannot be read. */
size_t sp_cpu_l2_bytes(void);
/* Nonzero when the registry holds kernels of isa (i.e. this build has them). */
int sp_isa_built(simdpool_isa isa);

struct simdpool_plan {
  /* The geometry the kernels run on: the resolved one, or an equivalent
   * simpler view of it (sp_simplify_geom). */
  sp_geom geom;
  size_t out_d, out_h, out_w; /* the plan's output sizes, as resolved */
  simdpool_isa isa;
  const sp_kernel_entry *kernel[SP_OP_COUNT]; /* NULL where the op is absent */
  /* Unpooling's kernels for indices that are not all taps of their own
   * windows (any position inside the plane): the GENERAL/ND kernels of
   * the ISA; NULL for the other ops. */
  const sp_kernel_entry *any_index[SP_OP_COUNT];
  /* "clamp_min=..., clamp_max=..." for backward's rejection, formatted when
   * the plan is made: converting a subnormal bound to double at call time
   * would raise the caller's denormal flag (and read 0 under DAZ). */
  char clamp_text[64];
  /* A BF16/F16 plan or an S8/U8 MAX plan on a SIMD ISA: where the ISA
   * has no kernel of the dtype for an op (sp_kernel_takes), kernel[] and
   * any_index[] are its f32 kernels, and every call runs them chunk by
   * chunk on f32 copies (exact widening, then one narrowing: parallel.c),
   * which gives the bits the dtype's rules define. name[op] is then what
   * simdpool_plan_kernel_name reports ("<f32 kernel>+bf16"), else empty. */
  int widen;
  char name[SP_OP_COUNT][72];
};

/* Does kernel k compute elements of type t itself? Else (an f32 kernel of
 * a plan that widens) it runs on widened copies. */
static inline int sp_kernel_takes(const sp_kernel_entry *k, simdpool_dtype t) {
  return (k->dtype_mask & SP_DT_BIT(t)) != 0;
}

/* May a plan of isa on g run f32 kernels on widened copies where isa has
 * no kernel of g's dtype (plan->widen)? bf16, f16 and S8/U8 MAX on a SIMD
 * ISA may (docs/semantics.md#element-types). */
int sp_dtype_widens(simdpool_isa isa, const sp_geom *g);

/* Validates d and fills g (shape math included). No kernel choice. */
simdpool_status sp_resolve_geom(const simdpool_desc *d, sp_geom *g);

/* Rewrites g, in place, as an equivalent geometry the kernels serve
 * better: the same tensors, windows, scan order, divisions and indices.
 * Uniform adaptive windows become fixed ones; a 3D plan whose depth window
 * is one slice becomes a 2D plan over its slices (see plan.c). */
void sp_simplify_geom(sp_geom *g);

/* Does geometry g belong to shape class s? */
int sp_shape_matches(sp_shape s, const sp_geom *g);

/* The kernel of isa for op on g (the most specialised one that matches), or
 * NULL when the registry has none. */
const sp_kernel_entry *sp_pick_kernel(simdpool_isa isa, const sp_geom *g,
                                      sp_op op);
/* The same among the GENERAL and ND kernels only: for unpooling, the ones
 * that take any in-plane index. */
const sp_kernel_entry *sp_pick_general(simdpool_isa isa, const sp_geom *g,
                                       sp_op op);
/* Is e of a general class (GENERAL, ND): one that takes every geometry of
 * its rank, and for unpooling any index inside its plane? A kernel of
 * another class is specialised, and an unpooling one relies on every index
 * naming a valid tap of its own window. */
int sp_is_general(const sp_kernel_entry *e);

/* Runs fn(g, io) in the IEEE default floating-point environment and puts
 * the caller's control and status state back afterwards (fpenv.c). Every
 * kernel call of the entry points, serial or in a parallel task, goes
 * through it. */
void sp_call_kernel(sp_kernel_fn fn, const sp_geom *g, const sp_io *io);

/* Runs fn(ctx) in the same environment: dispatch's own floating-point work
 * (plan creation: its float checks and messages), which must not depend on
 * the caller's mode either. fn must be defined in another translation
 * unit. */
void sp_call_default_env(void (*fn)(void *ctx), void *ctx);

/* Which ops a plan of geometry g needs. */
int sp_op_needed(const sp_geom *g, sp_op op);

/* Runs the kernel of op over io, cut into chunks that write disjoint bytes,
 * through parallel_for(pool, ...) (inline when parallel_for is NULL). The
 * call's checks have passed. */
void sp_run_parallel(const simdpool_plan *plan, sp_op op, const sp_io *io,
                     simdpool_parallel_for_fn parallel_for, void *pool);

/* sp_run_parallel() with chunks of about chunk_bytes (input plus output)
 * instead of the default; tests use small chunks to split small tensors. */
void sp_run_chunked(const simdpool_plan *plan, sp_op op, const sp_io *io,
                    simdpool_parallel_for_fn parallel_for, void *pool,
                    size_t chunk_bytes);

/* sp_run_chunked() (chunk_bytes 0: the default size), and for unpooling
 * with general set (some index is not a tap of its own window) every chunk
 * runs a GENERAL/ND kernel (sp_pick_general). */
void sp_run_job(const simdpool_plan *plan, sp_op op, const sp_io *io,
                int general, simdpool_parallel_for_fn parallel_for, void *pool,
                size_t chunk_bytes);

/* The kernel isa runs for op on g (the GENERAL/ND ones when general): its
 * kernel of g's dtype of a specialised class; else, where the dtype widens
 * (sp_dtype_widens), its f32 kernel of a specialised class; else its
 * GENERAL/ND kernel of the dtype, or the f32 one. */
const sp_kernel_entry *sp_pick_dtype_kernel(simdpool_isa isa, const sp_geom *g,
                                            sp_op op, int general);

/* The kernel a chunk g of plan's call runs for op: sp_pick_dtype_kernel
 * of plan->isa. */
const sp_kernel_entry *sp_plan_kernel(const simdpool_plan *plan,
                                      const sp_geom *g, sp_op op, int general);

/* The first element of indices that names no valid tap of its window (on
 * geometry g), or SIZE_MAX; *value receives the bad index. The bulk pass
 * runs at the width of isa (the plan's). */
size_t sp_find_bad_index(const sp_geom *g, simdpool_isa isa,
                         const void *indices, long long *value);

/* sp_find_bad_index() over the whole plan, chunk by chunk through
 * parallel_for; returns the first bad element or SIZE_MAX. */
size_t sp_find_bad_parallel(const simdpool_plan *plan, const void *indices,
                            simdpool_parallel_for_fn parallel_for, void *pool);

#endif /* SIMDPOOL_INTERNAL_H */
