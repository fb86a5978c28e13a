//! Functions as handlers ([`AsyncCallable`], [`SyncCallable`]) and the registry's typed
//! builder methods: `tool`, `tool_with`, `prompt`, `prompt_with`, `with_state`.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{FromCall, IntoPromptResult, IntoToolResult, Parts, SharedState};
use crate::handler::{AsyncHandler, BoxFuture, SyncHandler, ToolError};
use crate::jsonrpc::ErrorObject;
use crate::schema::{
    CallToolParams, GetPromptParams, GetPromptResult, ObjectSchema, Prompt, PromptArgument, Tool,
};
use crate::server::Registry;

/// A function or closure usable as an async handler: every parameter is a [`FromCall`]
/// type, in any order (up to three), and it returns a future. The parameters are taken in
/// order, the arguments last; the first that fails is the call's answer. `Args` is the tuple
/// of its parameter types; callers never name it.
pub trait AsyncCallable<C, Args>: Send + Sync + 'static {
    /// What the future yields.
    type Output: Send + 'static;

    /// Takes the parameters from `parts` and starts the function; `Err` when a parameter
    /// cannot be taken (the function does not run).
    fn call(&self, parts: Parts<C>) -> BoxFuture<'static, Result<Self::Output, ToolError>>;

    /// The arguments' schema, from the one parameter that is the arguments; `Err` when more
    /// than one parameter claims to be.
    fn arguments_schema() -> Result<Option<Value>, String>;

    /// Whether every parameter can be supplied from a registry holding `state`.
    fn check(state: Option<&dyn Any>) -> Result<(), String>;
}

/// A function or closure usable as a blocking handler; see [`AsyncCallable`].
pub trait SyncCallable<C, Args>: Send + Sync + 'static {
    /// What the function returns.
    type Output;

    /// Takes the parameters from `parts` and runs the function on this thread.
    fn call(&self, parts: Parts<C>) -> Result<Self::Output, ToolError>;

    /// See [`AsyncCallable::arguments_schema`].
    fn arguments_schema() -> Result<Option<Value>, String>;

    /// See [`AsyncCallable::check`].
    fn check(state: Option<&dyn Any>) -> Result<(), String>;
}

macro_rules! callable {
    ($take:ident; $($A:ident),*) => {
        /// Each parameter from `parts`, in order, except that the arguments are taken after
        /// every other parameter, by moving them out. The first error in that order: a
        /// parameter's before the arguments'.
        #[allow(non_snake_case, unused_mut, unused_variables)]
        fn $take<C, $($A: FromCall<C>,)*>(mut parts: Parts<C>) -> Result<($($A,)*), ToolError> {
            $(let $A = if $A::IS_ARGUMENTS { None } else { Some($A::from_call(&parts)?) };)*
            Ok(($(match $A {
                Some(value) => value,
                None => $A::from_call_last(&mut parts)?,
            },)*))
        }

        impl<C, F, Fut, $($A,)*> AsyncCallable<C, ($($A,)*)> for F
        where
            F: Fn($($A),*) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: Send + 'static,
            $($A: FromCall<C>,)*
        {
            type Output = Fut::Output;

            #[allow(non_snake_case, unused_variables)]
            fn call(&self, parts: Parts<C>) -> BoxFuture<'static, Result<Fut::Output, ToolError>> {
                match $take::<C, $($A),*>(parts) {
                    Ok(($($A,)*)) => {
                        let fut = self($($A),*);
                        Box::pin(async move { Ok(fut.await) })
                    }
                    Err(e) => Box::pin(std::future::ready(Err(e))),
                }
            }

            fn arguments_schema() -> Result<Option<Value>, String> {
                one_schema(vec![$($A::arguments_schema()),*], &[$($A::IS_ARGUMENTS),*])
            }

            #[allow(unused_variables)]
            fn check(state: Option<&dyn Any>) -> Result<(), String> {
                $($A::check(state)?;)*
                Ok(())
            }
        }

        impl<C, F, R, $($A,)*> SyncCallable<C, ($($A,)*)> for F
        where
            F: Fn($($A),*) -> R + Send + Sync + 'static,
            $($A: FromCall<C>,)*
        {
            type Output = R;

            #[allow(non_snake_case, unused_variables)]
            fn call(&self, parts: Parts<C>) -> Result<R, ToolError> {
                let ($($A,)*) = $take::<C, $($A),*>(parts)?;
                Ok(self($($A),*))
            }

            fn arguments_schema() -> Result<Option<Value>, String> {
                one_schema(vec![$($A::arguments_schema()),*], &[$($A::IS_ARGUMENTS),*])
            }

            #[allow(unused_variables)]
            fn check(state: Option<&dyn Any>) -> Result<(), String> {
                $($A::check(state)?;)*
                Ok(())
            }
        }
    };
}

