/* SPDX-License-Identifier: MIT */
/* fpenv_test.h — the tests' own access to the floating-point control and
 * status registers (x86-64 MXCSR; AArch64 FPCR and FPSR), written apart from
 * the library's dispatch/fpenv.c so that a mistake there cannot hide here:
 * the caller environments the FP-environment tests and the fuzz target run
 * the library under, read back after each call. Header-only. */
#ifndef SIMDPOOL_FPENV_TEST_H
#define SIMDPOOL_FPENV_TEST_H

#include <stdint.h>
#include <stdio.h>

/* One caller environment: the control word and the sticky status bits. */
typedef struct tenv {
  uint64_t ctl, status;
} tenv;

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
#define TENV_SUPPORTED 1
#define TENV_MACHINE "x86 MXCSR"
enum {
  TENV_FTZ = 1u << 15,
  TENV_DAZ = 1u << 6,
  TENV_RC_SHIFT = 13, /* 0 nearest, 1 down, 2 up, 3 toward zero */
  TENV_MASKS = 0x1f80u,
  TENV_STATUS = 0x3fu, /* IE DE ZE OE UE PE */
  /* invalid, divide-by-zero and overflow traps unmasked */
  TENV_TRAPS = (1u << 7) | (1u << 9) | (1u << 10),
};
static inline tenv tenv_read(void) {
  unsigned v;
  __asm__ volatile("stmxcsr %0" : "=m"(v));
  tenv e = {v & ~(unsigned)TENV_STATUS, v & TENV_STATUS};
  return e;
}
static inline void tenv_write(tenv e) {
  unsigned v = (unsigned)(e.ctl | e.status);
  __asm__ volatile("ldmxcsr %0" : : "m"(v) : "memory");
}
static inline tenv tenv_default(void) {
  tenv e = {TENV_MASKS, 0};
  return e;
}
/* rounding: 0 nearest, 1 upward, 2 downward, 3 toward zero. */
static inline uint64_t tenv_rounding(int r) {
  static const unsigned rc[4] = {0, 2, 1, 3};
  return (uint64_t)rc[r & 3] << TENV_RC_SHIFT;
}
/* Decodes a byte: bits 0-1 rounding, 2 FTZ, 3 DAZ, 4 every status flag set,
 * 5 invalid/div-by-zero/overflow traps unmasked. */
static inline tenv tenv_decode(unsigned b) {
  tenv e = tenv_default();
  e.ctl |= tenv_rounding((int)(b & 3));
  if (b & 4)
    e.ctl |= TENV_FTZ;
  if (b & 8)
    e.ctl |= TENV_DAZ;
  if (b & 16)
    e.status = TENV_STATUS;
  if (b & 32)
    e.ctl &= ~(uint64_t)TENV_TRAPS;
  return e;
}
#elif defined(__aarch64__)
#define TENV_SUPPORTED 1
#define TENV_MACHINE "AArch64 FPCR/FPSR"
enum {
  TENV_FZ = 1u << 24,
  TENV_DN = 1u << 25,
  TENV_FZ16 = 1u << 19,
  TENV_RMODE_SHIFT = 22, /* 0 nearest, 1 +inf, 2 -inf, 3 zero */
  TENV_STATUS = 0x9fu,   /* IOC DZC OFC UFC IXC, IDC */
};
static inline tenv tenv_read(void) {
  uint64_t c, s;
  __asm__ volatile("mrs %0, fpcr" : "=r"(c));
  __asm__ volatile("mrs %0, fpsr" : "=r"(s));
  tenv e = {c, s};
  return e;
}
static inline void tenv_write(tenv e) {
  __asm__ volatile("msr fpcr, %0" : : "r"(e.ctl) : "memory");
  __asm__ volatile("msr fpsr, %0" : : "r"(e.status) : "memory");
}
static inline tenv tenv_default(void) {
  tenv e = {0, 0};
  return e;
}
static inline uint64_t tenv_rounding(int r) {
  return (uint64_t)(r & 3) << TENV_RMODE_SHIFT; /* same order as x86's list */
}
/* Decodes a byte: bits 0-1 rounding, 2 FZ, 3 FZ16, 4 every cumulative
 * status flag set, 5 DN. */
static inline tenv tenv_decode(unsigned b) {
  tenv e = tenv_default();
  e.ctl |= tenv_rounding((int)(b & 3));
  if (b & 4)
    e.ctl |= TENV_FZ;
  if (b & 8)
    e.ctl |= TENV_FZ16;
  if (b & 16)
    e.status = TENV_STATUS;
  if (b & 32)
    e.ctl |= TENV_DN;
  return e;
}
#else
#define TENV_SUPPORTED 0
#define TENV_MACHINE "none"
static inline tenv tenv_read(void) {
  tenv e = {0, 0};
  return e;
}
static inline void tenv_write(tenv e) {
  (void)e;
}
static inline tenv tenv_default(void) {
  return tenv_read();
}
static inline tenv tenv_decode(unsigned b) {
  (void)b;
  return tenv_read();
}
#endif

static inline int tenv_equal(tenv a, tenv b) {
  return a.ctl == b.ctl && a.status == b.status;
}

/* "ctl=0x... status=0x..." for messages. */
static inline const char *tenv_text(tenv e, char *buf, size_t len) {
  snprintf(buf, len, "ctl=0x%llx status=0x%llx", (unsigned long long)e.ctl,
           (unsigned long long)e.status);
  return buf;
}

#endif /* SIMDPOOL_FPENV_TEST_H */
