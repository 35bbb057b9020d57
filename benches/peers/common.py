"""Shared parts of the Python peers: the task, the read_file tool, argument parsing and the
JSON report every peer prints (the same fields as `reagent-bench run-once`).

Each peer is run by benches/bench.py as its own child process, so the process CPU time and
peak RSS the driver reads with wait4() are that peer's alone. Inside, [`main`] first makes a
one-file warm-up run (lazy imports, first connection), then measures the run itself: CPU time
(time.process_time(), all threads), wall time, and the chat requests and bytes the scripted
server received meanwhile (its GET /bench/stats), leaving out interpreter start-up and imports.
"""

import argparse
import json
import os
import sys
import time
import urllib.request

# Must match reagent_bench::workload::TASK.
TASK = (
    "Read the files f0000.txt, f0001.txt and so on, one at a time, with the read_file tool, "
    "until told to stop, then say how many you read."
)

READ_FILE_DESCRIPTION = "Read a text file in the workspace and return its text."


class Workspace:
    """The read_file tool: text of a file inside the workspace (paths may not leave it)."""

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.calls = 0
        self.failed = 0

    def read_file(self, path):
        self.calls += 1
        text = self._read(path)
        if text.startswith("error: "):
            self.failed += 1
        return text

    def _read(self, path):
        full = os.path.realpath(os.path.join(self.root, path))
        if full != self.root and not full.startswith(self.root + os.sep):
            return f"error: {path} is outside the workspace"
        try:
            with open(full, encoding="utf-8") as f:
                return f.read()
        except (OSError, UnicodeDecodeError) as e:
            return f"error: {path}: {e}"


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--url", required=True, help="scripted server base URL")
    p.add_argument("--workspace", required=True)
    p.add_argument("--iterations", type=int, required=True, help="files to read")
    return p.parse_args()


def model_name(iterations):
    """The scripted server's plan is carried by the model name (see workload.rs)."""
    return f"bench-{iterations}"


def expected_answer(iterations):
    return f"I read {iterations} files."


def server_stats(url):
    with urllib.request.urlopen(url.rstrip("/") + "/bench/stats", timeout=30) as r:
        return json.load(r)


def main(agent, build):
    """Warm up, run once measured, print the JSON report and exit 1 unless the run read every
    file and then gave the expected answer. `build(url, workspace, iterations)` sets the agent
    up (client, graph, tools: not measured, as reagent builds its agent before the run) and
    returns the run, a function returning `(answer, model_calls)`; an exception is reported as
    the run's error."""
    args = parse_args(agent)
    out = {"agent": agent, "outcome": "incomplete", "iterations": 0, "tool_calls": 0}
    try:
        warm = Workspace(args.workspace)
        answer, _ = build(args.url, warm, 1)()
        if warm.calls != 1 or expected_answer(1) not in str(answer):
            raise RuntimeError(f"the warm-up run did not complete: {answer!r}")
        ws = Workspace(args.workspace)
        run = build(args.url, ws, args.iterations)
        before = server_stats(args.url)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        answer, calls = run()
        cpu1, wall1 = time.process_time(), time.perf_counter()
        after = server_stats(args.url)
        complete = (
            ws.calls == args.iterations
            and ws.failed == 0
            and expected_answer(args.iterations) in str(answer)
        )
        out.update(
            outcome="completed" if complete else "incomplete",
            iterations=calls,
            tool_calls=ws.calls,
            failed_tool_calls=ws.failed,
            answer=str(answer)[:200],
            wall_ms=(wall1 - wall0) * 1e3,
            run_cpu_ms=(cpu1 - cpu0) * 1e3,
            chat_requests=after["chat_requests"] - before["chat_requests"],
            chat_bytes=after["chat_bytes"] - before["chat_bytes"],
        )
    except Exception as e:  # reported, never hidden: the driver fails the run
        out["error"] = f"{type(e).__name__}: {e}"
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    sys.exit(0 if out["outcome"] == "completed" else 1)