callable!(take_none;);
callable!(take_one; A1);
callable!(take_two; A1, A2);
callable!(take_three; A1, A2, A3);

fn one_schema(schemas: Vec<Option<Value>>, arguments: &[bool]) -> Result<Option<Value>, String> {
    let mut given = schemas.into_iter().flatten();
    let first = given.next();
    match given.next() {
        None if arguments.iter().filter(|is| **is).count() <= 1 => Ok(first),
        _ => Err("a handler takes at most one argument type".to_owned()),
    }
}

/// Typed registration, the same on every registry; `H` says how a function becomes a handler.
impl<H> Registry<H> {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Shares `state` with every handler that takes a [`State<S>`](super::State) parameter
    /// (each gets a clone of one `Arc`). Call it before registering those handlers:
    /// registering one that takes a `State` of a type this registry does not hold panics.
    /// Replaces any earlier state.
    #[must_use]
    pub fn with_state<S: Send + Sync + 'static>(mut self, state: S) -> Self {
        self.state = Some(SharedState(Arc::new(state)));
        self
    }

    fn state_ref(&self) -> Option<&dyn Any> {
        self.state.as_ref().map(|s| &*s.0 as &dyn Any)
    }
}

/// Async typed handlers (zest-tokio, zest-smol).
impl<C: Send + 'static> Registry<AsyncHandler<C>> {
    /// Adds a tool whose handler is an async function of [`FromCall`] parameters; see
    /// [`tool_with`](Self::tool_with).
    #[must_use]
    pub fn tool<F, Args>(self, name: &str, description: &str, f: F) -> Self
    where
        F: AsyncCallable<C, Args>,
        F::Output: IntoToolResult,
    {
        self.tool_with(Tool { description: Some(description.to_owned()), ..named(name) }, f)
    }

    /// Adds `tool` (its title, annotations, icons …) with a typed handler, replacing a tool
    /// of the same name. Its `inputSchema` is generated from the handler's argument type
    /// (kept as given when the handler takes none) and its `outputSchema`, unless given,
    /// from a [`Json<T>`](super::Json) return type.
    ///
    /// # Panics
    ///
    /// At registration, never during a call: when the argument or result type's schema
    /// cannot be a tool's (its root is not an object), when the handler takes two argument
    /// types, or takes a [`State`](super::State) this registry does not hold.
    #[must_use]
    pub fn tool_with<F, Args>(mut self, mut tool: Tool, f: F) -> Self
    where
        F: AsyncCallable<C, Args>,
        F::Output: IntoToolResult,
    {
        prepare_tool(&mut tool, F::check(self.state_ref()), F::arguments_schema());
        if tool.output_schema.is_none() {
            tool.output_schema = F::Output::output_schema().map(ObjectSchema::from_value);
        }
        let (state, target, f) = (self.state.clone(), format!("tool {:?}", tool.name), Arc::new(f));
        let handler = AsyncHandler::Tool(Arc::new(move |ctx, params: CallToolParams| {
            let arguments = params.arguments.unwrap_or_default();
            let fut = f.call(Parts::new(ctx, state.clone(), arguments, target.clone()));
            Box::pin(async move { fut.await?.into_tool_result() })
        }));
        // The handler gets the arguments, never the params' `_meta`.
        self.add_tool_reading_meta(tool, handler, false);
        self
    }

    /// Adds a prompt whose handler is an async function of [`FromCall`] parameters; see
    /// [`prompt_with`](Self::prompt_with).
    #[must_use]
    pub fn prompt<F, Args>(self, name: &str, description: &str, f: F) -> Self
    where
        F: AsyncCallable<C, Args>,
        F::Output: IntoPromptResult,
    {
        self.prompt_with(Prompt::new(name, description), f)
    }

    /// Adds `prompt` with a typed handler, replacing a prompt of the same name. Its
    /// arguments are generated from the handler's argument type (each field an argument,
    /// with its doc comment as description, required unless optional); kept as given when
    /// the handler takes none. The session refuses a call that lacks a required argument;
    /// arguments that do not deserialize are refused with -32602 naming the field.
    ///
    /// # Panics
    ///
    /// As [`tool_with`](Self::tool_with) does.
    #[must_use]
    pub fn prompt_with<F, Args>(mut self, mut prompt: Prompt, f: F) -> Self
    where
        F: AsyncCallable<C, Args>,
        F::Output: IntoPromptResult,
    {
        prepare_prompt(&mut prompt, F::check(self.state_ref()), F::arguments_schema());
        let (state, target, f) =
            (self.state.clone(), format!("prompt {:?}", prompt.name), Arc::new(f));
        let handler = AsyncHandler::Prompt(Arc::new(move |ctx, params: GetPromptParams| {
            let parts =
                Parts::new(ctx, state.clone(), prompt_arguments_json(params), target.clone());
            let fut = f.call(parts);
            Box::pin(async move { prompt_outcome(fut.await.map_err(refused)) })
        }));
        self.add_prompt(prompt, handler);
        self
    }
}

