"""Drives a zest server with the Python SDK 2.x client (mcp, pinned in requirements.txt) in
2026-07-28: spawns the server command, calls the tool named by TOOL (default
test_input_required_result_elicitation) answering every elicitation with {name: "Ada"}, and
prints one JSON line: the revision and the result's text.

Usage: TOOL=name python py_v2_client.py <server-binary> [args...]
"""

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult


async def on_elicit(context, params):
    return ElicitResult(action="accept", content={"name": "Ada"})


async def main():
    tool = os.environ.get("TOOL", "test_input_required_result_elicitation")
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with Client(server, mode="auto", elicitation_callback=on_elicit) as client:
        result = await client.call_tool(tool, {})
        print(json.dumps({"revision": client.protocol_version, "text": result.content[0].text}))


anyio.run(main)
