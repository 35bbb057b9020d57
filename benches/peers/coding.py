"""Peers on the coding suite (issue 25): the seed-style loop, LangGraph's prebuilt ReAct agent
and smolagents' ToolCallingAgent run the tasks of a coding suite (evals/coding-tasks*.toml)
against the same OpenAI-compatible model server reagent uses (the embedded llama-server,
`--jinja`), with equivalent tools (read_file, write_file, edit_file, list_directory,
run_command), in a fresh copy of each task's files, and are judged by the suite's own checks
(the same rules as reagent-eval: command checks with `sh -c` in the workspace, exit 0;
answer checks case-insensitive, a word or number matched whole). Prints a side-by-side table
(and reagent's column too, given a `reagent eval` result file) and writes the runs as JSON.

    python benches/peers/coding.py --suite evals/coding-tasks-heldout.toml \
        --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder:0.5b \
        --task h-fix-max --task h-run-product --reagent result.json --out peers.json

Run it with the peers' venv (benches/requirements.txt). Each task runs in this process, one
after another; a run is bounded by --max-steps model calls and --max-time seconds (checked
between steps) and each model call by --timeout.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

SYSTEM = (
    "You are a coding assistant working in a small project directory. Use the tools to read, "
    "change and run files there, then answer briefly."
)
OUTPUT_CAP = 8000
COMMAND_TIMEOUT = 60
CHECK_TIMEOUT = 120


class Tools:
    """The coding tools every peer gets, confined to one workspace. Counts calls and failures."""

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.calls = 0
        self.failed = 0
        self.log = []

    def _path(self, path):
        full = os.path.realpath(os.path.join(self.root, path or "."))
        if full != self.root and not full.startswith(self.root + os.sep):
            raise ValueError(f"{path} is outside the workspace")
        return full

    def call(self, name, args):
        """Run tool `name` with the argument dict `args`; the result text (errors start with
        `error:`)."""
        self.calls += 1
        try:
            fn = getattr(self, "t_" + name, None)
            if fn is None:
                raise ValueError(f"unknown tool {name}; the tools are {', '.join(TOOL_NAMES)}")
            out = fn(**(args or {}))
        except Exception as e:  # the model sees the error, as reagent's tools report it
            out = f"error: {e}"
        if out.startswith("error:"):
            self.failed += 1
        self.log.append(f"{name} {json.dumps(args)[:200]} -> {out.splitlines()[0][:120] if out else ''}")
        return out[:OUTPUT_CAP]

    def t_read_file(self, path):
        with open(self._path(path), encoding="utf-8", errors="replace") as f:
            return f.read()

    def t_write_file(self, path, content):
        full = self._path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(content)
        return f"wrote {len(content)} bytes to {path}"

    def t_edit_file(self, path, old_string, new_string):
        full = self._path(path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        n = text.count(old_string)
        if n != 1:
            raise ValueError(f"old_string occurs {n} times in {path} (must be exactly once)")
        with open(full, "w", encoding="utf-8") as f:
            f.write(text.replace(old_string, new_string, 1))
        return f"edited {path}"

    def t_list_directory(self, path="."):
        full = self._path(path)
        return "\n".join(sorted(e + ("/" if os.path.isdir(os.path.join(full, e)) else "") for e in os.listdir(full)))

    def t_run_command(self, command):
        p = subprocess.run(["sh", "-c", command], cwd=self.root, capture_output=True, text=True,
                           timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
        return f"exit code {p.returncode}\n{p.stdout}{p.stderr}"


def prop(description):
    return {"type": "string", "description": description}


TOOL_SPECS = [
    ("read_file", "Read a text file in the workspace.", {"path": prop("File path relative to the workspace")}),
    ("write_file", "Write a file in the workspace (created or replaced).",
     {"path": prop("File path relative to the workspace"), "content": prop("The whole new text of the file")}),
    ("edit_file", "Replace one exact occurrence of old_string by new_string in a file.",
     {"path": prop("File path relative to the workspace"), "old_string": prop("Text to replace (exactly once in the file)"),
      "new_string": prop("Replacement text")}),
    ("list_directory", "List a directory of the workspace.", {"path": prop("Directory relative to the workspace, . for the top")}),
    ("run_command", "Run a shell command in the workspace; returns its exit code and output.",
     {"command": prop("The command line")}),
]
TOOL_NAMES = [name for name, _, _ in TOOL_SPECS]


def openai_tools():
    return [{"type": "function", "function": {"name": n, "description": d,
             "parameters": {"type": "object", "properties": p, "required": list(p)}}} for n, d, p in TOOL_SPECS]


# --- the peers ------------------------------------------------------------------------------

def seed_calls(msg):
    """The seed loop's three layers: native tool calls; else one JSON object in the text; else
    <tool_call> tags. (name, arguments) pairs."""
    if msg.tool_calls:
        out = []
        for tc in msg.tool_calls:
            try:
                args = json.loads(tc.function.arguments or "{}")
            except json.JSONDecodeError:
                args = {}
            out.append((tc.function.name, args))
        return out
    text = msg.content or ""

    def from_json(s):
        try:
            v = json.loads(s.strip())
        except json.JSONDecodeError:
            return None
        if not isinstance(v, dict) or not isinstance(v.get("name"), str):
            return None
        a = v.get("arguments", v.get("parameters", {}))
        if isinstance(a, str):
            try:
                a = json.loads(a)
            except json.JSONDecodeError:
                return None
        return (v["name"], a) if isinstance(a, dict) else None

    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        call = from_json(text[i:j + 1])
        if call:
            return [call]
    return [c for c in (from_json(b) for b in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.S)) if c]


def run_seed(cfg, tools, prompt, deadline):
    from openai import OpenAI
    client = OpenAI(base_url=cfg.base_url, api_key="none", timeout=cfg.timeout, max_retries=0)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    for step in range(1, cfg.max_steps + 1):
        r = client.chat.completions.create(model=cfg.model, messages=messages, tools=openai_tools(),
                                           temperature=cfg.temperature, seed=cfg.seed,
                                           max_tokens=cfg.max_tokens)
        msg = r.choices[0].message
        tokens = r.usage.total_tokens if r.usage else 0
        cfg.tokens += tokens
        calls = seed_calls(msg)
        if not calls:
            return msg.content or "", step
        messages.append({"role": "assistant", "content": msg.content or ""})
        results = [f"{name}: {tools.call(name, args)}" for name, args in calls]
        messages.append({"role": "user", "content": "Tool results:\n" + "\n\n".join(results)})
        if time.monotonic() > deadline:
            return "", step
    return "", cfg.max_steps


def lc_tools(tools):
    from langchain_core.tools import StructuredTool

    def make(name, description, params):
        def fn(**kwargs):
            return tools.call(name, kwargs)
        from pydantic import create_model
        schema = create_model(name + "_args", **{k: (str, ...) for k in params})
        return StructuredTool.from_function(fn, name=name, description=description, args_schema=schema)

    return [make(n, d, p) for n, d, p in TOOL_SPECS]


def run_langgraph(cfg, tools, prompt, deadline):
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent
    llm = ChatOpenAI(model=cfg.model, base_url=cfg.base_url, api_key="none", temperature=cfg.temperature,
                     seed=cfg.seed, timeout=cfg.timeout, max_retries=0, max_tokens=cfg.max_tokens)
    agent = create_react_agent(llm, lc_tools(tools), prompt=SYSTEM)
    state = agent.invoke({"messages": [("user", prompt)]}, config={"recursion_limit": 2 * cfg.max_steps + 1})
    msgs = state["messages"]
    for m in msgs:
        usage = getattr(m, "usage_metadata", None)
        if usage:
            cfg.tokens += usage.get("total_tokens", 0)
    return str(msgs[-1].content), sum(1 for m in msgs if m.type == "ai")


def run_smolagents(cfg, tools, prompt, deadline):
    from smolagents import LiteLLMModel, Tool, ToolCallingAgent
    from smolagents.monitoring import LogLevel

    def make(name, description, params):
        attrs = {
            "name": name,
            "description": description,
            "inputs": {k: {"type": "string", "description": v["description"]} for k, v in params.items()},
            "output_type": "string",
        }
        src = f"def forward(self, {', '.join(params)}):\n    return self.tools.call({name!r}, {{{', '.join(f'{k!r}: {k}' for k in params)}}})\n"
        ns = {}
        exec(src, ns)  # smolagents checks forward's signature against `inputs`
        attrs["forward"] = ns["forward"]
        cls = type("T_" + name, (Tool,), attrs)
        t = cls()
        t.tools = tools
        return t

    model = LiteLLMModel(model_id="openai/" + cfg.model, api_base=cfg.base_url, api_key="none",
                         temperature=cfg.temperature, seed=cfg.seed, timeout=cfg.timeout,
                         max_tokens=cfg.max_tokens)
    agent = ToolCallingAgent(tools=[make(n, d, p) for n, d, p in TOOL_SPECS], model=model,
                             max_steps=cfg.max_steps, verbosity_level=LogLevel.OFF)
    answer = agent.run(prompt)
    for s in agent.memory.steps:
        usage = getattr(s, "token_usage", None)
        if usage is not None:
            cfg.tokens += getattr(usage, "total_tokens", 0)
    return str(answer), len(agent.memory.steps) - 1


PEERS = {"seed": run_seed, "langgraph": run_langgraph, "smolagents": run_smolagents}
LABELS = {"seed": "seed-style loop", "langgraph": "LangGraph create_react_agent",
          "smolagents": "smolagents ToolCallingAgent", "reagent": "reagent"}


# --- the suite and its checks (the rules of reagent-eval's check.rs) --------------------------

def answer_contains(answer, needle):
    hay, needle = answer.lower(), needle.lower()
    if not needle:
        return False
    word = lambda c: c is not None and c.isalnum()
    sw, ew = word(needle[0]), word(needle[-1])
    start = 0
    while (i := hay.find(needle, start)) >= 0:
        before = hay[i - 1] if i > 0 else None
        j = i + len(needle)
        after = hay[j] if j < len(hay) else None
        if not ((sw and word(before)) or (ew and word(after))):
            return True
        start = i + 1
    return False


def check(c, answer, ws):
    """(description, passed)."""
    if "answer_contains" in c:
        return f"answer contains {c['answer_contains']!r}", answer_contains(answer, c["answer_contains"])
    if "answer_lacks" in c:
        return f"answer lacks {c['answer_lacks']!r}", not answer_contains(answer, c["answer_lacks"])
    if "file_exists" in c:
        return f"{c['file_exists']} exists", os.path.lexists(os.path.join(ws, c["file_exists"]))
    for key, want in (("file_contains", True), ("file_lacks", False)):
        if key in c:
            path, text = c[key]["path"], c[key]["text"]
            try:
                with open(os.path.join(ws, path), encoding="utf-8", errors="replace") as f:
                    return f"{key} {path}", (text in f.read()) == want
            except OSError:
                return f"{key} {path}", False
    if "command" in c:
        try:
            p = subprocess.run(["sh", "-c", c["command"]], cwd=ws, capture_output=True,
                               timeout=CHECK_TIMEOUT, stdin=subprocess.DEVNULL)
            return f"command {c['command']}", p.returncode == 0
        except subprocess.TimeoutExpired:
            return f"command {c['command']}", False
    raise ValueError(f"unknown check {c}")


def prepare(task):
    ws = tempfile.mkdtemp(prefix="peer-coding-")
    for path, content in task.get("files", {}).items():
        full = os.path.join(ws, path)
        if path.endswith("/"):
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(content)
    return ws


def run_task(cfg, peer, task):
    ws = prepare(task)
    tools = Tools(ws)
    cfg.tokens = 0
    out = {"peer": peer, "task": task["id"], "category": task["category"], "seed": cfg.seed}
    t0 = time.perf_counter()
    try:
        answer, steps = PEERS[peer](cfg, tools, task["prompt"], time.monotonic() + cfg.max_time)
        out["error"] = None
    except Exception as e:  # a peer's crash or limit is its run's failure, reported
        answer, steps = "", None
        out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    out["wall_ms"] = round((time.perf_counter() - t0) * 1000)
    checks = [check(c, answer, ws) for c in task["checks"]]
    out.update(passed=all(ok for _, ok in checks), model_calls=steps, tool_calls=tools.calls,
               failed_tool_calls=tools.failed, tokens=cfg.tokens, answer=answer[:300],
               checks=[{"check": d, "passed": ok} for d, ok in checks], calls=tools.log)
    shutil.rmtree(ws, ignore_errors=True)
    return out


# --- the report ----------------------------------------------------------------------------

def reagent_runs(path):
    """The runs of a `reagent eval` result file, in this script's shape."""
    with open(path, encoding="utf-8") as f:
        r = json.load(f)
    return [{"peer": "reagent", "task": x["task"], "category": x["category"], "seed": x["seed"],
             "passed": x["passed"], "wall_ms": x["wall_ms"], "model_calls": x["iterations"],
             "tool_calls": x["tool_calls"], "tokens": x["prompt_tokens"] + x["completion_tokens"]}
            for x in r["runs"]]


