//! An arbitrary template and URI → `server::UriTemplate::matches`.
//!
//! Matching must finish quickly whatever the URI (a client chooses it), never panic, and any
//! match it reports must be one: the values are non-empty, in order, and a plain variable's
//! value holds no `/`, `?` or `#`.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use zest_core::server::{UriTemplate, MAX_URI_LEN};

#[derive(Arbitrary, Debug)]
struct Case {
    template: String,
    uri: String,
}

fuzz_target!(|case: Case| {
    let template = UriTemplate::parse(&case.template);
    let Some(vars) = template.matches(&case.uri) else { return };
    assert!(case.uri.len() <= MAX_URI_LEN);
    assert_eq!(template.matches(&case.uri).as_ref(), Some(&vars), "matching is deterministic");
    // Without `+` or `#` in the template every variable is a plain one.
    let all_plain = !case.template.contains(['+', '#']);
    for (name, value) in &vars {
        assert!(!value.is_empty(), "{name} matched nothing");
        assert!(case.uri.contains(value.as_str()), "{name}={value:?} is not in the URI");
        assert!(!(all_plain && value.contains(['/', '?', '#'])), "plain {name} took {value:?}");
    }
});
