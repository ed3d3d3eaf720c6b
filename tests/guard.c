/* SPDX-License-Identifier: MIT */
/* guard.c — guard-page buffers for tests (see guard.h): mmap a region, make
 * one page of it PROT_NONE, place buffers flush against that page. */
#define _DEFAULT_SOURCE
#include "guard.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

size_t guard_page_size(void) {
  static size_t page;
  if (!page) {
    const long p = sysconf(_SC_PAGESIZE);
    page = p > 0 ? (size_t)p : 4096;
  }
  return page;
}

static void empty(guard_buf *b, guard_side side) {
  memset(b, 0, sizeof *b);
  b->side = side;
}

int guard_init(guard_buf *b, guard_side side, size_t capacity) {
  const size_t page = guard_page_size();
  empty(b, side);
  if (capacity > SIZE_MAX / 2) {
    errno = ENOMEM;
    return -1;
  }
  /* The usable area: whole pages holding the data and its sentinel slack. */
  const size_t area = (capacity + GUARD_SLACK + page - 1) / page * page;
  const size_t total = area + page;
  void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return -1;
  unsigned char *map = m;
  unsigned char *guard = side == GUARD_AFTER ? map + area : map;
  if (mprotect(guard, page, PROT_NONE) != 0) {
    const int e = errno;
    munmap(map, total);
    errno = e;
    return -1;
  }
  b->map = map;
  b->map_bytes = total;
  b->guard = guard;
  b->capacity = area - GUARD_SLACK;
  b->data = side == GUARD_AFTER ? guard : guard + page;
  b->bytes = 0;
  return 0;
}

void *guard_place(guard_buf *b, size_t count, size_t elem) {
  if (elem && count > SIZE_MAX / 2 / elem)
    return NULL;
  const size_t bytes = count * elem;
  if (!b->map || bytes > b->capacity) {
    const guard_side side = b->side;
    /* Grow geometrically so a sweep of sizes remaps only a few times. */
    size_t cap = b->map ? b->capacity * 2 : 0;
    guard_free(b);
    if (cap < bytes)
      cap = bytes;
    if (guard_init(b, side, cap) != 0)
      return NULL;
  }
  const size_t page = guard_page_size();
  if (b->side == GUARD_AFTER) {
    b->data = b->guard - bytes;
    memset(b->data - GUARD_SLACK, GUARD_SENTINEL, GUARD_SLACK);
  } else {
    b->data = b->guard + page;
    memset(b->data + bytes, GUARD_SENTINEL, GUARD_SLACK);
  }
  b->bytes = bytes;
  return b->data;
}

void *guard_alloc(guard_buf *b, guard_side side, size_t count, size_t elem) {
  if (elem && count > SIZE_MAX / 2 / elem) {
    empty(b, side);
    return NULL;
  }
  if (guard_init(b, side, count * elem) != 0)
    return NULL;
  return guard_place(b, count, elem);
}

int guard_slack_intact(const guard_buf *b) {
  if (!b->map)
    return 1;
  const unsigned char *s =
      b->side == GUARD_AFTER ? b->data - GUARD_SLACK : b->data + b->bytes;
  for (size_t i = 0; i < GUARD_SLACK; i++)
    if (s[i] != GUARD_SENTINEL)
      return 0;
  return 1;
}

int guard_hit(const guard_buf *b, const void *p) {
  if (!b->map)
    return 0;
  const uintptr_t a = (uintptr_t)p, g = (uintptr_t)b->guard;
  return a >= g && a - g < guard_page_size();
}

void guard_free(guard_buf *b) {
  if (b->map)
    munmap(b->map, b->map_bytes);
  empty(b, b->side);
}
