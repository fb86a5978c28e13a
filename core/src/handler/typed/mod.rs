//! Typed handlers: plain functions and closures whose parameters say what they need (the
//! arguments as a Rust type, the request context, the registry's shared state) and whose
//! return value converts into the answer.
//!
//! ```
//! # #[cfg(feature = "schemars")] {
//! use zest_core::handler::{AsyncHandler, Json, State};
//! use zest_core::server::Registry;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Hello {
//!     /// Who to greet.
//!     name: String,
//! }
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: f64, b: f64 }
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum { total: f64 }
//! struct Counter(std::sync::atomic::AtomicU64);
//!
//! // A runtime names the handler type: `zest_tokio::Registry::new()`.
//! let registry = Registry::<AsyncHandler<()>>::new()
//!     .with_state(Counter(Default::default()))
//!     .tool("hello", "Greets someone", |Hello { name }| async move { format!("Hello, {name}!") })
//!     .tool("add", "Adds two numbers", |Add { a, b }| async move { Json(Sum { total: a + b }) })
//!     .tool("count", "Counts calls", |n: State<Counter>| async move {
//!         n.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string()
//!     });
//! # }
//! ```
//!
//! A handler's parameters come in any order; each is a [`FromCall`] type:
//! - the arguments: any `T: DeserializeOwned + JsonSchema` (feature `schemars`). The tool's
//!   `inputSchema` is generated from `T` (its root MUST be an object: a struct or a map); the
//!   session validates the arguments against it, then they are deserialized into `T`. Either
//!   failure is an `isError` result that names the argument. At most one such parameter.
//! - the request context: the runtime's `RequestContext` (progress, logging, cancellation,
//!   requests to the client).
//! - [`State<S>`]: the state given to [`Registry::with_state`](crate::server::Registry::with_state).
//!
//! The return value is any [`IntoToolResult`] (tools) or [`IntoPromptResult`] (prompts).
//!
//! Registration checks what it can once, and panics with the reason (a bug in the program,
//! never a condition of a call): a `State<S>` the registry does not hold, two argument types,
//! an argument or `Json` result type whose schema is not an object.
//!
//! Inside a handler, `ctx.elicit_as::<T>(message)` asks the user for `T`'s fields and yields
//! the answer as `T` ([`Elicited`], feature `schemars`).

#[cfg(feature = "schemars")]
mod elicit;
mod output;
mod register;
#[cfg(feature = "schemars")]
mod schema;

#[cfg(feature = "schemars")]
pub use elicit::Elicited;
pub use output::{IntoPromptResult, IntoToolResult, Json};
pub use register::{AsyncCallable, SyncCallable};
#[cfg(feature = "schemars")]
pub use schema::{object_schema_for, prompt_arguments_for};

use std::any::{type_name, Any};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::ToolError;
use crate::runtime::{Link, RequestContext};

/// The state a registry shares with its handlers ([`Registry::with_state`](crate::server::Registry::with_state)).
#[derive(Clone)]
pub(crate) struct SharedState(pub(crate) Arc<dyn Any + Send + Sync>);

impl fmt::Debug for SharedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedState")
    }
}

/// What one call hands its typed handler's extractors.
pub struct Parts<C> {
    ctx: C,
    state: Option<SharedState>,
    arguments: Map<String, Value>,
    /// What the arguments are for, in error messages: `tool "add"`, `prompt "greet"`.
    target: String,
}

impl<C> Parts<C> {
    pub(crate) fn new(
        ctx: C,
        state: Option<SharedState>,
        arguments: Map<String, Value>,
        target: String,
    ) -> Self {
        Self { ctx, state, arguments, target }
    }

    /// The request context.
    pub fn context(&self) -> &C {
        &self.ctx
    }

    /// The call's arguments (a prompt's arguments as JSON strings).
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.arguments
    }

    /// What is called, for error messages: `tool "add"`, `prompt "greet"`.
    pub fn target(&self) -> &str {
        &self.target
    }
}

/// A handler parameter: taken from the call before the handler runs.
pub trait FromCall<C>: Sized {
    /// Takes the parameter from the call; `Err` is answered without running the handler.
    fn from_call(parts: &Parts<C>) -> Result<Self, ToolError>;

