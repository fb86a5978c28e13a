//! 2026-07-28 `subscriptions/listen`: the one long-lived request of the revision. It names
//! the notifications its client wants (list changes, updates of some resources); the
//! server acknowledges the subset it will send, then sends those, each tagged with the
//! listen request's id, on the request's own stream (over HTTP its SSE response) until the
//! client cancels it or closes the stream. Nothing else about the client is kept.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::stateless::Stateless;
use super::{ListKind, Session};
use crate::error::Rejection;
use crate::jsonrpc::{RawJson, Request, RequestId};
use crate::rpc::InboundEntry;
use crate::schema::SUBSCRIPTION_ID_KEY;

/// What a listen asks for, and (acknowledged) what it gets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Filter {
    #[serde(default, skip_serializing_if = "is_false")]
    tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    resource_subscriptions: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Deserialize)]
struct ListenParams {
    notifications: Filter,
}

impl<H: Clone> Session<H> {
    /// Opens a listen: acknowledges what of `r`'s filter this server sends (what it declared
    /// in its capabilities; at most `max_subscriptions` resources) and keeps it open.
    pub(super) fn listen(&mut self, r: &Request, stateless: &Stateless) -> Result<(), Rejection> {
        let params = r.params.as_ref().map(|p| p.parse::<ListenParams>()).transpose();
        let asked = params
            .map_err(|e| Rejection::InvalidParams(format!("subscriptions/listen: {e}")))?
            .ok_or_else(|| Rejection::InvalidParams("notifications is required".into()))?
            .notifications;
        let caps = &stateless.session.server_capabilities;
        let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
        let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
        let resources = caps.resources.as_ref();
        let lists = resources.and_then(|r| r.list_changed) == Some(true);
        let subscribe = resources.and_then(|r| r.subscribe) == Some(true);
        let mut uris = asked.resource_subscriptions;
        uris.truncate(if subscribe { self.shared.config.max_subscriptions } else { 0 });
        let granted = Filter {
            tools_list_changed: asked.tools_list_changed && tools,
            prompts_list_changed: asked.prompts_list_changed && prompts,
            resources_list_changed: asked.resources_list_changed && lists,
            resource_subscriptions: uris,
        };
        // Listens the client ended are forgotten here too, so that churn does not pile up.
        let inbound = &self.endpoint.inbound;
        self.listens.retain(|(id, _)| inbound.stream_of(id).is_some());
        let mut entry = InboundEntry::new(self.endpoint.receiving(), None);
        entry.stateless = Some(stateless.entry);
        if !self.endpoint.inbound.begin(&r.id, entry) {
            return Err(Rejection::InvalidParams("this request id is already in use".into()));
        }
        let ack = json!({ "notifications": granted, "_meta": tag(&r.id) });
        let method = "notifications/subscriptions/acknowledged";
        self.endpoint.notify(method, Some(RawJson::from(ack)), Some(&r.id));
        self.listens.push((r.id.clone(), granted));
        Ok(())
    }

    /// Tells every open listen that asked for it that `kind`'s list changed.
    pub(super) fn notify_listens(&mut self, kind: ListKind) {
        let (method, wants): (&str, fn(&Filter) -> bool) = match kind {
            ListKind::Tools => ("notifications/tools/list_changed", |f| f.tools_list_changed),
            ListKind::Prompts => ("notifications/prompts/list_changed", |f| f.prompts_list_changed),
            ListKind::Resources => {
                ("notifications/resources/list_changed", |f| f.resources_list_changed)
            }
        };
        self.each_listen(|filter, id| wants(filter).then(|| (method, json!({ "_meta": tag(id) }))));
    }

    /// Tells every open listen subscribed to `uri` (or to a prefix of it) that it changed.
    pub(super) fn listens_updated(&mut self, uri: &str) {
        let method = "notifications/resources/updated";
        self.each_listen(|filter, id| {
            let subscribed =
                filter.resource_subscriptions.iter().any(|s| uri.starts_with(s.as_str()));
            subscribed.then(|| (method, json!({ "uri": uri, "_meta": tag(id) })))
        });
    }

    /// Sends what `make` says to each listen still open (forgetting those the client ended).
    fn each_listen(&mut self, make: impl Fn(&Filter, &RequestId) -> Option<(&'static str, Value)>) {
        let inbound = &self.endpoint.inbound;
        self.listens.retain(|(id, _)| inbound.stream_of(id).is_some());
        for (id, filter) in &self.listens {
            if let Some((method, params)) = make(filter, id) {
                self.endpoint.notify(method, Some(RawJson::from(params)), Some(id));
            }
        }
    }
}

/// The `_meta` that ties a notification to its listen.
fn tag(id: &RequestId) -> Value {
    json!({ SUBSCRIPTION_ID_KEY: id })
}
