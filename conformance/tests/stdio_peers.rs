//! Every runtime's fixture server (its `<runtime>_stdio_server` example) driven over stdio by
//! the official TypeScript and Python SDK clients (tests/peers; install with
//! scripts/install-peers), and the peer runner's own guard against a chatty child.

#[path = "../../tests/support/peers.rs"]
mod peers;
#[path = "../../tests/support/soak.rs"]
mod soak;

use peers::{drive_fixture, Sdk, Target};

macro_rules! sdk_drives_fixture {
    ($($name:ident: $sdk:expr, $runtime:literal;)*) => {$(
        #[test]
        fn $name() {
            drive_fixture($sdk, Target::Stdio(&soak::fixture($runtime)));
        }
    )*};
}

sdk_drives_fixture! {
    typescript_sdk_client_drives_the_tokio_fixture: Sdk::TypeScript, "tokio";
    typescript_sdk_client_drives_the_smol_fixture: Sdk::TypeScript, "smol";
    typescript_sdk_client_drives_the_blocking_fixture: Sdk::TypeScript, "blocking";
    python_sdk_client_drives_the_tokio_fixture: Sdk::Python, "tokio";
    python_sdk_client_drives_the_smol_fixture: Sdk::Python, "smol";
    python_sdk_client_drives_the_blocking_fixture: Sdk::Python, "blocking";
}

/// A child that writes 200 000 bytes to stdout and then 200 000 to stderr before exiting
/// fills both pipe buffers (64 KiB on Linux): a runner that reads only after exit deadlocks
/// with it, and the 30 s bound turns that into a failure instead of a hang.
#[test]
fn the_peer_runner_drains_a_chatty_child_while_it_runs() {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(r#"head -c 200000 /dev/zero | tr "\0" x; head -c 200000 /dev/zero | tr "\0" y >&2"#);
    let out = peers::run_bounded(&mut command, std::time::Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("the chatty child: {e}"));
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(out.stdout.len(), 200_000);
    assert!(out.stdout.iter().all(|&b| b == b'x'));
    assert_eq!(out.stderr.len(), 200_000);
    assert!(out.stderr.iter().all(|&b| b == b'y'));
}
