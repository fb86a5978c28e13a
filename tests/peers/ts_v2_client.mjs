// Drives a zest server with the TypeScript SDK v2 client (@modelcontextprotocol/client, pinned
// in package.json), pinned to 2026-07-28: spawns the server command, lists its tools, calls
// the tool named by TOOL (default test_input_required_result_elicitation) answering every
// elicitation with {name: "Ada"}, and prints one JSON line: the era and the result's text.
//
// Usage: TOOL=name node ts_v2_client.mjs <server-binary> [args...]
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [command, ...args] = process.argv.slice(2);
const tool = process.env.TOOL ?? 'test_input_required_result_elicitation';
const client = new Client(
    { name: 'ts-v2-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } }
);
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
await client.connect(new StdioClientTransport({ command, args }));
const { tools } = await client.listTools();
const result = await client.callTool({ name: tool, arguments: {} });
console.log(JSON.stringify({ era: client.getProtocolEra(), tools: tools.length, text: result.content[0]?.text }));
await client.close();
