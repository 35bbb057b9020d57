#!/usr/bin/env python3
"""How well a model writes whole-file edits as text, per form of asking (issue 25).

Asks a model on an OpenAI-compatible server (the embedded llama-server: `reagent run --provider
local --model qwen2.5-coder:1.5b` starts one; its port is in ~/.cache/reagent/run/) once per
edit task of a coding suite: the task, then every non-empty file of its workspace, asking for
each changed file whole. The reply's blocks are written into a copy of the workspace and the
suite's own command checks judge it. Prints one line per task and the total. This is the probe
behind reagent's edit turns (BENCHMARKS.md, "Edit turns"); reagent's own reader is
`crates/reagent-core/src/text_edits.rs`.

    python3 benches/edit_formats.py --base-url http://127.0.0.1:8080/v1 --form info
    python3 benches/edit_formats.py --base-url ... --form xml
    python3 benches/edit_formats.py --base-url ... --form info --offer-tools
    python3 benches/edit_formats.py --base-url ... --form info --tool-loop-prompt

Only the standard library; Python 3.11+ (tomllib).
"""

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
import tomllib
import urllib.request

EDIT_KINDS = (
    "fix_test,implement,rename_symbol,bump_version,fix_syntax,edit_config,create_structured"
)

ASK = {
    "info": "You are a coding assistant working on the files shown. To change or create a file, "
    "reply with the file's complete new content in a fenced code block whose opening line is "
    "three backticks followed by the file's path (```path/to/file). Write one block per file "
    "you change; do not write blocks for files you leave unchanged.",
    "xml": "You are a coding assistant working on the files shown. To change or create a file, "
    'reply with the file\'s complete new content as <file path="path/to/file">...</file>. '
    "Write one such element per file you change; do not repeat files you leave unchanged.",
}

# reagent's tool-loop system prompt (without the file list), for --tool-loop-prompt.
TOOL_LOOP_PROMPT = (
    "You are reagent, an agent that completes tasks in a workspace directory by using tools. "
    "Paths are relative to the workspace. Act, do not narrate: use a tool whenever you need "
    "information or want to change something. Read files before editing them. When the task is "
    "done, call task_complete with a short summary, or answer in plain text."
)


def tool(name, description, properties):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": "string"} for p in properties},
                "required": list(properties),
            },
        },
    }


TOOLS = [
    tool("read_file", "Read a text file of the workspace.", ["path"]),
    tool("write_file", "Write a whole file (creates or replaces it).", ["path", "content"]),
    tool(
        "edit_file",
        "Replace old_text by new_text in a file (old_text must occur exactly once).",
        ["path", "old_text", "new_text"],
    ),
    tool("run_command", "Run a shell command in the workspace.", ["command"]),
    tool("task_complete", "End the task with a summary.", ["summary"]),
]

PATH = re.compile(r"[#/ ]*([\w./-]+\.\w+):?")


def ask(base_url, messages, offer_tools):
    body = {"model": "any", "messages": messages, "temperature": 0, "seed": 1, "max_tokens": 768}
    if offer_tools:
        body["tools"] = TOOLS
    request = urllib.request.Request(
        f"{base_url.rstrip('/')}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        reply = json.load(response)
    return reply["choices"][0]["message"].get("content") or ""


def blocks(reply, files):
    """(path or None, content) of each fenced block and <file> element of the reply."""
    lines = reply.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if not lines[i].strip().startswith("```"):
            i += 1
            continue
        info = lines[i].strip()[3:].strip()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        body = "\n".join(lines[i + 1 : j]) + "\n"
        path = next((w for w in info.replace(":", " ").split() if "." in w), None)
        first = PATH.fullmatch(body.split("\n", 1)[0].strip())
        if path is None and first:
            path, body = first.group(1), body.split("\n", 1)[1]
        for name, text in files.items():
            if path is None and text.strip() == body.strip():
                path = name
        if path is None and i > 0:
            before = re.search(r"([\w./-]+\.\w+)", lines[i - 1].strip().strip("*`#: "))
            path = before.group(1) if before else None
        out.append((path, body))
        i = j + 1
    for m in re.finditer(r'<file path="([^"]+)">\n?(.*?)</file>', reply, re.S):
        out.append((m.group(1), m.group(2)))
    return out


def show(files, form):
    shown = [(p, t) for p, t in files.items() if t.strip()]
    if form == "xml":
        return "".join(f'\n<file path="{p}">\n{t}</file>\n' for p, t in shown)
    return "".join(f"\n```{p}\n{t}```\n" for p, t in shown)


def run_task(task, args):
    files = task.get("files", {})
    workspace = tempfile.mkdtemp(prefix="edit-formats-")
    for path, text in files.items():
        full = os.path.join(workspace, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    user = task["prompt"] + "\n\nThe files:\n" + show(files, args.form)
    system = ASK[args.form]
    if args.tool_loop_prompt:
        user, system = user + "\n" + system, TOOL_LOOP_PROMPT
    started = time.time()
    reply = ask(
        args.base_url,
        [{"role": "system", "content": system}, {"role": "user", "content": user}],
        args.offer_tools,
    )
    found = blocks(reply, files)
    named = [p for p in files if p in task["prompt"]]
    words = [w.strip('.,`"') for w in task["prompt"].split()]
    new = [w for w in words if re.fullmatch(r"[\w/-]+\.\w+", w) and w not in files]
    written = []
    for path, body in found:
        if path is None and len(found) == 1:
            path = (named or new or [None])[0] if len(named) == 1 or not named else None
        if path is None or files.get(path, "").strip() == body.strip():
            continue
        full = os.path.join(workspace, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(body)
        written.append(path)
    passed = all(
        subprocess.run(c["command"], shell=True, cwd=workspace, capture_output=True).returncode
        == 0
        for c in task["checks"]
        if "command" in c
    )
    return passed, time.time() - started, written, reply


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--suite", default="evals/coding-tasks-heldout.toml")
    parser.add_argument("--kinds", default=EDIT_KINDS, help="task categories, comma-separated")
    parser.add_argument("--form", choices=sorted(ASK), default="info")
    parser.add_argument("--offer-tools", action="store_true", help="send five tool schemas too")
    parser.add_argument(
        "--tool-loop-prompt",
        action="store_true",
        help="reagent's tool-loop system prompt, the ask appended to the user message",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print failed replies")
    args = parser.parse_args()
    with open(args.suite, "rb") as f:
        suite = tomllib.load(f)
    kinds = args.kinds.split(",")
    total = passed_count = 0
    for task in suite["task"]:
        if task["category"] not in kinds:
            continue
        passed, seconds, written, reply = run_task(task, args)
        total += 1
        passed_count += passed
        print(f"{task['id']:24} {'PASS' if passed else 'fail'} {seconds:5.1f}s wrote={written}")
        if args.verbose and not passed:
            print(reply[:800])
    print(f"{passed_count}/{total}")


if __name__ == "__main__":
    main()
