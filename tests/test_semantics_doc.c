/* SPDX-License-Identifier: MIT */
/* test_semantics_doc.c — runs the tables of docs/semantics.md: every rejection
 * example (status and exact message, nothing written), every shape example
 * (output size) and every numerical example (output bits on each ISA).
 *
 * Usage: test_semantics_doc docs/semantics.md
 * Exit status 0 when every row holds, 1 otherwise, 77 (skip) on a target
 * whose size_t cannot hold the examples' sizes. The file's own section "How
 * to read the examples" defines the language of the example column; this
 * program is its only interpreter. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpool.h"

#ifndef EXPECT_SLEEF
#error "EXPECT_SLEEF must be 0 or 1 (tests/meson.build sets it)"
#endif

static int failures, passed, skipped;

#define MAX_CELLS 12
#define MAX_TOKENS 16

/* ------------------------------------------------------------ small parsing */

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
    s[--n] = '\0';
  return s;
}

/* A cell without its surrounding backticks. */
static char *unquote(char *s) {
  s = trim(s);
  size_t n = strlen(s);
  if (n >= 2 && s[0] == '`' && s[n - 1] == '`') {
    s[n - 1] = '\0';
    s++;
  }
  return s;
}

/* Splits a table row "| a | b |" into cells (in place); returns the count. */
static int split_row(char *line, char **cells) {
  int n = 0;
  char *p = strchr(line, '|');
  if (!p)
    return 0;
  p++;
  for (char *bar; n < MAX_CELLS && (bar = strchr(p, '|')); p = bar + 1) {
    *bar = '\0';
    cells[n++] = trim(p);
  }
  return n;
}

/* "123", "2^40", "2^40+1", "2^63-1", "SIZEOF", "SIZEOF+16". */
static int parse_size(const char *s, size_t *out) {
  unsigned long long base;
  char *end;
  if (strncmp(s, "SIZEOF", 6) == 0) {
    base = sizeof(simdpool_desc);
    end = (char *)s + 6;
  } else if (strncmp(s, "2^", 2) == 0) {
    errno = 0;
    const unsigned long long e = strtoull(s + 2, &end, 10);
    if (errno || end == s + 2 || e > 63)
      return 0;
    base = 1ull << e;
  } else {
    errno = 0;
    base = strtoull(s, &end, 10);
    if (errno || end == s)
      return 0;
  }
  if (*end == '+' || *end == '-') {
    const char sign = *end;
    char *e2;
    errno = 0;
    const unsigned long long k = strtoull(end + 1, &e2, 10);
    if (errno || e2 == end + 1)
      return 0;
    base = sign == '+' ? base + k : base - k;
    end = e2;
  }
  if (*end || base > SIZE_MAX)
    return 0;
  *out = (size_t)base;
  return 1;
}

static int parse_int(const char *s, long long *out) {
  char *end;
  errno = 0;
  *out = strtoll(s, &end, 10);
  return !errno && end != s && !*end;
}

/* An enum value: one of names[0..count) or a plain number. */
static int parse_enum(const char *s, const char *const *names, int count,
                      int *out) {
  for (int i = 0; i < count; i++)
    if (strcmp(s, names[i]) == 0) {
      *out = i;
      return 1;
    }
  long long v;
  if (!parse_int(s, &v) || v < -1000 || v > 1000)
    return 0;
  *out = (int)v;
  return 1;
}

static const char *const method_names[] = {"MAX", "AVG", "LP"};
static const char *const layout_names[] = {"NCHW", "NHWC"};
static const char *const padding_names[] = {"EXPLICIT", "VALID", "SAME_UPPER",
                                            "SAME_LOWER"};
static const char *const index_names[] = {"NONE", "I32", "I64", "U8"};
static const char *const dtype_names[] = {"F32", "BF16", "F16", "S8", "U8"};
static const char *const isa_names[] = {"auto", "scalar", "sse41",
                                        "avx2", "avx512", "neon"};