def table(runs, agents, tasks):
    lines = []
    head = f"| task | kind | " + " | ".join(LABELS.get(a, a) for a in agents) + " |"
    lines += [head, "|" + "---|" * (2 + len(agents))]
    for t in tasks:
        cells = []
        for a in agents:
            rs = [r for r in runs if r["peer"] == a and r["task"] == t["id"]]
            if not rs:
                cells.append("-")
                continue
            passed = sum(r["passed"] for r in rs)
            wall = sum(r["wall_ms"] for r in rs) / len(rs) / 1000
            cells.append(f"{passed}/{len(rs)} ({wall:.0f} s)")
        lines.append(f"| {t['id']} | {t['category']} | " + " | ".join(cells) + " |")
    totals = []
    for a in agents:
        rs = [r for r in runs if r["peer"] == a]
        passed = sum(r["passed"] for r in rs)
        wall = sum(r["wall_ms"] for r in rs) / 1000
        tok = sum(r.get("tokens") or 0 for r in rs)
        per = f", {wall / passed:.0f} s and {tok / passed:.0f} tok per finished task" if passed else ""
        totals.append(f"**{passed}/{len(rs)}**{per}" if rs else "-")
    lines.append("| overall | | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", required=True)
    p.add_argument("--base-url", required=True, help="OpenAI-compatible base URL (ends in /v1)")
    p.add_argument("--model", required=True, help="the model name the server answers to")
    p.add_argument("--task", action="append", default=[], help="task id (repeatable; default: all)")
    p.add_argument("--peers", default="seed,langgraph,smolagents")
    p.add_argument("--samples", type=int, default=1, help="runs per task, seeds 1..=N")
    p.add_argument("--temperature", type=float, default=0.2, help="reagent's qwen2.5-coder profile uses 0.2")
    p.add_argument("--max-steps", type=int, default=10)
    p.add_argument("--max-tokens", type=int, default=384, help="per reply, as reagent eval --num-predict")
    p.add_argument("--max-time", type=float, default=300)
    p.add_argument("--timeout", type=float, default=240)
    p.add_argument("--reagent", help="a `reagent eval` result file to show beside the peers")
    p.add_argument("--out", help="write every run as JSON here")
    cfg = p.parse_args()
    with open(cfg.suite, "rb") as f:
        suite = tomllib.load(f)
    tasks = suite["task"]
    if cfg.task:
        unknown = set(cfg.task) - {t["id"] for t in tasks}
        if unknown:
            sys.exit(f"{cfg.suite}: no task with id {', '.join(sorted(unknown))}")
        tasks = [t for t in tasks if t["id"] in cfg.task]
    peers = [x for x in cfg.peers.split(",") if x]
    for x in peers:
        if x not in PEERS:
            sys.exit(f"--peers: unknown peer {x} (known: {', '.join(PEERS)})")
    runs = []

    def save(all_runs):
        if cfg.out:
            with open(cfg.out, "w", encoding="utf-8") as f:
                json.dump({"suite": cfg.suite, "model": cfg.model, "base_url": cfg.base_url,
                           "temperature": cfg.temperature, "max_steps": cfg.max_steps,
                           "max_tokens": cfg.max_tokens, "runs": all_runs}, f, indent=1)

    for peer in peers:
        for t in tasks:
            for seed in range(1, cfg.samples + 1):
                cfg.seed = seed
                r = run_task(cfg, peer, t)
                runs.append(r)
                print(f"{peer:<11} {t['id']:<24} seed {seed}: {'pass' if r['passed'] else 'FAIL'} "
                      f"({r['model_calls']} calls, {r['tool_calls']} tools, {r['tokens']} tok, "
                      f"{r['wall_ms'] / 1000:.1f}s){' ' + r['error'] if r['error'] else ''}",
                      file=sys.stderr, flush=True)
                save(runs)  # after each run, so a stopped benchmark keeps what it measured
    agents = list(peers)
    if cfg.reagent:
        ids = {t["id"] for t in tasks}
        runs += [r for r in reagent_runs(cfg.reagent) if r["task"] in ids]
        agents = ["reagent"] + agents
    save(runs)
    print(table(runs, agents, tasks))


if __name__ == "__main__":
    main()
