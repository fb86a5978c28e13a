//! HTTPS, once for every client runtime, through a TLS-terminating front (a CA made at test
//! time, rustls on loopback) to the everything fixture served over plain HTTP: calls with a
//! JSON and an SSE answer; a `tools/call` whose argument and result are each 1 MiB (a TLS
//! writer that is not flushed leaves the end of a large request in its buffer, and the call
//! hangs); a certificate no root vouches for and one for another name, each a clear TLS
//! error.

#[path = "support/clients.rs"]
mod clients;

use std::net::SocketAddr;
use std::sync::Arc;

use clients::{text, Blocking, Peer, Smol, Tokio};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use zest_conformance::fixture::content::{self, PROGRESS_STEPS, SIMPLE_TEXT};
use zest_conformance::fixture::{self, asynchronous};
use zest_core::io::TransportFailure;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::ConnectError;

/// The size of the argument, and so of the result that echoes it.
const LARGE: usize = 1024 * 1024;

/// The fixture over HTTP and a TLS front before it, on a tokio runtime of their own.
struct Front {
    _rt: tokio::runtime::Runtime,
    /// Kept: the server stops once its last handle is dropped.
    _server: zest_tokio::HttpServer,
    addr: SocketAddr,
    ca: CertificateDer<'static>,
}

impl Front {
    /// A front whose certificate names 127.0.0.1.
    fn start() -> Self {
        Self::start_for("127.0.0.1")
    }

    /// A front whose certificate names `name`.
    fn start_for(name: &str) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let (server, addr, ca) = rt.block_on(async {
            let registry = fixture::registry(asynchronous::adapt::<zest_tokio::RequestContext>);
            let config = fixture::server_config("tokio");
            let server = zest_tokio::serve_http("127.0.0.1:0", config, registry).await;
            let server = server.expect("bind 127.0.0.1:0");
            let backend = server.local_addr();
            let (acceptor, ca) = acceptor(name);
            // A small receive window and a pause before relaying: the client's writes then
            // block mid-request, so a TLS writer's buffer holds bytes only a flush sends.
            let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
            socket.set_recv_buffer_size(4096).expect("a small receive buffer");
            socket.bind("127.0.0.1:0".parse().expect("an address")).expect("bind the front");
            let listener = socket.listen(64).expect("listen");
            let addr = listener.local_addr().expect("the front's address");
            tokio::spawn(async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let Ok(mut tls) = acceptor.accept(socket).await else { return };
                        let Ok(mut plain) = TcpStream::connect(backend).await else { return };
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    });
                }
            });
            (server, addr, ca)
        });
        Self { _rt: rt, _server: server, addr, ca }
    }

    /// The front's MCP endpoint, trusting only the test CA.
    fn endpoint(&self) -> HttpEndpoint {
        self.untrusted_endpoint().without_webpki_roots().root_certificate(self.ca.to_vec())
    }

    /// The front's MCP endpoint with the default roots only, which do not know the test CA.
    fn untrusted_endpoint(&self) -> HttpEndpoint {
        HttpEndpoint::new(format!("https://127.0.0.1:{}/mcp", self.addr.port()))
    }
}

/// A TLS acceptor whose leaf for `name` a fresh CA signed, and that CA.
fn acceptor(name: &str) -> (TlsAcceptor, CertificateDer<'static>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca =
        CertifiedIssuer::self_signed(params, KeyPair::generate().expect("a key")).expect("a CA");
    let key = KeyPair::generate().expect("a key");
    let leaf = CertificateParams::new(vec![name.to_owned()])
        .expect("leaf params")
        .signed_by(&key, &ca)
        .expect("a leaf");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .expect("the leaf and its key");
    (TlsAcceptor::from(Arc::new(config)), ca.der().clone())
}

