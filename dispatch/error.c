/* error.c — the thread-local detail behind simdpool_last_error() and the status
 * names. */
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
