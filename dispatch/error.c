/* SPDX-License-Identifier: MIT */
/* error.c — the thread-local detail behind simdpool_last_error(), the status
 * names and the enum names messages use. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[512];

simdpool_status sp_fail(simdpool_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return st;
}

const char *simdpool_last_error(void) {
  return last_error;
}

const char *simdpool_status_string(simdpool_status s) {
  switch (s) {
  case SIMDPOOL_OK:
    return "ok";
  case SIMDPOOL_INVALID_ARGUMENT:
    return "invalid argument";
  case SIMDPOOL_UNSUPPORTED:
    return "unsupported";
  case SIMDPOOL_OUT_OF_MEMORY:
    return "out of memory";
  }
  return "unknown status";
}

const char *sp_method_name(simdpool_method m) {
  switch (m) {
  case SIMDPOOL_MAX:
    return "MAX";
  case SIMDPOOL_AVG:
    return "AVG";
  case SIMDPOOL_LP:
    return "LP";
  }
  return "?";
}

const char *sp_padding_name(simdpool_padding p) {
  switch (p) {
  case SIMDPOOL_PAD_EXPLICIT:
    return "EXPLICIT";
  case SIMDPOOL_PAD_VALID:
    return "VALID";
  case SIMDPOOL_PAD_SAME_UPPER:
    return "SAME_UPPER";
  case SIMDPOOL_PAD_SAME_LOWER:
    return "SAME_LOWER";
  }
  return "?";
}

const char *sp_index_type_name(simdpool_index_type t) {
  switch (t) {
  case SIMDPOOL_INDEX_NONE:
    return "NONE";
  case SIMDPOOL_INDEX_I32:
    return "I32";
  case SIMDPOOL_INDEX_I64:
    return "I64";
  case SIMDPOOL_INDEX_U8:
    return "U8";
  }
  return "?";
}

const char *sp_dtype_name(simdpool_dtype t) {
  switch (t) {
  case SIMDPOOL_F32:
    return "F32";
  case SIMDPOOL_BF16:
    return "BF16";
  case SIMDPOOL_F16:
    return "F16";
  case SIMDPOOL_S8:
    return "S8";
  case SIMDPOOL_U8:
    return "U8";
  }
  return "?";
}
