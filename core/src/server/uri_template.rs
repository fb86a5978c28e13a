//! Matching URIs against RFC 6570 templates, levels 1 and 2 (`{var}`, `{+var}`, `{#var}`).
//! Other operators are matched as a single variable that may not contain `/`.

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// `reserved` variables (`{+x}`, `{#x}`) may contain `/`, `?` and `#`.
    Var {
        name: String,
        reserved: bool,
    },
}

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template. An unclosed `{` is taken literally.
    pub(crate) fn parse(template: &str) -> Self {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let inner = &rest[open + 1..close];
            let (reserved, name) = match inner.chars().next() {
                Some('+' | '#') => (true, &inner[1..]),
                Some('/' | '.' | ';' | '?' | '&') => (false, &inner[1..]),
                _ => (false, inner),
            };
            if inner.starts_with('#') {
                parts.push(Part::Literal("#".to_owned()));
            }
            parts.push(Part::Var { name: name.to_owned(), reserved });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Self { parts }
    }

    /// The variables if `uri` matches the whole template.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

fn match_parts(parts: &[Part], input: &str, vars: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else { return input.is_empty() };
    match first {
        Part::Literal(lit) => {
            input.strip_prefix(lit.as_str()).is_some_and(|tail| match_parts(rest, tail, vars))
        }
        Part::Var { name, reserved } => {
            // Try every split point, shortest value first; a value is never empty.
            let stop = if *reserved {
                input.len()
            } else {
                input.find(['/', '?', '#']).unwrap_or(input.len())
            };
            for end in (1..=stop).filter(|&e| input.is_char_boundary(e)) {
                if match_parts(rest, &input[end..], vars) {
                    vars.insert(name.clone(), input[..end].to_owned());
                    return true;
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t).matches(uri).map(|m| m.into_iter().collect())
    }

    #[test]
    fn simple_variables_match_one_segment() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/42/data"),
            Some(vec![("id".into(), "42".into())])
        );
        assert_eq!(vars("test://template/{id}/data", "test://template/4/2/data"), None);
        assert_eq!(vars("test://template/{id}/data", "test://template//data"), None);
        assert_eq!(
            vars("file:///{dir}/{name}.txt", "file:///a/b.txt"),
            Some(vec![("dir".into(), "a".into()), ("name".into(), "b".into())])
        );
    }

    #[test]
    fn reserved_variables_span_slashes() {
        assert_eq!(
            vars("file:///{+path}", "file:///a/b/c"),
            Some(vec![("path".into(), "a/b/c".into())])
        );
        assert_eq!(vars("no-vars://x", "no-vars://x"), Some(vec![]));
        assert_eq!(vars("no-vars://x", "no-vars://y"), None);
    }
}
