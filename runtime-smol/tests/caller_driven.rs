//! A call polls its session's loop itself while it waits (zest-core's `Driven`): it is sent,
//! answered and delivered on the caller's thread, so it needs no thread of smol's global
//! executor. Its own test binary, since it holds that executor's one thread.

use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use smol::net::unix::UnixStream;
use smol::Timer;
use zest_smol::core::error::CloseReason;
use zest_smol::{serve, Client, ClientApi, ClientOptions, Registry, ServerConfig, StdioServer};

/// Far above what a call takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(10);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

/// A server on a thread of its own, with `echo` and `never` (which never answers).
fn server(end: UnixStream) -> std::thread::JoinHandle<CloseReason> {
    std::thread::spawn(move || {
        let registry = Registry::new()
            .tool("echo", "Echoes", |Echo { text }| async move { text })
            .tool("never", "Never answers", |Echo { text }| async move {
                Timer::after(HANG * 100).await;
                text
            });
        let config = ServerConfig::new("caller-driven", "1.0");
        smol::block_on(serve(config, registry, end.clone(), end))
    })
}

#[test]
fn close_completes_beside_a_call_kept_but_no_longer_polled() {
    let (client_end, server_end) = UnixStream::pair().expect("a socket pair");
    let server = server(server_end);
    smol::block_on(async {
        let options = ClientOptions::new("caller-driven", "1.0");
        let client = Client::over(client_end.clone(), client_end, options).await.unwrap();
        let mut call = Box::pin(client.call_tool("never", json!({"text": "hi"})));
        assert!(smol::future::poll_once(&mut call).await.is_none(), "no answer yet");
        // The call waits on the loop but is never polled again: closing still goes through.
        let closed = smol::future::or(async { Some(client.close().await) }, async {
            Timer::after(HANG).await;
            None
        });
        let status = closed.await.expect("closed within the bound");
        assert!(status.unwrap().success());
        assert!(call.await.is_err(), "the kept call ends with the session");
    });
    assert_eq!(server.join().expect("the server thread"), CloseReason::TransportEnded);
}

#[test]
fn a_kept_call_whose_answer_came_holds_back_no_later_message() {
    let (client_end, server_end) = UnixStream::pair().expect("a socket pair");
    // `gated` answers only once the test opens the gate, so its first poll cannot see an
    // answer; `after` answers only once `gated` has, so the kept answer comes in first.
    let (open, gate) = smol::channel::bounded::<()>(1);
    let (answered, after) = smol::channel::bounded::<()>(1);
    smol::block_on(async {
        let registry = Registry::new()
            .tool("echo", "Echoes", |Echo { text }| async move { text })
            .tool("gated", "Echoes once the gate opens", move |Echo { text }| {
                let (gate, answered) = (gate.clone(), answered.clone());
                async move {
                    let _ = gate.recv().await;
                    let _ = answered.send(()).await;
                    text
                }
            })
            .tool("after", "Echoes once `gated` has answered", move |Echo { text }| {
                let after = after.clone();
                async move {
                    let _ = after.recv().await;
                    text
                }
            })
            .tool("spare", "Removed later", |Echo { text }| async move { text });
        let config = ServerConfig::new("caller-driven", "1.0");
        let server = StdioServer::start(config, registry, server_end.clone(), server_end);
        let options = ClientOptions::new("caller-driven", "1.0");
        let client = Client::over(client_end.clone(), client_end, options).await.unwrap();
        let mut kept = Box::pin(client.call_tool("gated", json!({"text": "kept"})));
        assert!(smol::future::poll_once(&mut kept).await.is_none(), "no answer yet");
        open.send(()).await.unwrap();
        // Another call reads both answers: the kept call's is handed over, unseen.
        let other = client.call_tool("after", json!({"text": "other"})).await.unwrap();
        assert_eq!(other.content[0].as_text(), Some("other"));
        // A message the server sends now still reaches the application.
        server.handle().remove_tool("spare");
        let note = smol::future::or(async { client.notifications().recv().await.ok() }, async {
            Timer::after(HANG).await;
            None
        });
        assert!(note.await.is_some(), "the list change arrives");
        let kept = kept.await.unwrap();
        assert_eq!(kept.content[0].as_text(), Some("kept"));
        client.close().await.unwrap();
        server.stopped().await;
    });
}

#[test]
fn a_call_is_answered_while_the_global_executor_is_held() {
    let (client_end, server_end) = UnixStream::pair().expect("a socket pair");
    // The server runs under an executor of its own, on a thread of its own.
    let server = server(server_end);
    smol::block_on(async {
        let options = ClientOptions::new("caller-driven", "1.0");
        let client = Client::over(client_end.clone(), client_end, options).await.unwrap();
        // Hold the global executor's one thread until the call is done.
        let (held_tx, held) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let holder = smol::spawn(async move {
            held_tx.send(()).unwrap();
            let _ = released.recv_timeout(HANG * 2);
        });
        held.recv_timeout(HANG).expect("the global executor runs the holder");
        let call = client.call_tool("echo", json!({"text": "hi"}));
        let answer = smol::future::or(call, async {
            Timer::after(HANG).await;
            panic!("no answer after {HANG:?} while the global executor was held")
        })
        .await
        .unwrap();
        assert_eq!(answer.content[0].as_text(), Some("hi"));
        release.send(()).unwrap();
        holder.await;
        client.close().await.unwrap();
    });
    let reason = server.join().expect("the server thread");
    assert_eq!(reason, CloseReason::TransportEnded, "the client's close ends the server's input");
}
