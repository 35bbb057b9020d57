#!/usr/bin/env python3
"""Probe what a very small model can do without reagent's loop (BENCHMARKS.md, "Small-task
success, second round"): one request per task of evals/small-tasks.toml, straight to an
OpenAI-compatible server (llama-server), temperature 0, seed 1.

    scripts/small-model-probes.py choose  URL    # can it pick the tool a task needs?
    scripts/small-model-probes.py inline  URL    # answer from the whole small workspace
    scripts/small-model-probes.py write   URL    # write files as plain text (name + fence)

`choose` asks which of six actions a task needs first (an enum-constrained answer) and counts
the picks that fit the task's category; `inline` asks the task with the workspace's files
shown in plain text (folders with their file counts, then each file with its line count) and
applies the suite's answer checks; `write` asks for the new content of each file to create or
change as a file name followed by a fenced block and applies the suite's file checks. Standard
library only.
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import urllib.request

SUITE = os.path.join(os.path.dirname(__file__), "..", "evals", "small-tasks.toml")
ACTIONS = {
    "read": "read a file",
    "write": "create a new file",
    "edit": "change text in a file",
    "list": "list the files in a folder",
    "search": "search the files for a word",
    "run": "run a shell command",
}
# The actions that fit each category's first step.
FITTING = {
    "read_answer": {"read"}, "config_lookup": {"read"}, "follow_pointer": {"read"},
    "count_lines": {"read"}, "list_directory": {"list"}, "create_file": {"write"},
    "find_word": {"search"}, "run_command": {"run"}, "replace_word": {"edit", "read"},
    "edit_two": {"edit", "read", "write"}, "subdirectory": {"read", "write", "edit"},
}
SYSTEM = "You are a helpful assistant. Answer briefly."


def ask(url, user, schema=None, max_tokens=128, system=SYSTEM):
    body = {"model": "m", "temperature": 0, "seed": 1, "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
    if schema:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "r", "schema": schema}}
    req = urllib.request.Request(url.rstrip("/") + "/v1/chat/completions",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)["choices"][0]["message"]["content"]


def workspace_text(files):
    folders = collections.defaultdict(list)
    for path in sorted(files):
        folder, _, name = path.rpartition("/")
        folders[folder].append(name)
    lines = []
    for folder, names in sorted(folders.items()):
        place = "The workspace" if not folder else f"The folder {folder}"
        lines.append(f"{place} holds {len(names)} file{'s' * (len(names) != 1)}: "
                     f"{', '.join(names)}.")
    shown = []
    for path in sorted(files):
        text = files[path].rstrip("\n")
        n = len(text.split("\n")) if text else 0
        shown.append(f"The file {path} has {n} line{'s' * (n != 1)}:\n{text}")
    return "\n".join(lines), shown


def contains(answer, needle):
    return re.search(r"(?<!\w)" + re.escape(needle.lower()) + r"(?!\w)", answer.lower()) is not None


def file_checks_hold(task, root):
    ok = True
    for check in task["checks"]:
        if "file_contains" in check:
            p = os.path.join(root, check["file_contains"]["path"])
            ok &= os.path.exists(p) and check["file_contains"]["text"] in open(p).read()
        elif "file_lacks" in check:
            p = os.path.join(root, check["file_lacks"]["path"])
            ok &= os.path.exists(p) and check["file_lacks"]["text"] not in open(p).read()
        elif "command" in check:
            ok &= subprocess.run(["sh", "-c", check["command"]], cwd=root,
                                 capture_output=True).returncode == 0
    return ok


def main():
    probe, url = sys.argv[1], sys.argv[2]
    tasks = tomllib.load(open(SUITE, "rb"))["task"]
    tally = collections.Counter()
    for task in tasks:
        files = {k: v for k, v in task.get("files", {}).items() if not k.endswith("/")}
        if probe == "choose":
            menu = "\n".join(f"- {k}: {v}" for k, v in ACTIONS.items())
            user = f"Task: {task['prompt']}\n\nWhich action does this task need first?\n{menu}\n" \
                   "Answer with one word."
            reply = ask(url, user, {"type": "string", "enum": list(ACTIONS)}, 16,
                        "You are a helpful assistant.")
            pick = reply.strip().strip('"')
            ok = pick in FITTING[task["category"]]
            tally[f"pick:{pick}"] += 1
        elif probe == "inline":
            needles = [c["answer_contains"] for c in task["checks"] if "answer_contains" in c]
            if not needles:
                continue
            overview, shown = workspace_text(files)
            reply = ask(url, "\n\n".join([task["prompt"], overview] + shown))
            ok = all(contains(reply, n) for n in needles)
        elif probe == "write":
            if any("answer_contains" in c for c in task["checks"]):
                continue
            _, shown = workspace_text(files)
            user = "\n\n".join([task["prompt"]] + shown) + \
                "\n\nWrite the complete new content of each file to create or change, as:\n" \
                "FILE: <name>\n```\n<content>\n```"
            reply = ask(url, user, max_tokens=160)
            root = tempfile.mkdtemp()
            for path, text in list(files.items()) + re.findall(
                    r"(?:FILE:\s*)?`?([\w./-]+\.\w+)`?:?\s*\n```\w*\n(.*?)```", reply, re.S):
                full = os.path.join(root, path.lstrip("/"))
                os.makedirs(os.path.dirname(full), exist_ok=True)
                open(full, "w").write(text)
            ok = file_checks_hold(task, root)
        else:
            sys.exit(f"unknown probe {probe!r}: choose, inline or write")
        tally[task["category"]] += ok
        tally["passed"] += ok
        tally["asked"] += 1
        print(f"{task['id']}\t{'yes' if ok else 'no'}\t{reply[:100]!r}", flush=True)
    print(json.dumps(dict(sorted(tally.items()))))


if __name__ == "__main__":
    main()
