// SPDX-License-Identifier: MIT
// bench_main.cc — simdpool's Google Benchmark program. At start-up it turns
// the shape list (suite.cc) and the kernel registry into benchmarks named
// op/layout/case/isa, adds the copy and read-4-write-1 references of the same
// byte counts, the best ISA again through the parallel entry points on a
// two-thread simdpool_threadpool (named .../t2-<isa>), a
// kernel/<entry>/<layout>/<case> benchmark for every registry kernel no case
// reaches, and the peers when built.
//
//   simdpool_bench [google benchmark flags]   run (e.g. --benchmark_filter=)
//   simdpool_bench --list-kernels             registry coverage; exit 1 if a
//                                             kernel is not benchmarked
//   simdpool_bench --smoke                    one iteration per benchmark of
//                                             a few cases; exit 1 on any
//                                             wrong result or coverage gap
//   simdpool_bench --repetitions=N            run each group of benchmarks
//                                             (a case, op and layout's
//                                             variants and references) N
//                                             times in a row
//   simdpool_bench --all-kernels              also time each plan's kernel by
//                                             direct call, as <name>.direct
//                                             (the API's own cost = plan time
//                                             - kernel time)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>

#include "buffers.h"
#include "machine.h"
#include "peers.h"
#include "roofline.h"
#include "suite.h"

