// Drives `zest serve DIR` with the official TypeScript SDK client.
// Usage: node ts_workspace.mjs <zest-binary> serve <dir>       (stdio: spawns the server)
//        node ts_workspace.mjs --url URL                       (Streamable HTTP)
// Reads notes.txt of the workspace by tool and as a resource, refuses an escape; prints one
// JSON line with what it saw and exits 0 only if every check passed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });
const transport =
  argv[0] === "--url"
    ? new StreamableHTTPClientTransport(new URL(argv[1]))
    : new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: "ignore" });
const client = new Client({ name: "ts-workspace", version: "1.0.0" });
try {
  await client.connect(transport);
  check("handshake", client.getServerVersion()?.name === "zest-workspace", client.getServerVersion());
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check("tools", ["read_file", "list_directory", "find_files", "search_text", "file_info"].every((n) => names.includes(n)), names);
  const read = await client.callTool({ name: "read_file", arguments: { path: "notes.txt", offset: 2, limit: 1 } });
  check("read_file", read.content[0].text === "beta\n", read);
  const info = await client.callTool({ name: "file_info", arguments: { path: "notes.txt" } });
  check("file_info", info.structuredContent?.size === 17, info);
  const escape = await client.callTool({ name: "read_file", arguments: { path: "../outside.txt" } });
  check("escape refused", escape.isError && escape.content[0].text.includes("not allowed"), escape);
  const { resourceTemplates } = await client.listResourceTemplates();
  check("template", resourceTemplates[0]?.uriTemplate === "file://{+path}", resourceTemplates);
  const dir = JSON.parse(info.content[0].text).path;
  check("relative path", dir === "notes.txt", info.content);
} catch (e) {
  check("no exception", false, String(e));
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify({ checks }));
process.exit(checks.every((c) => c.ok) ? 0 : 1);
