"""Drives a zest stdio server with the official Python SDK client (mcp).

Usage: python py_client.py <server-binary> [args...]
Prints one JSON line with what it saw; exits 0 only if every check passed.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

checks = []


def check(name, ok, detail=None):
    checks.append({"name": name, "ok": bool(ok), "detail": detail})


def text_of(result):
    return result.content[0].text if result.content else None


async def main(command, args):
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check("handshake", init.server_info.name, init.server_info.name)
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            check("list tools", {"add", "echo", "fail", "long_running"} <= set(names), names)
            echo = await session.call_tool("echo", {"text": "hi from python"})
            check("call echo", text_of(echo) == "hi from python", text_of(echo))
            add = await session.call_tool("add", {"a": 2, "b": 40})
            check("call add", text_of(add) == "42", text_of(add))
            progress = []

            async def on_progress(value, total, message):
                progress.append(value)

            slow = await session.call_tool(
                "long_running", {"steps": 3, "step_ms": 10}, progress_callback=on_progress
            )
            check("progress", len(progress) == 3 and not slow.is_error, progress)
            fail = await session.call_tool("fail", {"message": "boom"})
            check("error result", fail.is_error and "boom" in (text_of(fail) or ""), text_of(fail))


try:
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
except Exception as e:  # report, do not hide
    check("no exception", False, repr(e))
ok = bool(checks) and all(c["ok"] for c in checks)
print(json.dumps({"ok": ok, "checks": checks}))
sys.exit(0 if ok else 1)
