// The TypeScript SDK client (1.x) with an authorization-code OAuth provider (dynamic
// registration, PKCE) against an OAuth-protected server; the login page is driven headlessly
// (redirects followed with their cookies, as a browser would). node ts_oauth_code_client.mjs URL
// Prints one JSON line.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const REDIRECT = 'http://127.0.0.1:9/cb';

/** Follows `url`'s redirects with their cookies until one goes to the redirect URI. */
async function logIn(url) {
  const cookies = new Map();
  let next = url;
  for (let i = 0; i < 10; i++) {
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(next, { redirect: 'manual', headers: { cookie } });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`${next} answered ${res.status} without a redirect`);
    next = new URL(location, next).toString();
    if (next.startsWith(REDIRECT)) return next;
  }
  throw new Error('too many redirects');
}

class Provider {
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return {
      client_name: 'ts-oauth-code-client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  async redirectToAuthorization(url) { this.landed = await logIn(url.toString()); }
  saveCodeVerifier(verifier) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }
}

const url = new URL(process.argv[2]);
const authProvider = new Provider();
const connect = async () => {
  const client = new Client({ name: 'ts-oauth-code-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { authProvider });
  try {
    await client.connect(transport);
    return client;
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !authProvider.landed) throw e;
    const code = new URL(authProvider.landed).searchParams.get('code');
    await transport.finishAuth(code);
    const again = new Client({ name: 'ts-oauth-code-client', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(url, { authProvider }));
    return again;
  }
};
const client = await connect();
const tools = await client.listTools();
const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
console.log(JSON.stringify({ tools: tools.tools.length, text: result.content[0].text }));
await client.close();
