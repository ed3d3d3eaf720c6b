/* SPDX-License-Identifier: MIT */
/* isa_probe.c — checks run-time ISA dispatch through the public API only:
 * which ISA an AUTO plan picks, that forcing an ISA this CPU (or build) lacks
 * is a clean SIMDPOOL_UNSUPPORTED (via desc.isa and via SIMDPOOL_ISA), and
 * that the picked ISA matches the scalar reference bit for bit. Run natively
 * (--native: expects the best supported ISA) and under qemu-x86_64 -cpu
 * Nehalem/Haswell by .ci/oldcpu.sh.
 *
 * Usage: isa_probe <expected-auto-isa> [<isa-that-must-be-unsupported> ...]
 *        isa_probe --native
 * Exit status: 0 when every check passes, 1 otherwise (2: bad usage). */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpool.h"

static int failures;
/* After the first full report, matches_scalar() prints failures only. */
static int quiet;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
check(int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("  %s: ", ok ? "ok  " : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!ok)
    failures++;
}

/* Every ISA the API names, best first (the order AUTO prefers). */
static const simdpool_isa all_isas[] = {SIMDPOOL_ISA_NEON, SIMDPOOL_ISA_AVX512,
                                        SIMDPOOL_ISA_AVX2, SIMDPOOL_ISA_SSE41,
                                        SIMDPOOL_ISA_SCALAR};
#define NUM_ISAS (sizeof all_isas / sizeof all_isas[0])

static int isa_from_name(const char *name, simdpool_isa *isa) {
  for (size_t i = 0; i < NUM_ISAS; i++)
    if (strcmp(name, simdpool_isa_name(all_isas[i])) == 0) {
      *isa = all_isas[i];
      return 1;
    }
  return 0;
}

/* ------------------------------------------------------------ test cases */

typedef struct {
  const char *name;
  simdpool_method method;
  simdpool_layout layout;
  size_t n, c, h, w, kh, kw, sh, sw, pad;
  simdpool_index_type index_type;
} probe_case;

/* Small shapes, but wide enough (c, w) that every vector width has full
 * vectors and tails. */
static const probe_case cases[] = {
    {"max 2x2/s2 nchw i32", SIMDPOOL_MAX, SIMDPOOL_NCHW, 2, 3, 10, 37, 2, 2, 2,
     2, 0, SIMDPOOL_INDEX_I32},
    {"max 3x3/s2/p1 nhwc u8", SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 37, 9, 11, 3, 3,
     2, 2, 1, SIMDPOOL_INDEX_U8},
    {"avg 3x3/s1/p1 nhwc", SIMDPOOL_AVG, SIMDPOOL_NHWC, 1, 21, 7, 9, 3, 3, 1, 1,
     1, SIMDPOOL_INDEX_NONE},
    {"avg 2x3/s2 nchw", SIMDPOOL_AVG, SIMDPOOL_NCHW, 2, 2, 8, 41, 2, 3, 2, 2, 0,
     SIMDPOOL_INDEX_NONE},
    {"lp2 2x2/s2 nhwc", SIMDPOOL_LP, SIMDPOOL_NHWC, 1, 19, 6, 6, 2, 2, 2, 2, 0,
     SIMDPOOL_INDEX_NONE},
};
#define NUM_CASES (sizeof cases / sizeof cases[0])

static void fill_desc(const probe_case *pc, simdpool_isa isa,
                      simdpool_desc *d) {
  simdpool_desc_init(d, pc->method, pc->layout, pc->n, pc->c, pc->h, pc->w,
                     pc->kh, pc->kw);
  d->stride_h = pc->sh;
  d->stride_w = pc->sw;
  d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = pc->pad;
  d->index_type = pc->index_type;
  d->isa = isa;
}

static size_t index_size(simdpool_index_type t) {
  switch (t) {
  case SIMDPOOL_INDEX_I32:
    return 4;
  case SIMDPOOL_INDEX_I64:
    return 8;
  case SIMDPOOL_INDEX_U8:
    return 1;
  case SIMDPOOL_INDEX_NONE:
    break;
  }
  return 0;
}

