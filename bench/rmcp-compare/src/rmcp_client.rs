//! rmcp's client, written the way its documentation shows: `().serve(transport)` over a
//! `TokioChildProcess` (stdio) or a `StreamableHttpClientTransport` (HTTP), then `call_tool`.

use std::process::Stdio;
use std::time::Instant;

use rmcp::model::CallToolRequestParams;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::json;

use crate::clients::{timed_async, Target};
use crate::measure::{only_child, Measured};
use crate::Load;

pub(crate) async fn run(target: Target<'_>, text: &str, load: &Load, started: Instant) -> Measured {
    let (client, server) = match target {
        Target::Stdio(exe, args) => {
            let mut command = tokio::process::Command::new(exe);
            command.args(args);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::null())
                .spawn()
                .expect("the server starts");
            (().serve(transport).await.expect("the handshake"), None)
        }
        Target::Http(url, pid) => {
            let transport = StreamableHttpClientTransport::from_uri(url);
            (().serve(transport).await.expect("the handshake"), Some(pid))
        }
    };
    let ready = started.elapsed();
    let server = server.unwrap_or_else(only_child);
    let arguments = json!({ "text": text }).as_object().expect("an object").clone();
    let (client_ref, arguments) = (&client, &arguments);
    let measured = timed_async(load, server, ready, || async move {
        let params = CallToolRequestParams::new("echo").with_arguments(arguments.clone());
        let result = client_ref.call_tool(params).await.expect("echo");
        match result.content.as_slice() {
            [block] => {
                let echoed = block.as_text().expect("a text block");
                assert!(echoed.text == text, "echoed text");
            }
            _ => panic!("one text block expected"),
        }
    })
    .await;
    let _ = client.cancel().await;
    measured
}