namespace spbench {
namespace {

// The cases of --smoke (unless a --benchmark_filter is given): one 2x2 max
// case, the overlapping 3x3 max forward/backward, global average, max
// unpooling and its backward, one network's training step, and every
// kernel-direct benchmark.
const char *const kSmokeFilter =
    "small_max2|stem_max3|gap_avg7|seg_unpool2|alexnet|^kernel/";

// ------------------------------------------------------------- the specs

enum class Kind { Plan, Kernel, Ref, Peer, Threads, Net, NetPeer };
enum class RefKind { Copy, R4W1 };

// One registered benchmark.
struct Spec {
  Kind kind = Kind::Plan;
  std::string name;
  const Case *cs = nullptr;
  OpVariant op;
  simdpool_layout layout = SIMDPOOL_NCHW;
  simdpool_isa isa = SIMDPOOL_ISA_SCALAR;
  const sp_kernel_entry *entry = nullptr; // what a Plan runs, a Kernel calls
  RefKind ref = RefKind::Copy;
  bool cold = false;
  Peer peer = Peer::OneDNN;
  const Network *net = nullptr; // Net (isa: AUTO or forced), NetPeer
  size_t bytes = 0; // what one pass must move (Ref: the case's byte count)
  bool verified = false;
  int group = 0; // the specs of a group run together, once per round
};

std::deque<Spec> g_specs;     // stable addresses: lambdas hold Spec*
std::deque<Case> g_synthetic; // generated cases of kernel-direct specs
std::deque<Case> g_net_refs;  // a network as the case of its references
bool g_smoke = false;
bool g_all_kernels = false; // --all-kernels
int g_rounds = 1;           // --repetitions=N
int g_group = 0;            // the group add_spec puts specs in
std::string g_min_time = "Google Benchmark's default"; // per benchmark run
double g_min_seconds = 0.5; // the same as a number (Google Benchmark's 0.5)
int g_failures = 0;         // wrong results, unexpected errors
size_t g_max_ref_bytes = 0;

bool isa_of_interest(int i) {
  return i >= SIMDPOOL_ISA_SCALAR && i <= SIMDPOOL_ISA_NEON;
}

const char *isa_name(simdpool_isa isa) {
  return isa == SIMDPOOL_ISA_AUTO ? "auto" : simdpool_isa_name(isa);
}

// The kernel of isa for op o on g, by dispatch's own rule
// (sp_pick_dtype_kernel): of g's dtype, or an f32 kernel that the plan runs
// on widened copies and names "<f32 kernel>+<dtype>".
const sp_kernel_entry *pick_for(simdpool_isa isa, const sp_geom &g, sp_op o) {
  return sp_pick_dtype_kernel(isa, &g, o, 0);
}

// The kernel a plan of isa runs for op on g, or nullptr when isa lacks any
// op the plan needs (plan creation would then be UNSUPPORTED).
const sp_kernel_entry *plan_kernel(simdpool_isa isa, const sp_geom &g,
                                   const OpVariant &op) {
  for (int o = 0; o < SP_OP_COUNT; o++)
    if (sp_op_needed(&g, (sp_op)o) && !pick_for(isa, g, (sp_op)o))
      return nullptr;
  return pick_for(isa, g, kernel_op(op.call));
}

// Does entry e compute dtype t itself (else a plan runs it on widened
// copies)?
bool computes_dtype(const sp_kernel_entry &e, simdpool_dtype t) {
  return (e.dtype_mask & SP_DT_BIT(t)) != 0;
}

// The name simdpool_plan_kernel_name gives the kernel of a plan of op's
// dtype that runs entry e: its own, or "<f32 kernel>+<dtype>".
std::string plan_kernel_name(const sp_kernel_entry &e, const OpVariant &op) {
  if (computes_dtype(e, op.dtype))
    return e.name;
  return std::string(e.name) + "+" + dtype_name(op.dtype);
}

// Adds a spec to the current group.
void add_spec(Spec s) {
  s.group = g_group;
  g_specs.push_back(s);
}

// Starts a group: the benchmarks of one (case, op, layout), of one network
// and layout, or one kernel-direct benchmark. With --repetitions=N the whole
// group runs N times in a row (rounds), so that every variant, its
// references and its two-thread twin are measured at the same N moments.
void new_group() {
  g_group++;
}

// The references of a group, run first in every round: the hot copy and
// read-4-write-1 of the group's byte count, and (with_cold: once per case and
// op, in the first round) the cold ones.
void add_refs(const Case &cs, const OpVariant &op, size_t bytes,
              bool with_cold) {
  for (int cold = 0; cold < (with_cold ? 2 : 1); cold++) {
    for (RefKind k : {RefKind::Copy, RefKind::R4W1}) {
      Spec s;
      s.kind = Kind::Ref;
      s.cs = &cs;
      s.op = op;
      s.ref = k;
      s.cold = cold != 0;
      s.bytes = bytes;
      s.name = std::string(k == RefKind::Copy ? "copy" : "r4w1") + "/" +
               (cold ? "cold" : "hot") + "/" + cs.name + "." + op.name + "/ref";
      add_spec(s);
    }
  }
  g_max_ref_bytes = std::max(g_max_ref_bytes, bytes);
}

// The index type a kernel-direct benchmark of e uses: none where the kernel
// takes none; backward from indices I32 first; unpooling I64 first (the
// suite's unpooling case reads I64, so the direct call of a kernel its plans
// do not pick times the same bytes).
simdpool_index_type index_for(const sp_kernel_entry &e) {
  const bool typed =
      e.op == SP_OP_BWD_IDX || e.op == SP_OP_UNPOOL || e.op == SP_OP_UNPOOL_BWD;
  if (!typed && (e.index_mask & SP_IDX_BIT(SIMDPOOL_INDEX_NONE)))
    return SIMDPOOL_INDEX_NONE;
  const bool unpool = e.op == SP_OP_UNPOOL || e.op == SP_OP_UNPOOL_BWD;
  const simdpool_index_type i32 = SIMDPOOL_INDEX_I32, i64 = SIMDPOOL_INDEX_I64;
  for (simdpool_index_type t :
       {unpool ? i64 : i32, unpool ? i32 : i64, SIMDPOOL_INDEX_U8})
    if (e.index_mask & SP_IDX_BIT(t))
      return t;
  return SIMDPOOL_INDEX_NONE;
}

Call call_of(sp_op op) {
  switch (op) {
  case SP_OP_FWD:
    return Call::Forward;
  case SP_OP_BWD:
    return Call::BackwardX;
  case SP_OP_UNPOOL:
    return Call::Unpool;
  case SP_OP_UNPOOL_BWD:
    return Call::UnpoolBackward;
  default:
    return Call::BackwardIdx;
  }
}

// Does case cs time an op of call c?
bool times_call(const Case &cs, Call c) {
  return std::any_of(cs.ops.begin(), cs.ops.end(),
                     [c](const OpVariant &op) { return op.call == c; });
}

// A kernel-direct spec for registry entry e: a suite case whose geometry
// falls in e's shape class, else a generated one. False when none exists.
bool add_kernel_spec(const sp_kernel_entry &e) {
  // In f32 when the kernel takes it, else in the first dtype it takes (the
  // quantized average's: U8).
  simdpool_dtype t = SIMDPOOL_F32;
  for (int d = SIMDPOOL_U8; d > SIMDPOOL_F32 && !(e.dtype_mask & SP_DT_F32);
       d--)
    if (e.dtype_mask & SP_DT_BIT((simdpool_dtype)d))
      t = (simdpool_dtype)d;
  const OpVariant op = typed(make_op(e.method, call_of(e.op), index_for(e)), t);
  sp_geom g;
  const Case *found = nullptr;
  // An unpooling kernel prefers a case that times unpooling (its plans'
  // rows are then the comparison); any other kernel takes the first case.
  for (int pass = is_unpool(op.call) ? 0 : 1; pass < 2 && !found; pass++) {
    for (const Case &cs : suite()) {
      if (cs.method == e.method && (pass || times_call(cs, op.call)) &&
          resolve(cs, op, e.layout, &g, nullptr) &&
          sp_shape_matches(e.shape, &g)) {
        found = &cs;
        break;
      }
    }
  }
  if (!found) {
    Case syn;
    if (!synthetic_case(e.method, e.shape, &syn) ||
        !resolve(syn, op, e.layout, &g, nullptr) ||
        !sp_shape_matches(e.shape, &g))
      return false;
    g_synthetic.push_back(syn);
    found = &g_synthetic.back();
  }
  Spec s;
  s.kind = Kind::Kernel;
  s.cs = found;
  s.op = op;
  s.layout = e.layout;
  s.isa = e.isa;
  s.entry = &e;
  s.bytes = pass_bytes(g, op);
  s.name = std::string("kernel/") + e.name + "/" + layout_name(e.layout) + "/" +
           found->name;
  new_group();
  add_spec(s);
  return true;
}

// The specs of one network, named net/<layout>/<network>/<who>: simdpool's
// AUTO plans ("simdpool"), each built ISA that covers every layer, and each
// peer that implements every op of every layer; a group per layout, led by
// the references of the step's byte count ("<network>.step").
void add_network_specs(const Network &net) {
  Case ref_case;
  ref_case.name = net.name;
  ref_case.note = net.note;
  g_net_refs.push_back(ref_case);
  const Case &rc = g_net_refs.back();
  OpVariant step;
  step.name = "step";
  const size_t bytes = network_bytes(net);
  for (simdpool_layout layout : {SIMDPOOL_NCHW, SIMDPOOL_NHWC}) {
    new_group();
    add_refs(rc, step, bytes, layout == SIMDPOOL_NCHW);
    const auto net_spec = [&](Kind kind, const std::string &who) {
      Spec s;
      s.kind = kind;
      s.cs = &rc;
      s.op = step;
      s.net = &net;
      s.layout = layout;
      s.bytes = bytes;
      s.name = std::string("net/") + layout_name(layout) + "/" + net.name +
               "/" + who;
      return s;
    };
    Spec a = net_spec(Kind::Net, "simdpool");
    a.isa = SIMDPOOL_ISA_AUTO;
    add_spec(a);
    for (int i = SIMDPOOL_ISA_SCALAR; isa_of_interest(i); i++) {
      const simdpool_isa isa = (simdpool_isa)i;
      bool covers = sp_isa_built(isa);
      for (const Case &cs : net.layers)
        for (const OpVariant &op : cs.ops) {
          sp_geom g;
          covers = covers && resolve(cs, op, layout, &g, nullptr) &&
                   plan_kernel(isa, g, op) != nullptr;
        }
      if (!covers)
        continue;
      Spec s = net_spec(Kind::Net, isa_name(isa));
      s.isa = isa;
      add_spec(s);
    }
    for (Peer p : peers_built()) {
      bool all = true;
      for (const Case &cs : net.layers)
        for (const OpVariant &op : cs.ops)
          all = all && peer_supports(p, cs, op, layout, nullptr);
      if (!all)
        continue;
      Spec s = net_spec(Kind::NetPeer, peer_name(p));
      s.peer = p;
      add_spec(s);
    }
  }
}

// Builds every spec: per (case, op) and layout a group of its references,
// each built ISA's plan, the two-thread twin of the best and each peer; then
// the networks; then kernel-direct specs for registry entries no plan runs.
void build_specs() {
  for (const Case &cs : suite()) {
    for (const OpVariant &op : cs.ops) {
      sp_geom g;
      std::string err;
      OpVariant dense = op; // the bytes: those of the same dense op
      dense.slice = 1;
      if (!resolve(cs, dense, SIMDPOOL_NCHW, &g, &err)) {
        std::fprintf(stderr, "simdpool_bench: case %s/%s rejected: %s\n",
                     cs.name.c_str(), op.name.c_str(), err.c_str());
        g_failures++;
        continue;
      }
      const size_t bytes = pass_bytes(g, op);
      for (simdpool_layout layout : {SIMDPOOL_NCHW, SIMDPOOL_NHWC}) {
        if (!resolve(cs, op, layout, &g, &err))
          continue;
        new_group();
        // The references of the op's own byte count (dtype rows move other
        // bytes than f32's); the cold ones (the DRAM rate) for f32 rows only.
        add_refs(cs, op, bytes,
                 layout == SIMDPOOL_NCHW && op.dtype == SIMDPOOL_F32);
        // One benchmark of this case, op and layout, named op/layout/case/who.
        const auto case_spec = [&](Kind kind, const std::string &who) {
          Spec s;
          s.kind = kind;
          s.cs = &cs;
          s.op = op;
          s.layout = layout;
          s.bytes = bytes;
          s.name =
              op.name + "/" + layout_name(layout) + "/" + cs.name + "/" + who;
          return s;
        };
        for (int i = SIMDPOOL_ISA_SCALAR; isa_of_interest(i); i++) {
          const simdpool_isa isa = (simdpool_isa)i;
          if (!sp_isa_built(isa))
            continue;
          const sp_kernel_entry *e = plan_kernel(isa, g, op);
          if (!e)
            continue; // this ISA does not claim the method/layout/op
          Spec s = case_spec(Kind::Plan, isa_name(isa));
          s.isa = isa;
          s.entry = e;
          add_spec(s);
        }
        // Two-thread scaling of the best ISA this CPU runs.
        for (int i = SIMDPOOL_ISA_NEON; i >= SIMDPOOL_ISA_SCALAR; i--) {
          const simdpool_isa isa = (simdpool_isa)i;
          const sp_kernel_entry *e = sp_isa_built(isa) && sp_cpu_runs(isa)
                                         ? plan_kernel(isa, g, op)
                                         : nullptr;
          if (!e)
            continue;
          Spec s = case_spec(Kind::Threads, std::string("t2-") + isa_name(isa));
          s.isa = isa;
          s.entry = e;
          add_spec(s);
          break;
        }
        for (Peer p : peers_built()) {
          if (!peer_supports(p, cs, op, layout, nullptr))
            continue;
          Spec s = case_spec(Kind::Peer, peer_name(p));
          s.peer = p;
          add_spec(s);
        }
      }
    }
  }
  for (const Network &net : networks())
    add_network_specs(net);
  for (size_t i = 0; i < sp_registry_size; i++) {
    const sp_kernel_entry &e = sp_registry[i];
    const bool covered =
        std::any_of(g_specs.begin(), g_specs.end(),
                    [&](const Spec &s) { return s.entry == &e; });
    if (!covered)
      add_kernel_spec(e);
  }
  if (g_all_kernels) { // a direct-call twin of every plan benchmark
    // (Not of a widening plan's: its kernel reads f32, the case's x is not.)
    std::vector<Spec> twins;
    for (const Spec &s : g_specs)
      if (s.kind == Kind::Plan && computes_dtype(*s.entry, s.op.dtype)) {
        Spec t = s;
        t.kind = Kind::Kernel;
        t.name += ".direct";
        t.group = ++g_group;
        twins.push_back(t);
      }
    g_specs.insert(g_specs.end(), twins.begin(), twins.end());
  }
}

// What peer p does not implement, grouped by reason: op/layout/case names.
std::map<std::string, std::vector<std::string>> peer_skips(Peer p) {
  std::map<std::string, std::vector<std::string>> skipped;
  for (const Case &cs : suite())
    for (const OpVariant &op : cs.ops)
      for (simdpool_layout l : {SIMDPOOL_NCHW, SIMDPOOL_NHWC}) {
        std::string why;
        if (!peer_supports(p, cs, op, l, &why))
          skipped[why].push_back(op.name + "/" + layout_name(l) + "/" +
                                 cs.name);
      }
  return skipped;
}

// Prints the registry with the benchmarks that time each kernel (verbose) or
// only the gaps; returns false when a kernel of a built ISA has none.
bool check_coverage(FILE *out, bool verbose) {
  size_t gaps = 0, runnable = 0;
  if (verbose)
    std::fprintf(out, "%-34s %-7s %-4s %-5s %-10s %-8s %-4s  benchmarks\n",
                 "kernel", "isa", "meth", "layout", "op", "shape", "cpu");
  for (size_t i = 0; i < sp_registry_size; i++) {
    const sp_kernel_entry &e = sp_registry[i];
    std::vector<std::string> names;
    for (const Spec &s : g_specs)
      if (s.entry == &e)
        names.push_back(s.name);
    const bool runs = sp_cpu_runs(e.isa) != 0;
    runnable += runs;
    if (names.empty())
      gaps++;
    if (verbose || names.empty()) {
      std::fprintf(out, "%-34s %-7s %-4s %-6s %-10s %-8s %-4s  ", e.name,
                   isa_name(e.isa), method_name(e.method),
                   layout_name(e.layout), op_kind_name(e.op),
                   shape_name(e.shape), runs ? "yes" : "no");
      if (names.empty())
        std::fprintf(out, "MISSING: no benchmark times this kernel\n");
      else
        std::fprintf(
            out, "%s%s\n", names[0].c_str(),
            names.size() > 1
                ? (" (+" + std::to_string(names.size() - 1) + " more)").c_str()
                : "");
    }
  }
  std::string built;
  for (int i = SIMDPOOL_ISA_SCALAR; isa_of_interest(i); i++)
    if (sp_isa_built((simdpool_isa)i))
      built +=
          std::string(built.empty() ? "" : ",") + isa_name((simdpool_isa)i);
  std::fprintf(out,
               "coverage: %zu registry kernels (ISAs built: %s; %zu runnable "
               "here), %zu without a benchmark%s\n",
               sp_registry_size, built.c_str(), runnable, gaps,
               gaps ? "  <-- FAIL" : "");
  if (verbose) { // what each peer leaves out, grouped by reason
    for (Peer p : peers_built()) {
      for (const auto &kv : peer_skips(p)) {
        std::fprintf(out, "peer %s skips %zu: %s:", peer_name(p),
                     kv.second.size(), kv.first.c_str());
        for (const std::string &n : kv.second)
          std::fprintf(out, " %s", n.c_str());
        std::fprintf(out, "\n");
      }
    }
  }
  return gaps == 0;
}

// ------------------------------------------------------------- workspace

// The operands of one (case, op, layout), filled once, and the scalar
// reference's outputs every variant and peer is compared with. All
// benchmarks of a group run back to back, so one workspace lives at a time.
struct Workspace {
  std::string key;
  const Case *cs = nullptr;
  OpVariant op;
  simdpool_layout layout = SIMDPOOL_NCHW;
  sp_geom g{};      // the kernels' view (sp_simplify_geom)
  sp_geom peer_g{}; // as described: what peers are given
  size_t in = 0, out = 0;
  Buffer x, dy, y, dx, idx;
  Buffer ref_out, ref_idx;
  std::string error;
  std::map<Peer, std::unique_ptr<PeerOp>> peer_ops;
  std::map<Peer, std::string> peer_error, peer_label;
};

std::unique_ptr<Workspace> g_ws;
void free_net_workspace(); // the networks' tensors (below)

uint64_t seed_of(const std::string &s) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (unsigned char ch : s)
    h = (h ^ ch) * 1099511628211ull;
  return h;
}

// One pass of simdpool's public API on the workspace.
simdpool_status run_plan(const simdpool_plan *p, Workspace &ws) {
  switch (ws.op.call) {
  case Call::Forward:
    return simdpool_forward(
        p, ws.x.f(), ws.y.f(),
        ws.op.index_type != SIMDPOOL_INDEX_NONE ? ws.idx.data() : nullptr);
  case Call::BackwardX:
    return simdpool_backward(p, ws.dy.f(), nullptr,
                             ws.op.method == SIMDPOOL_AVG ? nullptr : ws.x.f(),
                             ws.dx.f());
  case Call::BackwardIdx:
    return simdpool_backward(p, ws.dy.f(), ws.idx.data(), nullptr, ws.dx.f());
  case Call::Unpool: // y from dy's buffer, x into dx's (as the kernels)
    return simdpool_unpool(p, ws.dy.f(), ws.idx.data(), ws.dx.f());
  case Call::UnpoolBackward: // dx from x's buffer, dy into y's
    return simdpool_unpool_backward(p, ws.x.f(), ws.idx.data(), ws.y.f());
  }
  return SIMDPOOL_INVALID_ARGUMENT;
}

// One pass of the parallel entry points over pool.
simdpool_status run_plan_parallel(const simdpool_plan *p, Workspace &ws,
                                  simdpool_threadpool *pool) {
  const simdpool_parallel_for_fn pf = simdpool_threadpool_parallel_for;
  switch (ws.op.call) {
  case Call::Forward:
    return simdpool_forward_parallel(
        p, ws.x.f(), ws.y.f(),
        ws.op.index_type != SIMDPOOL_INDEX_NONE ? ws.idx.data() : nullptr, pf,
        pool);
  case Call::BackwardX:
    return simdpool_backward_parallel(
        p, ws.dy.f(), nullptr,
        ws.op.method == SIMDPOOL_AVG ? nullptr : ws.x.f(), ws.dx.f(), pf, pool);
  case Call::BackwardIdx:
    return simdpool_backward_parallel(p, ws.dy.f(), ws.idx.data(), nullptr,
                                      ws.dx.f(), pf, pool);
  case Call::Unpool:
    return simdpool_unpool_parallel(p, ws.dy.f(), ws.idx.data(), ws.dx.f(), pf,
                                    pool);
  case Call::UnpoolBackward:
    return simdpool_unpool_backward_parallel(p, ws.x.f(), ws.idx.data(),
                                             ws.y.f(), pf, pool);
  }
  return SIMDPOOL_INVALID_ARGUMENT;
}

// One pass of a registry kernel called directly (no plan, no checks).
void run_kernel(const sp_kernel_entry &e, Workspace &ws) {
  sp_io io{};
  switch (ws.op.call) {
  case Call::Forward:
    io.x = ws.x.f();
    io.y = ws.y.f();
    io.indices =
        ws.op.index_type != SIMDPOOL_INDEX_NONE ? ws.idx.data() : nullptr;
    break;
  case Call::BackwardX:
    io.x = ws.op.method == SIMDPOOL_AVG ? nullptr : ws.x.f();
    io.dy = ws.dy.f();
    io.dx = ws.dx.f();
    break;
  case Call::BackwardIdx:
  case Call::Unpool: // sp_io: y in as dy, x out as dx
    io.indices = ws.idx.data();
    io.dy = ws.dy.f();
    io.dx = ws.dx.f();
    break;
  case Call::UnpoolBackward: // sp_io: dx in as x, dy out as y
    io.indices = ws.idx.data();
    io.x = ws.x.f();
    io.y = ws.y.f();
    break;
  }
  e.fn(&ws.g, &io);
}

bool is_forward(const Workspace &ws) {
  return ws.op.call == Call::Forward;
}

// Is the call's output shaped as y (forward, unpooling's backward) rather
// than as x (backward, unpooling)?
bool output_shaped(Call c) {
  return c == Call::Forward || c == Call::UnpoolBackward;
}

// The buffer the call writes (its float output): forward writes y,
// backward dx; unpooling writes x into dx's buffer and its backward dy into
// y's (the kernels' sp_io convention).
Buffer &out_buffer(Workspace &ws) {
  return output_shaped(ws.op.call) ? ws.y : ws.dx;
}
const Buffer &out_buffer(const Workspace &ws) {
  return output_shaped(ws.op.call) ? ws.y : ws.dx;
}

// The name of that output in the public API: y, dx, x or dy.
const char *out_name(Call c) {
  switch (c) {
  case Call::Forward:
    return "y";
  case Call::Unpool:
    return "x";
  case Call::UnpoolBackward:
    return "dy";
  default:
    return "dx";
  }
}

// Overwrites the outputs with a NaN pattern so that a kernel that skips an
// element cannot pass on a previous variant's result.
void poison_outputs(Workspace &ws) {
  Buffer &out = out_buffer(ws);
  std::memset(out.data(), 0xA5, out.bytes());
  if (is_forward(ws) && !ws.idx.empty())
    std::memset(ws.idx.data(), 0xA5, ws.idx.bytes());
}

std::string hex32(const void *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  char b[16];
  std::snprintf(b, sizeof b, "0x%08" PRIx32, v);
  return b;
}

// One element of size es (4, 2 or 1 bytes) in hex.
std::string hex_elem(const void *p, size_t es) {
  if (es == 4)
    return hex32(p);
  uint16_t v = 0;
  if (es == 2)
    std::memcpy(&v, p, 2);
  else
    v = *static_cast<const uint8_t *>(p);
  char b[16];
  std::snprintf(b, sizeof b, es == 2 ? "0x%04x" : "0x%02x", (unsigned)v);
  return b;
}

// "" when the outputs equal the scalar reference bit for bit, else where not.
std::string compare_exact(const Workspace &ws) {
  const Buffer &got = out_buffer(ws);
  const size_t es = sp_dtype_size(ws.op.dtype);
  const size_t n = got.bytes() / es;
  if (std::memcmp(got.data(), ws.ref_out.data(), got.bytes()) != 0) {
    const char *a = static_cast<const char *>(got.data());
    const char *b = static_cast<const char *>(ws.ref_out.data());
    for (size_t i = 0; i < n; i++)
      if (std::memcmp(a + i * es, b + i * es, es) != 0)
        return std::string(out_name(ws.op.call)) + "[" + std::to_string(i) +
               "] = " + hex_elem(a + i * es, es) + ", scalar reference " +
               hex_elem(b + i * es, es);
  }
  if (is_forward(ws) && !ws.idx.empty() &&
      std::memcmp(ws.idx.data(), ws.ref_idx.data(), ws.idx.bytes()) != 0)
    return "indices differ from the scalar reference";
  return "";
}

// Distance in units in the last place between two finite floats.
uint64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  const int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia;
  const int64_t ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
  return (uint64_t)(oa > ob ? oa - ob : ob - oa);
}