/* Deterministic inputs with ties, signed zeros, infinities and NaNs. */
static void fill_input(float *x, size_t count) {
  uint64_t s = 0x243f6a8885a308d3ull;
  for (size_t i = 0; i < count; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t r = (uint32_t)(s >> 33);
    switch (r % 16) {
    case 0:
      x[i] = 1.0f; /* ties */
      break;
    case 1:
      x[i] = (r & 64) ? -0.0f : 0.0f;
      break;
    case 2: {
      const uint32_t nan_bits = 0x7fc00000u | (r >> 12 & 0xff);
      memcpy(&x[i], &nan_bits, sizeof nan_bits);
      break;
    }
    case 3:
      x[i] = (r & 64) ? -1.0f / 0.0f : 1.0f / 0.0f;
      break;
    default:
      x[i] = ((float)(r % 20001) - 10000.0f) / 977.0f;
    }
  }
}

/* Runs case pc on a plan of isa (or AUTO); fills y and idx. Returns the
 * plan's ISA, or SIMDPOOL_ISA_AUTO when plan creation or forward failed. */
static simdpool_isa run_case(const probe_case *pc, simdpool_isa isa,
                             const float *x, float *y, void *idx,
                             size_t *out_count) {
  simdpool_desc d;
  fill_desc(pc, isa, &d);
  simdpool_plan *plan = NULL;
  simdpool_status st = simdpool_plan_create(&d, &plan);
  if (st != SIMDPOOL_OK) {
    printf("    %s on %s: plan: %s: %s\n", pc->name, simdpool_isa_name(isa),
           simdpool_status_string(st), simdpool_last_error());
    return SIMDPOOL_ISA_AUTO;
  }
  size_t oh, ow;
  simdpool_plan_output_shape(plan, &oh, &ow);
  *out_count = pc->n * pc->c * oh * ow;
  st = simdpool_forward(plan, x, y, pc->index_type ? idx : NULL);
  const simdpool_isa ran = simdpool_plan_isa(plan);
  simdpool_plan_destroy(plan);
  if (st != SIMDPOOL_OK) {
    printf("    %s on %s: forward: %s: %s\n", pc->name, simdpool_isa_name(isa),
           simdpool_status_string(st), simdpool_last_error());
    return SIMDPOOL_ISA_AUTO;
  }
  return ran;
}

#define MAX_ELEMS 4096

/* isa (forced through desc.isa, or AUTO) must run `want` and give the scalar
 * reference's bits on every case. */
static int matches_scalar(simdpool_isa isa, simdpool_isa want) {
  static float x[MAX_ELEMS], y_ref[MAX_ELEMS], y[MAX_ELEMS];
  static unsigned char idx_ref[MAX_ELEMS * 8], idx[MAX_ELEMS * 8];
  int ok = 1;
  for (size_t i = 0; i < NUM_CASES; i++) {
    const probe_case *pc = &cases[i];
    const size_t in_count = pc->n * pc->c * pc->h * pc->w;
    if (in_count > MAX_ELEMS) {
      printf("    %s: case too large\n", pc->name);
      return 0;
    }
    fill_input(x, in_count);
    memset(y_ref, 0xa5, sizeof y_ref);
    memset(y, 0x5a, sizeof y);
    memset(idx_ref, 0xa5, sizeof idx_ref);
    memset(idx, 0x5a, sizeof idx);
    size_t n_ref = 0, n = 0;
    if (run_case(pc, SIMDPOOL_ISA_SCALAR, x, y_ref, idx_ref, &n_ref) !=
        SIMDPOOL_ISA_SCALAR)
      return 0;
    const simdpool_isa ran = run_case(pc, isa, x, y, idx, &n);
    if (ran == SIMDPOOL_ISA_AUTO) { /* run_case() said why */
      ok = 0;
      continue;
    }
    if (ran != want) {
      printf("    %s: plan runs %s, expected %s\n", pc->name,
             simdpool_isa_name(ran), simdpool_isa_name(want));
      ok = 0;
      continue;
    }
    const size_t isz = index_size(pc->index_type);
    if (n != n_ref || memcmp(y, y_ref, n * sizeof(float)) != 0 ||
        memcmp(idx, idx_ref, n * isz) != 0) {
      for (size_t k = 0; k < n; k++) {
        uint32_t a, b;
        memcpy(&a, &y[k], 4);
        memcpy(&b, &y_ref[k], 4);
        if (a != b || memcmp(idx + k * isz, idx_ref + k * isz, isz) != 0) {
          printf("    %s: output %zu differs: %s 0x%08x, scalar 0x%08x\n",
                 pc->name, k, simdpool_isa_name(ran), (unsigned)a, (unsigned)b);
          break;
        }
      }
      ok = 0;
      continue;
    }
    if (!quiet)
      printf("    %s: %zu outputs, %s == scalar bit for bit\n", pc->name, n,
             simdpool_isa_name(ran));
  }
  quiet = 1;
  return ok;
}

