"""Drives a zest fixture server with the official Python SDK client (mcp).

Usage: python py_client.py <server-binary> [args...]            (stdio: spawns the server)
       python py_client.py --url URL --transport streamable|sse  (HTTP: a running server)
Prints one JSON line with what it saw; exits 0 only if every check passed.
"""

import asyncio
import json
import sys
from contextlib import asynccontextmanager

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

checks = []


def check(name, ok, detail=None):
    checks.append({"name": name, "ok": bool(ok), "detail": detail})


def text_of(result):
    return result.content[0].text if result.content else None


@asynccontextmanager
async def connect(argv):
    """The (read, write) streams of the transport the arguments name."""
    if argv[0] != "--url":
        async with stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])) as streams:
            yield streams[0], streams[1]
        return
    if len(argv) != 4 or argv[2] != "--transport":
        raise ValueError(f"expected --url URL --transport streamable|sse, got {argv}")
    url, kind = argv[1], argv[3]
    if kind == "streamable":
        async with streamable_http_client(url) as streams:
            yield streams[0], streams[1]
    elif kind == "sse":
        async with sse_client(url) as streams:
            yield streams[0], streams[1]
    else:
        raise ValueError(f"unknown transport {kind} (streamable or sse)")


async def main(argv):
    logs = []
    sampled = []

    async def on_log(params):
        logs.append(params.data)

    async def on_sampling(context, params):
        asked = " ".join(m.content.text for m in params.messages)
        sampled.append(asked)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"py model: {asked}"), model="py"
        )

    async with connect(argv) as (read, write):
        async with ClientSession(read, write, sampling_callback=on_sampling, logging_callback=on_log) as session:
            init = await session.initialize()
            check("handshake", init.server_info.name, init.server_info.name)
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            check("list tools", {"add", "echo", "fail", "long_running"} <= set(names), names)
            echo = await session.call_tool("echo", {"text": "hi from python"})
            check("call echo", text_of(echo) == "hi from python", text_of(echo))
            add = await session.call_tool("add", {"a": 2, "b": 40})
            check("call add", text_of(add) == "42", text_of(add))
            await session.set_logging_level("info")
            progress = []

            async def on_progress(value, total, message):
                progress.append(value)

            slow = await session.call_tool(
                "long_running", {"steps": 3, "step_ms": 10}, progress_callback=on_progress
            )
            check("progress", progress == [1, 2, 3] and text_of(slow) == "done after 3 steps", progress)
            check("logging", logs == ["step 1 of 3", "step 2 of 3", "step 3 of 3"], logs)
            sample = await session.call_tool("sample", {"prompt": "hello"})
            check("sampling", text_of(sample) == "py model: hello" and sampled == ["hello"], text_of(sample))
            fail = await session.call_tool("fail", {"message": "boom"})
            check("error result", fail.is_error and "boom" in (text_of(fail) or ""), text_of(fail))
            resources = await session.list_resources()
            uris = [str(r.uri) for r in resources.resources]
            check("list resources", "zest://readme" in uris, uris)
            readme = (await session.read_resource("zest://readme")).contents[0]
            check("read resource", readme.mime_type == "text/plain" and "zest" in readme.text, readme.text)
            templates = await session.list_resource_templates()
            shapes = [t.uri_template for t in templates.resource_templates]
            check("list templates", shapes == ["zest://items/{id}"], shapes)
            item = (await session.read_resource("zest://items/7")).contents[0]
            check("read template", item.text == "item 7", item.text)
            prompts = await session.list_prompts()
            check("list prompts", "greet" in [p.name for p in prompts.prompts], [p.name for p in prompts.prompts])
            greet = await session.get_prompt("greet", {"name": "Ada"})
            said = greet.messages[0].content.text if greet.messages else None
            check("get prompt", said == "Hello, Ada!", said)


try:
    asyncio.run(main(sys.argv[1:]))
except Exception as e:  # report, do not hide
    check("no exception", False, repr(e))
ok = bool(checks) and all(c["ok"] for c in checks)
print(json.dumps({"ok": ok, "checks": checks}))
sys.exit(0 if ok else 1)
