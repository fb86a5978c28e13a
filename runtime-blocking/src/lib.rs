//! zest over blocking std threads.
//!
//! Empty for now: the stdio client and server arrive with the runtime issue. Nothing in this
//! crate pretends to work yet.