// A peer's output against the scalar reference: MAX forward, and every op of
// a peer that claims simdpool's numerics (bit_exact: PyTorch), must match bit
// for bit; other sums (average, backward) may differ by rounding only (the
// peers sum in another order or multiply by a reciprocal): 4 ulp, or 2^-18
// absolute for results of cancellation (inputs lie in [-4, 4)). I64 indices a
// peer writes must equal simdpool's. Returns "" when equal enough and
// describes the largest difference in *detail.
// n floats of a peer (got) against simdpool's (ref), named what: "" when
// equal (exact: bit for bit; else within the rounding tolerance above), else
// the first element that is not. Widens *max_ulp and *max_abs.
std::string compare_floats(const char *what, const float *got, const float *ref,
                           size_t n, bool exact, uint64_t *max_ulp,
                           double *max_abs) {
  if (std::memcmp(got, ref, n * sizeof(float)) == 0)
    return "";
  size_t bad = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    const float a = got[i], b = ref[i];
    if (std::memcmp(&a, &b, 4) == 0)
      continue;
    const uint64_t u = std::isfinite(a) ? ulp_distance(a, b) : UINT64_MAX;
    const double d = std::fabs((double)a - (double)b);
    *max_ulp = std::max(*max_ulp, u);
    *max_abs = std::max(*max_abs, d);
    if (bad == SIZE_MAX && (exact || (u > 4 && !(d <= 0x1p-18))))
      bad = i;
  }
  if (bad == SIZE_MAX)
    return "";
  return std::string(what) + "[" + std::to_string(bad) +
         "] = " + std::to_string(got[bad]) + " (" + hex32(got + bad) +
         "), simdpool " + std::to_string(ref[bad]) + " (" + hex32(ref + bad) +
         ")";
}

