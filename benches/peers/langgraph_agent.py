"""Peer 2: LangGraph's prebuilt ReAct agent (`create_react_agent`) over `langchain-ollama`'s
ChatOllama, with a read_file tool."""

import warnings

warnings.filterwarnings("ignore")

import common

from langchain_core.tools import StructuredTool
from langchain_ollama import ChatOllama
from langgraph.prebuilt import create_react_agent


def build(url, ws, iterations):
    def read_file(path: str) -> str:
        return ws.read_file(path)

    tool = StructuredTool.from_function(read_file, name="read_file", description=common.READ_FILE_DESCRIPTION)
    llm = ChatOllama(model=common.model_name(iterations), base_url=url)
    agent = create_react_agent(llm, [tool])

    def run():
        state = agent.invoke(
            {"messages": [("user", common.TASK)]},
            config={"recursion_limit": 2 * iterations + 10},
        )
        msgs = state["messages"]
        return msgs[-1].content, sum(1 for m in msgs if m.type == "ai")

    return run


if __name__ == "__main__":
    common.main("LangGraph create_react_agent", build)
