"""Drives a zest server with the Python SDK 2.x client (mcp, pinned in requirements.txt) in
2026-07-28: spawns the server command, calls the tools named in TOOLS (comma-separated;
default the fixture's elicitation and sampling input-required tools) answering every
elicitation with {name: "Ada"} and every sampling request with "Paris", and prints one JSON
line: the revision and each result's text.

Usage: TOOLS=a,b python py_v2_client.py <server-binary> [args...]
"""

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import CreateMessageResult, ElicitResult, TextContent


async def on_elicit(context, params):
    return ElicitResult(action="accept", content={"name": "Ada"})


async def on_sample(context, params):
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="Paris"), model="py-model")


async def main():
    default = "test_input_required_result_elicitation,test_input_required_result_sampling"
    tools = os.environ.get("TOOLS", default).split(",")
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    callbacks = {"elicitation_callback": on_elicit, "sampling_callback": on_sample}
    async with Client(server, mode="auto", **callbacks) as client:
        texts = []
        for tool in tools:
            result = await client.call_tool(tool, {})
            texts.append(result.content[0].text)
        print(json.dumps({"revision": client.protocol_version, "texts": texts}))


anyio.run(main)