// n elements of dtype t (not F32: compare_floats) of a peer (got) against
// simdpool's (ref), as compare_floats: exact, or within one unit in the last
// place of the type (bf16, f16: one rounding of a sum taken in another
// order; s8, u8: one step of the quantized rounding). *max_ulp counts the
// type's units, *max_abs the widened (bf16/f16) or integer difference.
std::string compare_typed(const char *what, const void *got, const void *ref,
                          size_t n, simdpool_dtype t, bool exact,
                          uint64_t *max_ulp, double *max_abs) {
  const size_t es = sp_dtype_size(t);
  if (std::memcmp(got, ref, n * es) == 0)
    return "";
  const auto value = [t](const void *p, size_t i, int64_t *ord) -> double {
    if (t == SIMDPOOL_S8 || t == SIMDPOOL_U8) {
      const int64_t v = t == SIMDPOOL_S8
                            ? (int64_t) static_cast<const int8_t *>(p)[i]
                            : (int64_t) static_cast<const uint8_t *>(p)[i];
      *ord = v;
      return (double)v;
    }
    const uint16_t h = static_cast<const uint16_t *>(p)[i];
    *ord = h & 0x8000u ? -(int64_t)(h & 0x7fffu) : (int64_t)h;
    const uint32_t u =
        t == SIMDPOOL_BF16 ? sp_bf16_widen_bits(h) : sp_f16_widen_bits(h);
    float f;
    std::memcpy(&f, &u, 4);
    return (double)f;
  };
  size_t bad = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    int64_t og, orf;
    const double a = value(got, i, &og), b = value(ref, i, &orf);
    if (og == orf &&
        std::memcmp(static_cast<const char *>(got) + i * es,
                    static_cast<const char *>(ref) + i * es, es) == 0)
      continue;
    const uint64_t u = std::isfinite(a)
                           ? (uint64_t)(og > orf ? og - orf : orf - og)
                           : UINT64_MAX;
    *max_ulp = std::max(*max_ulp, u);
    *max_abs = std::max(*max_abs, std::fabs(a - b));
    if (bad == SIZE_MAX && (exact || u > 1))
      bad = i;
  }
  if (bad == SIZE_MAX)
    return "";
  int64_t o;
  const char *g8 = static_cast<const char *>(got) + bad * es;
  const char *r8 = static_cast<const char *>(ref) + bad * es;
  return std::string(what) + "[" + std::to_string(bad) +
         "] = " + std::to_string(value(got, bad, &o)) + " (" +
         hex_elem(g8, es) + "), simdpool " +
         std::to_string(value(ref, bad, &o)) + " (" + hex_elem(r8, es) + ")";
}

// n I64 indices of a peer against simdpool's: "" when equal.
std::string compare_i64(const void *got, const void *ref, size_t n) {
  if (std::memcmp(got, ref, n * sizeof(int64_t)) == 0)
    return "";
  const int64_t *g = static_cast<const int64_t *>(got);
  const int64_t *r = static_cast<const int64_t *>(ref);
  size_t i = 0;
  while (i + 1 < n && g[i] == r[i])
    i++;
  return "indices[" + std::to_string(i) + "] = " + std::to_string(g[i]) +
         ", simdpool " + std::to_string(r[i]);
}

// "equal bits", or the largest rounding difference seen (in units of the
// last place of dtype t; s8/u8: quantized steps).
std::string equality_text(uint64_t max_ulp, double max_abs,
                          simdpool_dtype t = SIMDPOOL_F32) {
  char b[96];
  if (max_ulp == 0)
    std::snprintf(b, sizeof b, "equal bits");
  else if (sp_dtype_integer(t))
    std::snprintf(b, sizeof b, "max %" PRIu64 " %s step(s) apart", max_ulp,
                  dtype_name(t));
  else if (t != SIMDPOOL_F32)
    std::snprintf(b, sizeof b, "max %" PRIu64 " %s ulp, %.2g abs", max_ulp,
                  dtype_name(t), max_abs);
  else
    std::snprintf(b, sizeof b, "max %" PRIu64 " ulp, %.2g abs", max_ulp,
                  max_abs);
  return b;
}

std::string compare_peer(const Workspace &ws, const PeerOp &op,
                         std::string *detail) {
  const Buffer &got = out_buffer(ws);
  // Unpooling copies bits: no peer may round there either.
  const bool exact = op.bit_exact() || is_unpool(ws.op.call) ||
                     (is_forward(ws) && ws.op.method == SIMDPOOL_MAX);
  uint64_t max_ulp = 0;
  double max_abs = 0;
  const simdpool_dtype t = ws.op.dtype;
  std::string bad =
      t == SIMDPOOL_F32
          ? compare_floats(out_name(ws.op.call), got.f(), ws.ref_out.f(),
                           got.bytes() / sizeof(float), exact, &max_ulp,
                           &max_abs)
          : compare_typed(out_name(ws.op.call), got.data(), ws.ref_out.data(),
                          got.bytes() / sp_dtype_size(t), t, exact, &max_ulp,
                          &max_abs);
  if (!bad.empty())
    return bad;
  *detail = equality_text(max_ulp, max_abs, t);
  if (op.writes_indices()) {
    if (ws.op.index_type != SIMDPOOL_INDEX_I64 || ws.idx.empty())
      return "the peer writes I64 indices the case does not have";
    if (!(bad = compare_i64(ws.idx.data(), ws.ref_idx.data(),
                            ws.idx.bytes() / sizeof(int64_t)))
             .empty())
      return bad;
    *detail += ", I64 indices equal";
  }
  if (const uint32_t *taps = op.tap_indices()) {
    // simdpool numbers a window's taps row-major (kh_i * kernel_w + kw_i);
    // count the differences in that convention and in the column-major one.
    const uint8_t *ref = static_cast<const uint8_t *>(ws.ref_idx.data());
    size_t diff = 0, diff_cm = 0;
    for (size_t i = 0; i < ws.out; i++) {
      const size_t t = ref[i], kh_i = t / ws.peer_g.kw, kw_i = t % ws.peer_g.kw;
      diff += taps[i] != t;
      diff_cm += taps[i] != kw_i * ws.peer_g.kh + kh_i;
    }
    if (!diff)
      *detail += ", argmax indices equal";
    else if (!diff_cm)
      *detail += ", argmax indices equal once read column-major "
                 "(kw_i * kernel_h + kh_i)";
    else
      return std::to_string(diff) + " argmax indices differ";
  }
  return "";
}

