"""The zest fixture (docs/runtime-contract.md) written with the official Python SDK (mcp),
served over Streamable HTTP at /mcp on 127.0.0.1, for zest's clients to drive.

Usage: python py_server.py [--port P]   (default 0: a free port)
Once the socket listens, prints its MCP endpoint URL as the first line on stdout; connections
made from then on wait in the backlog until the server accepts them. A closed stdin, SIGTERM
or Ctrl-C stops it.
"""

import socket
import sys
from typing import Annotated

import anyio
import uvicorn
from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CreateMessageResult, SamplingMessage, TextContent

server = MCPServer("py_server", version="1.0")


@server.tool(description="Returns the text it is given")
def echo(text: str) -> str:
    return text


@server.tool(description="Adds two numbers")
def add(a: float, b: float) -> str:
    total = a + b
    return str(int(total)) if total.is_integer() else str(total)


@server.tool(description="Sleeps in steps, reporting progress and logging")
async def long_running(ctx: Context, steps: int = 5, step_ms: int = 100) -> str:
    for i in range(1, steps + 1):
        await anyio.sleep(step_ms / 1000)
        await ctx.report_progress(i, steps)
        await ctx.info(f"step {i} of {steps}")
    return f"done after {steps} steps"


@server.tool(description="Asks the client's model")
async def sample(ctx: Context, prompt: str) -> str:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    result = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
    return result.content.text


class Name(BaseModel):
    name: str


async def ask_for_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool(description="Asks the user's name (elicitation in either era)")
async def ask_name(who: Annotated[Name, Resolve(ask_for_name)]) -> str:
    return f"hello {who.name}"


async def ask_the_model() -> Sample:
    question = SamplingMessage(role="user", content=TextContent(type="text", text="What is the capital of France?"))
    return Sample([question], max_tokens=20)


@server.tool(description="Asks the client's model (sampling in either era)")
async def ask_model(answer: Annotated[CreateMessageResult, Resolve(ask_the_model)]) -> str:
    return f"model says {answer.content.text}"


@server.tool(description="Returns an error result")
def fail(message: str) -> str:
    raise ToolError(message)


@server.resource("zest://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    return "The zest fixture, in Python: tools, a resource, a template and a prompt."


@server.resource("zest://items/{id}", name="item", mime_type="text/plain")
def item(id: str) -> str:
    return f"item {id}"


@server.prompt(description="Greets someone")
def greet(name: str) -> str:
    return f"Hello, {name}!"


async def main(port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    app = server.streamable_http_app(host="127.0.0.1")
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)

    async def stop_when_stdin_closes():
        await anyio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
        web.should_exit = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_when_stdin_closes)
        await web.serve(sockets=[sock])
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    args = sys.argv[1:]
    port = int(args[args.index("--port") + 1]) if "--port" in args else 0
    anyio.run(main, port)
