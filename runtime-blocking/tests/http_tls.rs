//! HTTPS: zest-blocking's client through a TLS front (a certificate authority made at test
//! time with rcgen, rustls on the server side, on std threads) to zest-blocking's HTTP
//! server, over loopback.

#[path = "common/http.rs"]
mod http_common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use zest_blocking::core::io::TransportFailure;
use zest_blocking::{Client, ClientApi, ClientOptions, ConnectError, HttpEndpoint, HttpServer};

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
/// `server`: one thread moves ciphertext in (and plaintext to the server), another moves the
/// server's plaintext out; they share the rustls connection under a lock, never held while
/// blocked on a socket.
fn tls_front(pki: &Pki, server: &HttpServer) -> SocketAddr {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![pki.leaf.clone()], pki.key.clone_key())
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let backend = server.local_addr();
    thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(socket) = socket else { continue };
            let config = config.clone();
            thread::spawn(move || relay(config, socket, backend));
        }
    });
    addr
}

fn relay(config: Arc<rustls::ServerConfig>, tls_sock: TcpStream, backend: SocketAddr) {
    let Ok(plain) = TcpStream::connect(backend) else { return };
    let conn = Arc::new(Mutex::new(rustls::ServerConnection::new(config).unwrap()));
    let (mut tls_in, mut tls_out) = (tls_sock.try_clone().unwrap(), tls_sock);
    let (mut plain_in, mut plain_out) = (plain.try_clone().unwrap(), plain);
    let flush = |conn: &mut rustls::ServerConnection, out: &mut TcpStream| {
        while conn.wants_write() {
            if conn.write_tls(out).is_err() {
                return false;
            }
        }
        true
    };
    let (c, mut tls_w) = (conn.clone(), tls_out.try_clone().unwrap());
    // The server's answers out, encrypted.
    let outbound = thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match plain_in.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut conn = c.lock().unwrap();
            if conn.writer().write_all(&buf[..n]).is_err() || !flush(&mut conn, &mut tls_w) {
                break;
            }
        }
        let _ = tls_w.shutdown(Shutdown::Both);
    });
    // The client's bytes in, decrypted, to the server.
    let mut buf = vec![0u8; 16 * 1024];
    let mut plain_buf = vec![0u8; 16 * 1024];
    'relay: loop {
        let n = match tls_in.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut conn = conn.lock().unwrap();
        let mut slice = &buf[..n];
        while !slice.is_empty() {
            if conn.read_tls(&mut slice).is_err() || conn.process_new_packets().is_err() {
                // A client that refuses our certificate ends here; send its alert.
                let _ = flush(&mut conn, &mut tls_out);
                break 'relay;
            }
        }
        if !flush(&mut conn, &mut tls_out) {
            break;
        }
        loop {
            match conn.reader().read(&mut plain_buf) {
                Ok(0) => break 'relay,
                Ok(m) => {
                    if plain_out.write_all(&plain_buf[..m]).is_err() {
                        break 'relay;
                    }
                }
                Err(_) => break,
            }
        }
    }
    let _ = plain_out.shutdown(Shutdown::Both);
    let _ = tls_out.shutdown(Shutdown::Both);
    let _ = outbound.join();
}

#[test]
fn https_with_a_ca_made_at_test_time() {
    let server = http_common::server();
    let pki = pki(&["127.0.0.1", "localhost"]);
    let front = tls_front(&pki, &server);
    let endpoint = HttpEndpoint::new(format!("https://127.0.0.1:{}/mcp", front.port()))
        .without_webpki_roots()
        .root_certificate(pki.ca.to_vec());
    let client = Client::connect_to(endpoint, ClientOptions::new("tls-test", "1")).unwrap();
    let result = client.call_tool("echo", json!({"text": "over tls"})).unwrap();
    assert_eq!(result.content[0].as_text(), Some("over tls"));
    let steps = client.call_tool("steps", json!({"n": 2})).unwrap();
    assert_eq!(steps.content[0].as_text(), Some("done after 2 steps"), "an SSE answer over TLS");
    client.close().unwrap();
    server.shutdown();
}

#[test]
fn an_untrusted_certificate_fails_with_a_clear_tls_error() {
    let server = http_common::server();
    let pki = pki(&["127.0.0.1"]);
    let front = tls_front(&pki, &server);
    // The webpki roots only: our test CA is unknown.
    let url = format!("https://127.0.0.1:{}/mcp", front.port());
    let error = Client::connect(&url, ClientOptions::new("tls-test", "1")).unwrap_err();
    let ConnectError::Transport(TransportFailure::Tls(why)) = &error else {
        panic!("expected a TLS error, got {error:?}")
    };
    assert!(why.contains("certificate"), "{why}");
    assert!(error.to_string().starts_with("cannot reach the server: tls failed: "), "{error}");
    server.shutdown();
}

#[test]
fn a_certificate_for_another_name_fails_with_a_clear_tls_error() {
    let server = http_common::server();
    let pki = pki(&["other.example"]);
    let front = tls_front(&pki, &server);
    let endpoint = HttpEndpoint::new(format!("https://127.0.0.1:{}/mcp", front.port()))
        .root_certificate(pki.ca.to_vec());
    let error = Client::connect_to(endpoint, ClientOptions::new("tls-test", "1")).unwrap_err();
    let ConnectError::Transport(TransportFailure::Tls(why)) = &error else {
        panic!("expected a TLS error, got {error:?}")
    };
    assert!(why.to_ascii_lowercase().contains("not valid for name"), "{why}");
    server.shutdown();
}
