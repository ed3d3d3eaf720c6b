// SPDX-License-Identifier: MIT
// machine.h — what the bench ran on and what built it: CPU model, last-level
// cache (read at run time, never assumed), available memory, compilers and
// commit, and the one rule that calls a working set in or out of cache.
#ifndef SPBENCH_MACHINE_H
#define SPBENCH_MACHINE_H

#include <cstddef>
#include <string>

namespace spbench {

// The CPU's model name (/proc/cpuinfo "model name"; on aarch64 the
// implementer and part numbers, named when known), "unknown" when none.
std::string cpu_model();

// The last-level cache a core of this CPU reads through: the highest-level
// data or unified cache of cpu0 in sysfs (the instance cpu0 belongs to),
// else sysconf's L3, else its L2. 0 when nothing reports one.
size_t llc_bytes();
// Where llc_bytes() came from, and what the other source says when they
// disagree (e.g. "sysfs cpu0 index3, shared by CPUs 0-1; sysconf says
// 320 MiB").
std::string llc_source();

// Memory available to new allocations now (/proc/meminfo MemAvailable, else
// sysconf's available pages); 0 when unknown.
size_t mem_available_bytes();

// A working set of this many bytes against llc_bytes(): "in cache" (at most
// half the LLC), "out of cache" (at least twice the LLC), "partly in cache"
// between, "cache size unknown" without an LLC size.
const char *cache_class(size_t bytes);

// How this binary was built: "C gcc 12.2.0 (library), C++ 12.2.0 (bench)".
std::string compiler_text();
std::string build_type();    // Meson's buildtype, e.g. "release"
std::string source_commit(); // git describe --always --dirty, else "unknown"

std::string mib_text(size_t bytes); // "32 MiB", "12.3 MiB", "490 KiB"

} // namespace spbench

#endif