    /// True for the one parameter that is the call's arguments: a handler takes it after
    /// every other parameter, with [`from_call_last`](Self::from_call_last). Hidden: only
    /// the arguments type zest implements it for sets it (`Parts` lets nothing else move the
    /// arguments out).
    #[doc(hidden)]
    const IS_ARGUMENTS: bool = false;

    /// Takes the parameter as the last to read `parts`, so it may move out what it reads
    /// (the arguments, instead of copying them); called instead of
    /// [`from_call`](Self::from_call) only when [`IS_ARGUMENTS`](Self::IS_ARGUMENTS) is true.
    #[doc(hidden)]
    fn from_call_last(parts: &mut Parts<C>) -> Result<Self, ToolError> {
        Self::from_call(parts)
    }

    /// The JSON Schema of the arguments, for the one parameter that is the arguments.
    fn arguments_schema() -> Option<Value> {
        None
    }

    /// Checked once when the handler is registered, with the registry's state: `Err` says
    /// why this parameter can never be supplied (registration then panics).
    fn check(_state: Option<&dyn Any>) -> Result<(), String> {
        Ok(())
    }
}

/// The request context, cloned for the handler.
impl<L: Link> FromCall<Self> for RequestContext<L> {
    fn from_call(parts: &Parts<Self>) -> Result<Self, ToolError> {
        Ok(parts.ctx.clone())
    }
}

/// The registry's shared state, by type: `|db: State<Db>, args: Query| …`.
///
/// Handlers get a cheap clone of the one `Arc` the registry holds; [`Deref`] reaches `S`.
/// Registering a handler that takes `State<S>` panics unless the registry was given a state
/// of type `S` first ([`Registry::with_state`](crate::server::Registry::with_state)).
pub struct State<S>(Arc<S>);

impl<S> State<S> {
    /// The `Arc` the registry holds, to keep past the call (into a spawned task).
    pub fn into_arc(self) -> Arc<S> {
        self.0
    }
}

impl<S> Deref for State<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<S> fmt::Debug for State<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "State<{}>", type_name::<S>())
    }
}

impl<C, S: Send + Sync + 'static> FromCall<C> for State<S> {
    fn from_call(parts: &Parts<C>) -> Result<Self, ToolError> {
        parts
            .state
            .as_ref()
            .and_then(|s| s.0.clone().downcast::<S>().ok())
            .map(State)
            .ok_or_else(|| ToolError::new(missing_state::<S>()))
    }

    fn check(state: Option<&dyn Any>) -> Result<(), String> {
        match state {
            Some(s) if s.is::<S>() => Ok(()),
            _ => Err(missing_state::<S>()),
        }
    }
}

fn missing_state<S>() -> String {
    let name = type_name::<S>();
    format!("the handler takes State<{name}>, but the registry holds no state of type {name}; call Registry::with_state first")
}

#[cfg(feature = "schemars")]
fn arguments_as<T: serde::de::DeserializeOwned>(
    value: Value,
    target: &str,
) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = if path == "." {
            format!("invalid arguments for {target}: {}", e.inner())
        } else {
            format!("invalid arguments for {target}: {path}: {}", e.inner())
        };
        ToolError::new(message)
    })
}

/// The arguments as `T`, after the session validated them against `T`'s schema.
#[cfg(feature = "schemars")]
impl<C, T> FromCall<C> for T
where
    T: serde::de::DeserializeOwned + schemars::JsonSchema,
{
    fn from_call(parts: &Parts<C>) -> Result<Self, ToolError> {
        arguments_as(Value::Object(parts.arguments.clone()), &parts.target)
    }

    const IS_ARGUMENTS: bool = true;

    /// Moves the arguments out: a 1 MiB text argument is not copied on its way in.
    fn from_call_last(parts: &mut Parts<C>) -> Result<Self, ToolError> {
        arguments_as(Value::Object(std::mem::take(&mut parts.arguments)), &parts.target)
    }

    fn arguments_schema() -> Option<Value> {
        Some(object_schema_for::<T>().unwrap_or_else(|e| {
            panic!("the argument type {} cannot be a tool's input: {e}", type_name::<T>())
        }))
    }
}
