"""Drives `zest serve DIR` (directly or through `zest bridge`) with the official Python SDK
client (mcp).

Usage: python py_workspace.py <zest-binary> serve <dir>   (stdio: spawns the server)
       python py_workspace.py --url URL                   (Streamable HTTP)
Reads notes.txt of the workspace by tool and as a resource, sees an escape refused; prints
one JSON line with what it saw and exits 0 only if every check passed.
"""

import asyncio
import json
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

checks = []


def check(name, ok, detail=None):
    checks.append({"name": name, "ok": bool(ok), "detail": detail})


@asynccontextmanager
async def connect(argv):
    """The (read, write) streams of the transport the arguments name."""
    if argv[0] == "--url":
        async with streamable_http_client(argv[1]) as streams:
            yield streams[0], streams[1]
        return
    async with stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])) as streams:
        yield streams[0], streams[1]


async def main(argv):
    try:
        async with connect(argv) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                check("handshake", init.server_info.name == "zest-workspace", init.server_info.name)
                tools = [t.name for t in (await session.list_tools()).tools]
                check("tools", "read_file" in tools and "search_text" in tools, tools)
                read = await session.call_tool("read_file", {"path": "notes.txt", "offset": 2, "limit": 1})
                check("read_file", read.content[0].text == "beta\n", str(read))
                escape = await session.call_tool("read_file", {"path": "../outside.txt"})
                check("escape refused", escape.is_error and "not allowed" in escape.content[0].text, str(escape))
                templates = (await session.list_resource_templates()).resource_templates
                check("template", templates and templates[0].uri_template == "file://{+path}", str(templates))
    except Exception as e:  # noqa: BLE001 - any failure is a failed check
        check("no exception", False, repr(e))
    print(json.dumps({"checks": checks}))
    return 0 if checks and all(c["ok"] for c in checks) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
