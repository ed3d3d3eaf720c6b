/* SPDX-License-Identifier: MIT */
/* fuzz_pool.h — the libFuzzer entry point of fuzz_pool.c, shared with the
 * corpus replay driver (replay_main.c) that runs it without libFuzzer. */
#ifndef SIMDPOOL_FUZZ_POOL_H
#define SIMDPOOL_FUZZ_POOL_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one descriptor and its data from data[0..size) and checks every
 * variant against the scalar reference; aborts on any mismatch. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Nonzero: print one line per input (descriptor, scalar status, what ran)
 * on stdout. The replay driver sets it; libFuzzer runs leave it 0. */
extern int fuzz_pool_verbose;

/* Inputs whose tensors exceed this many elements only create and destroy
 * their plans (default 1 << 16; the replay driver raises it). */
extern size_t fuzz_pool_max_elems;

#endif /* SIMDPOOL_FUZZ_POOL_H */
