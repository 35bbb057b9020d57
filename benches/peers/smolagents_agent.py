"""Peer 3: smolagents' ToolCallingAgent with its LiteLLM model (`ollama_chat/` provider), with a
read_file tool. The scripted server ends the run by calling smolagents' final_answer tool."""

import os
import warnings

warnings.filterwarnings("ignore")
# No network at import time (LiteLLM would fetch its price list) and no telemetry.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

import common

from smolagents import LiteLLMModel, Tool, ToolCallingAgent
from smolagents.monitoring import LogLevel


class ReadFile(Tool):
    name = "read_file"
    description = common.READ_FILE_DESCRIPTION
    inputs = {"path": {"type": "string", "description": "File path relative to the workspace"}}
    output_type = "string"

    def __init__(self, ws):
        super().__init__()
        self.ws = ws

    def forward(self, path: str) -> str:
        return self.ws.read_file(path)


def build(url, ws, iterations):
    model = LiteLLMModel(model_id="ollama_chat/" + common.model_name(iterations), api_base=url)
    agent = ToolCallingAgent(
        tools=[ReadFile(ws)],
        model=model,
        max_steps=iterations + 5,
        verbosity_level=LogLevel.OFF,
    )

    def run():
        answer = agent.run(common.TASK)
        return answer, len(agent.memory.steps) - 1  # the task step is not a model call

    return run


if __name__ == "__main__":
    common.main("smolagents ToolCallingAgent", build)