// The workspace of (case, op, layout): reused while the group's benchmarks
// run, rebuilt (and the previous one freed) when the group changes.
Workspace &workspace_for(const Case &cs, const OpVariant &op,
                         simdpool_layout layout) {
  const std::string key =
      cs.name + "/" + op.name + "/" + std::string(layout_name(layout));
  if (g_ws && g_ws->key == key)
    return *g_ws;
  g_ws.reset();
  free_net_workspace();
  g_ws.reset(new Workspace());
  Workspace &ws = *g_ws;
  ws.key = key;
  ws.cs = &cs;
  ws.op = op;
  ws.layout = layout;
  if (!resolve(cs, op, layout, &ws.g, &ws.error) ||
      !resolve(cs, op, layout, &ws.peer_g, &ws.error, false))
    return ws;
  const sp_geom &g = ws.g;
  ws.in = sp_x_elems(&g); /* a channel slice spans its gaps too */
  ws.out = sp_y_elems(&g);
  const size_t isz = sp_index_size(op.index_type);
  // In bytes of the dtype (simdpool_plan_tensor_bytes' counts).
  ws.x.reset(sp_x_bytes(&g));
  ws.dx.reset(sp_x_bytes(&g));
  ws.y.reset(sp_y_bytes(&g));
  ws.dy.reset(sp_y_bytes(&g));
  if (isz) { // indices are dense: one per output element
    const size_t outs = g.n * g.c * sp_out_plane(&g);
    ws.idx.reset(outs * isz);
    ws.ref_idx.reset(outs * isz);
  }
  fill_typed(ws.x.data(), ws.in, op.dtype, seed_of(cs.name));
  fill_typed(ws.dy.data(), ws.out, op.dtype, seed_of(cs.name) + 1);

  // The scalar reference through the public API.
  simdpool_desc d = make_desc(cs, op, layout, SIMDPOOL_ISA_SCALAR);
  simdpool_plan *plan = nullptr;
  if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK) {
    ws.error = std::string("scalar plan: ") + simdpool_last_error();
    return ws;
  }
  simdpool_status st = SIMDPOOL_OK;
  // The reference's outputs start as poison_outputs() leaves the variants'
  // (a channel slice's gaps must come out as they went in).
  if (op.call == Call::Forward) {
    ws.ref_out.reset(sp_y_bytes(&g));
    std::memset(ws.ref_out.data(), 0xA5, ws.ref_out.bytes());
    st = simdpool_forward(plan, ws.x.f(), ws.ref_out.f(),
                          isz ? ws.ref_idx.data() : nullptr);
  } else {
    ws.ref_out.reset(output_shaped(op.call) ? sp_y_bytes(&g) : sp_x_bytes(&g));
    std::memset(ws.ref_out.data(), 0xA5, ws.ref_out.bytes());
    // Backward from indices and unpooling read the indices MAX forward
    // writes on x: valid taps of their own windows, what the fast paths
    // take (and what a network feeds them).
    if (op.call == Call::BackwardIdx || is_unpool(op.call))
      st = simdpool_forward(plan, ws.x.f(), ws.y.f(), ws.idx.data());
    // Unpooling's backward gathers from x's buffer (its dx): other values
    // than the ones that chose the indices, so that a gather cannot pass by
    // recomputing the window's max.
    if (op.call == Call::UnpoolBackward)
      fill_typed(ws.x.data(), ws.in, op.dtype, seed_of(cs.name) + 2);
    if (st == SIMDPOOL_OK) {
      std::swap(out_buffer(ws), ws.ref_out);
      st = run_plan(plan, ws);
      std::swap(out_buffer(ws), ws.ref_out);
    }
  }
  if (st != SIMDPOOL_OK)
    ws.error = std::string("scalar reference: ") + simdpool_last_error();
  simdpool_plan_destroy(plan);
  return ws;
}

// ------------------------------------------------------------- networks

// One layer of a network workspace: its own tensors, filled once, and the
// scalar reference's outputs of the layer's forward (y, I64 indices for MAX)
// and backward (dx) on them.
struct NetLayer {
  const Case *cs = nullptr;
  sp_geom g{};
  size_t in = 0, out = 0;
  Buffer x, y, idx, dy, dx;
  Buffer ref_y, ref_idx, ref_dx;
  bool max() const { return cs->method == SIMDPOOL_MAX; }
  const OpVariant &fwd() const { return cs->ops[0]; }
  const OpVariant &bwd() const { return cs->ops[1]; }
};

// The tensors of one (network, layout), shared by its benchmarks like a case
// workspace; peers' operators are created once and verified on first use.
struct NetWorkspace {
  std::string key;
  std::vector<NetLayer> layers;
  std::string error;
  struct PeerOps {
    std::vector<std::unique_ptr<PeerOp>> fwd, bwd; // per layer
    std::string error, label;
  };
  std::map<Peer, PeerOps> peers;
};

std::unique_ptr<NetWorkspace> g_net_ws;

void free_net_workspace() {
  g_net_ws.reset();
}

// One training step of simdpool plans over the workspace: every forward in
// network order, then every backward in reverse order, each MAX backward
// from the indices its forward wrote. Returns the first failure.
simdpool_status net_step(const std::vector<simdpool_plan *> &plans,
                         NetWorkspace &ws) {
  simdpool_status st = SIMDPOOL_OK;
  for (size_t i = 0; i < ws.layers.size() && st == SIMDPOOL_OK; i++) {
    NetLayer &l = ws.layers[i];
    st = simdpool_forward(plans[i], l.x.f(), l.y.f(),
                          l.max() ? l.idx.data() : nullptr);
  }
  for (size_t i = ws.layers.size(); i-- > 0 && st == SIMDPOOL_OK;) {
    NetLayer &l = ws.layers[i];
    st = simdpool_backward(plans[i], l.dy.f(), l.max() ? l.idx.data() : nullptr,
                           nullptr, l.dx.f());
  }
  return st;
}

void poison_net(NetWorkspace &ws) {
  for (NetLayer &l : ws.layers) {
    std::memset(l.y.data(), 0xA5, l.y.bytes());
    std::memset(l.dx.data(), 0xA5, l.dx.bytes());
    if (!l.idx.empty())
      std::memset(l.idx.data(), 0xA5, l.idx.bytes());
  }
}

// Every layer's y, indices and dx against the scalar reference: "" when
// equal (exact, or for a peer that is not bit-exact within the rounding
// tolerance), else which layer and element differ. Widens the maxima.
std::string compare_net(const NetWorkspace &ws, bool exact, uint64_t *max_ulp,
                        double *max_abs) {
  for (const NetLayer &l : ws.layers) {
    std::string bad = compare_floats("y", l.y.f(), l.ref_y.f(), l.out,
                                     exact || l.max(), max_ulp, max_abs);
    if (bad.empty() && l.max())
      bad = compare_i64(l.idx.data(), l.ref_idx.data(), l.out);
    if (bad.empty())
      bad = compare_floats("dx", l.dx.f(), l.ref_dx.f(), l.in, exact, max_ulp,
                           max_abs);
    if (!bad.empty())
      return "layer " + l.cs->name + " (" + l.cs->note + "): " + bad;
  }
  return "";
}

// The workspace of (network, layout), rebuilt when the group changes; the
// case workspace is freed first (one set of tensors lives at a time).
NetWorkspace &net_workspace_for(const Network &net, simdpool_layout layout) {
  const std::string key = net.name + "/" + layout_name(layout);
  if (g_net_ws && g_net_ws->key == key)
    return *g_net_ws;
  g_ws.reset();
  g_net_ws.reset();
  g_net_ws.reset(new NetWorkspace());
  NetWorkspace &ws = *g_net_ws;
  ws.key = key;
  ws.layers.resize(net.layers.size());
  for (size_t i = 0; i < net.layers.size(); i++) {
    NetLayer &l = ws.layers[i];
    l.cs = &net.layers[i];
    if (!resolve(*l.cs, l.fwd(), layout, &l.g, &ws.error)) {
      ws.error = "layer " + l.cs->name + ": " + ws.error;
      return ws;
    }
    l.in = l.g.n * l.g.c * sp_in_plane(&l.g);
    l.out = l.g.n * l.g.c * sp_out_plane(&l.g);
    const size_t f = sizeof(float);
    for (Buffer *b : {&l.x, &l.dx, &l.ref_dx})
      b->reset(l.in * f);
    for (Buffer *b : {&l.y, &l.dy, &l.ref_y})
      b->reset(l.out * f);
    if (l.max()) {
      l.idx.reset(l.out * sizeof(int64_t));
      l.ref_idx.reset(l.out * sizeof(int64_t));
    }
    fill_random(l.x.f(), l.in, seed_of(l.cs->name));
    fill_random(l.dy.f(), l.out, seed_of(l.cs->name) + 1);
    // The scalar reference of this layer's forward and backward.
    const simdpool_desc d =
        make_desc(*l.cs, l.fwd(), layout, SIMDPOOL_ISA_SCALAR);
    simdpool_plan *plan = nullptr;
    simdpool_status st = simdpool_plan_create(&d, &plan);
    if (st == SIMDPOOL_OK)
      st = simdpool_forward(plan, l.x.f(), l.ref_y.f(),
                            l.max() ? l.ref_idx.data() : nullptr);
    if (st == SIMDPOOL_OK)
      st = simdpool_backward(plan, l.dy.f(),
                             l.max() ? l.ref_idx.data() : nullptr, nullptr,
                             l.ref_dx.f());
    simdpool_plan_destroy(plan);
    if (st != SIMDPOOL_OK) {
      ws.error =
          "layer " + l.cs->name + " scalar reference: " + simdpool_last_error();
      return ws;
    }
  }
  return ws;
}

