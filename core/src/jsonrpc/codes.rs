//! Every JSON-RPC error code zest sends or recognises, in one place
//! (<https://www.jsonrpc.org/specification#error_object>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/schema>).

/// Invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Valid JSON that is not a JSON-RPC request, or a request not allowed now.
pub const INVALID_REQUEST: i64 = -32600;
/// Unknown method, or a capability the receiver does not offer.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Params that do not fit the method: unknown tool or prompt, bad cursor, bad level.
pub const INVALID_PARAMS: i64 = -32602;
/// The receiver failed.
pub const INTERNAL_ERROR: i64 = -32603;
/// The user refused (the spec's example code for a rejected sampling request).
pub const USER_REJECTED: i64 = -1;
/// Resource not found (up to 2025-11-25; 2026-07-28 uses [`INVALID_PARAMS`]).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// URL elicitation required (2025-11-25).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
/// `Mcp-Method` / `Mcp-Name` header does not match the body (2026-07-28).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request lacks a client capability the server needs (2026-07-28).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The request's protocol version is not supported (2026-07-28).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