/// One client: a 1 MiB argument goes out and comes back whole, twice on the same session.
fn large_over_https<C: Peer>() {
    let front = Front::start();
    let client = C::connect_to(front.endpoint());
    for round in 0..2 {
        let name = format!("{round}{}", "x".repeat(LARGE));
        let args = json!({"name": name, "email": "large@example.com"});
        let result = client.call("json_schema_2020_12_tool", args);
        let echoed = text(&result);
        assert!(echoed.len() > LARGE, "{}: {} bytes came back", C::RUNTIME, echoed.len());
        assert!(echoed.contains(&name), "{}: the argument came back whole", C::RUNTIME);
    }
    client.close();
}

/// A JSON answer and an SSE answer (progress first) over TLS.
fn calls_over_https<C: Peer>() {
    let front = Front::start();
    let client = C::connect_to(front.endpoint());
    assert_eq!(text(&client.call("test_simple_text", json!({}))), SIMPLE_TEXT, "{}", C::RUNTIME);
    let (done, progress) = client.call_with_progress("test_tool_with_progress", json!({}));
    assert_eq!(text(&done), text(&content::progress_done()), "{}", C::RUNTIME);
    assert_eq!(progress, PROGRESS_STEPS, "{}", C::RUNTIME);
    client.close();
}

/// The TLS failure `endpoint` meets at `front`, and its display.
fn tls_failure<C: Peer>(endpoint: HttpEndpoint) -> (String, String) {
    let outcome = C::try_connect_with(endpoint, 1024).err();
    let Some(error @ ConnectError::Transport(TransportFailure::Tls(why))) = &outcome else {
        panic!("{}: expected a TLS error, got {outcome:?}", C::RUNTIME)
    };
    (why.clone(), error.to_string())
}

/// The default roots do not know the test CA: a TLS error that says so, worded one way.
fn an_untrusted_certificate_fails_clearly<C: Peer>() {
    let front = Front::start();
    let (why, said) = tls_failure::<C>(front.untrusted_endpoint());
    assert!(why.contains("certificate"), "{}: {why}", C::RUNTIME);
    assert!(said.starts_with("cannot reach the server: tls failed: "), "{}: {said}", C::RUNTIME);
}

/// A certificate the CA signed for another name: a TLS error naming the mismatch.
fn a_certificate_for_another_name_fails_clearly<C: Peer>() {
    let front = Front::start_for("other.example");
    let (why, _) = tls_failure::<C>(front.endpoint());
    assert!(why.to_ascii_lowercase().contains("not valid for name"), "{}: {why}", C::RUNTIME);
}

#[test]
fn https_calls_with_a_ca_made_at_test_time_on_tokio() {
    calls_over_https::<Tokio>();
}

#[test]
fn https_calls_with_a_ca_made_at_test_time_on_smol() {
    calls_over_https::<Smol>();
}

#[test]
fn https_calls_with_a_ca_made_at_test_time_on_blocking() {
    calls_over_https::<Blocking>();
}

#[test]
fn an_untrusted_certificate_fails_with_a_clear_tls_error_on_tokio() {
    an_untrusted_certificate_fails_clearly::<Tokio>();
}

#[test]
fn an_untrusted_certificate_fails_with_a_clear_tls_error_on_smol() {
    an_untrusted_certificate_fails_clearly::<Smol>();
}

#[test]
fn an_untrusted_certificate_fails_with_a_clear_tls_error_on_blocking() {
    an_untrusted_certificate_fails_clearly::<Blocking>();
}

#[test]
fn a_certificate_for_another_name_fails_with_a_clear_tls_error_on_tokio() {
    a_certificate_for_another_name_fails_clearly::<Tokio>();
}

#[test]
fn a_certificate_for_another_name_fails_with_a_clear_tls_error_on_smol() {
    a_certificate_for_another_name_fails_clearly::<Smol>();
}

#[test]
fn a_certificate_for_another_name_fails_with_a_clear_tls_error_on_blocking() {
    a_certificate_for_another_name_fails_clearly::<Blocking>();
}

#[test]
fn a_tokio_client_sends_and_receives_1_mib_over_https() {
    large_over_https::<Tokio>();
}

#[test]
fn a_smol_client_sends_and_receives_1_mib_over_https() {
    large_over_https::<Smol>();
}

#[test]
fn a_blocking_client_sends_and_receives_1_mib_over_https() {
    large_over_https::<Blocking>();
}
