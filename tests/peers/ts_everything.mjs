// Drives @modelcontextprotocol/server-everything, spawned as a stdio command (for example
// `zest bridge URL` in front of it), with the official TypeScript SDK client.
// Usage: node ts_everything.mjs <command> [args...]
// Calls echo and get-sum, follows a long-running call's progress, lists and gets a prompt;
// prints one JSON line with what it saw and exits 0 only if every check passed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
const client = new Client({ name: "ts-everything", version: "1.0.0" });
const text = (result) => result.content?.map((c) => c.text ?? "").join("");
try {
  await client.connect(transport);
  check("handshake", client.getServerVersion()?.name, client.getServerVersion());
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check("tools", ["echo", "get-sum", "trigger-long-running-operation"].every((n) => names.includes(n)), names);
  const echo = await client.callTool({ name: "echo", arguments: { message: "through the bridge" } });
  check("echo", text(echo) === "Echo: through the bridge", echo);
  const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
  check("get-sum", text(sum) === "The sum of 2 and 40 is 42.", sum);
  const progress = [];
  const long = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  check("long-running", text(long).startsWith("Long running operation completed"), long);
  check("progress", progress.length >= 2 && progress.every((p, i) => i === 0 || p > progress[i - 1]), progress);
  const { prompts } = await client.listPrompts();
  check("prompts", prompts.some((p) => p.name === "simple-prompt"), prompts.map((p) => p.name));
  const prompt = await client.getPrompt({ name: "simple-prompt" });
  check("get prompt", prompt.messages?.length > 0, prompt);
} catch (e) {
  check("no exception", false, String(e));
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify({ checks }));
process.exit(checks.every((c) => c.ok) ? 0 : 1);
