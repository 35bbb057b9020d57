"""Drive an MCP server over stdio with the official Python SDK (`mcp`), as an independent
client: list its tools, call each (name, arguments) pair given on the command line, and print
one JSON object: {"tools": [...names], "calls": [{"is_error": bool, "text": str}, ...]}.

Usage: drive_server.py COMMAND_JSON CALLS_JSON
  COMMAND_JSON: ["program", "arg", ...] of the server
  CALLS_JSON:   [["tool", {arguments}], ...]
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    command = json.loads(sys.argv[1])
    calls = json.loads(sys.argv[2])
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            results = []
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                text = "".join(
                    block.text for block in result.content if getattr(block, "type", "") == "text"
                )
                results.append({"is_error": bool(result.is_error), "text": text})
            print(json.dumps({"tools": [t.name for t in listed.tools], "calls": results}))


asyncio.run(main())
