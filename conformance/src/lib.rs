//! Fixtures and a runner for the official MCP conformance suite.
//!
//! Empty for now: the fixtures arrive with the HTTP transport, which the suite needs.
