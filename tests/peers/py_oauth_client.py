"""The Python SDK client with its client-credentials OAuth provider against an
OAuth-protected server: python py_oauth_client.py URL ISSUER. Prints one JSON line."""

import json
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def main(url, issuer):
    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=Memory(),
        client_id="machine",
        client_secret="machine-secret",
        scope="mcp:read",
        issuer=issuer,
    )
    async with httpx2.AsyncClient(auth=auth) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool("test_simple_text", {})
                print(json.dumps({"tools": len(tools.tools), "text": result.content[0].text}))


anyio.run(main, sys.argv[1], sys.argv[2])