/// Blocking typed handlers (zest-blocking). Each handler gets its own clone of the context.
impl<C: Clone + 'static> Registry<SyncHandler<C>> {
    /// Adds a tool whose handler is a function of [`FromCall`] parameters; see
    /// [`tool_with`](Self::tool_with).
    #[must_use]
    pub fn tool<F, Args>(self, name: &str, description: &str, f: F) -> Self
    where
        F: SyncCallable<C, Args>,
        F::Output: IntoToolResult,
    {
        self.tool_with(Tool { description: Some(description.to_owned()), ..named(name) }, f)
    }

    /// Adds `tool` with a typed handler, as the async
    /// [`tool_with`](Registry::<AsyncHandler<C>>::tool_with) does.
    ///
    /// # Panics
    ///
    /// As the async `tool_with` does, at registration.
    #[must_use]
    pub fn tool_with<F, Args>(mut self, mut tool: Tool, f: F) -> Self
    where
        F: SyncCallable<C, Args>,
        F::Output: IntoToolResult,
    {
        prepare_tool(&mut tool, F::check(self.state_ref()), F::arguments_schema());
        if tool.output_schema.is_none() {
            tool.output_schema = F::Output::output_schema().map(ObjectSchema::from_value);
        }
        let (state, target) = (self.state.clone(), format!("tool {:?}", tool.name));
        let handler = SyncHandler::Tool(Arc::new(move |ctx: &C, params: CallToolParams| {
            let arguments = params.arguments.unwrap_or_default();
            f.call(Parts::new(ctx.clone(), state.clone(), arguments, target.clone()))?
                .into_tool_result()
        }));
        // The handler gets the arguments, never the params' `_meta`.
        self.add_tool_reading_meta(tool, handler, false);
        self
    }

    /// Adds a prompt whose handler is a function of [`FromCall`] parameters; see
    /// [`prompt_with`](Self::prompt_with).
    #[must_use]
    pub fn prompt<F, Args>(self, name: &str, description: &str, f: F) -> Self
    where
        F: SyncCallable<C, Args>,
        F::Output: IntoPromptResult,
    {
        self.prompt_with(Prompt::new(name, description), f)
    }

    /// Adds `prompt` with a typed handler, as the async
    /// [`prompt_with`](Registry::<AsyncHandler<C>>::prompt_with) does.
    ///
    /// # Panics
    ///
    /// As the async `tool_with` does, at registration.
    #[must_use]
    pub fn prompt_with<F, Args>(mut self, mut prompt: Prompt, f: F) -> Self
    where
        F: SyncCallable<C, Args>,
        F::Output: IntoPromptResult,
    {
        prepare_prompt(&mut prompt, F::check(self.state_ref()), F::arguments_schema());
        let (state, target) = (self.state.clone(), format!("prompt {:?}", prompt.name));
        let handler = SyncHandler::Prompt(Arc::new(move |ctx: &C, params: GetPromptParams| {
            let parts = Parts::new(
                ctx.clone(),
                state.clone(),
                prompt_arguments_json(params),
                target.clone(),
            );
            prompt_outcome(f.call(parts).map_err(refused))
        }));
        self.add_prompt(prompt, handler);
        self
    }
}

fn named(name: &str) -> Tool {
    Tool { name: name.to_owned(), ..Tool::default() }
}

/// Applies what registration learnt about the handler to `tool`, or panics with the reason.
fn prepare_tool(
    tool: &mut Tool,
    check: Result<(), String>,
    arguments: Result<Option<Value>, String>,
) {
    let name = &tool.name;
    check.unwrap_or_else(|e| panic!("tool {name:?}: {e}"));
    match arguments {
        Ok(Some(schema)) => tool.input_schema = ObjectSchema::from_value(schema),
        Ok(None) => {}
        Err(e) => panic!("tool {name:?}: {e}"),
    }
}

