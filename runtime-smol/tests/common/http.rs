//! HTTP test support on zest-smol: tests/support/http_tools.rs over smol's timer and
//! sockets.
#![allow(dead_code, unreachable_pub)]

#[path = "../../../tests/support/http_tools.rs"]
mod shared;

pub use shared::*;

/// What the shared helpers take from this runtime.
mod rt {
    use std::future::Future;
    use std::time::{Duration, Instant};

    use smol::future::FutureExt as _;
    use smol::Timer;

    pub use smol::io::{AsyncReadExt, AsyncWriteExt};
    pub use smol::net::TcpStream;
    pub use zest_smol::{core, schema};
    pub use zest_smol::{serve_http_with, HttpConfig, HttpServer, PeerApi, Registry};

    pub async fn sleep(duration: Duration) {
        Timer::after(duration).await;
    }

    /// `fut`, or `None` once `deadline` passed.
    pub async fn within<T>(deadline: Instant, fut: impl Future<Output = T>) -> Option<T> {
        async { Some(fut.await) }
            .or(async {
                Timer::at(deadline).await;
                None
            })
            .await
    }
}
