/* SPDX-License-Identifier: MIT */
/* test_divide.c — proves the AVG kernels' division exact: every ISA's own
 * division (sp_divide_table, the div_by of kernels/tmpl/common.h) against
 * the IEEE quotient x / d, bit for bit, over whole binades.
 *
 * The fast path (AVX2, AVX-512, NEON) takes r = RN(1/d) and computes
 *   q = RN(x*r),  e = RN(x - q*d) (an FMA),  y = RN(q + e*r) (an FMA)
 * for every integer divisor 1 <= d <= SP_DIV_FAST_MAX (2^16) and every x with
 * SP_DIV_FAST_MIN (2^-100) <= |x| <= FLT_MAX or x = ±0; other lanes and
 * divisors divide. The kernels have two forms of it: fma(fma(-q, d, x), r, q)
 * for AVG outputs, and q - fma(q, d, -x)*r (= RN(q + e*r), as RN(-t) =
 * -RN(t)) for x / d; for ±0 the first gives +0, the quotient of +0 + x, the
 * second ±0. Both are proven here, each against what it must give.
 * Why one binade of x per odd divisor proves the rest (RN = round to nearest
 * even, every value below in the normal range unless said otherwise):
 *
 * 1. Sign: RN(-t) = -RN(t), so x and -x give y and -y, as x / d does.
 * 2. Residual: r <= 1, so q <= x and q's exponent eq is at most x's; x and
 *    q*d are multiples of 2^(eq-23) and |x - q*d| <= d*|x/d - q| < 2d ulp(q),
 *    an integer below 2^18 times 2^(eq-23): e = x - q*d exactly, whenever q
 *    is normal (2^(eq-23) >= 2^-149).
 * 3. Scaling: for x' = 2^k x, q' = RN(2^k x r) = 2^k q, e' = 2^k e (step 2),
 *    y' = RN(2^k (q + e r)) = 2^k y and RN(x'/d) = 2^k RN(x/d), as long as
 *    q', y' and x'/d are normal and nothing overflows. With |x| >= 2^-100 and
 *    d <= 2^16, |x/d| >= 2^-116; upwards q <= x, the FMAs round only their
 *    results and |y| ~ |x|/d <= FLT_MAX. So y = RN(x/d) for every x in
 *    [1, 2) gives it for every x in range: one binade per divisor.
 * 4. Even divisors, d = 2^j m with m odd: r = RN(2^-j / m) = 2^-j RN(1/m),
 *    q = q_m(x 2^-j), e = 2^j e_m(x 2^-j), y = y_m(x 2^-j), and RN(x/d) =
 *    RN((x 2^-j) / m): the odd divisor m at x 2^-j, whose quotient is x/d
 *    (>= 2^-116, normal), which step 3 covers.
 * So the odd divisors over [1, 2) are the proof; the test runs them, the
 * even ones too where it can afford to, and the edges the argument leaves
 * to the fallbacks: ±0, subnormals and tiny values (a real division), the
 * threshold's neighbourhood, the largest finite values, ±inf and NaN (any
 * NaN: every kernel writes NaN results canonical).
 *
 * `divide` (default suites, CI): every d <= 256, the divisors networks use
 * (4, 9, 49, 64, global heads up to 2^16), the all-ones divisors 2^k - 1 and
 * some random odd ones over [1, 2), plus the edges; fewer divisors under
 * SIMDPOOL_TEST_SCALE < 1 (emulators). `divide-proof` (meson test --suite
 * proof; this program with --full): every integer d <= 2^16 over [1, 2), the
 * odd ones over [2, 4) too, and every d's edges. */
#define _POSIX_C_SOURCE 200809L
#include "check_quiet.h"
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#include "test_random.h"

#define CHUNK 2048 /* values per call: x, y and the reference stay in L1 */

static int full; /* --full: the whole proof */
static double scale = 1;
static int threads = 1; /* --full: 2, or SIMDPOOL_TEST_THREADS */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The binades a divisor may run, by biased exponent: [1, 2) (the proof),
 * [2, 4), the two around the threshold 2^-100 (the one below divides), and
 * the largest, [2^127, FLT_MAX]. */
static const uint32_t binade_exps[] = {127, 128, 26, 27, 254};
#define N_BINADES 5
enum { B_ONE = 1, B_TWO = 2, B_EDGES = 4 | 8 | 16 };