static const char *const status_names[] = {"OK", "INVALID_ARGUMENT",
                                           "UNSUPPORTED", "OUT_OF_MEMORY"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The ISA an example's "missing", "unrunnable" or "simd" stands for, or -1
 * when this build and CPU have none (the row is then skipped). */
static int special_isa(const char *what) {
  for (int i = SIMDPOOL_ISA_NEON; i >= SIMDPOOL_ISA_SSE41; i--) {
    const simdpool_isa isa = (simdpool_isa)i;
    simdpool_desc d;
    simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
    d.isa = isa;
    simdpool_plan *p = NULL;
    const simdpool_status st = simdpool_plan_create(&d, &p);
    simdpool_plan_destroy(p);
    const char *e = simdpool_last_error();
    if (strcmp(what, "simd") == 0 && st == SIMDPOOL_OK)
      return i;
    if (strcmp(what, "missing") == 0 && st == SIMDPOOL_UNSUPPORTED &&
        strstr(e, "has no"))
      return i;
    if (strcmp(what, "unrunnable") == 0 && st == SIMDPOOL_UNSUPPORTED &&
        strstr(e, "cannot run"))
      return i;
  }
  return -1;
}

/* ------------------------------------------------------------ descriptors */

typedef enum { F_SIZE, F_INT, F_FLOAT, F_ENUM } field_kind;

typedef struct field {
  const char *name;
  field_kind kind;
  size_t offset;
  const char *const *names; /* F_ENUM */
  int count;
} field;

#define SZ(f)                                                                  \
  { #f, F_SIZE, offsetof(simdpool_desc, f), NULL, 0 }
#define IN(f)                                                                  \
  { #f, F_INT, offsetof(simdpool_desc, f), NULL, 0 }
#define EN(f, n)                                                               \
  { #f, F_ENUM, offsetof(simdpool_desc, f), n, COUNT(n) }
static const field fields[] = {
    SZ(struct_size),
    EN(method, method_names),
    EN(layout, layout_names),
    SZ(n),
    SZ(c),
    SZ(h),
    SZ(w),
    SZ(kernel_h),
    SZ(kernel_w),
    SZ(stride_h),
    SZ(stride_w),
    SZ(dilation_h),
    SZ(dilation_w),
    EN(padding, padding_names),
    SZ(pad_top),
    SZ(pad_left),
    SZ(pad_bottom),
    SZ(pad_right),
    IN(ceil_mode),
    IN(count_include_pad),
    {"p", F_FLOAT, offsetof(simdpool_desc, p), NULL, 0},
    EN(index_type, index_names),
    EN(isa, isa_names),
    SZ(x_pixel_stride),
    SZ(y_pixel_stride),
    IN(clamp),
    {"clamp_min", F_FLOAT, offsetof(simdpool_desc, clamp_min), NULL, 0},
    {"clamp_max", F_FLOAT, offsetof(simdpool_desc, clamp_max), NULL, 0},
    SZ(d),
    SZ(kernel_d),
    SZ(stride_d),
    SZ(dilation_d),
    SZ(pad_front),
    SZ(pad_back),
    IN(adaptive),
    SZ(out_d),
    SZ(out_h),
    SZ(out_w),
    EN(dtype, dtype_names),
    {"quant.x_scale", F_FLOAT, offsetof(simdpool_desc, quant.x_scale), NULL, 0},
    {"quant.y_scale", F_FLOAT, offsetof(simdpool_desc, quant.y_scale), NULL, 0},
    {"quant.x_zero_point", F_INT, offsetof(simdpool_desc, quant.x_zero_point),
     NULL, 0},
    {"quant.y_zero_point", F_INT, offsetof(simdpool_desc, quant.y_zero_point),
     NULL, 0},
    {"quant.y_min", F_INT, offsetof(simdpool_desc, quant.y_min), NULL, 0},
    {"quant.y_max", F_INT, offsetof(simdpool_desc, quant.y_max), NULL, 0}};
_Static_assert(sizeof(int) == sizeof(int32_t), "F_INT writes the quant "
                                               "fields as int");

/* The state an example builds before its call. */
typedef struct example {
  simdpool_desc d;
  int desc_null, out_null;
  const char *env;  /* SIMDPOOL_ISA, or NULL: unset */
  const char *call; /* NULL: simdpool_plan_create */
  const char *args[MAX_TOKENS];
  int nargs;
  int isa;         /* what {isa} stands for, -1 if unused */
  int other_build; /* build=no-sleef in a build with SLEEF: skipped */
} example;

/* Sets a field of d from "name=value"; 0 when the token is no field. An
 * isa value "missing", "unrunnable" or "simd" is resolved into ex->isa
 * (-2 when this machine has no such ISA). */
static int set_field(example *ex, const char *name, const char *value,
                     const char **error) {
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const field *f = &fields[i];
    if (strcmp(f->name, name) != 0)
      continue;
    char *at = (char *)&ex->d + f->offset;
    switch (f->kind) {
    case F_SIZE: {
      size_t v;
      if (!parse_size(value, &v))
        return *error = "bad size", 1;
      memcpy(at, &v, sizeof v);
      return 1;
    }
    case F_INT: {
      long long v;
      if (!parse_int(value, &v))
        return *error = "bad integer", 1;
      const int iv = (int)v;
      memcpy(at, &iv, sizeof iv);
      return 1;
    }
    case F_FLOAT: {
      char *end;
      const float v = strtof(value, &end);
      if (end == value || *end)
        return *error = "bad float", 1;
      memcpy(at, &v, sizeof v);
      return 1;
    }
    case F_ENUM: {
      int v;
      if (f->names == isa_names &&
          (strcmp(value, "missing") == 0 || strcmp(value, "unrunnable") == 0 ||
           strcmp(value, "simd") == 0)) {
        ex->isa = special_isa(value);
        v = ex->isa < 0 ? 0 : ex->isa;
        if (ex->isa < 0)
          ex->isa = -2;
      } else if (!parse_enum(value, f->names, f->count, &v)) {
        return *error = "bad enum value", 1;
      }
      memcpy(at, &v, sizeof v); /* the enums are int-sized */
      return 1;
    }
    }
  }
  return 0;
}

/* Parses an example cell into ex; NULL on success, else why not. */
static const char *parse_example(char *cell, example *ex) {
  memset(ex, 0, sizeof *ex);
  ex->isa = -1;
  simdpool_desc_init(&ex->d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  for (char *save = NULL, *tok = strtok_r(cell, " ", &save); tok;
       tok = strtok_r(NULL, " ", &save)) {
    if (strncmp(tok, "call:", 5) == 0) {
      ex->call = tok + 5;
      continue;
    }
    if (ex->call) {
      if (ex->nargs == MAX_TOKENS)
        return "too many call arguments";
      ex->args[ex->nargs++] = tok;
      continue;
    }
    char *eq = strchr(tok, '=');
    if (!eq)
      return "a token without '='";
    *eq = '\0';
    const char *name = tok, *value = eq + 1, *error = NULL;
    if (strcmp(name, "desc") == 0 && strcmp(value, "NULL") == 0) {
      ex->desc_null = 1;
    } else if (strcmp(name, "out") == 0 && strcmp(value, "NULL") == 0) {
      ex->out_null = 1;
    } else if (strcmp(name, "build") == 0) {
      if (strcmp(value, "no-sleef") != 0)
        return "an unknown build (only build=no-sleef)";
      ex->other_build = EXPECT_SLEEF;
    } else if (strcmp(name, "SIMDPOOL_ISA") == 0) {
      ex->env = value;
      if (strcmp(value, "missing") == 0 || strcmp(value, "unrunnable") == 0 ||
          strcmp(value, "simd") == 0) {
        ex->isa = special_isa(value);
        if (ex->isa < 0)
          ex->isa = -2;
        else
          ex->env = isa_names[ex->isa];
      }
    } else if (!set_field(ex, name, value, &error)) {
      return "an unknown field";
    } else if (error) {
      return error;
    }
  }
  return NULL;
}

/* The expected message with {isa}, {SIZEOF}, {SIZEOF+k} and {version}
 * replaced; NULL when it names another placeholder. */
static char *expand(const char *msg, int isa, char *buf, size_t size) {
  size_t o = 0;
  for (const char *p = msg; *p;) {
    char piece[64];
    const char *close = *p == '{' ? strchr(p, '}') : NULL;
    if (!close) {
      piece[0] = *p++;
      piece[1] = '\0';
    } else {
      char name[32];
      const size_t len = (size_t)(close - p - 1);
      if (len >= sizeof name)
        return NULL;
      memcpy(name, p + 1, len);
      name[len] = '\0';
      size_t v;
      if (strcmp(name, "isa") == 0 && isa >= 0)
        snprintf(piece, sizeof piece, "%s", isa_names[isa]);
      else if (strcmp(name, "version") == 0)
        snprintf(piece, sizeof piece, "%s", simdpool_version());
      else if (strncmp(name, "SIZEOF", 6) == 0 && parse_size(name, &v))
        snprintf(piece, sizeof piece, "%zu", v);
      else
        return NULL;
      p = close + 1;
    }
    const size_t n = strlen(piece);
    if (o + n + 1 > size)
      return NULL;
    memcpy(buf + o, piece, n + 1);
    o += n;
  }
  return buf;
}

/* ------------------------------------------------------------ rows */

static void fail_row(const char *rule, const char *fmt, const char *a,
                     const char *b) {
  failures++;
  printf("FAIL %s: ", rule);
  printf(fmt, a, b);
  printf("\n");
}

/* A buffer of a call and its contents before the call. */
typedef struct buffer {
  unsigned char *mem, *before;
  size_t bytes;
} buffer;

static void buffer_alloc(buffer *b, size_t bytes, unsigned char fill) {
  b->bytes = bytes ? bytes : 1;
  b->mem = malloc(b->bytes);
  b->before = malloc(b->bytes);
  if (!b->mem || !b->before) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  memset(b->mem, fill, b->bytes);
}

static void buffer_free(buffer *b) {
  free(b->mem);
  free(b->before);
}

/* Makes the example's call on a plan of ex->d; returns its status. On
 * return *wrote tells whether any buffer changed. */
static simdpool_status run_call(const example *ex, const char **why,
                                int *wrote) {
  *wrote = 0;
  if (strcmp(ex->call, "threadpool_create") == 0) {
    size_t threads = 2;
    int out_null = 0;
    for (int i = 0; i < ex->nargs; i++) {
      if (strcmp(ex->args[i], "out=NULL") == 0)
        out_null = 1;
      else if (strncmp(ex->args[i], "threads=", 8) != 0 ||
               !parse_size(ex->args[i] + 8, &threads))
        return *why = "bad threadpool_create argument", SIMDPOOL_OK;
    }
    simdpool_threadpool *pool = (simdpool_threadpool *)&threads;
    const simdpool_status st =
        simdpool_threadpool_create(threads, out_null ? NULL : &pool);
    if (st == SIMDPOOL_OK)
      simdpool_threadpool_destroy(pool);
    else if (!out_null && pool != NULL)
      *wrote = 1;
    return st;
  }
  simdpool_plan *plan = NULL;
  if (simdpool_plan_create(&ex->d, &plan) != SIMDPOOL_OK)
    return *why = simdpool_last_error(), SIMDPOOL_OK;
  static const float map[16] = {1, 3, 2, 4, 5, 6, 1, 2, 3, 2, 8, 1, 0, 1, 4, 5};
  const size_t ib = simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_INDICES);
  buffer x, y, idx, given, dy, dx;
  buffer_alloc(&x, simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_X), 0);
  for (size_t i = 0; i < x.bytes / sizeof(float); i++) /* 3D: map per slice */
    ((float *)(void *)x.mem)[i] = map[i % 16] + (float)(i / 16);
  buffer_alloc(&y, simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_Y), 0xa5);
  buffer_alloc(&idx, ib ? ib : 32, 0xa5);
  buffer_alloc(&given, 32, 0);
  buffer_alloc(&dy, simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_DY), 0);
  for (size_t i = 0; i < dy.bytes / sizeof(float); i++)
    ((float *)(void *)dy.mem)[i] = (float)(i + 1);
  buffer_alloc(&dx, simdpool_plan_tensor_bytes(plan, SIMDPOOL_TENSOR_DX), 0xa5);
  /* Valid indices first, from a forward call. */
  if (ib && simdpool_forward(plan, (const float *)(void *)x.mem,
                             (float *)(void *)y.mem, idx.mem) != SIMDPOOL_OK)
    *why = simdpool_last_error();
  const int fwd = strncmp(ex->call, "forward", 7) == 0;
  const int par = strstr(ex->call, "_parallel") != NULL;
  /* unpool reads y and writes x; unpool_backward reads dx, writes dy */
  const int unpool = strncmp(ex->call, "unpool", 6) == 0;
  const int unpool_bwd = strncmp(ex->call, "unpool_backward", 15) == 0;
  if (!fwd && !unpool && strncmp(ex->call, "backward", 8) != 0)
    *why = "unknown call";
  const simdpool_plan *a_plan = plan;
  void *a_x = x.mem, *a_y = y.mem, *a_idx = ib ? idx.mem : NULL, *a_dy = dy.mem,
       *a_dx = dx.mem;
  for (int i = 0; i < ex->nargs && !*why; i++) {
    const char *a = ex->args[i];
    long long k, v;
    if (strcmp(a, "plan=NULL") == 0)
      a_plan = NULL;
    else if (strcmp(a, "x=NULL") == 0)
      a_x = NULL;
    else if (strcmp(a, "y=NULL") == 0)
      a_y = NULL;
    else if (strcmp(a, "dy=NULL") == 0)
      a_dy = NULL;
    else if (strcmp(a, "dx=NULL") == 0)
      a_dx = NULL;
    else if (strcmp(a, "indices=NULL") == 0)
      a_idx = NULL;
    else if (strcmp(a, "indices=given") == 0)
      a_idx = given.mem;
    else if (strcmp(a, "y=x") == 0)
      a_y = x.mem;
    else if (strcmp(a, "indices=x") == 0)
      a_idx = x.mem;
    else if (strcmp(a, "indices=y") == 0)
      a_idx = y.mem;
    else if (strcmp(a, "dx=dy") == 0)
      a_dx = dy.mem;
    else if (strcmp(a, "dx=x") == 0)
      a_dx = x.mem;
    else if (strcmp(a, "dx=indices") == 0)
      a_dx = idx.mem;
    else if (strcmp(a, "x=y") == 0)
      a_x = y.mem;
    else if (strcmp(a, "x=indices") == 0)
      a_x = idx.mem;
    else if (strcmp(a, "dy=dx") == 0)
      a_dy = dx.mem;
    else if (strcmp(a, "dy=indices") == 0)
      a_dy = idx.mem;
    else if (sscanf(a, "indices[%lld]=%lld", &k, &v) == 2 && k >= 0 &&
             (size_t)k < y.bytes / sizeof(float)) {
      switch (ex->d.index_type) {
      case SIMDPOOL_INDEX_I32:
        ((int32_t *)(void *)idx.mem)[k] = (int32_t)v;
        break;
      case SIMDPOOL_INDEX_I64:
        ((int64_t *)(void *)idx.mem)[k] = (int64_t)v;
        break;
      case SIMDPOOL_INDEX_U8:
        ((uint8_t *)idx.mem)[k] = (uint8_t)v;
        break;
      default:
        *why = "indices[k]= on a plan without indices";
      }
    } else {
      *why = "unknown call argument";
    }
  }
  simdpool_status st = SIMDPOOL_OK;
  if (!*why) {
    buffer *all[] = {&x, &y, &idx, &given, &dy, &dx};
    for (size_t i = 0; i < 6; i++)
      memcpy(all[i]->before, all[i]->mem, all[i]->bytes);
    simdpool_threadpool *pool = NULL;
    if (par && simdpool_threadpool_create(2, &pool) != SIMDPOOL_OK)
      *why = "no thread pool";
    if (unpool_bwd && !par)
      st = simdpool_unpool_backward(a_plan, a_dx, a_idx, a_dy);
    else if (unpool_bwd)
      st = simdpool_unpool_backward_parallel(
          a_plan, a_dx, a_idx, a_dy, simdpool_threadpool_parallel_for, pool);
    else if (unpool && !par)
      st = simdpool_unpool(a_plan, a_y, a_idx, a_x);
    else if (unpool)
      st = simdpool_unpool_parallel(a_plan, a_y, a_idx, a_x,
                                    simdpool_threadpool_parallel_for, pool);
    else if (fwd && !par)
      st = simdpool_forward(a_plan, a_x, a_y, a_idx);
    else if (fwd)
      st = simdpool_forward_parallel(a_plan, a_x, a_y, a_idx,
                                     simdpool_threadpool_parallel_for, pool);
    else if (!par)
      st = simdpool_backward(a_plan, a_dy, a_idx, a_x, a_dx);
    else
      st = simdpool_backward_parallel(a_plan, a_dy, a_idx, a_x, a_dx,
                                      simdpool_threadpool_parallel_for, pool);
    simdpool_threadpool_destroy(pool);
    for (size_t i = 0; i < 6; i++)
      *wrote |= memcmp(all[i]->before, all[i]->mem, all[i]->bytes) != 0;
  }
  buffer_free(&x);
  buffer_free(&y);
  buffer_free(&idx);
  buffer_free(&given);
  buffer_free(&dy);
  buffer_free(&dx);
  simdpool_plan_destroy(plan);
  return st;
}

