#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""summary.py — runs simdpool_bench once and summarises it: a table per case and layout
(scalar time, best variant, speedup vs scalar, GB/s, % of the copy and read-4-write-1
references of the same byte count, peer ratios), the raw Google Benchmark JSON and a PNG
chart of GB/s per case and variant next to the copy bandwidth.

    python3 bench/summary.py BUILDDIR            # e.g. build-release; writes BUILDDIR/bench-results
    python3 bench/summary.py --bench EXE --out DIR [--min-time 0.05] [--filter REGEX]
    python3 bench/summary.py --json FILE         # summarise an existing JSON, no run

Every ratio comes from one run on one machine; nothing is compared with a fixed threshold.
Exit status: 0 when the bench ran and every simdpool variant returned the scalar reference's
bits; 1 otherwise (the table is still printed); 2 when the chart could not be drawn (no
gnuplot and no matplotlib) in a full run.
"""
import argparse
import json
import os
import re
import shutil
import shlex
import subprocess
import sys
import time

ISAS = ["scalar", "sse41", "avx2", "avx512", "neon"]
PEERS = ["onednn", "xnnpack", "pytorch"]
DTYPES = ["f32", "bf16", "f16", "s8", "u8"]


def split_dtype(op):
    """(op without its dtype suffix, dtype): "max_fwd_i64-bf16" -> ("max_fwd_i64", "bf16");
    an op without a suffix is f32 ("max_fwd_u8" is f32 with U8 indices)."""
    base, sep, t = op.rpartition("-")
    return (base, t) if sep and t in DTYPES else (op, "f32")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builddir", nargs="?", help="Meson build directory (has bench/simdpool_bench)")
    ap.add_argument("--bench", help="path of simdpool_bench (default BUILDDIR/bench/simdpool_bench)")
    ap.add_argument("--out", help="output directory (default BUILDDIR/bench-results)")
    ap.add_argument("--min-time", default="0.03",
                    help="--benchmark_min_time per benchmark and repetition, seconds "
                         "(default 0.03)")
    ap.add_argument("--filter", help="--benchmark_filter regex (default: everything)")
    ap.add_argument("--smoke", action="store_true",
                    help="one iteration of a few cases (checks the pipeline, not speed)")
    ap.add_argument("--no-chart", action="store_true", help="do not draw the PNG")
    ap.add_argument("--json", help="summarise this Google Benchmark JSON instead of running")
    ap.add_argument("--repetitions", type=int, default=3,
                    help="rounds of every group of benchmarks (default 3; --smoke: 2)")
    ap.add_argument("--update-readme", metavar="README",
                    help="rewrite the README's generated Open list from this run")
    ap.add_argument("--check-readme", metavar="README",
                    help="exit 1 unless the README's Open list names exactly the f32 "
                         "rows below %d%%%% of copy in this run" % 80)
    return ap.parse_args()


# ----------------------------------------------------------------------------- running

def run_bench(exe, out_dir, args):
    json_path = os.path.join(out_dir, "bench.json")
    log_path = os.path.join(out_dir, "bench.log")
    extra = []
    if args.smoke:
        extra += ["--smoke", "--repetitions=2"]
    else:
        extra += ["--benchmark_min_time=%s" % args.min_time,
                  "--repetitions=%d" % args.repetitions]
    if args.filter:
        extra.append("--benchmark_filter=%s" % args.filter)
    # Under a cross build's `meson test`, the exe wrapper (qemu) runs it.
    wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    listed = subprocess.run(wrapper + [exe, "--benchmark_list_tests=true"] + extra,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    total = len([l for l in listed.stdout.splitlines() if l.strip()])
    cmd = wrapper + [exe, "--benchmark_out=%s" % json_path, "--benchmark_out_format=json",
           "--benchmark_format=console", "--benchmark_color=false"] + extra
    print("running %d benchmarks: %s" % (total, " ".join(cmd)), flush=True)
    start = time.time()
    done, last_case = 0, None
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True, bufsize=1)
        for line in proc.stdout:
            log.write(line)
            m = re.match(r"^(\S+/\S+/\S+/\S+?)(/iterations:\d+)?(/real_time)?\s", line)
            if not m:
                if line.startswith("simdpool_bench:"):
                    print("  " + line.rstrip(), flush=True)
                continue
            done += 1
            parts = m.group(1).split("/")
            case = parts[2].split(".")[0] if parts[0] in ("copy", "r4w1") else parts[2]
            if parts[0] == "kernel":
                case = "kernel-direct"
            if case != last_case:
                print("  [%3d/%d] %-14s %5.1f s" % (done, total, case, time.time() - start),
                      flush=True)
                last_case = case
        rc = proc.wait()
    elapsed = time.time() - start
    print("bench finished in %.1f s (exit %d); console log %s" % (elapsed, rc, log_path),
          flush=True)
    return json_path, rc, elapsed


# ----------------------------------------------------------------------------- parsing

def to_seconds(t, unit):
    return t * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def load(json_path):
    """Every benchmark's repetitions (rounds of --repetitions, and Google Benchmark's own
    --benchmark_repetitions) collected under its name, in run order."""
    with open(json_path) as f:
        data = json.load(f)
    results = {}
    order = []
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue  # Google Benchmark's aggregates: the summary makes its own
        parts = b["name"].split("/")[:4]
        if len(parts) < 4:
            continue
        key = tuple(parts)
        if key not in results:
            order.append(key)
            results[key] = {"name": "/".join(parts), "error": None, "label": "",
                            "bytes": None, "pct_copy": None, "samples": [], "means": []}
        r = results[key]
        if b.get("error_occurred"):
            r["error"] = r["error"] or b.get("error_message") or "error"
            continue
        r["label"] = b.get("label", "")
        r["bytes"] = b.get("bytes")
        r["pct_copy"] = b.get("pct_copy")  # the bench's own (measured on the spot if needed)
        # Each repetition's fastest pass (the bench's best_us counter): on a shared
        # machine other work only slows a pass down. Google Benchmark's mean stays in the
        # JSON as real_time.
        mean = to_seconds(b["real_time"], b["time_unit"])
        r["means"].append(mean)
        r["samples"].append(b["best_us"] * 1e-6 if b.get("best_us") else mean)
    for r in results.values():
        v = r["samples"]
        if r["error"] or not v:
            r["error"] = r["error"] or "no result"
            continue
        r["sec"] = median(v)  # what every table and ratio uses
        r["min"], r["max"] = min(v), max(v)
        # (slowest - fastest) / median over the repetitions; None with one repetition
        r["spread"] = (r["max"] - r["min"]) / r["sec"] if len(v) > 1 and r["sec"] > 0 else None
        r["gbps"] = (r["bytes"] / r["sec"] / 1e9) if r["bytes"] and r["sec"] > 0 else None
    return data.get("context", {}), results, order


def fmt_spread(r):
    return "%.1f%%" % (100 * r["spread"]) if r and r.get("spread") is not None else "-"


def overlaps(a, b):
    """Do the repetitions of a and b overlap (neither is faster at every repetition)?"""
    return (len(a["samples"]) > 1 and len(b["samples"]) > 1 and a["min"] <= b["max"] and
            b["min"] <= a["max"])


def cache_of(ref):
    """Where a reference's bytes live: its label ends with the bench's verdict."""
    label = (ref or {}).get("label", "")
    return label.rpartition("; ")[2] if "; " in label else "?"


def fmt_time(s):
    if s is None:
        return "-"
    if s >= 1.0:
        return "%.2f s" % s
    if s >= 1e-3:
        return "%.2f ms" % (s * 1e3)
    return "%.1f us" % (s * 1e6)


def fmt_bytes(b):
    if b >= 1 << 20:
        return "%.1f MiB" % (b / (1 << 20))
    return "%.0f KiB" % (b / 1024)


def table(headers, rows, aligns=None):
    widths = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    aligns = aligns or ["<"] * len(headers)
    fmt = "  ".join("{:%s%d}" % (a, w) for a, w in zip(aligns, widths))
    lines = [fmt.format(*headers), "  ".join("-" * w for w in widths)]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


class Summary:
    def __init__(self, context, results, order):
        self.ctx, self.res, self.order = context, results, order
        self.failures = []   # simdpool variants with wrong results or unexpected errors
        self.notes = []      # skipped variants, peer differences
        self.groups = []     # (op, case, layout) in run order
        self.isas = []       # simdpool ISAs that produced results
        self.peers = []      # peers that appear
        self.threads = False  # two-thread benchmarks (t2-<isa>) ran
        self.nets = []       # (network, layout) of the networks group, in run order
        self.net_peers = []  # peers that ran a network
        seen = set()
        for key in order:
            op, layout, case, who = key
            r = results[key]
            if op in ("copy", "r4w1") or op == "kernel":
                if r["error"]:
                    # A kernel of an ISA this CPU lacks is skipped, as everywhere else.
                    (self.notes if op == "kernel" and r["error"].startswith("skipped:")
                     else self.failures).append("%s: %s" % (r["name"], r["error"]))
                continue
            if op == "net":  # net/<layout>/<network>/<simdpool|isa|peer>
                if (case, layout) not in self.nets:
                    self.nets.append((case, layout))
                if r["error"]:
                    (self.notes if r["error"].startswith("skipped:") or who in PEERS
                     else self.failures).append("%s: %s" % (r["name"], r["error"]))
                elif who in PEERS and who not in self.net_peers:
                    self.net_peers.append(who)
                continue
            g = (op, case, layout)
            if g not in seen:
                seen.add(g)
                self.groups.append(g)
            if r["error"]:
                if r["error"].startswith("skipped:"):
                    self.notes.append("%s: %s" % (r["name"], r["error"]))
                elif who in PEERS:
                    self.notes.append("%s: %s" % (r["name"], r["error"]))
                else:
                    self.failures.append("%s: %s" % (r["name"], r["error"]))
                continue
            if who.startswith("t2-"):
                self.threads = True
                continue
            if who in ISAS and who not in self.isas:
                self.isas.append(who)
            if who in PEERS and who not in self.peers:
                self.peers.append(who)
        self.isas.sort(key=ISAS.index)
        self.peers.sort(key=PEERS.index)
        self.net_peers.sort(key=PEERS.index)

    def get(self, op, layout, case, who):
        r = self.res.get((op, layout, case, who))
        return r if r and not r["error"] else None

    def ref(self, kind, temp, case, op):
        """The reference of (case, op): its runs at the head of every round of the case and
        op's groups (both layouts)."""
        return self.get(kind, temp, "%s.%s" % (case, op), "ref")

    def row(self, g):
        op, case, layout = g
        scalar = self.get(op, layout, case, "scalar")
        variants = [(w, self.get(op, layout, case, w)) for w in self.isas]
        variants = [(w, r) for w, r in variants if r]
        best_isa, best = (min(variants, key=lambda v: v[1]["sec"]) if variants
                          else (None, None))
        # A tie: another ISA whose repetitions overlap the best one's.
        ties = [w for w, r in variants if best and w != best_isa and overlaps(r, best)]
        copy = self.ref("copy", "hot", case, op)
        r4w1 = self.ref("r4w1", "hot", case, op)
        out = {
            "op": op, "case": case, "layout": layout,
            "bytes": (best or scalar or {}).get("bytes"),
            "scalar": scalar["sec"] if scalar else None,
            "best_isa": best_isa, "best": best["sec"] if best else None,
            "ties": ties, "spread": best.get("spread") if best else None,
            "cache": cache_of(copy),
            "gbps": best["gbps"] if best else None,
            "pct_copy": 100 * best["gbps"] / copy["gbps"] if best and copy else None,
            "pct_r4w1": 100 * best["gbps"] / r4w1["gbps"] if best and r4w1 else None,
            "per_isa": {w: r for w, r in variants},
            "peers": {},
        }
        for p in self.peers:
            pr = self.res.get((op, layout, case, p))
            if pr is None:
                out["peers"][p] = "n/a"  # the peer has no such op (notes say why)
            elif pr["error"]:
                out["peers"][p] = "err"
            elif best:
                out["peers"][p] = "%.2fx" % (pr["sec"] / best["sec"])
        return out

    def main_table(self):
        headers = ["case", "op", "dtype", "layout", "moves", "cache", "scalar", "best", "time",
                   "spread", "speedup", "GB/s", "% copy", "% r4w1"] + \
                  ["vs " + p for p in self.peers]
        rows = []
        for g in self.groups:
            r = self.row(g)
            rows.append([
                r["case"]] + list(split_dtype(r["op"])) + [r["layout"],
                fmt_bytes(r["bytes"]) if r["bytes"] else "-", r["cache"],
                fmt_time(r["scalar"]), "=".join([r["best_isa"]] + r["ties"])
                if r["best_isa"] else "-", fmt_time(r["best"]),
                "%.1f%%" % (100 * r["spread"]) if r["spread"] is not None else "-",
                "%.2fx" % (r["scalar"] / r["best"]) if r["scalar"] and r["best"] else "-",
                "%.2f" % r["gbps"] if r["gbps"] else "-",
                "%.0f%%" % r["pct_copy"] if r["pct_copy"] is not None else "-",
                "%.0f%%" % r["pct_r4w1"] if r["pct_r4w1"] is not None else "-",
            ] + [r["peers"].get(p, "-") for p in self.peers])
        return table(headers, rows, ["<", "<", "<", "<", ">", "<", ">", "<", ">", ">", ">",
                                     ">", ">", ">"] + [">"] * len(self.peers))

    def net_table(self):
        """The networks group: one training step of each network's pooling layers."""
        isas = [w for w in ISAS if any(self.get("net", l, n, w) for n, l in self.nets)]
        headers = (["network", "dtype", "layout", "layers", "moves", "simdpool", "isa"] +
                   [p for p in self.net_peers] + ["vs " + p for p in self.net_peers] +
                   ["GB/s", "% copy"] + isas)
        rows = []
        for net, layout in self.nets:
            sp = self.get("net", layout, net, "simdpool")
            label = (sp or {}).get("label", "")
            m = re.match(r"layers (\d+); (?:AUTO: )?(.*)$", label)
            copy = self.ref("copy", "hot", net, "step")
            row = [net, "f32", layout, m.group(1) if m else "-",
                   fmt_bytes(sp["bytes"]) if sp and sp.get("bytes") else "-",
                   fmt_time(sp["sec"]) if sp else "-", m.group(2) if m else "-"]
            peer_secs = [(self.get("net", layout, net, p) or {}).get("sec")
                         for p in self.net_peers]
            row += [fmt_time(t) for t in peer_secs]
            row += ["%.2fx" % (t / sp["sec"]) if t and sp else "-" for t in peer_secs]
            row += ["%.2f" % sp["gbps"] if sp and sp.get("gbps") else "-",
                    "%.0f%%" % (100 * sp["gbps"] / copy["gbps"]) if sp and copy and
                    sp.get("gbps") and copy.get("gbps") else "-"]
            row += [fmt_time((self.get("net", layout, net, w) or {}).get("sec"))
                    for w in isas]
            rows.append(row)
        return table(headers, rows, ["<", "<", "<", ">", ">", ">", "<"] +
                     [">"] * (len(headers) - 7))

    def thread_table(self):
        """Two threads (simdpool_threadpool, parallel entry points) vs one, same ISA, per
        round: the two ran at the same moments, so their ratio is taken per round."""
        headers = ["case", "op", "dtype", "layout", "isa", "1 thread", "spread", "2 threads",
                   "spread", "scaling", "range", ""]
        rows = []
        for op, case, layout in self.groups:
            for w in ISAS:
                t2 = self.get(op, layout, case, "t2-" + w)
                if not t2:
                    continue
                t1 = self.get(op, layout, case, w)
                ratios = [a / b for a, b in zip(t1["samples"], t2["samples"])] if t1 else []
                scaling = median(ratios) if ratios else None
                verdict = ""
                if len(ratios) > 1:
                    lo, hi = min(ratios), max(ratios)
                    # The difference from 1x is not resolved when the rounds disagree by
                    # more than it, or when the 1- and 2-thread times overlap.
                    if hi - lo >= abs(scaling - 1) or overlaps(t1, t2):
                        verdict = "within noise"
                rows.append([case] + list(split_dtype(op)) + [
                             layout, w, fmt_time(t1["sec"]) if t1 else "-",
                             fmt_spread(t1), fmt_time(t2["sec"]), fmt_spread(t2),
                             "%.2fx" % scaling if scaling else "-",
                             "%.2f-%.2fx" % (min(ratios), max(ratios)) if len(ratios) > 1
                             else "-", verdict])
        return table(headers, rows, ["<"] * 5 + [">"] * 6 + ["<"])

    def variant_table(self):
        """GB/s of every simdpool ISA and peer per case and layout."""
        headers = ["case", "op", "dtype", "layout"] + self.isas + self.peers + ["copy", "r4w1"]
        rows = []
        for op, case, layout in self.groups:
            cells = []
            for w in self.isas + self.peers:
                r = self.get(op, layout, case, w)
                cells.append("%.2f" % r["gbps"] if r and r["gbps"] else "-")
            for kind in ("copy", "r4w1"):
                r = self.ref(kind, "hot", case, op)
                cells.append("%.1f" % r["gbps"] if r else "-")
            rows.append([case] + list(split_dtype(op)) + [layout] + cells)
        return table(headers, rows, ["<"] * 4 + [">"] * (len(headers) - 4))

    def ref_table(self):
        rows, seen = [], set()
        for key in self.order:
            kind, temp, cname, who = key
            if kind != "copy" or temp != "hot" or cname in seen:
                continue
            seen.add(cname)
            cells = []
            case, _, op = cname.partition(".")
            for k, t in (("copy", "hot"), ("copy", "cold"), ("r4w1", "hot"), ("r4w1", "cold")):
                r = self.ref(k, t, case, op)
                cells.append("%.1f" % r["gbps"] if r else "-")
            b = self.res[key].get("bytes") or 0
            rows.append([cname, split_dtype(op)[1], fmt_bytes(b)] + cells)
        return table(["reference (case.op)", "dtype", "bytes", "copy hot", "copy cold",
                      "r4w1 hot", "r4w1 cold"], rows, ["<", "<", ">", ">", ">", ">", ">"])

    def kernel_table(self):
        rows = []
        for key in self.order:
            if key[0] != "kernel":
                continue
            r = self.res[key]
            if r["error"]:
                state = "skipped" if r["error"].startswith("skipped:") else "ERROR"
                rows.append([key[1], "f32", key[2], key[3], state, "-", "-"])
                continue
            op_case = key[3]
            copy = None
            for k2 in self.order:  # any hot copy of the same byte count
                if k2[0] == "copy" and k2[1] == "hot" and self.res[k2].get("bytes") and \
                        abs(self.res[k2]["bytes"] - (r["bytes"] or 0)) < 64 and \
                        not self.res[k2]["error"]:
                    copy = self.res[k2]
            pct = 100 * r["gbps"] / copy["gbps"] if copy else r.get("pct_copy")
            rows.append([key[1], "f32", key[2], op_case, fmt_time(r["sec"]), "%.2f" % r["gbps"],
                         "%.0f%%" % pct if pct is not None else "-"])
        if not rows:
            return ""
        return table(["kernel (called directly)", "dtype", "layout", "case", "time", "GB/s",
                      "% copy"], rows, ["<", "<", "<", "<", ">", ">", ">"])

    def peer_lines(self):
        """What each peer ran and how its outputs compared with simdpool's."""
        lines = []
        for p in self.peers:
            impls, diffs, n = {}, [], 0
            nets, net_diffs = 0, []
            for key in self.order:
                if key[3] != p:
                    continue
                if key[0] == "net":
                    r = self.res[key]
                    if not r["error"]:
                        nets += 1
                        check = r["label"].rpartition("; ")[2]
                        if not check.startswith("equal bits"):
                            net_diffs.append("%s/%s (%s)" % (key[2], key[1], check))
                    continue
                r = self.res[key]
                if r["error"]:
                    continue
                n += 1
                impl, _, check = r["label"].partition("; ")
                impls[impl] = impls.get(impl, 0) + 1
                # "equal bits" may go on with what else matched (", I64 indices equal")
                if check != "equal bits" and not check.startswith("equal bits, "):
                    diffs.append("%s (%s)" % ("/".join(key[:3]), check))
            lines.append("  %s: %d cases verified before timing; implementations: %s" % (
                p, n, ", ".join("%s x%d" % kv for kv in sorted(impls.items()))))
            if diffs:
                lines.append("    within tolerance, not bit-equal: " + "; ".join(diffs))
            else:
                lines.append("    every output bit-equal to simdpool's")
            if nets:
                lines.append("    networks: %d training steps verified (every layer's y, "
                             "indices and dx): %s" % (nets, "; ".join(net_diffs) if net_diffs
                                                      else "all bit-equal"))
        return "\n".join(lines)

    def bandwidth_line(self):
        def span(kind, temp):
            v = [r["gbps"] for k, r in self.res.items()
                 if k[0] == kind and k[1] == temp and not r["error"] and r.get("gbps")]
            return (min(v), max(v), sorted(v)[len(v) // 2]) if v else None
        parts = []
        # (both runs of each reference count here: the spread shows the machine's noise)
        for kind, temp, what in (("copy", "hot", "copy in cache (same bytes, buffers reused)"),
                                 ("copy", "cold", "copy out of cache (rotating arena)"),
                                 ("r4w1", "hot", "read-4-write-1 in cache"),
                                 ("r4w1", "cold", "read-4-write-1 out of cache")):
            s = span(kind, temp)
            if s:
                parts.append("  %-44s %6.1f .. %6.1f GB/s (median %.1f)" % (what, s[0], s[1], s[2]))
        return "\n".join(parts)


# ----------------------------------------------------------------------------- chart

COPY_SERIES = "copy, "  # + where the bytes live: "copy, in cache", "copy, out of cache"


def chart_series(s):
    """The chart's bars: every simdpool ISA and peer, then the copy reference split by
    where its bytes live (so the chart says which copies ran in cache)."""
    classes = []
    for op, case, _ in s.groups:
        c = cache_of(s.ref("copy", "hot", case, op))
        if c not in classes:
            classes.append(c)
    return s.isas + s.peers + [COPY_SERIES + c for c in classes]


def chart_value(s, name, op, layout, case):
    """GB/s of one bar, None when there is none; for a peer, "n/a" (no such op) or "err"."""
    if name.startswith(COPY_SERIES):
        r = s.ref("copy", "hot", case, op)
        return r["gbps"] if r and cache_of(r) == name[len(COPY_SERIES):] else None
    if name in s.peers:
        r = s.res.get((op, layout, case, name))
        if r is None:
            return "n/a"
        if r["error"]:
            return "err"
    r = s.get(op, layout, case, name)
    return r["gbps"] if r and r.get("gbps") else None


CHART_GAP = 1  # gnuplot's clustered histogram gap, in bar widths
COPY_LOOK = {"in cache": ("#aaaaaa", 4), "partly in cache": ("#777777", 5),
             "out of cache": ("#333333", 2)}  # gnuplot colour and fill pattern


def chart_data(s, out_dir):
    """Per layout a tab-separated file (a row per case/op, a column per series) and one of
    the n/a marks: x (gnuplot's cluster i, bar j at i + (j - (N-1)/2) / (N + gap)), y, text."""
    series = chart_series(s)
    n = len(series)
    files = []
    for layout in ("nchw", "nhwc"):
        groups = [g for g in s.groups if g[2] == layout]
        if not groups:
            continue
        path = os.path.join(out_dir, "gbps_%s.tsv" % layout)
        marks = os.path.join(out_dir, "na_%s.tsv" % layout)
        with open(path, "w") as f, open(marks, "w") as m:
            f.write("group\t" + "\t".join(series) + "\n")
            for i, (op, case, _) in enumerate(groups):
                cells = []
                for j, name in enumerate(series):
                    v = chart_value(s, name, op, layout, case)
                    if isinstance(v, str):
                        m.write("%.4f\t0.08\t%s\n" % (i + (j - (n - 1) / 2) / (n + CHART_GAP),
                                                        v))
                        v = None
                    cells.append("%.4f" % v if v else "-")
                f.write("%s %s\t" % (case, op) + "\t".join(cells) + "\n")
        files.append((layout, path, marks, len(groups)))
    return series, files


def chart_titles(ctx):
    """The chart's title lines and its legend of the cases."""
    reps = ctx.get("repetitions", "1")
    title = ["simdpool %s, commit %s: GB/s per case and variant next to a copy of the same "
             "bytes (median of %s repetition%s, one run)" % (
                 ctx.get("simdpool_version", "?"), ctx.get("commit", "unknown"), reps,
                 "" if reps == "1" else "s"),
             "%s, %s CPUs, LLC %s; %s; %s" % (
                 ctx.get("cpu_model", "unknown"), ctx.get("num_cpus", "?"),
                 fmt_bytes(int(ctx.get("llc_bytes", "0") or 0)),
                 ctx.get("compiler", "unknown"), ctx.get("date", ""))]
    if ctx.get("mode") == "smoke":
        title[0] = "SMOKE RUN (not a measurement) " + title[0]
    legend = []
    for k in sorted(ctx):
        if k.startswith("case."):
            parts = ctx[k].split("; ")
            # shape and window; where the forward's bytes live; ops
            legend.append("%s: %s; %s; %s" % (
                k[5:], parts[0], next((p for p in parts if p.startswith("x ")), ""),
                next((p for p in parts if p.startswith("ops ")), "")))
    legend.append("n/a: the peer has no such op; err: it failed (see summary.txt); "
                  "copy bars: where the copy's bytes live against the LLC")
    return title, legend


def draw_gnuplot(files, png, series, title, legend):
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot not found"
    most = max(f[3] for f in files)
    width = max(1400, 160 + most * (11 * len(series) + 16))
    panel = 520
    top, bottom = 50, 16 * len(legend) + 20  # title lines; the legend of the cases
    height = panel * len(files) + top + bottom
    def q(t):  # a gnuplot double-quoted string: \n for newlines
        return t.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    lines = [
        "set terminal {term} size %d,%d font 'sans,10'" % (width, height),
        "set output '%s'" % png.replace("'", "''"),
        "set datafile separator '\\t'",
        "set datafile missing '-'",
        "set style data histograms",
        "set style histogram clustered gap %d" % CHART_GAP,
        "set style fill solid 0.85 border -1",
        "set boxwidth 0.9",
        "set logscale y 10",
        "set yrange [0.05:*]",
        "set ylabel 'GB/s (bytes a pass must move / time)'",
        "set grid ytics mytics",
        "set key outside right top vertical noenhanced",
        "set xtics rotate by -40 left noenhanced font 'sans,9'",
        "set bmargin 9",
        "set multiplot",
        'set label 1 "%s" at screen 0.01, screen %.5f left noenhanced font \'sans,12\'' % (
            q("\n".join(title)), 1 - 8.0 / height),
        'set label 2 "%s" at screen 0.01, screen %.5f left noenhanced font \'mono,9\'' % (
            q("\n".join(legend)), (bottom - 12.0) / height),
    ]
    plot_h = panel / height
    for i, (layout, dat, marks, _) in enumerate(files):
        d = dat.replace("'", "''")
        cols = ", ".join(
            "'%s' using %d:xtic(1) title columnheader(%d)%s" % (
                d, k + 2, k + 2, (" lc rgb '%s' fs pattern %d" % COPY_LOOK.get(
                    name[len(COPY_SERIES):], ("#999999", 1))) if name.startswith(COPY_SERIES)
                else "")
            for k, name in enumerate(series))
        if os.path.getsize(marks):
            cols += ", '%s' using 1:2:3 with labels rotate by 90 left font 'sans,8' " \
                    "notitle" % marks.replace("'", "''")
        lines += ["set origin 0, %.5f" % ((bottom + (len(files) - 1 - i) * panel) / height),
                  "set size 1, %.5f" % plot_h,
                  "set title '%s, log scale' noenhanced" % layout.upper(), "plot " + cols,
                  "unset label 1", "unset label 2"]
    lines.append("unset multiplot")
    script = "\n".join(lines)
    last = ""
    for term in ("pngcairo", "png"):
        p = subprocess.run([gp], input=script.replace("{term}", term), universal_newlines=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode == 0 and os.path.exists(png) and os.path.getsize(png) > 0:
            return None
        last = p.stderr.strip()
    return "gnuplot failed: " + last[-500:]


def draw_matplotlib(s, png, series, title, legend):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - any import problem means "not available"
        return "matplotlib not available (%s)" % e
    labels = ["%s/%s/%s" % (c, o, l) for o, c, l in s.groups]
    n = len(series)
    fig, ax = plt.subplots(figsize=(max(12, len(labels) * 0.12 * (n + 1)),
                                    7.2 + 0.16 * len(legend)))
    w = 0.9 / n
    for i, name in enumerate(series):
        vals = []
        for x, (op, case, layout) in enumerate(s.groups):
            v = chart_value(s, name, op, layout, case)
            if isinstance(v, str):
                ax.text(x + i * w, 0.08, v, rotation=90, fontsize=7, va="bottom")
                v = None
            vals.append(v or 0)
        ax.bar([x + i * w for x in range(len(labels))], vals, w, label=name,
               hatch="//" if name.startswith(COPY_SERIES) else None)
    ax.set_yscale("log")
    ax.set_ylabel("GB/s (bytes a pass must move / time), log scale")
    ax.set_title("\n".join(title), fontsize=9)
    ax.set_xticks([x + 0.45 - w / 2 for x in range(len(labels))])
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.text(0.01, 0.005, "\n".join(legend), fontsize=7, family="monospace", va="bottom")
    fig.tight_layout(rect=(0, 0.025 * len(legend) / 2, 1, 1))
    fig.savefig(png, dpi=100)
    return None


# ----------------------------------------------------------------------------- main

def header_lines(ctx):
    """What ran, where, built by what: the first lines of every output."""
    caches = ", ".join("L%d %s" % (c["level"], fmt_bytes(c["size"]))
                       for c in ctx.get("caches", []) if c.get("type") != "Instruction")
    reps = ctx.get("repetitions", "1")
    return [
        "simdpool %s bench, commit %s%s; %s; %s repetition%s per group, min time %s" % (
            ctx.get("simdpool_version", "?"), ctx.get("commit", "unknown"),
            " (SMOKE: 1 iteration, not a measurement)" if ctx.get("mode") == "smoke" else "",
            ctx.get("date", ""), reps, "" if reps == "1" else "s", ctx.get("min_time", "?")),
        "CPU: %s, %s CPUs (host %s), %s; LLC %s: %s" % (
            ctx.get("cpu_model", "unknown"), ctx.get("num_cpus", "?"),
            ctx.get("host_name", "?"), caches,
            fmt_bytes(int(ctx.get("llc_bytes", "0") or 0)), ctx.get("llc_source", "?")),
        "built by: %s; buildtype %s" % (ctx.get("compiler", "unknown"),
                                        ctx.get("build_type", "?")),
        "ISAs built: %s; this CPU runs: %s; AUTO picks: %s; references use %s vectors" % (
            ctx.get("simdpool_isas_built", "?"), ctx.get("cpu_runs", "?"),
            ctx.get("auto_isa", "?"), ctx.get("roofline_isa", "?")),
        "peers: %s" % ctx.get("peers", "?"),
    ]


def case_names(ctx, s):
    """The cases of the run in run order (suite cases, then generated ones)."""
    names = []
    for _, case, _ in s.groups:
        if case not in names:
            names.append(case)
    for k in s.order:
        if k[0] == "kernel" and k[3] not in names:
            names.append(k[3])
    return [n for n in names if "case." + n in ctx]


def case_legend(ctx, s):
    lines = ["Cases (input N x C x H x W; window method kh x kw/stride/padding; where "
             "the f32 forward pass's (an unpooling case: the unpooling's) bytes live against "
             "the LLC; ops timed, an op-<dtype> on elements of that type, the others f32):"]
    names = case_names(ctx, s)
    width = max([len(n) for n in names] + [4])
    lines += ["  %-*s  %s" % (width, n, ctx["case." + n]) for n in names]
    nets = []
    for n, _ in s.nets:
        if n not in nets and "net." + n in ctx:
            nets.append(n)
    if nets:
        lines.append("Networks (layers as C x H x W of the input, batch 1):")
        width = max(len(n) for n in nets)
        lines += ["  %-*s  %s" % (width, n, ctx["net." + n]) for n in nets]
    return "\n".join(lines)


def peer_na_lines(ctx, s):
    lines = []
    for p in s.peers:
        for reason in filter(None, ctx.get("peer_na." + p, "").split(" | ")):
            why, _, names = reason.rpartition(":")
            lines.append("  %s: %s (%d)" % (p, why, len(names.split())))
    return lines


OPEN_PCT = 80  # the README's "Open" list: every case below this % of copy


def open_rows(s):
    """(case, op, layout, % copy) of every f32 row whose best variant is below OPEN_PCT% of
    a copy of the same bytes, in run order. (The README's list is of f32 rows: the other
    dtypes' SIMD plans run the f32 kernels on widened copies, a stopgap below a copy by
    construction, not a gap in a kernel.)"""
    out = []
    for g in s.groups:
        if split_dtype(g[0])[1] != "f32":
            continue
        r = s.row(g)
        if r["pct_copy"] is not None and r["pct_copy"] < OPEN_PCT:
            out.append((r["case"], r["op"], r["layout"], r["pct_copy"]))
    return out


def open_block(ctx, s):
    """The README's generated list: every case below OPEN_PCT% of copy, grouped by case."""
    rows = open_rows(s)
    head = ("f32 rows below %d%% of a copy of the same bytes in the bench (median of %s "
            "repetition%s; "
            "commit %s, %s, %s; `python3 bench/summary.py --json bench.json --update-readme "
            "README.md` writes this list):" % (
                OPEN_PCT, ctx.get("repetitions", "1"),
                "" if ctx.get("repetitions", "1") == "1" else "s", ctx.get("commit", "unknown"),
                ctx.get("cpu_model", "unknown"), ctx.get("compiler", "unknown").split(" (")[0]))
    if ctx.get("mode") == "smoke":
        head = "(SMOKE RUN, not a measurement) " + head
    lines = [head]
    by_case = {}
    for case, op, layout, pct in rows:
        by_case.setdefault(case, []).append("%s %s %.0f%%" % (op, layout.upper(), pct))
    for case, items in by_case.items():
        legend = ctx.get("case." + case, "")
        shape = legend.split("; ")[0].replace(" (NxCxHxW)", "") if legend else ""
        lines.append("- `%s` (%s): %s" % (case, shape, ", ".join(items)))
    if not rows:
        lines.append("- none")
    return "\n".join(lines)


def open_text(ctx, s):
    return "Open (for the README, see --update-readme):\n" + open_block(ctx, s)


OPEN_BEGIN = "<!-- bench-open:begin -->"
OPEN_END = "<!-- bench-open:end -->"


def readme_open(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    a, b = text.find(OPEN_BEGIN), text.find(OPEN_END)
    if a < 0 or b < a:
        raise SystemExit("summary.py: %s has no %s ... %s block" % (readme, OPEN_BEGIN,
                                                                     OPEN_END))
    return text, a + len(OPEN_BEGIN), b


def update_readme(readme, ctx, s):
    text, a, b = readme_open(readme)
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text[:a] + "\n" + open_block(ctx, s) + "\n" + text[b:])
    print("summary.py: %s: the Open list now holds %d case(s) below %d%% of copy" % (
        readme, len(open_rows(s)), OPEN_PCT))


def check_readme(readme, s):
    """Does the README's Open list name every (case, op, layout) below OPEN_PCT% in this
    run, and nothing else? Returns the differences."""
    text, a, b = readme_open(readme)
    listed = set()
    for line in text[a:b].splitlines():
        m = re.match(r"- `([^`]+)` \(.*?\): (.*)$", line)
        if not m:
            continue
        for item in m.group(2).split(", "):
            parts = item.split()
            if len(parts) == 3:
                listed.add((m.group(1), parts[0], parts[1].lower()))
    below = set((c, o, l) for c, o, l, _ in open_rows(s))
    return (["missing from the README: %s %s %s" % k for k in sorted(below - listed)] +
            ["in the README but not below %d%% in this run: %s %s %s" % ((OPEN_PCT,) + k)
             for k in sorted(listed - below)])


def main():
    args = parse_args()
    if not args.json and not args.bench and not args.builddir:
        print("summary.py: give a build directory, --bench EXE or --json FILE", file=sys.stderr)
        return 1
    exe = args.bench or (os.path.join(args.builddir, "bench", "simdpool_bench")
                         if args.builddir else None)
    out_dir = args.out or (os.path.join(args.builddir, "bench-results") if args.builddir
                           else os.path.dirname(os.path.abspath(args.json or exe)))
    os.makedirs(out_dir, exist_ok=True)
    out_dir = os.path.abspath(out_dir)

    rc, elapsed = 0, None
    if args.json:
        json_path = os.path.abspath(args.json)
    else:
        if not os.path.exists(exe):
            print("summary.py: %s not found: build with Meson first (the bench needs g++ "
                  "and libbenchmark-dev; -Dbench=enabled makes their absence an error)" % exe,
                  file=sys.stderr)
            return 1
        json_path, rc, elapsed = run_bench(exe, out_dir, args)
        if not os.path.exists(json_path):
            print("summary.py: the bench wrote no JSON", file=sys.stderr)
            return 1

    ctx, results, order = load(json_path)
    s = Summary(ctx, results, order)
    head = header_lines(ctx)
    legend = [
        "moves    bytes one pass must move: input read + output written + indices",
        "dtype    element type of x, y, dy and dx (indices keep theirs): the op's suffix in "
        "the benchmark name (max_fwd_i64-bf16), f32 without one; s8/u8 avg is quantized "
        "(the case legend gives the quantization)",
        "cache    where the copy reference of those bytes lives: %s (LLC %s)" % (
            ctx.get("cache_rule", "?"), fmt_bytes(int(ctx.get("llc_bytes", "0") or 0))),
        "time     median over the repetitions of each one's fastest pass (scalar: of the "
        "scalar one); every ratio uses these medians on both sides (the JSON also has Google "
        "Benchmark's mean, real_time)",
        "best     fastest simdpool ISA by median (plan forced to it through the public API); "
        "a=b: a tie, b's repetitions overlap a's (b's fastest is no slower than a's slowest)",
        "spread   (slowest - fastest) / median over the best ISA's repetitions ('-': one "
        "repetition)",
        "speedup  scalar time / best time",
        "% copy   best GB/s as a share of a streaming copy of the same byte count, same run, "
        "buffers reused (in cache when they fit: see cache)",
        "% r4w1   the same against a read-4-bytes-write-1 reduction",
    ]
    if s.peers:
        legend.append("vs P     peer P's time / simdpool's best time (> 1: simdpool faster), "
                      "single-threaded, outputs verified equal first; n/a: P has no such op "
                      "(see the notes)")
    text = "\n".join(head) + "\n\n" + case_legend(ctx, s) + "\n\n" + s.main_table() + \
        "\n\n" + "\n".join(legend)
    if s.nets:
        text += "\n\nNetworks: the pooling layers of each network as one training step " \
                "(every forward in network order, then every backward in reverse; MAX " \
                "forward writes I64 indices and its backward reads them), batch 1:\n"
        text += s.net_table()
        text += "\nsimdpool = AUTO plans (isa: what they picked); vs P = P's time / " \
                "simdpool's; % copy = simdpool's GB/s vs a copy of the same bytes; the " \
                "last columns are the step with every plan forced to one ISA"
    text += "\n\nGB/s per variant, median of the repetitions (hot copy and r4w1 of the same " \
            "bytes for scale):\n"
    text += s.variant_table()
    if s.threads:
        text += "\n\nTwo threads (simdpool_forward/backward_parallel, unpooling's " \
                "simdpool_unpool/unpool_backward_parallel, on a 2-thread " \
                "simdpool_threadpool) vs one, same ISA, measured in the same rounds; " \
                "scaling = median over the rounds of 1-thread time / 2-thread time, range = " \
                "its lowest and highest round; within noise: the range is wider than the " \
                "difference from 1x, or the 1- and 2-thread times overlap:\n" + \
                s.thread_table()
    kt = s.kernel_table()
    if kt:
        text += "\n\nRegistry kernels no case reaches, timed by direct call:\n" + kt
    text += "\n\nBandwidth references measured in this run:\n" + s.bandwidth_line()
    text += "\n" + s.ref_table()
    arena = ctx.get("cold_arena_bytes", "")
    if arena.isdigit():
        text += "\n(cold = a %s arena rotated per pass, at least 2x the %s last-level " \
                "cache plus two passes)" % (fmt_bytes(int(arena)),
                                           fmt_bytes(int(ctx.get("llc_bytes", "0") or 0)))
    if s.peers:
        text += "\n\nPeers (inputs hold no NaN: oneDNN and XNNPACK do not propagate NaN "\
                "through max like PyTorch/simdpool; PyTorch must equal every bit):\n" + \
                s.peer_lines()
    na = peer_na_lines(ctx, s)
    if na:
        text += "\n\nn/a: what each peer has no op for (not timed):\n" + "\n".join(na)
    if s.notes:
        text += "\n\nNotes:\n" + "\n".join("  " + n for n in s.notes)
    text += "\n\n" + open_text(ctx, s)
    if s.failures:
        text += "\n\nFAILURES:\n" + "\n".join("  " + f for f in s.failures)
    print("\n" + text + "\n")

    txt_path = os.path.join(out_dir, "summary.txt")
    with open(txt_path, "w") as f:
        f.write(text + "\n")
    open_path = os.path.join(out_dir, "open.md")
    with open(open_path, "w") as f:
        f.write(open_block(ctx, s) + "\n")
    readme_diff = []
    if args.update_readme:
        update_readme(args.update_readme, ctx, s)
    if args.check_readme:
        readme_diff = check_readme(args.check_readme, s)
        for d in readme_diff:
            print("summary.py: %s: %s" % (args.check_readme, d))
        if not readme_diff:
            print("summary.py: %s: the Open list names every case below %d%% of copy" % (
                args.check_readme, OPEN_PCT))

    png_path, chart_err = None, None
    if not args.no_chart:
        series, files = chart_data(s, out_dir)
        png_path = os.path.join(out_dir, "bench.png")
        title, legend = chart_titles(ctx)
        chart_err = draw_gnuplot(files, png_path, series, title, legend) if files \
            else "no results"
        if chart_err:
            err2 = draw_matplotlib(s, png_path, series, title, legend)
            chart_err = None if err2 is None else chart_err + "; " + err2
        if chart_err:
            png_path = None

    print("results:")
    print("  JSON    %s" % json_path)
    print("  table   %s" % txt_path)
    print("  open    %s (the README's Open list from this run)" % open_path)
    if png_path:
        print("  chart   %s" % png_path)
    elif not args.no_chart:
        print("  chart   NOT WRITTEN: %s (install gnuplot-nox)" % chart_err)
    if elapsed is not None:
        print("  bench time %.1f s" % elapsed)
    if rc != 0 or s.failures:
        print("summary.py: FAIL: the bench reported wrong results or errors (see above)")
        return 1
    if readme_diff:
        return 1
    if chart_err and not args.smoke:
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