/* One thread's share of a proof, and its first failure. */
typedef struct job {
  sp_divide_fn fn;
  const float *divs; /* divisors */
  size_t ndivs;
  const unsigned *binades; /* bit b: binade binade_exps[b] (per divisor) */
  const float *edges;      /* values run with every divisor */
  size_t nedges;
  uint64_t values; /* divisions compared */
  int failed, sum;
  float d, x, got, want;
} job;

/* The IEEE quotients: plain C division, which the compiler vectorizes (the
 * x86 clones only make the proof faster: vdivps is the same IEEE division,
 * and nothing else the library's fast path uses). */
static void ieee_div_c(const float *x, float d, float *q, size_t n) {
  for (size_t i = 0; i < n; i++)
    q[i] = x[i] / d;
}
#if defined(__x86_64__) && defined(__GNUC__)
/* Clang takes no vector width in a target attribute (it is a warning). */
#if defined(__clang__)
#define IEEE_DIV_AVX512_TARGET "avx512f"
#else
#define IEEE_DIV_AVX512_TARGET "avx512f,prefer-vector-width=512"
#endif
__attribute__((target(IEEE_DIV_AVX512_TARGET))) static void
ieee_div_avx512(const float *x, float d, float *q, size_t n) {
  for (size_t i = 0; i < n; i++)
    q[i] = x[i] / d;
}
__attribute__((target("avx2"))) static void
ieee_div_avx2(const float *x, float d, float *q, size_t n) {
  for (size_t i = 0; i < n; i++)
    q[i] = x[i] / d;
}
#endif

typedef void (*ieee_div_fn)(const float *x, float d, float *q, size_t n);
static ieee_div_fn ieee_div = ieee_div_c;

static void pick_ieee_div(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f"))
    ieee_div = ieee_div_avx512;
  else if (__builtin_cpu_supports("avx2"))
    ieee_div = ieee_div_avx2;
#endif
}

/* The AVG output the `sum` division must give from want = x / d: the
 * quotient of +0 + x (+0 for -0), NaN canonical. */
static float avg_want(float x, float want) {
  if (isnan(want))
    return bits_to_float(SP_CANONICAL_NAN_BITS);
  return x == 0.0f ? 0.0f : want;
}

/* Compares y (from x by variant `sum`) with want; x / d's NaN matches any
 * NaN, the AVG output's only the canonical one. 0 on the first mismatch
 * (recorded in j). */
static int compare(job *j, const float *x, const float *y, const float *want,
                   size_t n, float d, int sum) {
  for (size_t i = 0; i < n; i++) {
    const float w = sum ? avg_want(x[i], want[i]) : want[i];
    if (float_bits(y[i]) != float_bits(w) &&
        (sum || !(isnan(y[i]) && isnan(w)))) {
      j->failed = 1;
      j->sum = sum;
      j->d = d;
      j->x = x[i];
      j->got = y[i];
      j->want = w;
      return 0;
    }
  }
  return 1;
}

/* Runs n values through both of the ISA's divisions by d (x / d, and the
 * AVG output of sum x) and compares them with IEEE x / d. */
static int check_values(job *j, const float *x, size_t n, float d, float *y,
                        float *want) {
  ieee_div(x, d, want, n);
  j->values += 2 * n;
  j->fn(x, &d, 0, y, n, 0);
  if (memcmp(y, want, n * sizeof *y) != 0 && !compare(j, x, y, want, n, d, 0))
    return 0;
  /* Positive normal x (the binades): the AVG output is x / d itself. */
  j->fn(x, &d, 0, y, n, 1);
  if (memcmp(y, want, n * sizeof *y) != 0 && !compare(j, x, y, want, n, d, 1))
    return 0;
  return 1;
}

