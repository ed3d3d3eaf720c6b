/* SPDX-License-Identifier: MIT */
/* registry.c — turns kernels/registry.inc into the table dispatch, tests and
 * benches iterate. */
#include "kernel.h"

#define SP_KERNEL(fn, isa, method, layout, op, shape, mask)                    \
  void fn(const sp_geom *g, const sp_io *io);
#include "registry.inc"
#undef SP_KERNEL

#define SP_KERNEL(fn, isa, method, layout, op, shape, mask)                    \
  {#fn,                                                                        \
   SIMDPOOL_ISA_##isa,                                                         \
   SIMDPOOL_##method,                                                          \
   SIMDPOOL_##layout,                                                          \
   SP_OP_##op,                                                                 \
   SP_SHAPE_##shape,                                                           \
   (mask),                                                                     \
   fn},
const sp_kernel_entry sp_registry[] = {
#include "registry.inc"
};
#undef SP_KERNEL

const size_t sp_registry_size = sizeof sp_registry / sizeof sp_registry[0];
