// Drives a zest server with the TypeScript SDK v2 client (@modelcontextprotocol/client, pinned
// in package.json), pinned to 2026-07-28: spawns the server command, lists its tools, calls
// the tools named in TOOLS (comma-separated; default the fixture's elicitation and sampling
// input-required tools) answering every elicitation with {name: "Ada"} and every sampling
// request with "Paris", and prints one JSON line: the era and each result's text.
//
// Usage: TOOLS=a,b node ts_v2_client.mjs <server-binary> [args...]
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [command, ...args] = process.argv.slice(2);
const tools = (process.env.TOOLS ?? 'test_input_required_result_elicitation,test_input_required_result_sampling').split(',');
const client = new Client(
    { name: 'ts-v2-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } }
);
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'Paris' },
    model: 'ts-model'
}));
await client.connect(new StdioClientTransport({ command, args }));
const listed = (await client.listTools()).tools.length;
const texts = [];
for (const name of tools) {
    const result = await client.callTool({ name, arguments: {} });
    texts.push(result.content[0]?.text);
}
console.log(JSON.stringify({ era: client.getProtocolEra(), tools: listed, texts }));
await client.close();