static void *run_job(void *arg) {
  job *j = arg;
  float *x = aligned_alloc(64, CHUNK * sizeof(float));
  float *y = aligned_alloc(64, CHUNK * sizeof(float));
  float *want = aligned_alloc(64, CHUNK * sizeof(float));
  if (!x || !y || !want) {
    j->failed = -1;
    goto out;
  }
  /* Binades: each chunk of x once, then every divisor that runs it. */
  for (unsigned b = 0; b < N_BINADES; b++) {
    unsigned any = 0;
    for (size_t k = 0; k < j->ndivs; k++)
      any |= j->binades[k] >> b & 1;
    for (uint32_t m = 0; any && m < (1u << 23); m += CHUNK) {
      for (uint32_t i = 0; i < CHUNK; i++)
        x[i] = bits_to_float(binade_exps[b] << 23 | (m + i));
      for (size_t k = 0; k < j->ndivs; k++)
        if ((j->binades[k] >> b & 1) &&
            !check_values(j, x, CHUNK, j->divs[k], y, want))
          goto out;
    }
  }
  for (size_t k = 0; k < j->ndivs; k++)
    for (size_t i = 0; i < j->nedges; i += CHUNK)
      if (!check_values(j, j->edges + i,
                        j->nedges - i < CHUNK ? j->nedges - i : CHUNK,
                        j->divs[k], y, want))
        goto out;
out:
  free(x);
  free(y);
  free(want);
  return NULL;
}

/* The edge values: everything the argument leaves to the fallbacks or to
 * its range limits, both signs; sorted runs (whole vectors of one kind)
 * followed by the same values shuffled (vectors that mix them). */
