//! OAuth's two moments that need the application: a user authorizing in a browser, and new
//! tokens for its cache.

use std::future::Future;
use std::sync::Arc;

use super::{AsyncClientHandlers, SyncClientHandlers};
use crate::auth::Tokens;
use crate::handler::BoxFuture;

/// What a session without an authorization handler answers.
const NO_AUTHORIZER: &str = "no authorization handler is set (on_authorize)";

impl AsyncClientHandlers {
    /// Answers OAuth authorization requests: open the URL for the user (a browser, or the
    /// runtime's loopback or headless helper) and return the whole URL the browser was sent
    /// back to; `Err` gives up, and the requests waiting fail with `NeedsUser`.
    pub fn on_authorize<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        self.authorize = Some(Arc::new(move |url| Box::pin(f(url))));
        self
    }

    /// Runs the authorization handler for `url`.
    pub fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, String>> {
        match &self.authorize {
            Some(f) => f(url),
            None => Box::pin(async { Err(NO_AUTHORIZER.to_owned()) }),
        }
    }
}

impl SyncClientHandlers {
    /// Answers OAuth authorization requests: open the URL for the user and return the whole
    /// URL the browser was sent back to; `Err` gives up, and the requests waiting fail with
    /// `NeedsUser`. Runs on a thread of its own.
    pub fn on_authorize(
        mut self,
        f: impl Fn(String) -> Result<String, String> + Send + Sync + 'static,
    ) -> Self {
        self.authorize = Some(Arc::new(f));
        self
    }

    /// Runs the authorization handler for `url`.
    pub fn authorize(&self, url: String) -> Result<String, String> {
        match &self.authorize {
            Some(f) => f(url),
            None => Err(NO_AUTHORIZER.to_owned()),
        }
    }
}

/// The token hooks both kinds of handlers offer, with the same names.
macro_rules! token_hooks {
    ($handlers:ty) => {
        impl $handlers {
            /// Receives every new set of OAuth tokens, to store (called on the session's own
            /// task or thread: keep it short).
            pub fn on_tokens_changed(
                mut self,
                f: impl Fn(&Tokens) + Send + Sync + 'static,
            ) -> Self {
                self.tokens = Some(Arc::new(f));
                self
            }

            /// Hands `tokens` to the sink, if one was set.
            pub fn tokens_changed(&self, tokens: &Tokens) {
                if let Some(f) = &self.tokens {
                    f(tokens);
                }
            }

            /// Reads the shared token cache with `f` before each refresh (with
            /// `OAuthConfig::shared_cache`; called on the session's own task or thread: keep
            /// it short and do not call the client from it).
            pub fn on_load_tokens(
                mut self,
                f: impl Fn() -> Option<Tokens> + Send + Sync + 'static,
            ) -> Self {
                self.load = Some(Arc::new(f));
                self
            }

            /// What the shared cache holds, by the `on_load_tokens` reader (`None` without one).
            pub fn load_tokens(&self) -> Option<Tokens> {
                self.load.as_ref().and_then(|f| f())
            }
        }
    };
}

token_hooks!(AsyncClientHandlers);
token_hooks!(SyncClientHandlers);
