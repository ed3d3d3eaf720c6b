/* SPDX-License-Identifier: MIT */
/* guard.h — guard-page buffers for tests: a buffer placed flush against a
 * PROT_NONE page, so that reading or writing one byte past its end (or before
 * its start) is a SIGSEGV instead of a silent over-read. Used by test_guard.c.
 *
 * A guard_buf owns one mapping: a usable area plus one inaccessible page,
 * after the area (GUARD_AFTER) or before it (GUARD_BEFORE). guard_place()
 * returns a pointer to `count` elements whose last byte is the last byte
 * before the guard page (AFTER) or whose first byte is the first byte after
 * it (BEFORE). A buffer flush against the end of a page is only as aligned as
 * its byte count makes it (4 bytes for floats, 1 for uint8_t indices): kernels
 * must cope, that is part of the test. The same guard_buf can be placed again
 * for other sizes (it grows its mapping when needed), so a test pays for the
 * mmap/mprotect/munmap once, not once per shape.
 *
 * Next to the data, on the accessible side, GUARD_SLACK bytes of sentinel
 * are written by guard_place() and checked by guard_slack_intact(): a write
 * just before the start (AFTER) or just past the end (BEFORE) is caught there.
 */
#ifndef SIMDPOOL_TESTS_GUARD_H
#define SIMDPOOL_TESTS_GUARD_H

#include <stddef.h>

typedef enum {
  GUARD_AFTER, /* the guard page follows the buffer's last byte */
  GUARD_BEFORE /* the guard page precedes the buffer's first byte */
} guard_side;

#define GUARD_SLACK 64      /* sentinel bytes on the accessible side */
#define GUARD_SENTINEL 0x5a /* their value */

typedef struct guard_buf {
  guard_side side;
  unsigned char *map;   /* the whole mapping (munmap'ed by guard_free) */
  size_t map_bytes;     /* its length */
  unsigned char *guard; /* the PROT_NONE page inside it */
  size_t capacity;      /* bytes guard_place() can place without remapping */
  unsigned char *data;  /* the current placement */
  size_t bytes;         /* its length */
} guard_buf;

/* The system page size (sysconf(_SC_PAGESIZE)). */
size_t guard_page_size(void);

/* Maps a region for buffers of up to `capacity` bytes with its guard page on
 * `side`. Returns 0 on success, -1 (errno set) when mmap or mprotect fails;
 * b is then left empty (guard_free is still safe). */
int guard_init(guard_buf *b, guard_side side, size_t capacity);

/* Places count elements of elem bytes (elem 1, 4 or 8 for float and index
 * buffers) flush against the guard page, remapping first when the mapping is
 * too small, and fills the sentinel slack. Returns the data pointer, or NULL
 * when a needed remap fails. The contents of the data bytes are unspecified.
 * count may be 0 (the pointer is then the guard's edge). */
void *guard_place(guard_buf *b, size_t count, size_t elem);

/* Convenience: guard_init() sized for the buffer, then guard_place(). */
void *guard_alloc(guard_buf *b, guard_side side, size_t count, size_t elem);

/* Nonzero when the sentinel slack next to the current placement is intact. */
int guard_slack_intact(const guard_buf *b);

/* Does address p lie in b's guard page? Safe in a signal handler. */
int guard_hit(const guard_buf *b, const void *p);

/* Unmaps the region (munmap) and empties b. An empty b is ignored. */
void guard_free(guard_buf *b);

#endif /* SIMDPOOL_TESTS_GUARD_H */