// ------------------------------------------------------------- references

// Seconds per pass of each reference, measured in this run: key (kind, cold,
// case byte count).
std::map<std::tuple<int, bool, size_t>, double> g_ref_seconds;
Buffer g_hot_src, g_hot_dst, g_arena;

// The cold references rotate through an arena much larger than the last-level
// cache: every pass reads and writes lines not touched for 2 x LLC bytes.
// --smoke only checks that the code runs: a small arena of 4 windows.
size_t arena_bytes(size_t window) {
  if (g_smoke)
    return std::max(4 * window, (size_t)16 << 20);
  const size_t max_window = (g_max_ref_bytes + 8192 + 4095) / 4096 * 4096;
  size_t want = std::max(2 * llc_bytes() + 2 * max_window, (size_t)256 << 20);
  const long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  if (pages > 0 && psz > 0)
    want = std::min(want,
                    std::max((size_t)pages * (size_t)psz / 4, 2 * max_window));
  return std::max(want, 2 * window);
}

// Element counts of one reference pass over (about) bytes: copy moves 8 bytes
// per float, read-4-write-1 20 bytes per output float; whole 64-byte lines.
size_t ref_count(RefKind k, size_t bytes) {
  const size_t per = k == RefKind::Copy ? 8 : 20;
  return std::max<size_t>(16, bytes / per / 16 * 16);
}

size_t ref_moved(RefKind k, size_t n) {
  return n * (k == RefKind::Copy ? 8 : 20);
}

void ref_pass(RefKind k, float *dst, const float *src, size_t n) {
  if (k == RefKind::Copy)
    roof_copy(dst, src, n);
  else
    roof_r4w1(dst, src, n);
}

void prepare_hot(RefKind k, size_t n) {
  g_hot_src.ensure(n * (k == RefKind::Copy ? 4 : 16));
  g_hot_dst.ensure(n * 4);
}

// Hot reference time per pass for bytes, measured now when the registered
// reference did not run (filtered out, or a kernel-direct byte count).
double ref_seconds(RefKind k, size_t bytes) {
  auto it = g_ref_seconds.find(std::make_tuple((int)k, false, bytes));
  if (it != g_ref_seconds.end())
    return it->second;
  const size_t n = ref_count(k, bytes);
  prepare_hot(k, n);
  ref_pass(k, g_hot_dst.f(), g_hot_src.f(), n); // warm
  double best = 1e30, total = 0;
  for (int rep = 0; rep < 200 && (rep < 5 || total < 0.02); rep++) {
    const auto t0 = std::chrono::steady_clock::now();
    ref_pass(k, g_hot_dst.f(), g_hot_src.f(), n);
    benchmark::ClobberMemory();
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    best = std::min(best, t);
    total += t;
  }
  // Scale to the nominal byte count (the pass moved whole lines only).
  const double s = best * (double)bytes / (double)ref_moved(k, n);
  g_ref_seconds[std::make_tuple((int)k, false, bytes)] = s;
  return s;
}

// ------------------------------------------------------------- bodies

void fail(benchmark::State &st, const Spec &s, const std::string &msg) {
  std::fprintf(stderr, "simdpool_bench: %s: %s\n", s.name.c_str(), msg.c_str());
  g_failures++;
  st.SkipWithError(msg.c_str());
}

using Clock = std::chrono::steady_clock;

