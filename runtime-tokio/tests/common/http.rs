//! HTTP test support on zest-tokio: tests/support/http_tools.rs over tokio's timer and
//! sockets.
#![allow(dead_code, unreachable_pub)]

#[path = "../../../tests/support/http_tools.rs"]
mod shared;

pub use shared::*;

/// What the shared helpers take from this runtime.
mod rt {
    use std::future::Future;
    use std::time::{Duration, Instant};

    pub use tokio::io::{AsyncReadExt, AsyncWriteExt};
    pub use tokio::net::TcpStream;
    pub use zest_tokio::{core, schema};
    pub use zest_tokio::{serve_http_with, HttpConfig, HttpServer, PeerApi, Registry};

    pub async fn sleep(duration: Duration) {
        tokio::time::sleep(duration).await;
    }

    /// `fut`, or `None` once `deadline` passed.
    pub async fn within<T>(deadline: Instant, fut: impl Future<Output = T>) -> Option<T> {
        tokio::time::timeout_at(deadline.into(), fut).await.ok()
    }
}
