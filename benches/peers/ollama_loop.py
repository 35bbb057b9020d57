"""Peer 1: the plain agent loop written with Ollama's official Python client (`ollama`):
Client.chat with the tool schema, tool results fed back as role "tool", until the model
answers without tool calls."""

import common

import ollama

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": common.READ_FILE_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "File path relative to the workspace"}},
                "required": ["path"],
            },
        },
    }
]


def build(url, ws, iterations):
    client = ollama.Client(host=url)
    return lambda: run(client, ws, iterations)


def run(client, ws, iterations):
    model = common.model_name(iterations)
    messages = [
        {"role": "system", "content": "You are a helpful assistant. Use the tools to do the task."},
        {"role": "user", "content": common.TASK},
    ]
    for calls in range(1, iterations + 6):
        msg = client.chat(model=model, messages=messages, tools=TOOLS).message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content, calls
        for tc in msg.tool_calls:
            if tc.function.name == "read_file":
                result = ws.read_file(**tc.function.arguments)
            else:
                result = f"error: unknown tool {tc.function.name}"
            messages.append({"role": "tool", "content": result, "tool_name": tc.function.name})
    return None, iterations + 5


if __name__ == "__main__":
    common.main("ollama-client loop", build)
