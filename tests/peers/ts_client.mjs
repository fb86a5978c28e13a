// Drives a zest stdio server with the official TypeScript SDK client.
// Usage: node ts_client.mjs <server-binary> [args...]
// Prints one JSON line with what it saw; exits 0 only if every check passed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });

const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
// Progress as sent on the wire. The SDK dispatches notifications a microtask later than
// responses, so a last progress report read in the same chunk as its response never reaches
// `onprogress` (typescript-sdk#2580, "a race servers cannot avoid"); the wire count is exact.
const wireProgress = [];
transport.onmessage = (m) => {
  if (m.method === "notifications/progress") wireProgress.push(m.params.progress);
};
const client = new Client({ name: "ts-peer", version: "1.0.0" });
try {
  await client.connect(transport);
  check("handshake", client.getServerVersion()?.name, client.getServerVersion());
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check("list tools", ["add", "echo", "fail", "long_running"].every((n) => names.includes(n)), names);
  const echo = await client.callTool({ name: "echo", arguments: { text: "hi from ts" } });
  check("call echo", echo.content?.[0]?.text === "hi from ts", echo);
  const add = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  check("call add", add.content?.[0]?.text === "42", add);
  const progress = [];
  const slow = await client.callTool(
    { name: "long_running", arguments: { steps: 3, step_ms: 10 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  check(
    "progress",
    // The wire count is exact; what `onprogress` saw must be a prefix of it (under load the
    // SDK race above can swallow any report that shares a chunk with the response).
    wireProgress.join() === "1,2,3" &&
      progress.join() === wireProgress.slice(0, progress.length).join() &&
      !slow.isError,
    { wireProgress, progress, slow },
  );
  const fail = await client.callTool({ name: "fail", arguments: { message: "boom" } });
  check("error result", fail.isError === true && fail.content?.[0]?.text.includes("boom"), fail);
  const bad = await client.callTool({ name: "add", arguments: { a: "x" } });
  check("invalid arguments are an error result", bad.isError === true, bad);
} catch (e) {
  check("no exception", false, String(e?.stack ?? e));
} finally {
  await client.close().catch(() => {});
}
const ok = checks.every((c) => c.ok);
console.log(JSON.stringify({ ok, checks }));
process.exit(ok ? 0 : 1);
