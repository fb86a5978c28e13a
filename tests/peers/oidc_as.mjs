// A real OpenID provider (oidc-provider, certified) as the authorization server of zest's
// OAuth tests, on 127.0.0.1 with a port of its own. Prints its issuer on one line, then serves
// until killed.
//
// Dynamic registration, PKCE (S256), resource indicators (JWT access tokens whose audience is
// the resource asked for, scope `mcp:read`), refresh tokens rotated on every use, client
// credentials for the pre-registered client `machine` / `machine-secret`, a pre-registered
// public client `zest-app` (redirect URI http://127.0.0.1:9/cb), and short token
// lifetimes (access tokens: ACCESS_TTL seconds, default 4). With TOKEN_FORMAT=opaque the
// access tokens are opaque, for the server to introspect as `resource-server` / `rs-secret`. Logging in needs no person: the
// interaction page signs `alice` in and grants what was asked at once (cookies still apply,
// as in a browser).
import http from 'node:http';
import Provider from 'oidc-provider';

const accessTtl = Number(process.env.ACCESS_TTL || 4);
const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'zest-app',
    token_endpoint_auth_method: 'none',
    application_type: 'native',
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: ['http://127.0.0.1:9/cb'],
  }, {
    // The protected MCP server itself, when it introspects opaque tokens.
    client_id: 'resource-server',
    client_secret: 'rs-secret',
    grant_types: [],
    redirect_uris: [],
    response_types: [],
  }, {
    client_id: 'machine',
    client_secret: 'machine-secret',
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
  }],
  scopes: ['openid', 'offline_access', 'mcp:read'],
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: 'mcp:read',
        audience: resource,
        accessTokenTTL: accessTtl,
        accessTokenFormat: process.env.TOKEN_FORMAT || 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  ttl: { AccessToken: accessTtl, ClientCredentials: accessTtl, RefreshToken: 600, Interaction: 60, Session: 600, Grant: 600, AuthorizationCode: 60 },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  cookies: { keys: ['zest-test-cookie-key'] },
});
provider.proxy = false;

const callback = provider.callback();
server.on('request', async (req, res) => {
  if (req.url.startsWith('/interaction/')) {
    try {
      const details = await provider.interactionDetails(req, res);
      if (process.env.AS_DEBUG) console.error(JSON.stringify(details.prompt));
      const { prompt, params } = details;
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: 'alice', clientId: params.client_id });
      const missing = prompt.details || {};
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: 'alice' }, consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (e) {
      res.statusCode = 500;
      res.end(String(e));
    }
    return;
  }
  callback(req, res);
});
console.log(issuer);
