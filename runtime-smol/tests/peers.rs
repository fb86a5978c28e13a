//! The fixture server driven by the official TypeScript and Python SDK clients
//! (tests/peers; install with scripts/install-peers).

mod common;
#[path = "../../tests/support/peers.rs"]
mod peers;

use peers::{drive_fixture, Sdk, Target};

#[test]
fn typescript_sdk_client_drives_the_fixture() {
    drive_fixture(Sdk::TypeScript, Target::Stdio(&common::fixture()));
}

#[test]
fn python_sdk_client_drives_the_fixture() {
    drive_fixture(Sdk::Python, Target::Stdio(&common::fixture()));
}
