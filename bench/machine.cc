// SPDX-License-Identifier: MIT
// machine.cc — the CPU, cache and memory the bench reads at run time, and the
// build's compilers and commit (build_info.h, written by Meson).
#include "machine.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "build_info.h"

namespace spbench {

namespace {

std::string read_line(const std::string &path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// The value of the first "key : value" line of /proc/cpuinfo, "" if none.
std::string cpuinfo_field(const char *key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(f, line)) {
    if (line.compare(0, n, key) != 0)
      continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.find_first_not_of(" \t", n) != colon)
      continue;
    const size_t v = line.find_first_not_of(" \t", colon + 1);
    return v == std::string::npos ? "" : line.substr(v);
  }
  return "";
}

// A few aarch64 implementers and Arm Ltd parts (MIDR_EL1 fields).
std::string arm_name(unsigned long impl, unsigned long part) {
  static const struct {
    unsigned long impl;
    const char *name;
  } impls[] = {{0x41, "Arm"},      {0x42, "Broadcom"},  {0x43, "Cavium"},
               {0x46, "Fujitsu"},  {0x48, "HiSilicon"}, {0x4e, "NVIDIA"},
               {0x51, "Qualcomm"}, {0x61, "Apple"},     {0xc0, "Ampere"}};
  static const struct {
    unsigned long part;
    const char *name;
  } arm_parts[] = {{0xd03, "Cortex-A53"},  {0xd05, "Cortex-A55"},
                   {0xd07, "Cortex-A57"},  {0xd08, "Cortex-A72"},
                   {0xd0b, "Cortex-A76"},  {0xd0c, "Neoverse N1"},
                   {0xd40, "Neoverse V1"}, {0xd41, "Cortex-A78"},
                   {0xd49, "Neoverse N2"}, {0xd4f, "Neoverse V2"}};
  std::string s;
  for (const auto &i : impls)
    if (i.impl == impl)
      s = i.name;
  if (impl == 0x41)
    for (const auto &p : arm_parts)
      if (p.part == part)
        return s + " " + p.name;
  char b[64];
  std::snprintf(b, sizeof b, "implementer 0x%02lx part 0x%03lx", impl, part);
  return s.empty() ? b : s + " (" + b + ")";
}

// Parses sysfs cache sizes such as "32768K" or "1M".
size_t parse_size(const std::string &s) {
  char *end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str())
    return 0;
  const char u = *end;
  return (size_t)v * (u == 'K' ? 1024u : u == 'M' ? 1u << 20 : 1u);
}

struct Llc {
  size_t bytes = 0;
  std::string source;
};

Llc find_llc() {
  Llc sysfs;
  int best_level = 0;
  for (int i = 0; i < 16; i++) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level");
    if (level.empty())
      continue;
    const std::string type = read_line(dir + "type");
    const size_t size = parse_size(read_line(dir + "size"));
    const int lv = std::atoi(level.c_str());
    if ((type == "Data" || type == "Unified") && size && lv > best_level) {
      best_level = lv;
      sysfs.bytes = size;
      sysfs.source = "L" + level + " of cpu0 in sysfs (index" +
                     std::to_string(i) + ", shared by CPUs " +
                     read_line(dir + "shared_cpu_list") + ")";
    }
  }
  long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const char *which = "L3";
  if (v <= 0) {
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    which = "L2";
  }
  const size_t sc = v > 0 ? (size_t)v : 0;
  if (!sysfs.bytes) {
    Llc r;
    r.bytes = sc;
    r.source = sc ? std::string("sysconf ") + which : "unknown";
    return r;
  }
  if (sc && sc != sysfs.bytes)
    sysfs.source += std::string("; sysconf's ") + which + " says " +
                    mib_text(sc) + " (not used)";
  return sysfs;
}

const Llc &llc() {
  static const Llc l = find_llc();
  return l;
}

} // namespace

std::string cpu_model() {
  std::string m = cpuinfo_field("model name");
  if (m.empty()) {
    const std::string impl = cpuinfo_field("CPU implementer"),
                      part = cpuinfo_field("CPU part");
    if (!impl.empty() && !part.empty())
      m = arm_name(std::strtoul(impl.c_str(), nullptr, 0),
                   std::strtoul(part.c_str(), nullptr, 0));
  }
  if (m.empty())
    m = cpuinfo_field("Hardware");
  return m.empty() ? "unknown" : m;
}

size_t llc_bytes() {
  return llc().bytes;
}

std::string llc_source() {
  return llc().source;
}

size_t mem_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return kib * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  return pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0;
}

const char *cache_class(size_t bytes) {
  const size_t l = llc_bytes();
  if (!l)
    return "cache size unknown";
  if (bytes <= l / 2)
    return "in cache";
  if (bytes >= 2 * l)
    return "out of cache";
  return "partly in cache";
}

std::string compiler_text() {
#if defined(__clang__)
  const std::string cxx = std::string("clang++ ") + __clang_version__;
#elif defined(__GNUC__)
  const std::string cxx = std::string("g++ ") + __VERSION__;
#else
  const std::string cxx = "unknown C++ compiler";
#endif
  return std::string(SPBENCH_C_COMPILER) + " (library), " + cxx + " (bench)";
}

std::string build_type() {
  return SPBENCH_BUILDTYPE;
}

std::string source_commit() {
  return SPBENCH_COMMIT;
}

std::string mib_text(size_t bytes) {
  char b[32];
  if (bytes >= (size_t)1 << 20 && bytes % ((size_t)1 << 20) == 0)
    std::snprintf(b, sizeof b, "%zu MiB", bytes >> 20);
  else if (bytes >= (size_t)1 << 20)
    std::snprintf(b, sizeof b, "%.1f MiB", (double)bytes / (1 << 20));
  else
    std::snprintf(b, sizeof b, "%.0f KiB", (double)bytes / 1024);
  return b;
}

} // namespace spbench
