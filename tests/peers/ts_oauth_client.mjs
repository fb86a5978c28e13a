// The TypeScript SDK client (1.x) with its client-credentials OAuth provider against an
// OAuth-protected server: node ts_oauth_client.mjs URL ISSUER. Prints one JSON line.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [url, issuer] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({
  clientId: 'machine',
  clientSecret: 'machine-secret',
  expectedIssuer: issuer,
  scope: 'mcp:read',
});
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
const client = new Client({ name: 'ts-oauth-client', version: '1.0.0' });
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
console.log(JSON.stringify({ tools: tools.tools.length, text: result.content[0].text }));
await client.close();