// Runs the benchmark loop, timing every pass; returns the fastest pass in
// seconds. Google Benchmark reports the mean; the fastest pass is the
// estimate least disturbed by other work on a shared machine, and the one the
// ratios (pct_copy, the summary's table) use on both sides.
template <class Pass> double timed_loop(benchmark::State &st, Pass &&pass) {
  double best = HUGE_VAL;
  for (auto _ : st) {
    const auto t0 = Clock::now();
    pass();
    benchmark::ClobberMemory();
    best = std::min(best,
                    std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// Counters of every timed pass: bytes per pass, mean GB/s, fastest pass.
void set_counters(benchmark::State &st, size_t bytes, double best) {
  st.SetBytesProcessed((int64_t)bytes * (int64_t)st.iterations());
  st.counters["bytes"] = benchmark::Counter((double)bytes);
  st.counters["GB/s"] = benchmark::Counter(
      (double)bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (best > 0 && best < HUGE_VAL) {
    st.counters["best_us"] = benchmark::Counter(best * 1e6);
    st.counters["best_GB/s"] = benchmark::Counter((double)bytes / best / 1e9);
  }
}

// Counters of a pool pass, with its share of the references' rates (fastest
// pass against fastest pass, same byte count).
void finish(benchmark::State &st, const Spec &s, double best) {
  set_counters(st, s.bytes, best);
  if (best > 0 && best < HUGE_VAL) {
    st.counters["pct_copy"] =
        100.0 * ref_seconds(RefKind::Copy, s.bytes) / best;
    st.counters["pct_r4w1"] =
        100.0 * ref_seconds(RefKind::R4W1, s.bytes) / best;
  }
}

void bm_ref(benchmark::State &st, Spec *s) {
  const size_t n = ref_count(s->ref, s->bytes);
  const size_t moved = ref_moved(s->ref, n);
  float *src = nullptr, *dst = nullptr;
  size_t windows = 1, window = 0, dst_off = 0;
  if (s->cold) {
    const size_t src_bytes = n * (s->ref == RefKind::Copy ? 4 : 16);
    dst_off = (src_bytes + 4095) / 4096 * 4096;
    window = (dst_off + n * 4 + 4095) / 4096 * 4096;
    if (g_arena.bytes() < arena_bytes(window))
      g_arena.reset(arena_bytes(window));
    windows = std::max<size_t>(1, g_arena.bytes() / window);
  } else {
    prepare_hot(s->ref, n);
    src = g_hot_src.f();
    dst = g_hot_dst.f();
  }
  size_t w = 0;
  const double best = timed_loop(st, [&] {
    if (s->cold) { // the next window of the arena
      char *base = static_cast<char *>(g_arena.data()) + w * window;
      src = reinterpret_cast<float *>(base);
      dst = reinterpret_cast<float *>(base + dst_off);
      w = w + 1 == windows ? 0 : w + 1;
    }
    ref_pass(s->ref, dst, src, n);
  });
  if (best < HUGE_VAL) { // per nominal byte count (the pass moved whole lines)
    const auto key = std::make_tuple((int)s->ref, s->cold, s->bytes);
    const double per = best * (double)s->bytes / (double)moved;
    auto it = g_ref_seconds.find(key);
    g_ref_seconds[key] =
        it == g_ref_seconds.end() ? per : std::min(it->second, per);
  }
  set_counters(st, moved, best);
  // The label ends with where the pass's bytes live (the summary and the
  // chart say so): a cold pass's lines were last touched an arena ago.
  if (s->cold)
    st.SetLabel("arena " + std::to_string(g_arena.bytes() >> 20) + " MiB, " +
                roof_isa() + "; " + cache_class(g_arena.bytes()));
  else
    st.SetLabel(std::string(roof_isa()) + "; " + cache_class(s->bytes));
}

struct PlanGuard {
  simdpool_plan *p = nullptr;
  ~PlanGuard() { simdpool_plan_destroy(p); }
};

void bm_plan(benchmark::State &st, Spec *s) {
  if (!sp_cpu_runs(s->isa)) {
    st.SkipWithError((std::string("skipped: this CPU cannot run ") +
                      isa_name(s->isa) + " kernels")
                         .c_str());
    return;
  }
  Workspace &ws = workspace_for(*s->cs, s->op, s->layout);
  if (!ws.error.empty())
    return fail(st, *s, ws.error);
  const simdpool_desc d = make_desc(*s->cs, s->op, s->layout, s->isa);
  PlanGuard plan;
  if (simdpool_plan_create(&d, &plan.p) != SIMDPOOL_OK)
    return fail(st, *s, std::string("plan: ") + simdpool_last_error());
  // What the plan runs, through the public API (the registry's names repeat
  // only across layouts, and the plan has the spec's layout).
  const char *ran = simdpool_plan_kernel_name(plan.p, public_op(s->op.call));
  const std::string expect = plan_kernel_name(*s->entry, s->op);
  if (!ran || expect != ran)
    return fail(st, *s,
                std::string("the plan runs ") + (ran ? ran : "nothing") +
                    ", the bench expected " + expect);
  if (!s->verified) {
    poison_outputs(ws);
    if (run_plan(plan.p, ws) != SIMDPOOL_OK)
      return fail(st, *s, std::string("run: ") + simdpool_last_error());
    const std::string diff = compare_exact(ws);
    if (!diff.empty())
      return fail(st, *s, "wrong result: " + diff);
    s->verified = true;
  }
  finish(st, *s, timed_loop(st, [&] { run_plan(plan.p, ws); }));
  st.SetLabel(expect);
}

// The two-thread pool of the t2-<isa> benchmarks, made on first use.
simdpool_threadpool *two_threads() {
  static simdpool_threadpool *pool = [] {
    simdpool_threadpool *p = nullptr;
    return simdpool_threadpool_create(2, &p) == SIMDPOOL_OK ? p : nullptr;
  }();
  return pool;
}

void bm_threads(benchmark::State &st, Spec *s) {
  Workspace &ws = workspace_for(*s->cs, s->op, s->layout);
  if (!ws.error.empty())
    return fail(st, *s, ws.error);
  simdpool_threadpool *pool = two_threads();
  if (!pool)
    return fail(st, *s, std::string("pool: ") + simdpool_last_error());
  const simdpool_desc d = make_desc(*s->cs, s->op, s->layout, s->isa);
  PlanGuard plan;
  if (simdpool_plan_create(&d, &plan.p) != SIMDPOOL_OK)
    return fail(st, *s, std::string("plan: ") + simdpool_last_error());
  if (!s->verified) {
    poison_outputs(ws);
    if (run_plan_parallel(plan.p, ws, pool) != SIMDPOOL_OK)
      return fail(st, *s, std::string("run: ") + simdpool_last_error());
    const std::string diff = compare_exact(ws);
    if (!diff.empty())
      return fail(st, *s, "wrong result: " + diff);
    s->verified = true;
  }
  finish(st, *s, timed_loop(st, [&] { run_plan_parallel(plan.p, ws, pool); }));
  st.SetLabel(plan_kernel_name(*s->entry, s->op) + ", 2 threads");
}

void bm_kernel(benchmark::State &st, Spec *s) {
  if (!sp_cpu_runs(s->isa)) {
    st.SkipWithError((std::string("skipped: this CPU cannot run ") +
                      isa_name(s->isa) + " kernels")
                         .c_str());
    return;
  }
  Workspace &ws = workspace_for(*s->cs, s->op, s->layout);
  if (!ws.error.empty())
    return fail(st, *s, ws.error);
  if (!s->verified) {
    poison_outputs(ws);
    run_kernel(*s->entry, ws);
    const std::string diff = compare_exact(ws);
    if (!diff.empty())
      return fail(st, *s, "wrong result: " + diff);
    s->verified = true;
  }
  finish(st, *s, timed_loop(st, [&] { run_kernel(*s->entry, ws); }));
  st.SetLabel(std::string("direct call, ") + shape_name(s->entry->shape) +
              " kernel");
}

void bm_peer(benchmark::State &st, Spec *s) {
  Workspace &ws = workspace_for(*s->cs, s->op, s->layout);
  if (!ws.error.empty())
    return fail(st, *s, ws.error);
  std::unique_ptr<PeerOp> &op = ws.peer_ops[s->peer];
  std::string &perr = ws.peer_error[s->peer];
  if (!op && perr.empty()) {
    // Created once per workspace; verified against the scalar reference
    // before it is timed.
    poison_outputs(ws);
    PeerIO io;
    io.x = ws.x.f();
    io.dy = ws.dy.f();
    io.y = ws.y.f();
    io.dx = ws.dx.f();
    if (s->op.index_type == SIMDPOOL_INDEX_I64)
      io.indices = ws.idx.data(); // backward, unpooling: the scalar forward's
    std::string err;
    op = make_peer(s->peer, *s->cs, s->op, s->layout, ws.peer_g, io, &err);
    std::string detail;
    if (!op)
      perr = err.empty() ? "cannot create the operator" : err;
    else if (!op->run(&err))
      perr = err;
    else if (!(err = compare_peer(ws, *op, &detail)).empty())
      perr = "differs from simdpool: " + err;
    if (!perr.empty())
      op.reset();
    else
      ws.peer_label[s->peer] = op->impl() + "; " + detail;
  }
  if (!op)
    return fail(st, *s, perr);
  PeerOp *peer = op.get();
  finish(st, *s, timed_loop(st, [peer] { peer->run(nullptr); }));
  st.SetLabel(ws.peer_label[s->peer]);
}

struct PlansGuard {
  std::vector<simdpool_plan *> p;
  ~PlansGuard() {
    for (simdpool_plan *q : p)
      simdpool_plan_destroy(q);
  }
};

// A network's training step through simdpool's public API, every plan AUTO
// or forced to one ISA.
void bm_net(benchmark::State &st, Spec *s) {
  if (s->isa != SIMDPOOL_ISA_AUTO && !sp_cpu_runs(s->isa)) {
    st.SkipWithError((std::string("skipped: this CPU cannot run ") +
                      isa_name(s->isa) + " kernels")
                         .c_str());
    return;
  }
  NetWorkspace &ws = net_workspace_for(*s->net, s->layout);
  if (!ws.error.empty())
    return fail(st, *s, ws.error);
  PlansGuard plans;
  std::string isas;
  for (const NetLayer &l : ws.layers) {
    const simdpool_desc d = make_desc(*l.cs, l.fwd(), s->layout, s->isa);
    simdpool_plan *p = nullptr;
    if (simdpool_plan_create(&d, &p) != SIMDPOOL_OK)
      return fail(st, *s,
                  "layer " + l.cs->name + " plan: " + simdpool_last_error());
    plans.p.push_back(p);
    const std::string isa = isa_name(simdpool_plan_isa(p));
    if (isas.find(isa) == std::string::npos)
      isas += (isas.empty() ? "" : ",") + isa;
  }
  if (!s->verified) {
    poison_net(ws);
    if (net_step(plans.p, ws) != SIMDPOOL_OK)
      return fail(st, *s, std::string("run: ") + simdpool_last_error());
    uint64_t max_ulp = 0;
    double max_abs = 0;
    const std::string diff = compare_net(ws, true, &max_ulp, &max_abs);
    if (!diff.empty())
      return fail(st, *s, "wrong result: " + diff);
    s->verified = true;
  }
  finish(st, *s, timed_loop(st, [&] { net_step(plans.p, ws); }));
  st.SetLabel("layers " + std::to_string(ws.layers.size()) + "; " +
              (s->isa == SIMDPOOL_ISA_AUTO ? "AUTO: " : "") + isas);
}

// A peer's operators for every layer of the workspace, run once and
// verified; "" on success.
std::string make_net_peer(Peer p, const Network &net, simdpool_layout layout,
                          NetWorkspace &ws, NetWorkspace::PeerOps &ops) {
  poison_net(ws);
  for (NetLayer &l : ws.layers) {
    PeerIO io;
    io.x = l.x.f();
    io.y = l.y.f();
    io.dy = l.dy.f();
    io.dx = l.dx.f();
    io.indices = l.max() ? l.idx.data() : nullptr;
    std::string err;
    std::unique_ptr<PeerOp> f =
        make_peer(p, *l.cs, l.fwd(), layout, l.g, io, &err);
    std::unique_ptr<PeerOp> b =
        f ? make_peer(p, *l.cs, l.bwd(), layout, l.g, io, &err) : nullptr;
    if (!f || !b)
      return "layer " + l.cs->name + ": " +
             (err.empty() ? "cannot create the operator" : err);
    ops.fwd.push_back(std::move(f));
    ops.bwd.push_back(std::move(b));
  }
  (void)net;
  // One checked step, in the order the timed ones run.
  bool exact = true;
  for (size_t i = 0; i < ops.fwd.size(); i++) {
    std::string err;
    exact = exact && ops.fwd[i]->bit_exact() && ops.bwd[i]->bit_exact();
    if (!ops.fwd[i]->run(&err))
      return "layer " + ws.layers[i].cs->name + ": " + err;
  }
  for (size_t i = ops.bwd.size(); i-- > 0;) {
    std::string err;
    if (!ops.bwd[i]->run(&err))
      return "layer " + ws.layers[i].cs->name + ": " + err;
  }
  uint64_t max_ulp = 0;
  double max_abs = 0;
  const std::string diff = compare_net(ws, exact, &max_ulp, &max_abs);
  if (!diff.empty())
    return "differs from simdpool: " + diff;
  // The label: the distinct operators run, then how the outputs compared.
  std::vector<std::string> impls;
  bool any_max = false;
  for (size_t i = 0; i < ops.fwd.size(); i++) {
    any_max = any_max || ws.layers[i].max();
    for (const PeerOp *op : {ops.fwd[i].get(), ops.bwd[i].get()})
      if (std::find(impls.begin(), impls.end(), op->impl()) == impls.end())
        impls.push_back(op->impl());
  }
  for (const std::string &i : impls)
    ops.label += (ops.label.empty() ? "" : " + ") + i;
  ops.label += "; " + equality_text(max_ulp, max_abs) + " in every layer" +
               (any_max ? ", I64 indices equal" : "");
  return "";
}

// The same training step with a peer's operators.
void bm_net_peer(benchmark::State &st, Spec *s) {
  NetWorkspace &ws = net_workspace_for(*s->net, s->layout);
  if (!ws.error.empty())
    return fail(st, *s, ws.error);
  NetWorkspace::PeerOps &ops = ws.peers[s->peer];
  if (ops.fwd.empty() && ops.error.empty()) {
    ops.error = make_net_peer(s->peer, *s->net, s->layout, ws, ops);
    if (!ops.error.empty()) {
      ops.fwd.clear();
      ops.bwd.clear();
    }
  }
  if (ops.fwd.empty())
    return fail(st, *s, ops.error);
  finish(st, *s, timed_loop(st, [&ops] {
           for (auto &op : ops.fwd)
             op->run(nullptr);
           for (size_t i = ops.bwd.size(); i-- > 0;)
             ops.bwd[i]->run(nullptr);
         }));
  st.SetLabel(ops.label);
}

void register_spec(Spec &s) {
  Spec *p = &s;
  void (*run)(benchmark::State &, Spec *) = nullptr;
  switch (s.kind) {
  case Kind::Plan:
    run = bm_plan;
    break;
  case Kind::Kernel:
    run = bm_kernel;
    break;
  case Kind::Ref:
    run = bm_ref;
    break;
  case Kind::Peer:
    run = bm_peer;
    break;
  case Kind::Threads:
    run = bm_threads;
    break;
  case Kind::Net:
    run = bm_net;
    break;
  case Kind::NetPeer:
    run = bm_net_peer;
    break;
  }
  benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(
      s.name.c_str(), [p, run](benchmark::State &st) { run(st, p); });
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
  if (g_smoke)
    b->Iterations(1);
  else if (s.kind == Kind::Plan && s.isa == SIMDPOOL_ISA_SCALAR &&
           s.op.dtype != SIMDPOOL_F32)
    // The scalar reference of a dtype row (bf16/f16 conversions and the
    // quantized average per element, 10-100x the SIMD rows' time): a
    // quarter of the min time, so the dtype axis does not double the run on
    // the slowest rows. Its passes are still many on all but the largest
    // cases, and its bits are what every row was verified against.
    b->MinTime(g_min_seconds / 4);
}

// Registers every group g_rounds times in a row (the cold references in the
// first round only): benchmarks of a round share its moment, so the spread
// over rounds is the machine's noise at the moments the group ran.
void register_specs() {
  for (size_t i = 0; i < g_specs.size();) {
    size_t end = i;
    while (end < g_specs.size() && g_specs[end].group == g_specs[i].group)
      end++;
    for (int round = 0; round < g_rounds; round++)
      for (size_t k = i; k < end; k++)
        if (round == 0 || !(g_specs[k].kind == Kind::Ref && g_specs[k].cold))
          register_spec(g_specs[k]);
    i = end;
  }
}

std::string built_isas(bool runnable_only) {
  std::string s;
  for (int i = SIMDPOOL_ISA_SCALAR; isa_of_interest(i); i++) {
    const simdpool_isa isa = (simdpool_isa)i;
    const bool ok = runnable_only ? sp_cpu_runs(isa) != 0 : sp_isa_built(isa);
    if (ok)
      s += std::string(s.empty() ? "" : ",") + isa_name(isa);
  }
  return s;
}

// The JSON context's account of the run: what ran where, built by what, and
// the legend of every case and network.
void add_context(const std::string &peers) {
  using benchmark::AddCustomContext;
  AddCustomContext("cpu_model", cpu_model());
  AddCustomContext("compiler", compiler_text());
  AddCustomContext("build_type", build_type());
  AddCustomContext("commit", source_commit());
  AddCustomContext("llc_bytes", std::to_string(llc_bytes()));
  AddCustomContext("llc_source", llc_source());
  AddCustomContext("cache_rule",
                   "a working set of at most half the LLC is in cache, of at "
                   "least twice the LLC out of cache, partly in cache between");
  AddCustomContext("repetitions", std::to_string(g_rounds));
  AddCustomContext("min_time",
                   g_smoke ? "1 iteration (smoke)"
                           : g_min_time + " (the scalar rows of dtypes other "
                                          "than f32: a quarter of it)");
  AddCustomContext("peers", peers);
  for (const Case &cs : suite())
    AddCustomContext("case." + cs.name, case_legend(cs));
  std::set<std::string> synthetic; // one case may serve several kernels
  for (const Case &cs : g_synthetic)
    if (synthetic.insert(cs.name).second)
      AddCustomContext("case." + cs.name, case_legend(cs));
  for (const Network &net : networks())
    AddCustomContext("net." + net.name, network_legend(net));
  for (Peer p : peers_built()) {
    std::string na;
    for (const auto &kv : peer_skips(p)) {
      na += (na.empty() ? "" : " | ") + kv.first + ":";
      for (const std::string &n : kv.second)
        na += " " + n;
    }
    AddCustomContext(std::string("peer_na.") + peer_name(p), na);
  }
}

} // namespace
} // namespace spbench

int main(int argc, char **argv) {
  using namespace spbench;
  bool list = false, user_filter = false;
  std::vector<char *> args{argv[0]};
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--smoke"))
      g_smoke = true;
    else if (!std::strcmp(argv[i], "--list-kernels"))
      list = true;
    else if (!std::strcmp(argv[i], "--all-kernels"))
      g_all_kernels = true;
    else if (!std::strncmp(argv[i], "--repetitions=", 14)) {
      char *end = nullptr;
      const long n = std::strtol(argv[i] + 14, &end, 10);
      if (*end || n < 1 || n > 100) {
        std::fprintf(stderr,
                     "simdpool_bench: --repetitions=N needs N in "
                     "1..100, got '%s'\n",
                     argv[i] + 14);
        return 1;
      }
      g_rounds = (int)n;
    } else {
      if (!std::strncmp(argv[i], "--benchmark_filter", 18))
        user_filter = true;
      if (!std::strncmp(argv[i], "--benchmark_min_time=", 21)) {
        g_min_time = argv[i] + 21;
        const double t = std::strtod(argv[i] + 21, nullptr);
        if (t > 0)
          g_min_seconds = t;
      }
      args.push_back(argv[i]);
    }
  }
  const std::string peers = peers_init();
  build_specs();
  if (list)
    return check_coverage(stdout, true) ? 0 : 1;
  // The coverage line goes to stderr so that JSON on stdout stays clean.
  const bool covered = check_coverage(stderr, false);

  register_specs();
  int ac = (int)args.size();
  args.push_back(nullptr);
  benchmark::Initialize(&ac, args.data());
  if (benchmark::ReportUnrecognizedArguments(ac, args.data()))
    return 1;
  if (g_smoke && !user_filter)
    benchmark::SetBenchmarkFilter(kSmokeFilter);
  benchmark::AddCustomContext("simdpool_version", simdpool_version());
  benchmark::AddCustomContext("simdpool_isas_built", built_isas(false));
  benchmark::AddCustomContext("cpu_runs", built_isas(true));
  {
    simdpool_desc d;
    simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
    simdpool_plan *p = nullptr;
    if (simdpool_plan_create(&d, &p) == SIMDPOOL_OK)
      benchmark::AddCustomContext("auto_isa", isa_name(simdpool_plan_isa(p)));
    simdpool_plan_destroy(p);
  }
  add_context(peers);
  benchmark::AddCustomContext("cold_arena_bytes",
                              g_smoke ? "small (smoke)"
                                      : std::to_string(arena_bytes(0)));
  benchmark::AddCustomContext("roofline_isa", roof_isa());
  benchmark::AddCustomContext("mode", g_smoke ? "smoke" : "full");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!covered) {
    std::fprintf(stderr, "simdpool_bench: FAIL: registry kernels without a "
                         "benchmark (see --list-kernels)\n");
    return 1;
  }
  if (g_failures) {
    std::fprintf(stderr,
                 "simdpool_bench: FAIL: %d benchmark(s) with wrong "
                 "results or errors\n",
                 g_failures);
    return 1;
  }
  return 0;
}
