/* SPDX-License-Identifier: MIT */
/* fpenv.c — every kernel call runs in the IEEE default floating-point
 * environment (docs/semantics.md#floating-point-environment), whatever the
 * caller set, and the caller's control and status state comes back unchanged.
 *
 * x86-64: MXCSR (RC = nearest, FTZ = DAZ = 0, every exception masked); the
 * scalar kernels compile to SSE too, and nothing here uses the x87 unit.
 * AArch64: FPCR = 0 (RMode nearest, FZ = FZ16 = DN = AHP = 0, no traps) and
 * FPSR put back as found. Elsewhere: C's fenv, FE_DFL_ENV.
 *
 * Why the compiler cannot move kernel arithmetic across the switch: the
 * kernel is reached through a function pointer of the registry, defined in
 * another translation unit (another static library), so its floating-point
 * work happens inside an opaque call that sits between the two asm volatile
 * statements; asm volatile statements are never reordered with each other or
 * with calls. Keep the call opaque (no LTO of kernels into this file). The
 * only floating-point work of dispatch itself is plan creation (its checks
 * compare floats and its messages print them), which runs whole through
 * sp_call_default_env(); the calls' checks and the chunking are integer
 * code. */
#include "internal.h"

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
#define SP_FPENV_X86 1
#elif defined(__aarch64__)
#define SP_FPENV_ARM64 1
#else
#include <fenv.h>
#endif

#if SP_FPENV_X86
/* MXCSR: bits 0-5 are the sticky status flags, 6 DAZ, 7-12 the exception
 * masks, 13-14 rounding control, 15 FTZ. */
#define MXCSR_STATUS 0x003fu
#define MXCSR_DEFAULT 0x1f80u /* all masked, round to nearest, no FTZ/DAZ */

static inline unsigned read_mxcsr(void) {
  unsigned v;
  __asm__ volatile("stmxcsr %0" : "=m"(v));
  return v;
}

static inline void write_mxcsr(unsigned v) {
  __asm__ volatile("ldmxcsr %0" : : "m"(v) : "memory");
}

typedef unsigned env_state;

static inline env_state env_enter(void) {
  const unsigned saved = read_mxcsr();
  /* The caller's sticky flags may stay set while the kernel runs (they
   * change no result); only the control bits must be the default, and
   * MXCSR is written only when they are not. Afterwards the caller's value
   * is written back unconditionally: reading MXCSR to see whether the
   * kernel raised a flag waits for every floating-point operation in
   * flight, and measured here costs about twice the write. */
  if ((saved & ~MXCSR_STATUS) != MXCSR_DEFAULT)
    write_mxcsr(MXCSR_DEFAULT | (saved & MXCSR_STATUS));
  return saved;
}

static inline void env_leave(env_state saved) {
  write_mxcsr(saved);
}
#elif SP_FPENV_ARM64
static inline unsigned long read_fpcr(void) {
  unsigned long v;
  __asm__ volatile("mrs %0, fpcr" : "=r"(v));
  return v;
}

static inline void write_fpcr(unsigned long v) {
  __asm__ volatile("msr fpcr, %0" : : "r"(v) : "memory");
}

static inline unsigned long read_fpsr(void) {
  unsigned long v;
  __asm__ volatile("mrs %0, fpsr" : "=r"(v));
  return v;
}

static inline void write_fpsr(unsigned long v) {
  __asm__ volatile("msr fpsr, %0" : : "r"(v) : "memory");
}

typedef struct env_state {
  unsigned long fpcr, fpsr;
} env_state;

static inline env_state env_enter(void) {
  const env_state saved = {read_fpcr(), read_fpsr()};
  /* FPCR writes may stall the pipeline: only when needed */
  if (saved.fpcr != 0)
    write_fpcr(0);
  return saved;
}

static inline void env_leave(env_state saved) {
  if (saved.fpcr != 0)
    write_fpcr(saved.fpcr);
  write_fpsr(saved.fpsr); /* as on x86: a write, not a read that waits */
}
#else
typedef fenv_t env_state;

static inline env_state env_enter(void) {
  fenv_t saved;
  fegetenv(&saved);
  fesetenv(FE_DFL_ENV);
  return saved;
}

static inline void env_leave(env_state saved) {
  fesetenv(&saved);
}
#endif

void sp_call_kernel(sp_kernel_fn fn, const sp_geom *g, const sp_io *io) {
  const env_state saved = env_enter();
  fn(g, io);
  env_leave(saved);
}

void sp_call_default_env(void (*fn)(void *ctx), void *ctx) {
  const env_state saved = env_enter();
  fn(ctx);
  env_leave(saved);
}
