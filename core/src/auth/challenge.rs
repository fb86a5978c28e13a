//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1), and the Bearer parameters OAuth reads
//! from them (RFC 6750 §3, RFC 9728 §5.1): quoted strings with escapes, several challenges in
//! one field or over several fields, scheme and parameter names in any case.

/// One challenge: its scheme and its parameters (names lowercased, values unquoted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme, as sent.
    pub scheme: String,
    /// `name=value` parameters in order; names lowercased.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The first value of parameter `name` (lowercase).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// What a Bearer challenge tells an OAuth client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// Where the protected-resource metadata is (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// The scopes the request needs, space-separated (authoritative for this request).
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, `invalid_request` …
    pub error: Option<String>,
    /// The server's words on the error.
    pub error_description: Option<String>,
    /// The challenge's scheme is `DPoP` (RFC 9449 §7.1): the server wants bound tokens.
    pub dpop: bool,
}

impl BearerChallenge {
    /// The first Bearer (or DPoP, RFC 9449 §7.1, which carries the same parameters)
    /// challenge among the fields `values`, if any.
    pub fn find<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let challenge = (values.into_iter()).flat_map(parse_challenges).find(|c| {
            c.scheme.eq_ignore_ascii_case("bearer") || c.scheme.eq_ignore_ascii_case("dpop")
        })?;
        let get = |name: &str| challenge.param(name).map(str::to_owned);
        Some(Self {
            resource_metadata: get("resource_metadata"),
            scope: get("scope"),
            error: get("error"),
            error_description: get("error_description"),
            dpop: challenge.scheme.eq_ignore_ascii_case("dpop"),
        })
    }

    /// `error="insufficient_scope"`: a step-up is asked for.
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Every challenge in one `WWW-Authenticate` field value. Malformed parts end the parse;
/// what was read before them is kept. A token68 (`Negotiate abc==`) is skipped.
pub fn parse_challenges(value: &str) -> Vec<Challenge> {
    let mut cursor = Cursor { rest: value };
    let mut out = Vec::new();
    loop {
        cursor.skip_separators();
        let Some(scheme) = cursor.token() else { break };
        let mut challenge = Challenge { scheme: scheme.to_owned(), params: Vec::new() };
        cursor.skip_spaces();
        if !cursor.param_follows() {
            cursor.skip_token68();
        }
        loop {
            let before = cursor.rest;
            cursor.skip_separators();
            if !cursor.param_follows() {
                cursor.rest = before;
                break;
            }
            let Some((name, value)) = cursor.param() else {
                out.push(challenge);
                return out;
            };
            challenge.params.push((name, value));
        }
        out.push(challenge);
    }
    out
}

struct Cursor<'a> {
    rest: &'a str,
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

impl<'a> Cursor<'a> {
    fn skip_spaces(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t']);
    }

    fn skip_separators(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t', ',']);
    }

    fn token(&mut self) -> Option<&'a str> {
        let end = self.rest.find(|c| !is_tchar(c)).unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (token, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(token)
    }

    /// `name = value` comes next (not a token68, whose `=` are padding).
    fn param_follows(&self) -> bool {
        let end = self.rest.find(|c| !is_tchar(c)).unwrap_or(self.rest.len());
        if end == 0 {
            return false;
        }
        let after = self.rest[end..].trim_start_matches([' ', '\t']);
        let Some(value) = after.strip_prefix('=') else { return false };
        let value = value.trim_start_matches([' ', '\t']);
        value.starts_with(|c| is_tchar(c) || c == '"')
    }

    /// Skips a token68 up to the next comma.
    fn skip_token68(&mut self) {
        let end = self.rest.find(',').unwrap_or(self.rest.len());
        self.rest = &self.rest[end..];
    }

    /// `name = value`, the name lowercased; `None` on an unterminated quoted string.
    fn param(&mut self) -> Option<(String, String)> {
        let name = self.token()?.to_ascii_lowercase();
        self.skip_spaces();
        self.rest = self.rest.strip_prefix('=')?;
        self.skip_spaces();
        Some((name, self.value()?))
    }

    /// A token or a quoted string (escapes undone).
    fn value(&mut self) -> Option<String> {
        let Some(quoted) = self.rest.strip_prefix('"') else {
            return self.token().map(str::to_owned);
        };
        let mut out = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &quoted[i + 1..];
                    return Some(out);
                }
                '\\' => out.push(chars.next()?.1),
                c => out.push(c),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bearer_parameters_quoted_or_not_in_any_case() {
        let header = r#"Bearer realm="mcp", Resource_Metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error=invalid_token"#;
        let b = BearerChallenge::find([header]).unwrap();
        assert_eq!(
            b.resource_metadata.as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(b.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(b.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn finds_bearer_among_several_challenges_and_fields() {
        let first = r#"Basic realm="x", Negotiate abc"#;
        let second =
            r#"bearer error="insufficient_scope", scope="a b", error_description="needs \"b\"""#;
        let b = BearerChallenge::find([first, second]).unwrap();
        assert!(b.insufficient_scope());
        assert_eq!(b.error_description.as_deref(), Some(r#"needs "b""#));
        let both = parse_challenges(
            r#"Newauth realm="apps", type=1, title="Login, please", Basic realm="simple""#,
        );
        assert_eq!(both.len(), 2);
        assert_eq!(both[0].param("title"), Some("Login, please"));
        assert_eq!(both[0].param("type"), Some("1"));
        assert_eq!(both[1].scheme, "Basic");
    }

    #[test]
    fn skips_token68_and_survives_garbage() {
        let parsed = parse_challenges("Negotiate abc123==, Bearer scope=x");
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[1].param("scope"), Some("x"));
        assert_eq!(parsed_scheme("Bearer"), vec!["Bearer".to_string()]);
        assert!(BearerChallenge::find([r#"Bearer scope="unterminated"#]).is_some());
        let lower = parse_challenges("Bearer realm=x,error=invalid_token");
        assert_eq!(lower[0].param("error"), Some("invalid_token"));
        assert!(BearerChallenge::find(["", ",,,", "Basic"]).is_none());
    }

    fn parsed_scheme(v: &str) -> Vec<String> {
        parse_challenges(v).into_iter().map(|c| c.scheme).collect()
    }

    quickcheck::quickcheck! {
        fn never_panics(s: String) -> bool {
            let _ = parse_challenges(&s);
            true
        }
    }
}
