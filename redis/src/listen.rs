//! The receiving side: a thread subscribed to this member's channels that hands each
//! message to the server ([`ServerHandle::deliver_fleet`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use zest_core::http::server::{FleetError, FleetMessage};
use zest_core::server::ServerHandle;

use crate::RedisFleet;

/// How often the listener looks whether it should stop, and waits before connecting again.
const TICK: Duration = Duration::from_millis(250);

/// The listener of [`RedisFleet::listen`]; dropping it stops the thread.
#[derive(Debug)]
pub struct Listening {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl RedisFleet {
    /// Hands every message the other members send this one to `server` until the returned
    /// [`Listening`] is dropped. Subscribed when this returns (so nothing sent after is
    /// missed); if Redis goes away the thread connects again every 250 ms.
    pub fn listen<H: Clone + Send + 'static>(
        self: &Arc<Self>,
        server: ServerHandle<H>,
    ) -> Result<Listening, FleetError> {
        let channels =
            [self.key(format_args!("all")), self.key(format_args!("m:{}", self.member()))];
        let stop = Arc::new(AtomicBool::new(false));
        let (client, halt) = (self.client.clone(), stop.clone());
        let (subscribed, first) = mpsc::channel();
        let thread = thread::Builder::new()
            .name(format!("zest-redis-listen-{}", self.member()))
            .spawn(move || {
                let mut first = Some(subscribed);
                while !halt.load(Ordering::Acquire) {
                    let outcome = listen_once(&client, &channels, &server, &halt, &mut first);
                    if let (Err(e), Some(first)) = (outcome, first.take()) {
                        let _ = first.send(Err(e));
                        return;
                    }
                    thread::sleep(TICK);
                }
            })
            .map_err(|e| FleetError(format!("cannot start the listener thread: {e}")))?;
        let listening = Listening { stop, thread: Some(thread) };
        match first.recv() {
            Ok(Ok(())) => Ok(listening),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(FleetError("the listener thread ended".into())),
        }
    }
}

/// Subscribes to `channels` and hands on what arrives, until the connection fails (`Ok`) or
/// `stop` is set. The first subscription's outcome goes to `first`.
fn listen_once<H: Clone + Send + 'static>(
    client: &redis::Client,
    channels: &[String],
    server: &ServerHandle<H>,
    stop: &AtomicBool,
    first: &mut Option<Sender<Result<(), FleetError>>>,
) -> Result<(), FleetError> {
    let mut connection = client
        .get_connection_with_timeout(Duration::from_secs(2))
        .map_err(|e| FleetError(format!("Redis does not answer: {e}")))?;
    // The subscription lasts as long as `pubsub` (dropping it unsubscribes).
    let mut pubsub = connection.as_pubsub();
    pubsub.subscribe(channels).map_err(|e| FleetError(format!("cannot subscribe: {e}")))?;
    pubsub.set_read_timeout(Some(TICK)).map_err(|e| FleetError(e.to_string()))?;
    if let Some(first) = first.take() {
        let _ = first.send(Ok(()));
    }
    while !stop.load(Ordering::Acquire) {
        match pubsub.get_message() {
            Ok(message) => {
                let payload: Vec<u8> = message.get_payload().unwrap_or_default();
                if let Ok(message) = serde_json::from_slice::<FleetMessage>(&payload) {
                    server.deliver_fleet(message);
                }
            }
            Err(e) if e.is_timeout() => {}
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}
