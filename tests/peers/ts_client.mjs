// Drives a zest fixture server with the official TypeScript SDK client.
// Usage: node ts_client.mjs <server-binary> [args...]            (stdio: spawns the server)
//        node ts_client.mjs --url URL --transport streamable|sse  (HTTP: a running server)
// Prints one JSON line with what it saw; exits 0 only if every check passed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });

/// The transport the arguments name.
function transportFor(argv) {
  if (argv[0] !== "--url") {
    const [command, ...args] = argv;
    return new StdioClientTransport({ command, args, stderr: "ignore" });
  }
  const [, url, flag, kind] = argv;
  if (flag !== "--transport") throw new Error(`expected --transport after the URL, got ${flag}`);
  if (kind === "streamable") return new StreamableHTTPClientTransport(new URL(url));
  if (kind === "sse") return new SSEClientTransport(new URL(url));
  throw new Error(`unknown transport ${kind} (streamable or sse)`);
}

const transport = transportFor(process.argv.slice(2));
// Progress and log records as sent on the wire. The SDK dispatches notifications a microtask
// later than responses, so a last notification read in the same chunk as its response never
// reaches its handler (typescript-sdk#2580, "a race servers cannot avoid"); the wire is exact.
const wireProgress = [];
const wireLogs = [];
transport.onmessage = (m) => {
  if (m.method === "notifications/progress") wireProgress.push(m.params.progress);
  if (m.method === "notifications/message") wireLogs.push(m.params.data);
};
const client = new Client({ name: "ts-peer", version: "1.0.0" }, { capabilities: { sampling: {} } });
const sampled = [];
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  const asked = request.params.messages.map((m) => m.content.text).join(" ");
  sampled.push(asked);
  return { role: "assistant", content: { type: "text", text: `ts model: ${asked}` }, model: "ts" };
});
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
  await client.setLoggingLevel("info");
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
      slow.content?.[0]?.text === "done after 3 steps",
    { wireProgress, progress, slow },
  );
  check("logging", wireLogs.join() === "step 1 of 3,step 2 of 3,step 3 of 3", wireLogs);
  const sample = await client.callTool({ name: "sample", arguments: { prompt: "hello" } });
  check(
    "sampling",
    sample.content?.[0]?.text === "ts model: hello" && sampled.join() === "hello",
    { sample, sampled },
  );
  const fail = await client.callTool({ name: "fail", arguments: { message: "boom" } });
  check("error result", fail.isError === true && fail.content?.[0]?.text.includes("boom"), fail);
  const bad = await client.callTool({ name: "add", arguments: { a: "x" } });
  check("invalid arguments are an error result", bad.isError === true, bad);
  const { resources } = await client.listResources();
  check("list resources", resources.some((r) => r.uri === "zest://readme"), resources);
  const readme = await client.readResource({ uri: "zest://readme" });
  check(
    "read resource",
    readme.contents?.[0]?.mimeType === "text/plain" && readme.contents[0].text?.includes("zest"),
    readme,
  );
  const { resourceTemplates } = await client.listResourceTemplates();
  check("list templates", resourceTemplates?.[0]?.uriTemplate === "zest://items/{id}", resourceTemplates);
  const item = await client.readResource({ uri: "zest://items/7" });
  check("read template", item.contents?.[0]?.text === "item 7", item);
  const { prompts } = await client.listPrompts();
  check("list prompts", prompts.some((p) => p.name === "greet"), prompts);
  const greet = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
  check("get prompt", greet.messages?.[0]?.content?.text === "Hello, Ada!", greet);
  if (transport instanceof StreamableHTTPClientTransport) {
    // The SDK leaves the session open on close; end it as a polite client does.
    await transport.terminateSession();
    check("delete session", transport.sessionId === undefined, transport.sessionId);
  }
} catch (e) {
  check("no exception", false, String(e?.stack ?? e));
} finally {
  await client.close().catch(() => {});
}
const ok = checks.every((c) => c.ok);
console.log(JSON.stringify({ ok, checks }));
process.exit(ok ? 0 : 1);
