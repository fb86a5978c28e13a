// Drives a zest server of typed tools (runtime-tokio/examples/typed_server.rs) with the
// official TypeScript SDK client, which compiles every outputSchema with Ajv and validates
// structuredContent against it.
// Usage: node ts_typed.mjs <server-binary> [args...]
// Prints one JSON line with what it saw; exits 0 only if every check passed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });
const text = (result) => result.content?.[0]?.text ?? "";
// JSON with object keys sorted, so equal values compare equal whatever the key order.
const canonical = (v) =>
  JSON.stringify(v, (_, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );

const order = {
  customer: { name: "Ada", email: null },
  items: [
    { sku: "a-1", quantity: 2, tags: ["red", "large"] },
    { sku: "b-2", quantity: 1 },
  ],
  shipping: "express",
  note: "leave at the door",
};

const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
const client = new Client({ name: "ts-typed-peer", version: "1.0.0" });
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  check("list tools", ["hello", "order", "read", "count"].every((n) => n in byName), tools);
  const input = byName.order?.inputSchema;
  check(
    "order input schema",
    input?.type === "object" &&
      ["customer", "items", "shipping"].every((r) => input.required?.includes(r)) &&
      input.properties?.shipping?.enum?.join() === "standard,express",
    input,
  );
  check("order output schema", byName.order?.outputSchema?.type === "object", byName.order);

  const hello = await client.callTool({ name: "hello", arguments: { name: "Ada" } });
  check("call hello", text(hello) === "Hello, Ada!" && !hello.isError, hello);

  // The SDK validates structuredContent against the outputSchema and throws on a mismatch.
  const receipt = await client.callTool({ name: "order", arguments: order });
  const expected = {
    customer: "Ada",
    email: null,
    skus: ["a-1", "b-2"],
    quantity: 3,
    tags: 2,
    express: true,
    note: "leave at the door",
    gift: false,
  };
  check(
    "structured result",
    !receipt.isError &&
      canonical(receipt.structuredContent) === canonical(expected) &&
      canonical(JSON.parse(text(receipt))) === canonical(expected),
    receipt,
  );

  const wrong = await client.callTool({
    name: "order",
    arguments: { ...order, items: [{ sku: "a-1", quantity: "two" }] },
  });
  check("wrong type names the field", wrong.isError === true && text(wrong).includes("/items/0/quantity"), wrong);
  const badEnum = await client.callTool({ name: "order", arguments: { ...order, shipping: "teleport" } });
  check("bad enum value names the field", badEnum.isError === true && text(badEnum).includes("/shipping"), badEnum);
  const empty = await client.callTool({ name: "order", arguments: { ...order, items: [] } });
  check("empty items refused", empty.isError === true && text(empty).includes("/items"), empty);

  const missing = await client.callTool({ name: "read", arguments: { path: "/nonexistent/zest-typed" } });
  check("io error is an error result", missing.isError === true && /no such file/i.test(text(missing)), missing);

  const first = await client.callTool({ name: "count", arguments: {} });
  const second = await client.callTool({ name: "count", arguments: {} });
  check("state is shared", text(first) === "1" && text(second) === "2", [first, second]);
} catch (e) {
  check("no exception", false, String(e?.stack ?? e));
} finally {
  await client.close().catch(() => {});
}
const ok = checks.every((c) => c.ok);
console.log(JSON.stringify({ ok, checks }));
process.exit(ok ? 0 : 1);