static void rejection_row(char **cells) {
  const char *rule = cells[0];
  char example_text[512];
  snprintf(example_text, sizeof example_text, "%s", unquote(cells[1]));
  const char *want_msg = unquote(cells[3]);
  int want_st;
  if (!parse_enum(trim(cells[2]), status_names, COUNT(status_names),
                  &want_st)) {
    fail_row(rule, "unknown status '%s'%s", cells[2], "");
    return;
  }
  if (strcmp(example_text, "—") == 0) {
    skipped++;
    printf("skip %s: no descriptor causes it (%s)\n", rule, want_msg);
    return;
  }
  example ex;
  char cell[512];
  snprintf(cell, sizeof cell, "%s", example_text);
  const char *bad = parse_example(cell, &ex);
  if (bad) {
    fail_row(rule, "cannot read the example '%s': %s", example_text, bad);
    return;
  }
  if (ex.isa == -2) {
    skipped++;
    printf("skip %s: this build and CPU have no such ISA (%s)\n", rule,
           example_text);
    return;
  }
  if (ex.other_build) {
    skipped++;
    printf("skip %s: it holds for another build of simdpool (%s)\n", rule,
           example_text);
    return;
  }
  char want[1024];
  if (!expand(want_msg, ex.isa, want, sizeof want)) {
    fail_row(rule, "a placeholder of '%s' has no value here%s", want_msg, "");
    return;
  }
  simdpool_status st;
  int wrote = 0;
  const char *why = NULL;
  if (ex.env)
    setenv("SIMDPOOL_ISA", ex.env, 1);
  else
    unsetenv("SIMDPOOL_ISA");
  if (!ex.call) {
    static int dummy;
    simdpool_plan *plan = (simdpool_plan *)(void *)&dummy;
    st = simdpool_plan_create(ex.desc_null ? NULL : &ex.d,
                              ex.out_null ? NULL : &plan);
    if (st == SIMDPOOL_OK)
      simdpool_plan_destroy(plan);
    else if (!ex.out_null && plan != NULL)
      wrote = 1;
  } else {
    st = run_call(&ex, &why, &wrote);
  }
  unsetenv("SIMDPOOL_ISA");
  const char *got = simdpool_last_error();
  if (why) {
    fail_row(rule, "the example '%s' cannot run: %s", example_text, why);
  } else if ((int)st != want_st) {
    char line[256];
    snprintf(line, sizeof line, "status %s, the file says %s",
             (unsigned)st < 4 ? status_names[st] : "?", status_names[want_st]);
    fail_row(rule, "%s; message \"%s\"", line, got);
  } else if (strcmp(got, want) != 0) {
    char line[1200];
    snprintf(line, sizeof line, "message\n       \"%s\"\n  file \"%s\"", got,
             want);
    fail_row(rule, "%s%s", line, "");
  } else if (wrote) {
    fail_row(rule, "the rejected call wrote to a buffer (%s)%s", example_text,
             "");
  } else {
    passed++;
    printf("ok   %s\n", rule);
  }
}