fn prepare_prompt(
    prompt: &mut Prompt,
    check: Result<(), String>,
    arguments: Result<Option<Value>, String>,
) {
    let name = &prompt.name;
    check.unwrap_or_else(|e| panic!("prompt {name:?}: {e}"));
    match arguments {
        Ok(Some(schema)) => prompt.arguments = Some(prompt_arguments(&schema)),
        Ok(None) => {}
        Err(e) => panic!("prompt {name:?}: {e}"),
    }
}

/// The prompt arguments an object schema describes: each property, with its `title` and
/// `description`, required when the schema requires it.
pub(super) fn prompt_arguments(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let text = |p: &Value, key: &str| p.get(key).and_then(Value::as_str).map(str::to_owned);
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            title: text(property, "title"),
            description: text(property, "description"),
            required: Some(required.contains(&name.as_str())),
            extra: Map::new(),
        })
        .collect()
}

/// A prompt's string arguments as the JSON object its argument type deserializes from.
fn prompt_arguments_json(params: GetPromptParams) -> Map<String, Value> {
    let given = params.arguments.unwrap_or_default();
    given.into_iter().map(|(k, v)| (k, Value::String(v))).collect()
}

/// A prompt call whose parameters could not be taken: -32602 with the reason, unless the
/// extractor chose its own JSON-RPC error.
fn refused(e: ToolError) -> ToolError {
    match e.as_protocol() {
        Some(_) => e,
        None => ToolError::protocol(ErrorObject::invalid_params(e.message())),
    }
}

fn prompt_outcome<R: IntoPromptResult>(
    outcome: Result<R, ToolError>,
) -> Result<GetPromptResult, ErrorObject> {
    outcome.and_then(R::into_prompt_result).map_err(ToolError::into_error_object)
}

#[cfg(all(test, feature = "schemars"))]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Echo {
        text: String,
    }

    /// Reads the arguments as they stand when its turn comes.
    struct SeenArguments(usize);

    impl FromCall<()> for SeenArguments {
        fn from_call(parts: &Parts<()>) -> Result<Self, ToolError> {
            Ok(Self(parts.arguments().len()))
        }
    }

    fn parts_with_text(text: &str) -> (Parts<()>, *const u8) {
        let text = text.to_owned();
        let at = text.as_ptr();
        let arguments = Map::from_iter([("text".to_owned(), Value::String(text))]);
        (Parts::new((), None, arguments, "tool \"echo\"".to_owned()), at)
    }

    #[test]
    fn the_arguments_are_moved_into_their_parameter_not_copied() {
        let (parts, at) = parts_with_text("a large text");
        let (echo,) = take_one::<(), Echo>(parts).unwrap();
        assert_eq!(echo.text, "a large text");
        assert_eq!(echo.text.as_ptr(), at);
    }

    #[test]
    fn every_other_parameter_reads_the_arguments_before_they_are_moved() {
        let (parts, at) = parts_with_text("text");
        let (echo, seen) = take_two::<(), Echo, SeenArguments>(parts).unwrap();
        assert_eq!((echo.text.as_ptr(), seen.0), (at, 1));
        let (parts, _) = parts_with_text("text");
        let (seen, _echo) = take_two::<(), SeenArguments, Echo>(parts).unwrap();
        assert_eq!(seen.0, 1);
    }

    #[test]
    fn a_typed_tool_reads_no_meta_and_a_raw_one_does() {
        use crate::handler::{AsyncHandler, SyncHandler};
        let schema = serde_json::json!({"type": "object"});
        let mut registry = Registry::<AsyncHandler<()>>::new().tool(
            "typed",
            "Echoes",
            |Echo { text }| async move { text },
        );
        registry.raw_tool(Tool::new("raw", "Raw", schema.clone()), |_, _| async {
            Ok(crate::schema::CallToolResult::text("raw"))
        });
        assert!(!registry.find_tool("typed").unwrap().reads_meta);
        assert!(registry.find_tool("raw").unwrap().reads_meta);
        let mut sync = Registry::<SyncHandler<()>>::new().tool("typed", "Echoes", |e: Echo| e.text);
        sync.raw_tool(Tool::new("raw", "Raw", schema), |_, _| {
            Ok(crate::schema::CallToolResult::text("raw"))
        });
        assert!(!sync.find_tool("typed").unwrap().reads_meta);
        assert!(sync.find_tool("raw").unwrap().reads_meta);
    }
}
