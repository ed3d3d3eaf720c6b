/* SPDX-License-Identifier: MIT */
/* replay_main.c — runs the fuzz target without libFuzzer: feeds every file
 * named on the command line, and every regular file inside each directory
 * named there (in name order), to LLVMFuzzerTestOneInput. Linked with
 * fuzz_pool.c it is the fuzz-corpus regression test of every build (gcc,
 * sanitizers, aarch64 under qemu); a mismatch aborts inside the target. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_pool.h"

static size_t g_files, g_bytes;

/* Runs one file; returns 0, or -1 when it cannot be read. */
static int run_file(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *data = malloc(cap);
  if (!data) {
    fclose(fp);
    return -1;
  }
  for (;;) {
    if (len == cap) {
      uint8_t *grown = realloc(data, cap * 2);
      if (!grown) {
        free(data);
        fclose(fp);
        return -1;
      }
      data = grown;
      cap *= 2;
    }
    const size_t got = fread(data + len, 1, cap - len, fp);
    len += got;
    if (got == 0)
      break;
  }
  const int err = ferror(fp);
  fclose(fp);
  if (err) {
    fprintf(stderr, "%s: read error\n", path);
    free(data);
    return -1;
  }
  printf("run %s (%zu bytes)\n", path, len);
  fflush(stdout);
  /* libFuzzer hands the target a buffer of exactly len bytes: so do we,
   * so that ASan sees any read past the input. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(data);
    return -1;
  }
  memcpy(exact, data, len);
  free(data);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  g_files++;
  g_bytes += len;
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of a directory, sorted by name. */
static int run_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return -1;
  }
  char **names = NULL;
  size_t count = 0, cap = 0;
  int rc = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    if (count == cap) {
      cap = cap ? cap * 2 : 64;
      char **grown = realloc(names, cap * sizeof *names);
      if (!grown) {
        rc = -1;
        break;
      }
      names = grown;
    }
    const size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
    names[count] = malloc(len);
    if (!names[count]) {
      rc = -1;
      break;
    }
    snprintf(names[count], len, "%s/%s", dir, e->d_name);
    count++;
  }
  closedir(d);
  if (names)
    qsort(names, count, sizeof *names, cmp_names);
  for (size_t i = 0; i < count; i++) {
    struct stat s;
    if (rc == 0 && stat(names[i], &s) == 0 && S_ISREG(s.st_mode) &&
        run_file(names[i]) != 0)
      rc = -1;
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  fuzz_pool_verbose = 1;
  /* Seeds as big as it takes for simdpool_*_parallel to split the work
   * (they are skipped while fuzzing). */
  fuzz_pool_max_elems = (size_t)1 << 18;
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    struct stat s;
    if (stat(argv[i], &s) != 0) {
      perror(argv[i]);
      rc = -1;
    } else if (S_ISDIR(s.st_mode)) {
      rc = run_dir(argv[i]);
    } else {
      rc = run_file(argv[i]);
    }
  }
  if (rc != 0)
    return 1;
  if (g_files == 0) {
    fprintf(stderr, "no inputs found\n");
    return 1;
  }
  printf("fuzz-corpus: %zu inputs (%zu bytes) matched scalar on every ISA\n",
         g_files, g_bytes);
  return 0;
}