static void shape_row(char **cells) {
  int padding;
  size_t in, k, s, dl, pb, pe, want;
  long long ceil_mode;
  char rule[160];
  snprintf(rule, sizeof rule,
           "shape %s in=%s k=%s s=%s d=%s pads=%s,%s ceil=%s", cells[0],
           cells[1], cells[2], cells[3], cells[4], cells[5], cells[6],
           cells[7]);
  if (!parse_enum(cells[0], padding_names, COUNT(padding_names), &padding) ||
      !parse_size(cells[1], &in) || !parse_size(cells[2], &k) ||
      !parse_size(cells[3], &s) || !parse_size(cells[4], &dl) ||
      !parse_size(cells[5], &pb) || !parse_size(cells[6], &pe) ||
      !parse_int(cells[7], &ceil_mode) || !parse_size(cells[8], &want)) {
    fail_row(rule, "cannot read the row%s%s", "", "");
    return;
  }
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, in, 1, k, 1);
  d.padding = (simdpool_padding)padding;
  d.stride_h = s;
  d.dilation_h = dl;
  d.pad_top = pb;
  d.pad_bottom = pe;
  d.ceil_mode = (int)ceil_mode;
  simdpool_plan *p = NULL;
  if (simdpool_plan_create(&d, &p) != SIMDPOOL_OK) {
    fail_row(rule, "rejected: %s%s", simdpool_last_error(), "");
    return;
  }
  size_t oh = 0, ow = 0;
  simdpool_plan_output_shape(p, &oh, &ow);
  simdpool_plan_destroy(p);
  if (oh != want || ow != 1) {
    char got[64], exp[64];
    snprintf(got, sizeof got, "%zux%zu", oh, ow);
    snprintf(exp, sizeof exp, "%zux1", want);
    fail_row(rule, "output %s, the file says %s", got, exp);
    return;
  }
  passed++;
  printf("ok   %s -> %zu\n", rule, want);
}

