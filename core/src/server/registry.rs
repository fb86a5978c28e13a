//! What a server offers: tools, resources, templates, prompts and a completion handler, each
//! with the app's handler of type `H`, kept in registration order for stable pagination.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::uri_template::UriTemplate;
use crate::error::Rejection;
use crate::handler::typed::SharedState;
use crate::schema::{Prompt, Resource, ResourceTemplate, Tool};

/// The items a server offers and their handlers.
#[derive(Clone, Debug)]
pub struct Registry<H> {
    pub(crate) tools: Vec<ToolEntry<H>>,
    tool_index: HashMap<String, usize>,
    pub(crate) resources: Vec<(Resource, H)>,
    pub(crate) templates: Vec<(ResourceTemplate, UriTemplate, H)>,
    pub(crate) prompts: Vec<(Prompt, H)>,
    pub(crate) completion: Option<H>,
    /// What [`with_state`](Self::with_state) shares with typed handlers.
    pub(crate) state: Option<SharedState>,
}

impl<H> Default for Registry<H> {
    fn default() -> Self {
        Self {
            tools: Vec::new(),
            tool_index: HashMap::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            completion: None,
            state: None,
        }
    }
}

/// A tool, its schemas as JSON (validated against on every call) and its handler.
#[derive(Clone, Debug)]
pub(crate) struct ToolEntry<H> {
    pub(crate) tool: Tool,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) handler: H,
    /// False for a typed tool, whose handler gets the arguments and never the `_meta`: the
    /// server then does not build it (see `call_params`).
    pub(crate) reads_meta: bool,
}

/// Which list changed; see [`Session::notify_list_changed`](super::Session::notify_list_changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// `prompts/list`.
    Prompts,
    /// `resources/list` and `resources/templates/list`.
    Resources,
    /// `tools/list`.
    Tools,
}

impl<H> Registry<H> {
    /// Adds a tool, replacing one of the same name.
    pub fn add_tool(&mut self, tool: Tool, handler: H) {
        self.add_tool_reading_meta(tool, handler, true);
    }

    /// [`add_tool`](Self::add_tool), saying whether the handler reads the params' `_meta`.
    pub(crate) fn add_tool_reading_meta(&mut self, tool: Tool, handler: H, reads_meta: bool) {
        let entry = ToolEntry {
            input_schema: serde_json::to_value(&tool.input_schema).unwrap_or(Value::Null),
            output_schema: tool.output_schema.as_ref().and_then(|s| serde_json::to_value(s).ok()),
            tool,
            handler,
            reads_meta,
        };
        match self.tool_index.get(&entry.tool.name) {
            Some(&i) => self.tools[i] = entry,
            None => {
                self.tool_index.insert(entry.tool.name.clone(), self.tools.len());
                self.tools.push(entry);
            }
        }
    }

    /// Removes a tool by name, returning its handler.
    pub fn remove_tool(&mut self, name: &str) -> Option<H> {
        let i = self.tool_index.remove(name)?;
        let entry = self.tools.remove(i);
        for index in self.tool_index.values_mut().filter(|index| **index > i) {
            *index -= 1;
        }
        Some(entry.handler)
    }

    /// Adds a resource, replacing one with the same URI.
    pub fn add_resource(&mut self, resource: Resource, handler: H) {
        upsert(&mut self.resources, resource, handler, |a, b| a.uri == b.uri);
    }

    /// Removes a resource by URI.
    pub fn remove_resource(&mut self, uri: &str) -> Option<H> {
        let i = self.resources.iter().position(|(r, _)| r.uri == uri)?;
        Some(self.resources.remove(i).1)
    }

    /// Adds a resource template (RFC 6570 levels 1–2: `{var}` and `{+var}`), replacing one
    /// with the same template string.
    pub fn add_resource_template(&mut self, template: ResourceTemplate, handler: H) {
        let parsed = UriTemplate::parse(&template.uri_template);
        match self.templates.iter().position(|(t, _, _)| t.uri_template == template.uri_template) {
            Some(i) => self.templates[i] = (template, parsed, handler),
            None => self.templates.push((template, parsed, handler)),
        }
    }

    /// Adds a prompt, replacing one of the same name.
    pub fn add_prompt(&mut self, prompt: Prompt, handler: H) {
        upsert(&mut self.prompts, prompt, handler, |a, b| a.name == b.name);
    }

    /// Removes a prompt by name.
    pub fn remove_prompt(&mut self, name: &str) -> Option<H> {
        let i = self.prompts.iter().position(|(p, _)| p.name == name)?;
        Some(self.prompts.remove(i).1)
    }

    /// Sets the handler for `completion/complete`.
    pub fn set_completion_handler(&mut self, handler: H) {
        self.completion = Some(handler);
    }

    /// The registered tool definitions, in order.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|e| &e.tool)
    }

    pub(crate) fn find_tool(&self, name: &str) -> Option<&ToolEntry<H>> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    pub(crate) fn find_prompt(&self, name: &str) -> Option<&(Prompt, H)> {
        self.prompts.iter().find(|(p, _)| p.name == name)
    }

    /// The handler for `uri`: a resource with that exact URI, else the first template that
    /// matches, with its variables.
    pub(crate) fn resolve_resource(&self, uri: &str) -> Option<(&H, BTreeMap<String, String>)> {
        if let Some((_, h)) = self.resources.iter().find(|(r, _)| r.uri == uri) {
            return Some((h, BTreeMap::new()));
        }
        self.templates.iter().find_map(|(_, t, h)| t.matches(uri).map(|vars| (h, vars)))
    }
}

fn upsert<T, H>(list: &mut Vec<(T, H)>, item: T, handler: H, same: impl Fn(&T, &T) -> bool) {
    match list.iter().position(|(t, _)| same(t, &item)) {
        Some(i) => list[i] = (item, handler),
        None => list.push((item, handler)),
    }
}

/// One page of `items`: those after `cursor`, at most `page_size`, and the next cursor.
///
/// Cursors are opaque to clients; ours are `zest:<offset>`. Anything else is -32602.
pub(crate) fn page<'a, T>(
    items: impl ExactSizeIterator<Item = &'a T>,
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(Vec<&'a T>, Option<String>), Rejection>
where
    T: 'a,
{
    let total = items.len();
    let start = match cursor {
        None => 0,
        Some(c) => c
            .strip_prefix("zest:")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n <= total)
            .ok_or(Rejection::InvalidCursor)?,
    };
    let size = page_size.max(1);
    let page: Vec<&T> = items.skip(start).take(size).collect();
    let end = start + page.len();
    let next = (end < total).then(|| format!("zest:{end}"));
    Ok((page, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_everything_once_and_reject_foreign_cursors() {
        let items: Vec<u32> = (0..250).collect();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let (p, next) = page(items.iter(), cursor.as_deref(), 100).unwrap();
            seen.extend(p.into_iter().copied());
            match next {
                Some(n) => cursor = Some(n),
                None => break,
            }
        }
        assert_eq!(seen, items);
        assert_eq!(page(items.iter(), Some("bogus"), 100).unwrap_err(), Rejection::InvalidCursor);
        assert_eq!(
            page(items.iter(), Some("zest:999"), 100).unwrap_err(),
            Rejection::InvalidCursor
        );
    }
}
