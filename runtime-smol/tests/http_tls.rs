//! HTTPS: zest-smol's client through a TLS front (a certificate authority made at test time
//! with rcgen, futures-rustls on the server side) to zest-smol's HTTP server, over loopback.

mod common;
#[path = "common/http.rs"]
mod http_common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::run;
use futures_rustls::TlsAcceptor;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use smol::future::FutureExt as _;
use smol::net::{TcpListener, TcpStream};
use zest_smol::core::io::TransportFailure;
use zest_smol::{Client, ClientApi, ClientOptions, ConnectError, HttpEndpoint, HttpServer};

/// A CA, and a leaf certificate it signed for `names`.
struct Pki {
    ca: CertificateDer<'static>,
    leaf: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

fn pki(names: &[&str]) -> Pki {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let leaf = CertificateParams::new(names).unwrap().signed_by(&key, &ca).unwrap();
    Pki {
        ca: ca.der().clone(),
        leaf: leaf.der().clone(),
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    }
}

/// Terminates TLS with `pki`'s leaf on a loopback port and relays each connection to
/// `server`. The relay lives as long as the returned task.
async fn tls_front(pki: &Pki, server: &HttpServer) -> (SocketAddr, smol::Task<()>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![pki.leaf.clone()], pki.key.clone_key())
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let backend = server.local_addr();
    let task = smol::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            smol::spawn(async move {
                // A client that refuses our certificate ends the handshake: nothing to relay.
                let Ok(tls) = acceptor.accept(socket).await else { return };
                let Ok(plain) = TcpStream::connect(backend).await else { return };
                let (tls_read, mut tls_write) = smol::io::split(tls);
                let mut plain_write = plain.clone();
                let up = smol::io::copy(tls_read, &mut plain_write);
                let down = smol::io::copy(plain, &mut tls_write);
                let _ = up.or(down).await;
            })
            .detach();
        }
    });
    (addr, task)
}

#[test]
fn https_with_a_ca_made_at_test_time() {
    run(60, async {
        let server = http_common::server().await;
        let pki = pki(&["127.0.0.1", "localhost"]);
        let (front, _relay) = tls_front(&pki, &server).await;
        let endpoint = HttpEndpoint::new(format!("https://127.0.0.1:{}/mcp", front.port()))
            .without_webpki_roots()
            .root_certificate(pki.ca.to_vec());
        let client =
            Client::connect_to(endpoint, ClientOptions::new("tls-test", "1")).await.unwrap();
        let result = client.call_tool("echo", json!({"text": "over tls"})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("over tls"));
        let steps = client.call_tool("steps", json!({"n": 2})).await.unwrap();
        assert_eq!(
            steps.content[0].as_text(),
            Some("done after 2 steps"),
            "an SSE answer over TLS"
        );
        client.close().await.unwrap();
        server.shutdown().await;
    });
}

#[test]
fn an_untrusted_certificate_fails_with_a_clear_tls_error() {
    run(60, async {
        let server = http_common::server().await;
        let pki = pki(&["127.0.0.1"]);
        let (front, _relay) = tls_front(&pki, &server).await;
        // The webpki roots only: our test CA is unknown.
        let url = format!("https://127.0.0.1:{}/mcp", front.port());
        let error = Client::connect(&url, ClientOptions::new("tls-test", "1")).await.unwrap_err();
        let ConnectError::Transport(TransportFailure::Tls(why)) = &error else {
            panic!("expected a TLS error, got {error:?}")
        };
        assert!(why.contains("certificate"), "{why}");
        assert!(error.to_string().starts_with("cannot reach the server: tls failed: "), "{error}");
        server.shutdown().await;
    });
}

#[test]
fn a_certificate_for_another_name_fails_with_a_clear_tls_error() {
    run(60, async {
        let server = http_common::server().await;
        let pki = pki(&["other.example"]);
        let (front, _relay) = tls_front(&pki, &server).await;
        let endpoint = HttpEndpoint::new(format!("https://127.0.0.1:{}/mcp", front.port()))
            .root_certificate(pki.ca.to_vec());
        let error =
            Client::connect_to(endpoint, ClientOptions::new("tls-test", "1")).await.unwrap_err();
        let ConnectError::Transport(TransportFailure::Tls(why)) = &error else {
            panic!("expected a TLS error, got {error:?}")
        };
        assert!(why.to_ascii_lowercase().contains("not valid for name"), "{why}");
        server.shutdown().await;
    });
}