/* A value of a numerical example: decimal, or '#' and the raw bits. */
static int parse_value(const char *s, uint32_t *bits) {
  char *end;
  if (s[0] == '#') {
    errno = 0;
    const unsigned long v = strtoul(s + 1, &end, 16);
    if (errno || end == s + 1 || *end || v > 0xffffffffu)
      return 0;
    *bits = (uint32_t)v;
    return 1;
  }
  const float f = strtof(s, &end);
  if (end == s || *end)
    return 0;
  memcpy(bits, &f, sizeof f);
  return 1;
}

static void numeric_row(char **cells) {
  char rule[200];
  snprintf(rule, sizeof rule, "%s of %s", cells[0], cells[1]);
  char method_text[32], values[256];
  snprintf(method_text, sizeof method_text, "%s", cells[0]);
  snprintf(values, sizeof values, "%s", cells[1]);
  float p = 2.0f;
  char *sp = strchr(method_text, ' ');
  if (sp) {
    *sp = '\0';
    char *end;
    if (strncmp(sp + 1, "p=", 2) != 0 ||
        (p = strtof(sp + 3, &end), end == sp + 3 || *end)) {
      fail_row(rule, "cannot read the method%s%s", "", "");
      return;
    }
  }
  int method;
  uint32_t want, x[64];
  size_t count = 0;
  if (!parse_enum(method_text, method_names, COUNT(method_names), &method) ||
      !parse_value(cells[2], &want)) {
    fail_row(rule, "cannot read the row%s%s", "", "");
    return;
  }
  for (char *save = NULL, *tok = strtok_r(values, ", ", &save); tok;
       tok = strtok_r(NULL, ", ", &save)) {
    if (count == 64 || !parse_value(tok, &x[count++])) {
      fail_row(rule, "cannot read the value '%s'%s", tok, "");
      return;
    }
  }
  int isas = 0;
  for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; i++) {
    if (!simdpool_isa_supported((simdpool_isa)i))
      continue;
    simdpool_desc d;
    simdpool_desc_init(&d, (simdpool_method)method, SIMDPOOL_NCHW, 1, 1, 1,
                       count, 1, count);
    d.p = p;
    d.isa = (simdpool_isa)i;
    simdpool_plan *plan = NULL;
    float xf[64], y;
    memcpy(xf, x, count * sizeof xf[0]);
    uint32_t got;
    if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK ||
        simdpool_forward(plan, xf, &y, NULL) != SIMDPOOL_OK) {
      fail_row(rule, "on %s: %s", isa_names[i], simdpool_last_error());
      simdpool_plan_destroy(plan);
      return;
    }
    simdpool_plan_destroy(plan);
    memcpy(&got, &y, sizeof got);
    if (got != want) {
      char a[64], b[64];
      snprintf(a, sizeof a, "%s gives #%08x", isa_names[i], (unsigned)got);
      snprintf(b, sizeof b, "#%08x", (unsigned)want);
      fail_row(rule, "%s, the file says %s", a, b);
      return;
    }
    isas++;
  }
  passed++;
  printf("ok   %s -> #%08x on %d ISA(s)\n", rule, (unsigned)want, isas);
}

