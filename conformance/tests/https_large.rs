//! HTTPS with large messages, once for every client runtime: a `tools/call` whose argument
//! and result are each 1 MiB, through a TLS-terminating front (a CA made at test time,
//! rustls on loopback) to the everything fixture served over plain HTTP. A TLS writer that
//! is not flushed leaves the end of a large request in its buffer, and the call hangs.

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
use zest_conformance::fixture::{self, asynchronous};
use zest_core::runtime::http_client::HttpEndpoint;

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
    fn start() -> Self {
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
            let (acceptor, ca) = acceptor();
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
        HttpEndpoint::new(format!("https://127.0.0.1:{}/mcp", self.addr.port()))
            .without_webpki_roots()
            .root_certificate(self.ca.to_vec())
    }
}

/// A TLS acceptor whose leaf for 127.0.0.1 a fresh CA signed, and that CA.
fn acceptor() -> (TlsAcceptor, CertificateDer<'static>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca =
        CertifiedIssuer::self_signed(params, KeyPair::generate().expect("a key")).expect("a CA");
    let key = KeyPair::generate().expect("a key");
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
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