static float *edge_values(size_t *count) {
  enum { MAX_EDGES = 1 << 18 };
  uint32_t *b = malloc(MAX_EDGES * sizeof *b);
  ck_assert_ptr_nonnull(b);
  size_t n = 0;
#define ADD(v) (b[n++] = (v))
  const uint32_t tbits = float_bits(SP_DIV_FAST_MIN);
  for (uint32_t s = 0; s <= 1; s++) {
    const uint32_t sg = s << 31;
    /* ±0, ±inf, quiet NaNs, signalling NaNs (with payloads) */
    ADD(sg);
    ADD(sg | 0x7f800000u);
    ADD(sg | 0x7fc00000u);
    ADD(sg | 0x7fc00000u | 0x12345u);
    ADD(sg | 0x7f800001u);
    ADD(sg | 0x7fbfffffu);
    /* the smallest and largest subnormals, and the others sampled */
    for (uint32_t v = 1; v <= 2048; v++)
      ADD(sg | v);
    for (uint32_t v = 0x7fffffu - 2047; v <= 0x7fffffu; v++)
      ADD(sg | v);
    for (uint32_t v = 2049; v < 0x7fffffu - 2047; v += 1021)
      ADD(sg | v);
    /* FLT_MIN upwards, the threshold's neighbours, the largest finite
     * values and 2^127 upwards */
    for (uint32_t v = 0x00800000u; v < 0x00800000u + 1024; v++)
      ADD(sg | v);
    for (uint32_t v = tbits - 4096; v < tbits + 4096; v++)
      ADD(sg | v);
    for (uint32_t v = 0x7f7fffffu - 4095; v <= 0x7f7fffffu; v++)
      ADD(sg | v);
    for (uint32_t v = 0x7f000000u; v < 0x7f000000u + 1024; v++)
      ADD(sg | v);
    /* both ends of every binade */
    for (uint32_t e = 1; e < 255; e++)
      for (uint32_t v = 0; v < 8; v++) {
        ADD(sg | e << 23 | v);
        ADD(sg | e << 23 | (0x7fffffu - v));
      }
  }
  uint64_t st = 0x5eed;
  for (int i = 0; i < 8192; i++) { /* random bits: any exponent, NaNs */
    st += 0x9e3779b97f4a7c15ull;
    uint64_t z = (st ^ (st >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    ADD((uint32_t)(z ^ (z >> 31)));
  }
#undef ADD
  const size_t sorted = n;
  ck_assert(2 * sorted <= MAX_EDGES);
  memcpy(b + sorted, b, sorted * sizeof *b);
  for (size_t i = 2 * sorted - 1; i > sorted; i--) { /* Fisher-Yates */
    st += 0x9e3779b97f4a7c15ull;
    const size_t k = sorted + (size_t)((st >> 11) % (i - sorted + 1));
    const uint32_t t = b[i];
    b[i] = b[k];
    b[k] = t;
  }
  n = 2 * sorted;
  float *f = malloc(n * sizeof *f);
  ck_assert_ptr_nonnull(f);
  for (size_t i = 0; i < n; i++)
    f[i] = bits_to_float(b[i]);
  free(b);
  *count = n;
  return f;
}

/* The divisors to prove and the binades each runs (B_* bits). */
static size_t divisor_list(float *divs, unsigned *binades) {
  size_t n = 0;
  if (full) {
    /* The proof: every odd divisor over [1, 2). Beyond it: the odd ones up
     * to 4096 over [2, 4) too, every even one up to 4096 directly, and the
     * small ones over the threshold's and the largest binades. */
    for (uint32_t d = 1; d <= (uint32_t)SP_DIV_FAST_MAX; d++) {
      const unsigned b = (d % 2 ? B_ONE : 0) | (d <= 4096 ? B_ONE : 0) |
                         (d % 2 && d <= 4096 ? B_TWO : 0) |
                         (d <= 64 ? B_EDGES : 0);
      divs[n] = (float)d;
      binades[n++] = b;
    }
    return n;
  }
  /* Every small one, then what networks divide by (2x2 and 3x3 windows and
   * their borders are small; 7x7, 8x8 and global heads up to 256x256),
   * the all-ones divisors 2^k - 1 (1.11..1 x 2^e: the classic hard case of
   * Markstein's correction), and random odd ones; the scale (emulators)
   * keeps a share of each group, the first ones first. */
  static const uint32_t nets[] = {
      49,  64,  81,  100,  121,  144,   169,   196,   225,  289,   361,  441,
      529, 576, 784, 1024, 3136, 12544, 50176, 65536, 9216, 65535, 2401, 40000};
  const size_t small = (size_t)(256 * scale) > 4 ? (size_t)(256 * scale) : 4;
  for (uint32_t d = 1; d <= small && d <= 256; d++) {
    divs[n] = (float)d;
    binades[n++] = B_ONE | (d <= (scale < 1 ? 2u : 8u) ? B_EDGES : 0);
  }
  const size_t nn = sizeof nets / sizeof nets[0];
  const size_t keep = (size_t)(nn * scale) > 2 ? (size_t)(nn * scale) : 2;
  for (size_t i = 0; i < nn && i < keep; i++)
    divs[n++] = (float)nets[i];
  const size_t ones = scale < 1 ? 4 : 16;
  for (uint32_t k = 9; k <= 16 && k < 9 + ones; k++)
    divs[n++] = (float)((1u << k) - 1);
  const size_t rnd_odd = (size_t)(24 * scale);
  for (size_t i = 0; i < rnd_odd; i++)
    divs[n++] = (float)(2 * rnd_range(128, 32767) + 1);
  for (size_t i = 0; i < n; i++)
    binades[i] |= B_ONE;
  return n;
}

/* Adaptive AVG divides ((acc / kd) / kh) / kw; plan creation runs a
 * uniform adaptive plan on the fixed-window kernels, which divide once by
 * kd*kh*kw, only where that gives the same bits: every extent but one is
 * 1, or two are 2 (dispatch/plan.c, adaptive_avg_as_fixed). The second
 * rests on (x / 2) / 2 == x / 4 for every float x, proven here over every
 * x that can round: when |x| >= 2^-124, x/2 and x/4 are normal and exact.
 * (Not so for (x / 2) / 4 and x / 8: x = 5 * 2^-149 gives 0 and 2^-149,
 * checked too, so the rule cannot quietly widen.) */
START_TEST(two_halvings) {
  volatile float two = 2.0f, four = 4.0f, eight = 8.0f;
  size_t checked = 0;
  /* A fact of binary32 division, not of a CPU model: the full sweep runs
   * natively (every CI run); emulated runs (SIMDPOOL_TEST_SCALE < 1, where
   * it took 390 s under qemu) check every 61st float. */
  const uint32_t step = scale < 1 ? 61 : 1;
  for (uint32_t sign = 0; sign < 2; sign++)
    for (uint32_t b = 0; b < 0x01800000u; b += step) { /* |x| < 2^-124 */
      float x;
      const uint32_t bits = b | sign << 31;
      memcpy(&x, &bits, sizeof x);
      const float a = (x / two) / two, c = x / four;
      uint32_t ua, uc;
      memcpy(&ua, &a, sizeof ua);
      memcpy(&uc, &c, sizeof uc);
      ck_assert_msg(ua == uc, "(x/2)/2 = 0x%08x, x/4 = 0x%08x for x = 0x%08x",
                    (unsigned)ua, (unsigned)uc, (unsigned)bits);
      checked++;
    }
  const float five = 0x5p-149f;
  ck_assert((five / two) / four == 0.0f && five / eight == 0x1p-149f);
  printf("two halvings: (x/2)/2 == x/4 for %s %zu floats below 2^-124 "
         "(and above it both are exact)\n",
         step == 1 ? "all" : "every 61st of the", checked);
}
END_TEST

START_TEST(division_is_exact) {
  const sp_divide_entry *e = &sp_divide_table[_i];
  const char *name = simdpool_isa_name(e->isa);
  if (!sp_cpu_runs(e->isa)) {
    printf("  skipped %-7s: this CPU cannot run it\n", name);
    fflush(stdout);
    return;
  }
  const float one = 1.0f;
  const int fast = e->fn(NULL, &one, 0, NULL, 0, 0);
  rng_state = seed;
  float *divs = malloc(70000 * sizeof *divs);
  unsigned *binades = calloc(70000, sizeof *binades);
  ck_assert(divs && binades);
  size_t ndivs = divisor_list(divs, binades);
  if (!fast && ndivs > 3) {
    /* Plain division: a smoke test that it is the IEEE one. */
    ndivs = 3;
    for (size_t k = 0; k < ndivs; k++)
      binades[k] = B_ONE;
  }
  size_t nedges;
  float *edges = edge_values(&nedges);
  const double t0 = now();
  job jobs[8];
  pthread_t tid[8];
  const int nt = threads < 1 ? 1 : threads > 8 ? 8 : threads;
  /* Divisor k goes to thread k % nt: each thread gets large and small. */
  float *tdivs[8];
  unsigned *tbin[8];
  for (int t = 0; t < nt; t++) {
    tdivs[t] = malloc(ndivs * sizeof(float));
    tbin[t] = malloc(ndivs * sizeof(unsigned));
    ck_assert(tdivs[t] && tbin[t]);
    size_t m = 0;
    for (size_t k = (size_t)t; k < ndivs; k += (size_t)nt) {
      tdivs[t][m] = divs[k];
      tbin[t][m++] = binades[k];
    }
    jobs[t] = (job){.fn = e->fn,
                    .divs = tdivs[t],
                    .ndivs = m,
                    .binades = tbin[t],
                    .edges = edges,
                    .nedges = nedges};
    ck_assert_int_eq(pthread_create(&tid[t], NULL, run_job, &jobs[t]), 0);
  }
  uint64_t values = 0;
  for (int t = 0; t < nt; t++) {
    pthread_join(tid[t], NULL);
    values += jobs[t].values;
  }
  const double secs = now() - t0;
  for (int t = 0; t < nt; t++) {
    const job *j = &jobs[t];
    ck_assert_msg(j->failed >= 0, "%s: out of memory", name);
    ck_assert_msg(!j->failed,
                  "%s: %s%a / %.0f gave %a (0x%08" PRIx32 "), IEEE says %a "
                  "(0x%08" PRIx32 ")",
                  name, j->sum ? "AVG output (+0 + x) / d: " : "", (double)j->x,
                  (double)j->d, (double)j->got, float_bits(j->got),
                  (double)j->want, float_bits(j->want));
  }
  size_t per[N_BINADES] = {0}, odd = 0;
  float lo = divs[0], hi = divs[0];
  for (size_t k = 0; k < ndivs; k++) {
    lo = divs[k] < lo ? divs[k] : lo;
    hi = divs[k] > hi ? divs[k] : hi;
    odd += (binades[k] & B_ONE) && (uint32_t)divs[k] % 2;
    for (unsigned b = 0; b < N_BINADES; b++)
      per[b] += binades[k] >> b & 1;
  }
  printf("  proved  %-7s: %s, x / d and (+0 + x) / d; every 2^23 values of "
         "[1, 2) for %zu divisors "
         "(%zu odd), of [2, 4) for %zu, of [2^-101, 2^-100), [2^-100, "
         "2^-99) and [2^127, 2^128) for %zu; %zu edge values for all %zu "
         "(%.0f .. %.0f): %" PRIu64
         " divisions bit-exact in %.1f s on %d thread(s)\n",
         name,
         fast ? "fast path (r = RN(1/d), 2 FMA)" : "plain division (no FMA)",
         per[0], odd, per[1], per[2], nedges, ndivs, (double)lo, (double)hi,
         values, secs, nt);
  fflush(stdout);
  for (int t = 0; t < nt; t++) {
    free(tdivs[t]);
    free(tbin[t]);
  }
  free(edges);
  free(divs);
  free(binades);
}
END_TEST

/* Per-lane divisors, as NCHW border blocks have them, mixed with ones the
 * fast path must not take (not integers, above the range): still IEEE. */
START_TEST(per_lane_divisors) {
  const sp_divide_entry *e = &sp_divide_table[_i];
  if (!sp_cpu_runs(e->isa))
    return;
  static const float odd_ones[] = {0.5f,     1.5f,       2.25f,    3.0e-3f,
                                   65537.0f, 65538.0f,   70001.0f, 131072.0f,
                                   1.0e6f,   16777216.f, 3.0e7f,   1.0e30f};
  rng_state = seed ^ 0xd1d1ull;
  enum { N = 1 << 16 };
  float *x = malloc(N * sizeof *x), *d = malloc(N * sizeof *d);
  float *y = malloc(N * sizeof *y);
  ck_assert(x && d && y);
  size_t nedges;
  float *edges = edge_values(&nedges);
  for (int round = 0; round < 8; round++) {
    for (size_t i = 0; i < N; i++) {
      const uint64_t r = rnd();
      x[i] = r % 4 == 0 ? edges[(r >> 8) % nedges]
                        : bits_to_float((uint32_t)(r >> 32));
      /* Rounds 0-3: every lane in range (fast); then some lanes outside. */
      if (round < 4 || (r >> 20) % 8)
        d[i] = (float)(round % 2 ? 1 + (r >> 24) % 65536 : 1 + (r >> 24) % 64);
      else
        d[i] = odd_ones[(r >> 24) % (sizeof odd_ones / sizeof odd_ones[0])];
    }
    const size_t n = N - (size_t)round; /* short last vectors too */
    /* One divisor outside the range for the whole array, too. */
    const float dd = odd_ones[(size_t)round % 12];
    for (int k = 0; k < 4; k++) {
      const int sum = k % 2, lanes = k < 2;
      e->fn(x, lanes ? d : &dd, (size_t)lanes, y, n, sum);
      for (size_t i = 0; i < n; i++) {
        const float di = lanes ? d[i] : dd, q = x[i] / di;
        const float want = sum ? avg_want(x[i], q) : q;
        if (float_bits(y[i]) != float_bits(want) &&
            (sum || !(isnan(y[i]) && isnan(want))))
          ck_abort_msg("%s: element %zu: %s%a / %a gave %a, IEEE says %a",
                       simdpool_isa_name(e->isa), i,
                       sum ? "(+0 + x) / d, " : "", (double)x[i], (double)di,
                       (double)y[i], (double)want);
      }
    }
  }
  printf("  lanes   %-7s: per-lane divisors in and out of the fast range "
         "bit-exact\n",
         simdpool_isa_name(e->isa));
  fflush(stdout);
  free(edges);
  free(x);
  free(d);
  free(y);
}
END_TEST

int main(int argc, char **argv) {
  scale = test_random_init();
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--full") == 0)
      full = 1;
  pick_ieee_div();
  const char *t = getenv("SIMDPOOL_TEST_THREADS");
  threads = t ? atoi(t) : full ? 2 : 1;
  printf("test_divide: %s; seed %" PRIu64 ", scale %g; fast range: integer "
         "d in [1, %.0f], %a <= |x| <= FLT_MAX\n",
         full ? "the full proof" : "the CI subset (--full: the whole proof)",
         seed, scale, (double)SP_DIV_FAST_MAX, (double)SP_DIV_FAST_MIN);
  print_isas();
  Suite *suite = suite_create("divide");
  TCase *tc = tcase_create("divide");
  tcase_set_timeout(tc, full ? 7200 : 600);
  tcase_add_loop_test(tc, division_is_exact, 0, (int)sp_divide_table_size);
  tcase_add_loop_test(tc, per_lane_divisors, 0, (int)sp_divide_table_size);
  tcase_add_test(tc, two_halvings);
  suite_add_tcase(suite, tc);
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