/* ------------------------------------------------------------ the file */

typedef enum { T_NONE, T_REJECT, T_SHAPE, T_NUMERIC } table_kind;

static table_kind kind_of(char **cells, int n) {
  if (n == 4 && !strcmp(cells[0], "rule") && !strcmp(cells[1], "example") &&
      !strcmp(cells[2], "status") && !strcmp(cells[3], "message"))
    return T_REJECT;
  if (n == 9 && !strcmp(cells[0], "padding") && !strcmp(cells[8], "out"))
    return T_SHAPE;
  if (n == 3 && !strcmp(cells[0], "method") && !strcmp(cells[1], "x") &&
      !strcmp(cells[2], "y"))
    return T_NUMERIC;
  return T_NONE;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s docs/semantics.md\n", argv[0]);
    return 2;
  }
  if (SIZE_MAX < UINT64_MAX) {
    printf("skipped: the examples need a 64-bit size_t\n");
    return 77;
  }
  FILE *f = fopen(argv[1], "r");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  unsetenv("SIMDPOOL_ISA");
  char line[4096];
  table_kind kind = T_NONE;
  int rows[4] = {0};
  int in_table = 0, expect_separator = 0;
  while (fgets(line, sizeof line, f)) {
    char *cells[MAX_CELLS];
    const char *first = trim(line);
    if (first[0] != '|') {
      in_table = 0;
      continue;
    }
    const int n = split_row(line, cells);
    if (!in_table) { /* a header row */
      in_table = 1;
      kind = kind_of(cells, n);
      expect_separator = 1;
      continue;
    }
    if (expect_separator) { /* |---|---| */
      expect_separator = 0;
      continue;
    }
    if (kind == T_NONE)
      continue;
    rows[kind]++;
    if (kind == T_REJECT && n == 4)
      rejection_row(cells);
    else if (kind == T_SHAPE && n == 9)
      shape_row(cells);
    else if (kind == T_NUMERIC && n == 3)
      numeric_row(cells);
    else
      fail_row("table row", "has %s cells: %s", n < 4 ? "too few" : "odd",
               cells[0]);
  }
  fclose(f);
  printf("semantics-doc: %d rows hold, %d failed, %d skipped (%d rejection, "
         "%d shape, %d numerical rows)\n",
         passed, failures, skipped, rows[T_REJECT], rows[T_SHAPE],
         rows[T_NUMERIC]);
  if (!rows[T_REJECT] || !rows[T_SHAPE] || !rows[T_NUMERIC]) {
    printf("FAIL: a table is missing from %s\n", argv[1]);
    return 1;
  }
  return failures ? 1 : 0;
}
