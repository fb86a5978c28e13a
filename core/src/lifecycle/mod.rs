//! Which message may go which way in which phase, per revision, as tables.
//!
//! ```text
//!   client                               server
//!   AwaitingInitResult --initialize-->   AwaitingInitialize
//!                      <--result-----    AwaitingInitialized   (requests accepted by default,
//!   Ready  --notifications/initialized-> Ready                  rejected in strict mode)
//!   ...                                  ...
//!   Closed (exactly one Event::Closed)   Closed
//! ```

pub(crate) mod rules;