/* Forcing isa (desc.isa when via_env is 0, else SIMDPOOL_ISA) must fail with
 * SIMDPOOL_UNSUPPORTED, *out NULL and a message that names the ISA. */
static void check_unsupported(simdpool_isa isa, int via_env) {
  const char *name = simdpool_isa_name(isa);
  simdpool_desc d;
  fill_desc(&cases[0], via_env ? SIMDPOOL_ISA_AUTO : isa, &d);
  if (via_env)
    setenv("SIMDPOOL_ISA", name, 1);
  simdpool_plan *plan = (simdpool_plan *)&d; /* must be overwritten */
  const simdpool_status st = simdpool_plan_create(&d, &plan);
  const char *msg = simdpool_last_error();
  if (via_env)
    unsetenv("SIMDPOOL_ISA");
  const int ok = st == SIMDPOOL_UNSUPPORTED && plan == NULL && msg &&
                 *msg != '\0' && strstr(msg, name) != NULL;
  printf("  %s: forcing %s via %s: %s, out %s, \"%s\"\n", ok ? "ok  " : "FAIL",
         name, via_env ? "SIMDPOOL_ISA" : "desc.isa",
         simdpool_status_string(st), plan == NULL ? "NULL" : "NOT NULL",
         msg ? msg : "(null)");
  if (!ok)
    failures++;
  if (st == SIMDPOOL_OK && plan != (simdpool_plan *)&d)
    simdpool_plan_destroy(plan);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s <expected-auto-isa> [<unsupported-isa> ...]\n"
            "       %s --native\n",
            argv[0], argv[0]);
    return 2;
  }
  const char *env = getenv("SIMDPOOL_ISA");
  if (env) {
    printf("note: SIMDPOOL_ISA=%s was set; the probe unsets it\n", env);
    unsetenv("SIMDPOOL_ISA");
  }

  /* What this build and CPU say they run; the best is AUTO's pick. */
  printf("isa_probe: simdpool %s; supported:", simdpool_version());
  simdpool_isa best = SIMDPOOL_ISA_AUTO;
  for (size_t i = 0; i < NUM_ISAS; i++) {
    const int s = simdpool_isa_supported(all_isas[i]);
    printf(" %s=%s", simdpool_isa_name(all_isas[i]), s ? "yes" : "no");
    if (s && best == SIMDPOOL_ISA_AUTO)
      best = all_isas[i];
  }
  printf("\n");

  simdpool_isa expected;
  simdpool_isa unsupported[NUM_ISAS];
  size_t num_unsupported = 0;
  if (strcmp(argv[1], "--native") == 0) {
    if (argc != 2) {
      fprintf(stderr, "%s: --native takes no more arguments\n", argv[0]);
      return 2;
    }
    expected = best;
    for (size_t i = 0; i < NUM_ISAS; i++)
      if (!simdpool_isa_supported(all_isas[i]))
        unsupported[num_unsupported++] = all_isas[i];
  } else {
    if (!isa_from_name(argv[1], &expected)) {
      fprintf(stderr, "%s: '%s' is not an ISA name\n", argv[0], argv[1]);
      return 2;
    }
    for (int a = 2; a < argc; a++) {
      if (num_unsupported == NUM_ISAS ||
          !isa_from_name(argv[a], &unsupported[num_unsupported])) {
        fprintf(stderr, "%s: '%s' is not an ISA name\n", argv[0], argv[a]);
        return 2;
      }
      num_unsupported++;
    }
  }
  const char *exp_name = simdpool_isa_name(expected);
  printf("expected: AUTO runs %s;", exp_name);
  for (size_t i = 0; i < num_unsupported; i++)
    printf(" %s", simdpool_isa_name(unsupported[i]));
  printf("%s\n", num_unsupported ? " unsupported" : " nothing else required");

  /* 1. simdpool_isa_supported() agrees with the expectations. */
  printf("simdpool_isa_supported:\n");
  check(simdpool_isa_supported(SIMDPOOL_ISA_AUTO) &&
            simdpool_isa_supported(SIMDPOOL_ISA_SCALAR),
        "auto and scalar are supported");
  check(simdpool_isa_supported(expected), "%s is supported", exp_name);
  check(best == expected, "the best supported ISA is %s (expected %s)",
        simdpool_isa_name(best), exp_name);
  for (size_t i = 0; i < num_unsupported; i++)
    check(!simdpool_isa_supported(unsupported[i]), "%s is not supported",
          simdpool_isa_name(unsupported[i]));

  /* 2. AUTO (SIMDPOOL_ISA unset, then "auto") picks the expected ISA and
   * matches scalar. */
  printf("AUTO with SIMDPOOL_ISA unset:\n");
  check(matches_scalar(SIMDPOOL_ISA_AUTO, expected),
        "AUTO plans run %s and match scalar", exp_name);
  printf("AUTO with SIMDPOOL_ISA=auto:\n");
  setenv("SIMDPOOL_ISA", "auto", 1);
  check(matches_scalar(SIMDPOOL_ISA_AUTO, expected),
        "AUTO plans run %s and match scalar", exp_name);
  unsetenv("SIMDPOOL_ISA");

  /* 3. Forcing the expected ISA works, both ways. */
  printf("desc.isa=%s:\n", exp_name);
  check(matches_scalar(expected, expected),
        "forced %s plans run %s and match scalar", exp_name, exp_name);
  printf("SIMDPOOL_ISA=%s:\n", exp_name);
  setenv("SIMDPOOL_ISA", exp_name, 1);
  check(matches_scalar(SIMDPOOL_ISA_AUTO, expected),
        "SIMDPOOL_ISA=%s plans run %s and match scalar", exp_name, exp_name);
  unsetenv("SIMDPOOL_ISA");

  /* 4. Forcing an ISA the CPU or build lacks is a clean error, both ways;
   * a forced desc.isa wins over an unsupported SIMDPOOL_ISA. */
  printf("forcing unsupported ISAs:\n");
  for (size_t i = 0; i < num_unsupported; i++) {
    check_unsupported(unsupported[i], 0);
    check_unsupported(unsupported[i], 1);
    printf("SIMDPOOL_ISA=%s with desc.isa=%s:\n",
           simdpool_isa_name(unsupported[i]), exp_name);
    setenv("SIMDPOOL_ISA", simdpool_isa_name(unsupported[i]), 1);
    check(matches_scalar(expected, expected),
          "desc.isa=%s wins over SIMDPOOL_ISA=%s", exp_name,
          simdpool_isa_name(unsupported[i]));
    unsetenv("SIMDPOOL_ISA");
  }

  if (failures) {
    printf("isa_probe: %d check(s) FAILED\n", failures);
    return 1;
  }
  printf("isa_probe: all checks passed (AUTO = %s)\n", exp_name);
  return 0;
}
