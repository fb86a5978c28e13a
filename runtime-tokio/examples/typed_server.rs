//! Typed tools over stdio: the API of docs/API-TARGET.md, and the server
//! `tests/peers/ts_typed.mjs` drives with the TypeScript SDK client.
//!
//! Tools `hello {name}`, `order {customer, items, shipping, note?, gift?}` (nested structs,
//! an enum, options and vectors; a structured receipt), `read {path}` (`?` on an
//! `io::Error`), `count {}` (shared state), `delete {path}` (asks the user to confirm with a
//! typed form; deletes nothing). Logs go to stderr only.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use zest_tokio::{serve_stdio, Context, Elicited, Json, Registry, ServerConfig, State, ToolError};

#[derive(Deserialize, schemars::JsonSchema)]
struct Hello {
    /// Who to greet.
    name: String,
}

/// An order: a customer, some items and how to ship them.
#[derive(Deserialize, schemars::JsonSchema)]
struct Order {
    customer: Customer,
    /// At least one item.
    #[schemars(length(min = 1))]
    items: Vec<Item>,
    shipping: Shipping,
    /// Shown on the parcel.
    note: Option<String>,
    #[serde(default)]
    gift: bool,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Customer {
    name: String,
    email: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Item {
    sku: String,
    quantity: u32,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Shipping {
    Standard,
    Express,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Receipt {
    customer: String,
    email: Option<String>,
    skus: Vec<String>,
    quantity: u32,
    tags: usize,
    express: bool,
    note: Option<String>,
    gift: bool,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ReadArgs {
    /// The file to read.
    path: String,
}

#[derive(Default)]
struct Calls(AtomicU64);

#[derive(Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Tick to confirm.
    ok: bool,
}

fn registry() -> Registry {
    Registry::new()
        .with_state(Calls::default())
        .tool("hello", "Greets someone", |Hello { name }| async move { format!("Hello, {name}!") })
        .tool("order", "Places an order", |o: Order| async move {
            Json(Receipt {
                customer: o.customer.name,
                email: o.customer.email,
                skus: o.items.iter().map(|i| i.sku.clone()).collect(),
                quantity: o.items.iter().map(|i| i.quantity).sum(),
                tags: o.items.iter().map(|i| i.tags.len()).sum(),
                express: matches!(o.shipping, Shipping::Express),
                note: o.note,
                gift: o.gift,
            })
        })
        .tool("read", "Reads a file", |p: ReadArgs| async move {
            Ok::<_, ToolError>(tokio::fs::read_to_string(&p.path).await?)
        })
        .tool("count", "Counts its calls", |calls: State<Calls>| async move {
            (calls.0.fetch_add(1, Ordering::Relaxed) + 1).to_string()
        })
        .tool("delete", "Deletes after confirming", |p: ReadArgs, ctx: Context| async move {
            match ctx.elicit_as::<Confirm>("Delete everything?").await? {
                Elicited::Accept(Confirm { ok: true }) => Ok(format!("deleted {}", p.path)),
                _ => Ok::<_, ToolError>("kept".to_owned()),
            }
        })
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let config = ServerConfig::new("tokio_typed_server", env!("CARGO_PKG_VERSION"));
    let reason = serve_stdio(config, registry()).await;
    eprintln!("tokio_typed_server: session over: {reason}");
}
