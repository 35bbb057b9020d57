#!/usr/bin/env python3
"""Driver of the runtime-cost benchmark (issue 6): reagent against the Python peers, in one run.

Started by benches/run.sh (which builds `reagent-bench` and the peers' venv). Standard library
only. What it does:

1. writes the workspace (distinct 4 KB files) and starts the scripted Ollama server
   (`reagent-bench serve`) as its own process, so its CPU is not counted against any agent;
2. runs every agent as a child process, interleaved, `--repeats` times for each iteration
   count, and reads the child's CPU time (ru_utime + ru_stime) and peak RSS (ru_maxrss) with
   wait4(): reagent (`reagent-bench run-once`, a current-thread runtime, with a context window
   large enough that nothing is compacted, the same with the run store on (every event
   recorded into one SQLite store, as `reagent run` does unless `--no-store`), and with
   reagent's default 16k window, which compacts), the plain `ollama` client loop, LangGraph's create_react_agent and smolagents'
   ToolCallingAgent (benches/peers/*.py). Each child also reports the CPU time of the measured
   run alone (after a one-file warm-up run, so interpreter start-up and imports are left out)
   and the chat requests and bytes the server received during it;
3. `reagent-bench many`: concurrent runs in one process (RSS per idle run, iterations/s);
4. `reagent-bench cache` (full run only, when llama-server and the model are installed): the
   prompt-cache share against the real llama-server, with and without compaction firing;
5. prints the markdown report; a full run writes it to benches/RESULTS.md and into the
   `## Runtime cost vs peers` section of the root BENCHMARKS.md (other sections are kept).

Exit status: 0 when every run of every agent completed (read every file, gave the scripted
answer), 1 otherwise. Timings are never asserted.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SECTION = "## Runtime cost vs peers"

PEERS = [
    ("ollama", "ollama-client loop", "ollama_loop.py"),
    ("langgraph", "LangGraph create_react_agent", "langgraph_agent.py"),
    ("smolagents", "smolagents ToolCallingAgent", "smolagents_agent.py"),
]
REAGENT = "reagent"
REAGENT_COMPACT = "reagent-compact"
REAGENT_STORE = "reagent-store"
# Issue 28: most CPU the run store may add, by N (store on / `--no-store` - 1).
STORE_LIMITS = {10: 0.50, 150: 0.25}
LABELS = {
    REAGENT: "reagent (no compaction)",
    REAGENT_STORE: "reagent (no compaction, store on)",
    REAGENT_COMPACT: "reagent (16k window, compacts)",
    **{key: label for key, label, _ in PEERS},
}
NO_COMPACTION_CTX = 1 << 20
# Tool results of the third prompt-cache run: small, so the share of cached tokens is not
# bounded by the size of each new result.
SMALL_FILE_BYTES = 256


def log(msg):
    sys.stderr.write(f"[bench {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


def run_child(cmd, timeout):
    """Run `cmd`; return (exit status, stdout, stderr, cpu seconds, peak RSS KiB, wall s).

    The child is reaped with wait4(), so its own rusage (not the driver's) is read; it is
    killed after `timeout` seconds."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=HERE)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    return proc.returncode, stdout, stderr, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, wall


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


class Bench:
    def __init__(self, args):
        self.args = args
        self.failures = []
        self.server = None
        self.url = None
        self.workspace = None
        self.small_workspace = None
        self.store_dir = None

    # --- setup -----------------------------------------------------------------------------

    def start(self):
        self.workspace = tempfile.mkdtemp(prefix="reagent-bench-ws-")
        # One store for every store-on run, as a user's runs share theirs (its creation and
        # migrations happen in the first run's process, outside the measured run).
        self.store_dir = tempfile.mkdtemp(prefix="reagent-bench-store-")
        files = max(self.args.counts + [self.args.many_iterations, self.args.cache_iterations, 1])
        subprocess.run(
            [self.args.bin, "prepare", "--dir", self.workspace, "--files", str(files)], check=True
        )
        if not self.args.no_cache:
            self.small_workspace = tempfile.mkdtemp(prefix="reagent-bench-ws-small-")
            subprocess.run(
                [self.args.bin, "prepare", "--dir", self.small_workspace, "--files",
                 str(self.args.cache_iterations), "--bytes", str(SMALL_FILE_BYTES)],
                check=True,
            )
        self.server = subprocess.Popen([self.args.bin, "serve"], stdout=subprocess.PIPE, cwd=HERE)
        port = self.server.stdout.readline().decode().strip()
        if not port.isdigit():
            raise RuntimeError(f"the scripted server did not start (printed {port!r})")
        self.url = f"http://127.0.0.1:{port}"
        log(f"scripted server on {self.url}, workspace {self.workspace} ({files} files)")

    def stop(self):
        server_cpu = None
        if self.server is not None:
            self.server.terminate()
            try:
                _, _, ru = os.wait4(self.server.pid, 0)
                self.server.returncode = 0
                server_cpu = ru.ru_utime + ru.ru_stime
            except ChildProcessError:
                pass
        for ws in (self.workspace, self.small_workspace, self.store_dir):
            if ws:
                shutil.rmtree(ws, ignore_errors=True)
        return server_cpu

    # --- single runs -----------------------------------------------------------------------

    def command(self, agent, n):
        common = ["--url", self.url, "--workspace", self.workspace, "--iterations", str(n)]
        if agent == REAGENT:
            return [self.args.bin, "run-once", *common, "--num-ctx", str(NO_COMPACTION_CTX)]
        if agent == REAGENT_STORE:
            return [self.args.bin, "run-once", *common, "--num-ctx", str(NO_COMPACTION_CTX),
                    "--store", os.path.join(self.store_dir, "store.db")]
        if agent == REAGENT_COMPACT:
            return [self.args.bin, "run-once", *common]
        script = next(s for key, _, s in PEERS if key == agent)
        return [self.args.python, os.path.join(HERE, "peers", script), *common]

    def warm_files(self):
        """Read every workspace file once, so no agent pays for disk reads that the one run
        before it did not (the first agent of a round would otherwise read from disk)."""
        for name in os.listdir(self.workspace):
            with open(os.path.join(self.workspace, name), "rb") as f:
                f.read()

    def single(self, agent, n):
        self.warm_files()
        rc, out, err, cpu, rss, wall = run_child(self.command(agent, n), self.args.timeout)
        rep = last_json(out)
        ok = (
            rc == 0
            and rep is not None
            and rep.get("outcome") == "completed"
            and rep.get("tool_calls") == n
            and not rep.get("failed_tool_calls")
        )
        if not ok:
            detail = (rep or {}).get("error") or err.strip()[-800:] or out.strip()[-400:]
            self.failures.append(f"{LABELS[agent]} ({n} iterations): exit {rc}: {detail}")
            log(f"FAILED {LABELS[agent]} n={n}: exit {rc}: {detail}")
            return None
        return {
            "process_cpu_ms": cpu * 1e3,
            "peak_rss_kib": rss,
            "process_wall_ms": wall * 1e3,
            "run_cpu_ms": rep["run_cpu_ms"],
            "run_wall_ms": rep["wall_ms"],
            "chat_requests": rep.get("chat_requests"),
            "chat_bytes": rep.get("chat_bytes"),
            "compactions": rep.get("compactions"),
        }

    def singles(self, agents):
        results = {a: {n: [] for n in self.args.counts} for a in agents}
        for r in range(self.args.repeats):
            for n in self.args.counts:
                for agent in agents:
                    log(f"repeat {r + 1}/{self.args.repeats}: {LABELS[agent]}, {n} iterations")
                    m = self.single(agent, n)
                    if m is not None:
                        results[agent][n].append(m)
        return results

    # --- many, cache -----------------------------------------------------------------------

    def many(self):
        a = self.args
        cmd = [a.bin, "many", "--url", self.url, "--workspace", self.workspace,
               "--runs", str(a.runs), "--iterations", str(a.many_iterations),
               "--hold-ms", str(a.hold_ms)]
        log(f"{a.runs} concurrent runs of {a.many_iterations} iterations")
        rc, out, err, cpu, rss, wall = run_child(cmd, a.timeout)
        rep = last_json(out)
        if rc != 0 or rep is None:
            self.failures.append(f"reagent many: exit {rc}: {err.strip()[-800:]}")
            log(f"FAILED many: {err.strip()[-800:]}")
            return None
        rep["process_cpu_ms"] = cpu * 1e3
        rep["process_peak_rss_kib"] = rss
        return rep

    def cache(self):
        out = {}
        runs = (
            ("short", "4 KB results, too few to compact", self.workspace, self.args.cache_short,
             self.args.cache_ctx),
            ("compact", "4 KB results, compaction firing", self.workspace, self.args.cache_iterations,
             self.args.cache_compact_ctx),
            ("small", f"{SMALL_FILE_BYTES} B results", self.small_workspace, self.args.cache_short,
             self.args.cache_ctx),
        )
        wanted = {r for r in self.args.cache_runs.split(",") if r}
        for key, label, ws, n, ctx in runs:
            if key not in wanted:
                continue
            ctx = str(ctx)
            cmd = [self.args.bin, "cache", "--workspace", ws, "--iterations", str(n),
                   "--ctx-size", ctx, "--num-ctx", ctx]
            log(f"prompt cache against llama-server, {n} iterations ({label})")
            rc, stdout, err, _, _, wall = run_child(cmd, max(self.args.timeout, 3600))
            rep = last_json(stdout)
            if rc != 0 or rep is None:
                self.failures.append(f"reagent cache ({n} iterations): exit {rc}: {err.strip()[-800:]}")
                log(f"FAILED cache: {err.strip()[-800:]}")
                continue
            rep["wall_s"] = wall
            rep["ctx"] = int(ctx)
            out[label] = rep
        return out


def parser_bench(timeout):
    """`cargo bench -p reagent-parse -- --quick` (the parser crate's criterion benches); returns
    {benchmark: (median time in ms, median throughput text)} or None when it failed."""
    cmd = ["cargo", "bench", "--quiet", "-p", "reagent-parse", "--", "--quick", "--noplot"]
    log("parser benches: " + " ".join(cmd))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"{e}"
    if proc.returncode != 0:
        return None, proc.stderr.strip()[-800:]
    units = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
    found, name = {}, None
    for line in proc.stdout.splitlines():
        m = re.match(r"^(\S+/\S+)\s*(time:.*)?$", line.strip())
        if m and not line.startswith(" "):
            name = m.group(1)
        t = re.search(r"time:\s*\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if t and name:
            found.setdefault(name, {})["ms"] = float(t.group(1)) * units.get(t.group(2), float("nan"))
        r = re.search(r"thrpt:\s*\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if r and name:
            found.setdefault(name, {})["thrpt"] = f"{r.group(1)} {r.group(2)}"
    if not found:
        return None, "no criterion results in the output"
    return found, None


# --- report ---------------------------------------------------------------------------------


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=1):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def cmd_out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine():
    model = ""
    for line in cmd_out(["lscpu"]).splitlines():
        if line.startswith("Model name"):
            model = line.split(":", 1)[1].strip()
    if not model:
        try:
            with open("/proc/cpuinfo") as f:
                m = re.search(r"model name\s*:\s*(.*)", f.read())
                model = m.group(1) if m else "unknown CPU"
        except OSError:
            model = "unknown CPU"
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            kb = int(re.search(r"MemTotal:\s*(\d+)", f.read()).group(1))
            mem_gb = kb / 1024 / 1024
    except (OSError, AttributeError):
        pass
    ram = f"{mem_gb:.0f} GB RAM" if mem_gb else "RAM unknown"
    return f"{os.cpu_count()} CPUs ({model}), {ram}, Linux {platform.release()}"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def peer_versions(python):
    code = (
        "import importlib.metadata as m\n"
        "for p in ['ollama','langgraph','langchain-ollama','langchain-core','smolagents','litellm']:\n"
        "    try: print(p + ' ' + m.version(p))\n"
        "    except Exception: pass\n"
    )
    lines = cmd_out([python, "-c", code]).splitlines()
    return ", ".join(lines) + (f"; Python {cmd_out([python, '-c', 'import platform; print(platform.python_version())'])}")


def per_iter(ms_list, n):
    v = med(ms_list)
    return None if v is None else v / n


def targets(args, singles, many, cache):
    """The issue's targets against this run's figures."""
    L = ["### Targets", "", "| target | measured | met |", "|---|---|---|"]

    def cpu_iter(agent, n):
        return per_iter([m["run_cpu_ms"] for m in singles.get(agent, {}).get(n, [])], n)

    for peer, want in (("ollama", 10), ("langgraph", 30)):
        if peer not in singles:
            continue
        for mine in (REAGENT, REAGENT_COMPACT):
            parts, ok = [], True
            for n in args.counts:
                a, b = cpu_iter(mine, n), cpu_iter(peer, n)
                r = b / a if a and b else None
                ok = ok and r is not None and r >= want
                parts.append(f"N={n}: {fmt(r)}×")
            L.append(f"| ≥ {want}× less CPU / iteration than {LABELS[peer]} — {LABELS[mine]} | {', '.join(parts)} | {'yes' if ok else '**no**'} |")
    if REAGENT_STORE in singles:
        # Issue 28: the store may add at most 50% at N=10 and 25% at N=150 (run CPU, store on
        # over `--no-store`, medians of runs interleaved in one loop); other counts are shown.
        for n in args.counts:
            on, off = cpu_iter(REAGENT_STORE, n), cpu_iter(REAGENT, n)
            r = on / off if on and off else None
            limit = STORE_LIMITS.get(n)
            added = "–" if r is None else f"{(r - 1) * 100:+.0f}%"
            if limit is None:
                met = "(no target at this N)"
                what = f"CPU the run store adds at N={n}"
            else:
                met = "yes" if r is not None and r <= 1 + limit else "**no**"
                what = f"run store adds ≤ {limit * 100:.0f}% CPU at N={n}"
            L.append(
                f"| {what} — {LABELS[REAGENT_STORE]} / {LABELS[REAGENT]} | {fmt(r, 2)}× ({added}; "
                f"{fmt(on, 3)} vs {fmt(off, 3)} ms / iteration) | {met} |"
            )
    rss = [m["peak_rss_kib"] for a in (REAGENT, REAGENT_STORE, REAGENT_COMPACT) for n in args.counts for m in singles.get(a, {}).get(n, [])]
    if rss:
        L.append(f"| < 30 MB peak RSS, single run | max {fmt(max(rss) / 1024)} MB | {'yes' if max(rss) < 30 * 1024 else '**no**'} |")
    if many:
        per = many["idle"]["bytes_per_run"] / 1024
        L.append(f"| < 200 KB per idle run ({many['idle']['runs']:,} concurrent) | {fmt(per)} KB | {'yes' if per < 200 else '**no**'} |")
    for label, rep in (cache or {}).items():
        share, reuse = rep.get("share_after_first"), rep.get("min_prefix_reuse")
        share_txt = "–" if share is None else f"{share * 100:.1f}%"
        reuse_txt = "–" if reuse is None else f"{reuse * 100:.0f}%"
        met = "yes" if share is not None and share >= 0.9 else "**no**"
        L.append(
            f"| ≥ 90% of prompt tokens from the cache after the 1st request — {label} "
            f"| {share_txt} (lowest reuse of the previous prompt: {reuse_txt}) | {met} |"
        )
    L.append("")
    return L


def report(args, singles, many, cache, server_cpu, meta, parser=None):
    L = []
    counts = args.counts
    agents = [a for a in singles]
    L.append(SECTION)
    L.append("")
    if args.smoke:
        L.append("**Smoke run** (debug build, tiny counts): it checks that every agent completes; its timings mean nothing.")
        L.append("")
    L.append(f"Measured by `{meta['command']}` on {meta['date']}, commit `{meta['commit']}`.")
    L.append(f"Machine: {meta['machine']}. Load average (1, 5, 15 min) before: {meta['load_before']}, after: {meta['load_after']}.")
    L.append(f"Peers: {meta['versions']}.")
    L.append(
        f"Workload: read N distinct {args.file_kb} KB files one by one with a `read_file` tool, then answer; the "
        "scripted Ollama server (`reagent-bench serve`, its own process) answers every request at once; every "
        "agent offers the same one tool, and the files are read once before each run so every agent finds them "
        f"in the page cache. Each figure is the median of {args.repeats} run(s); every agent is its own child process "
        "(CPU = ru_utime + ru_stime and peak RSS = ru_maxrss from wait4). \"Run CPU\" is the CPU time of the "
        "measured run alone, after a one-file warm-up run in the same process (interpreter start-up, imports "
        "and the warm-up are left out); \"process CPU\" is the whole child process. The store-on rows record "
        "every event into one SQLite store shared by their runs (`run-once --store`, what `reagent run` does "
        "unless `--no-store`); their run CPU includes writing the run's last events and saving its session."
    )
    L.append("")
    ref = REAGENT if REAGENT in singles else agents[0]
    L.extend(targets(args, singles, many, cache))
    if not singles:
        return "\n".join(L)
    L.append("### CPU per iteration and peak RSS (single run)")
    L.append("")
    L.append("| agent | N | run CPU / iteration (ms) | × reagent | run CPU (ms) | process CPU (ms) | peak RSS (MB) | KB sent / iteration | compactions |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in counts:
        ref_cpu = per_iter([m["run_cpu_ms"] for m in singles[ref][n]], n)
        for a in agents:
            ms = singles[a][n]
            cpu = per_iter([m["run_cpu_ms"] for m in ms], n)
            ratio = cpu / ref_cpu if cpu is not None and ref_cpu else None
            rss = med([m["peak_rss_kib"] for m in ms])
            sent = med([m["chat_bytes"] for m in ms])
            comp = med([m["compactions"] for m in ms])
            L.append(
                f"| {LABELS[a]} | {n} | {fmt(cpu, 3)} | {fmt(ratio)} | {fmt(med([m['run_cpu_ms'] for m in ms]))} "
                f"| {fmt(med([m['process_cpu_ms'] for m in ms]))} "
                f"| {fmt(None if rss is None else rss / 1024)} | {fmt(None if sent is None else sent / 1024 / n)} "
                f"| {'–' if comp is None else int(comp)} |"
            )
    L.append("")
    if len(counts) > 1:
        lo, hi = counts[0], counts[-1]
        L.append(f"### Growth with history length (N = {lo} → {hi})")
        L.append("")
        L.append(
            "CPU per iteration grows because every request carries the whole history; what matters is that it "
            "grows no faster than the bytes sent. \"µs / KB sent\" is run CPU over request bytes: flat or falling "
            "means the cost per iteration grows at most like the bytes sent."
        )
        L.append("")
        head = " | ".join(f"µs / KB sent, N={n}" for n in counts)
        L.append(f"| agent | CPU / iteration ×{hi}/{lo} | KB sent / iteration ×{hi}/{lo} | {head} |")
        L.append("|---|---:|---:|" + "---:|" * len(counts))
        for a in agents:
            cpu = {n: per_iter([m["run_cpu_ms"] for m in singles[a][n]], n) for n in counts}
            sent = {n: med([m["chat_bytes"] for m in singles[a][n]]) for n in counts}
            def ratio(d):
                return d[hi] / d[lo] if d[hi] is not None and d[lo] else None
            sent_per_iter = {n: None if sent[n] is None else sent[n] / n for n in counts}
            per_kb = []
            for n in counts:
                c = med([m["run_cpu_ms"] for m in singles[a][n]])
                per_kb.append(None if c is None or not sent[n] else c * 1e3 / (sent[n] / 1024))
            L.append(
                f"| {LABELS[a]} | {fmt(ratio(cpu))} | {fmt(ratio(sent_per_iter))} | "
                + " | ".join(fmt(v, 2) for v in per_kb) + " |"
            )
        L.append("")
    if many:
        i, t = many["idle"], many["throughput"]
        L.append(f"### {t['runs']:,} concurrent runs in one process (library API)")
        L.append("")
        L.append("| figure | value |")
        L.append("|---|---:|")
        L.append(f"| RSS per idle run (all {i['runs']:,} waiting on the model; RSS {fmt(i['baseline_rss_kib'] / 1024)} MB → {fmt(i['in_flight_rss_kib'] / 1024)} MB) | {fmt(i['bytes_per_run'] / 1024)} KB |")
        L.append(f"| throughput ({t['runs']:,} runs × {args.many_iterations} tool calls, {t['iterations']:,} model calls in {fmt(t['wall_ms'] / 1e3, 2)} s) | {fmt(t['iterations_per_sec'])} iterations/s |")
        if i.get("heap_bytes_per_run") is not None:
            L.append(f"| heap in use per idle run (glibc mallinfo2: live data, not allocator overhead) | {fmt(i['heap_bytes_per_run'] / 1024)} KB |")
        if i.get("argument_checker_heap_bytes") is not None:
            L.append(
                f"| size of the tool catalogue a run would rebuild if the `Agent` did not hold it (it does, since 479a13e): `ArgumentChecker` (compiled JSON-Schema "
                f"validators) + tool specs | {fmt(i['argument_checker_heap_bytes'] / 1024)} KB + {fmt(i['tool_specs_heap_bytes'] / 1024)} KB |"
            )
        L.append(f"| CPU per model call | {fmt(t['cpu_us_per_iteration'])} µs |")
        L.append(f"| peak RSS of the process | {fmt(t['peak_rss_kib'] / 1024)} MB |")
        L.append(f"| runs completed (idle phase, throughput phase) | {i['completed']:,}, {t['completed']:,} |")
        L.append("")
        L.append(
            "The scripted server runs on the same machine (one core at most), so the throughput is bounded by "
            "two processes sharing the CPUs."
        )
        L.append("")
    if cache:
        L.append("### Prompt-cache share against the real llama-server (SmolLM2-135M, `--cache-reuse 256`)")
        L.append("")
        if meta.get("cache_note"):
            L.append(meta["cache_note"])
            L.append("")
        L.append(
            "A real reagent run in constrained tool mode; only the choice of each reply is scripted (a JSON-Schema "
            "`const`), so the model reads the files in order. Share = cached prompt tokens (`timings.cache_n`) / "
            "prompt tokens, summed over every request after the first. Reuse = a request's cached tokens / the "
            "previous request's prompt tokens: 100% means the whole previous prompt was served from the cache, "
            "which is all an append-only history can offer (each new tool result is new text and cannot be cached: "
            "with 4 KB results, about 1,200 new tokens per request, the share over a run is bounded by how long the "
            "history grows, hence a window larger than SmolLM2's trained 8k: the replies are forced by the schema, "
            "so the model's quality past 8k does not matter here). A compaction removes the oldest rounds and "
            "appends a digest; the rounds it keeps are unchanged, and llama-server's `--cache-reuse` (on in "
            "reagent's embedded server) serves them from the cache after the gap."
        )
        L.append("")
        L.append("| run | window (`-c`, `num_ctx`) | iterations | compactions | cached share after the 1st request | same, leaving out requests right after a compaction | lowest reuse of the previous prompt (not after a compaction) |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        for label, rep in cache.items():
            pct = lambda v: "–" if v is None else f"{v * 100:.1f}%"
            L.append(
                f"| {label} | {rep.get('ctx', 8192):,} | {rep['tool_calls']} | {rep['compactions']} | {pct(rep['share_after_first'])} "
                f"| {pct(rep['share_between_compactions'])} | {pct(rep['min_prefix_reuse'])} |"
            )
        L.append("")
    if server_cpu is not None:
        L.append(f"The scripted server used {fmt(server_cpu, 2)} s of CPU in total over the whole run.")
        L.append("")
    L.append("Analysis of these figures (where the time and memory go, what to change): benches/FINDINGS.md.")
    L.append("")
    if parser:
        L.append("### Parser (`cargo bench -p reagent-parse -- --quick`, criterion, same run)")
        L.append("")
        L.append("| benchmark | median time (ms) | throughput | streaming / one-shot |")
        L.append("|---|---:|---:|---:|")
        for name, v in sorted(parser.items()):
            ratio = None
            if name.startswith("stream"):
                base = parser.get("one_shot/" + name.split("/", 1)[1], {}).get("ms")
                ratio = v.get("ms") / base if base and v.get("ms") else None
            L.append(f"| `{name}` | {fmt(v.get('ms'), 2)} | {v.get('thrpt', '–')} | {'–' if ratio is None else fmt(ratio) + '×'} |")
        L.append("")
        L.append("Targets and notes: crates/reagent-parse/BENCHMARKS.md.")
    else:
        L.append(
            "Parser throughput and streaming ratio: from the parser crate's criterion benches "
            "(`cargo bench -p reagent-parse -- --quick`), see crates/reagent-parse/BENCHMARKS.md."
        )
    L.append("")
    return "\n".join(L)


def write_section(path, section):
    """Replace the section in `path` (up to the next `## ` heading), or append it; every other
    section is kept. The file is created when missing."""
    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.rstrip("\n") == SECTION), None)
    body = section.rstrip("\n") + "\n"
    if start is None:
        head = text.rstrip("\n") + "\n\n" if text.strip() else "# Benchmarks\n\n"
        new = head + body
    else:
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
        rest = "".join(lines[end:])
        new = "".join(lines[:start]) + body + ("\n" + rest if rest else "")
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)


def finish_cache_only(args, bench, cache_rep, meta):
    server_cpu = bench.stop()
    del server_cpu
    meta["load_after"] = loadavg()
    saved = {k: meta[k] for k in ("command", "date", "commit", "machine", "load_before", "load_after")}
    try:
        with open(args.cache_only, encoding="utf-8") as f:
            kept = json.load(f).get("cache", {})
    except (OSError, ValueError):
        kept = {}
    saved["cache"] = {**{k: v for k, v in kept.items() if k not in cache_rep and "ctx" in v}, **cache_rep}
    with open(args.cache_only, "w", encoding="utf-8") as f:
        json.dump(saved, f, indent=1)
        f.write("\n")
    sys.stdout.write(json.dumps(saved, indent=1) + "\n")
    if bench.failures:
        log(f"{len(bench.failures)} run(s) failed")
        return 1
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True, help="the reagent-bench binary")
    p.add_argument("--python", required=True, help="the peers' venv python")
    p.add_argument("--smoke", action="store_true", help="tiny counts, every agent, nothing written")
    p.add_argument("--counts", default="10,50,150")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--runs", type=int, default=1000, help="concurrent runs")
    p.add_argument("--many-iterations", type=int, default=10)
    p.add_argument("--hold-ms", type=int, default=4000)
    p.add_argument("--cache-iterations", type=int, default=30, help="cache run long enough to compact")
    p.add_argument("--cache-short", type=int, default=22, help="cache run too short to compact")
    p.add_argument("--cache-ctx", type=int, default=40960,
                   help="llama-server -c and reagent's num_ctx for the runs that do not compact")
    p.add_argument("--cache-compact-ctx", type=int, default=32768,
                   help="the same for the run that compacts (smaller: it fires sooner)")
    p.add_argument("--cache-runs", default="short,compact,small",
                   help="which prompt-cache runs to make; --cache-only keeps the others already in OUT")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--no-parser", action="store_true", help="skip cargo bench -p reagent-parse")
    p.add_argument("--cache-only", metavar="OUT", help="only the prompt-cache runs; save them as JSON to OUT")
    p.add_argument("--cache-json", metavar="IN", help="take the prompt-cache figures from a --cache-only run")
    p.add_argument("--peers", default="ollama,langgraph,smolagents")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--write", action="store_true", help="write benches/RESULTS.md and BENCHMARKS.md")
    p.add_argument("--command", default=None, help="command line to state in the report")
    p.add_argument("--store-only", action="store_true",
                   help="only reagent with the store on and with --no-store, interleaved (issue 28's "
                        "targets); no peers, concurrent runs, parser or cache; writes nothing")
    args = p.parse_args()
    args.file_kb = 4
    if args.smoke:
        args.counts, args.repeats, args.runs = "2,3", 1, 20
        args.many_iterations, args.hold_ms, args.no_cache, args.write = 2, 1500, True, False
        args.no_parser = True
    args.counts = sorted({int(c) for c in args.counts.split(",") if c.strip()})
    args.bin = os.path.abspath(args.bin)
    args.python = os.path.abspath(args.python)
    peers = [k for k in args.peers.split(",") if k]
    unknown = [k for k in peers if k not in dict((k, l) for k, l, _ in PEERS)]
    if unknown:
        p.error(f"unknown peers {unknown}")
    agents = [REAGENT, REAGENT_STORE, REAGENT_COMPACT] + peers
    if args.store_only:
        agents, args.no_cache, args.no_parser, args.write = [REAGENT, REAGENT_STORE], True, True, False

    meta = {
        "command": args.command or " ".join(sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": (cmd_out(["git", "rev-parse", "--short", "HEAD"]) or "unknown")
        + (" (uncommitted changes in benches/)" if cmd_out(["git", "status", "--porcelain", "--", "benches"]) else ""),
        "machine": machine(),
        "load_before": loadavg(),
        "versions": "none (--store-only)" if args.store_only else peer_versions(args.python),
    }
    bench = Bench(args)
    cache_rep, many_rep, server_cpu, parser_rep, singles = {}, None, None, None, {}
    if args.cache_json:
        # Prompt-cache figures of an earlier `--cache-only` run (token counts: the load does
        # not change them, and llama-server takes long on 2 cores).
        with open(args.cache_json, encoding="utf-8") as f:
            saved = json.load(f)
        cache_rep, args.no_cache = saved["cache"], True
        meta["cache_note"] = (
            f"Prompt-cache figures from `{saved['command']}` on {saved['date']}, commit `{saved['commit']}`, "
            f"load {saved['load_before']} → {saved['load_after']} (token counts, which the load does not change)."
        )
    try:
        bench.start()
        if args.cache_only:
            cache_rep = bench.cache()
            return finish_cache_only(args, bench, cache_rep, meta)
        singles = bench.singles(agents)
        many_rep = None if args.store_only else bench.many()
        if not args.no_parser:
            parser_rep, why = parser_bench(max(args.timeout, 1800))
            if parser_rep is None:
                bench.failures.append(f"parser benches: {why}")
        # Last: token counts do not depend on the load, and llama-server is slow on 2 cores.
        cache_dir = os.environ.get("REAGENT_CACHE") or os.path.expanduser("~/.cache/reagent")
        files_ok = os.path.exists(os.path.join(cache_dir, "bin", "llama-server"))
        if not args.no_cache:
            if files_ok:
                cache_rep = bench.cache()
            else:
                log("llama-server is not installed (scripts/install-model-server.sh): no prompt-cache figures")
    finally:
        server_cpu = bench.stop()
    meta["load_after"] = loadavg()
    text = report(args, singles, many_rep, cache_rep, server_cpu, meta, parser_rep)
    if bench.failures:
        text += "\n**Failed runs:**\n\n" + "\n".join(f"- {f}" for f in bench.failures) + "\n"
    sys.stdout.write(text + "\n")
    if args.write:
        with open(os.path.join(HERE, "RESULTS.md"), "w", encoding="utf-8") as f:
            f.write("# reagent-bench results\n\nWritten by `benches/run.sh`.\n\n" + text.replace(SECTION, "## Runtime cost vs peers", 1) + "\n")
        write_section(os.path.join(ROOT, "BENCHMARKS.md"), text)
        log("wrote benches/RESULTS.md and the section of BENCHMARKS.md")
    if bench.failures:
        log(f"{len(bench.failures)} run(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
