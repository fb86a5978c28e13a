//! JSON-RPC 2.0 as MCP uses it: ids, messages, batches, error objects.
//!
//! Params and results stay raw ([`RawJson`]) until someone asks for a typed view with
//! [`RawJson::parse`]; decoding a message only reads the envelope. That keeps routing cheap and
//! loses nothing a peer sent.

pub mod codes;
mod decode;
mod encode;
pub(crate) mod error_path;
pub(crate) mod key_search;
mod message;
pub(crate) mod own_ids;
mod peek;
mod raw_text;
mod text_pool;

pub use decode::{decode, DecodeError, Frame, InvalidReason};
pub use encode::{encode_batch_into, encode_line};
pub use message::{ErrorObject, Message, Notification, RawJson, Request, RequestId, Response};
pub(crate) use peek::{peek, PeekKind};
pub use text_pool::{KEPT_TEXTS_MAX, KEPT_TEXT_MIN};

#[cfg(test)]
mod tests;
