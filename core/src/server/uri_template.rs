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
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template. An unclosed `{` is taken literally.
    pub fn parse(template: &str) -> Self {
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

    /// The variables if `uri` matches the whole template, each value as short as the rest of
    /// the template allows (leftmost variables shortest first). A value is never empty, and
    /// one of a plain variable holds no `/`, `?` or `#`. URIs over [`MAX_URI_LEN`] bytes match
    /// nothing.
    ///
    /// Time is linear in the URI's length times the template's (a table of which suffixes
    /// each part can match, filled right to left), so a client's URI cannot make a server
    /// backtrack through every way of splitting it between adjacent variables.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let table = Table::fill(&self.parts, uri);
        if !table.ok(0, 0) {
            return None;
        }
        let mut vars = BTreeMap::new();
        let mut pos = 0;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(lit) => pos += lit.len(),
                Part::Var { name, reserved } => {
                    // The shortest value after which the rest of the template matches; the
                    // table says one exists.
                    let mut end = pos;
                    loop {
                        end = next_boundary(uri, end);
                        if table.ok(i + 1, end) {
                            break;
                        }
                        debug_assert!(takes(uri, end, *reserved));
                    }
                    // A name used twice keeps its first value.
                    vars.entry(name.clone()).or_insert_with(|| uri[pos..end].to_owned());
                    pos = end;
                }
            }
        }
        Some(vars)
    }
}

/// The longest URI matched against a template (64 KiB; browsers and HTTP servers stop far
/// sooner). Longer ones match no template.
pub const MAX_URI_LEN: usize = 64 * 1024;

/// `ok(i, pos)`: the parts from `i` on match `uri[pos..]` exactly (for `pos` on a char
/// boundary; a `Var` part matches one or more characters, a `Literal` is never empty).
struct Table {
    width: usize,
    cells: Vec<bool>,
}

impl Table {
    fn fill(parts: &[Part], uri: &str) -> Self {
        let width = uri.len() + 1;
        let mut table = Self { width, cells: vec![false; width * (parts.len() + 1)] };
        table.set(parts.len(), uri.len());
        for (i, part) in parts.iter().enumerate().rev() {
            // Right to left, so `ok(i, next)` is known when `ok(i, pos)` is computed.
            for pos in (0..uri.len()).rev().filter(|&p| uri.is_char_boundary(p)) {
                let ok = match part {
                    Part::Literal(lit) => {
                        uri[pos..].starts_with(lit.as_str()) && table.ok(i + 1, pos + lit.len())
                    }
                    Part::Var { reserved, .. } => {
                        let next = next_boundary(uri, pos);
                        takes(uri, pos, *reserved) && (table.ok(i + 1, next) || table.ok(i, next))
                    }
                };
                if ok {
                    table.set(i, pos);
                }
            }
        }
        table
    }

    fn ok(&self, part: usize, pos: usize) -> bool {
        self.cells[part * self.width + pos]
    }

    fn set(&mut self, part: usize, pos: usize) {
        self.cells[part * self.width + pos] = true;
    }
}

/// Whether a variable may take the character at `pos` (a char boundary before the end).
fn takes(uri: &str, pos: usize, reserved: bool) -> bool {
    reserved || !matches!(uri.as_bytes()[pos], b'/' | b'?' | b'#')
}

/// The char boundary after the character at `pos`.
fn next_boundary(uri: &str, pos: usize) -> usize {
    pos + uri[pos..].chars().next().map_or(1, char::len_utf8)
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

    /// The plain backtracking matcher this module used to be: exponential on adjacent
    /// variables, but obviously right; the table must agree with it.
    fn reference(parts: &[Part], input: &str, vars: &mut BTreeMap<String, String>) -> bool {
        let Some((first, rest)) = parts.split_first() else { return input.is_empty() };
        match first {
            Part::Literal(lit) => {
                input.strip_prefix(lit.as_str()).is_some_and(|tail| reference(rest, tail, vars))
            }
            Part::Var { name, reserved } => {
                let stop = if *reserved {
                    input.len()
                } else {
                    input.find(['/', '?', '#']).unwrap_or(input.len())
                };
                for end in (1..=stop).filter(|&e| input.is_char_boundary(e)) {
                    if reference(rest, &input[end..], vars) {
                        vars.insert(name.clone(), input[..end].to_owned());
                        return true;
                    }
                }
                false
            }
        }
    }

    /// Maps arbitrary bytes onto a small alphabet, so that templates and URIs often match.
    fn small(bytes: &[u8], alphabet: &[&str]) -> String {
        bytes.iter().take(12).map(|b| alphabet[*b as usize % alphabet.len()]).collect()
    }

    #[test]
    fn agrees_with_the_backtracking_matcher() {
        fn prop(template: Vec<u8>, uri: Vec<u8>) -> bool {
            let t = small(&template, &["a", "/", "{x}", "{+y}", "{#z}", "{w}", "é", "?"]);
            let u = small(&uri, &["a", "/", "b", "é", "?", "#"]);
            let parsed = UriTemplate::parse(&t);
            let mut want = BTreeMap::new();
            let want = reference(&parsed.parts, &u, &mut want).then_some(want);
            parsed.matches(&u) == want
        }
        quickcheck::QuickCheck::new()
            .tests(20_000)
            .quickcheck(prop as fn(Vec<u8>, Vec<u8>) -> bool);
    }

    #[test]
    fn adjacent_variables_do_not_backtrack_through_every_split() {
        // Backtracking tries about n^4 / 24 splits here (10^11 for n = 2,000) before failing.
        let template = UriTemplate::parse("x://{+a}{+b}{+c}{+d}!");
        let uri = format!("x://{}", "a".repeat(2_000));
        assert_eq!(template.matches(&uri), None);
        let uri = format!("x://{}!", "a".repeat(2_000));
        let vars = template.matches(&uri).expect("matches");
        assert_eq!((vars["a"].len(), vars["b"].len(), vars["c"].len()), (1, 1, 1));
        assert_eq!(vars["d"].len(), 1_997);
    }

    #[test]
    fn uris_over_the_limit_match_nothing() {
        let template = UriTemplate::parse("x://{+a}");
        assert!(template.matches(&format!("x://{}", "a".repeat(MAX_URI_LEN - 4))).is_some());
        assert_eq!(template.matches(&format!("x://{}", "a".repeat(MAX_URI_LEN - 3))), None);
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
