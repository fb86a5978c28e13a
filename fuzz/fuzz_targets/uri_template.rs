//! Bytes split at the first NUL into a template and a URI (UTF-8, lossy) →
//! `server::UriTemplate::matches`.
//!
//! Matching must finish quickly whatever the URI (a client chooses it), never panic, and any
//! match it reports must be one: the values are non-empty, in order, and a plain variable's
//! value holds no `/`, `?` or `#`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zest_core::server::{UriTemplate, MAX_URI_LEN};

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let text = String::from_utf8_lossy(&data[..cut]);
    let uri = String::from_utf8_lossy(data.get(cut + 1..).unwrap_or_default());
    let template = UriTemplate::parse(&text);
    let Some(vars) = template.matches(&uri) else { return };
    assert!(uri.len() <= MAX_URI_LEN);
    assert_eq!(template.matches(&uri).as_ref(), Some(&vars), "matching is deterministic");
    // Without `+` or `#` in the template every variable is a plain one.
    let all_plain = !text.contains(['+', '#']);
    for (name, value) in &vars {
        assert!(!value.is_empty(), "{name} matched nothing");
        assert!(uri.contains(value.as_str()), "{name}={value:?} is not in the URI");
        assert!(!(all_plain && value.contains(['/', '?', '#'])), "plain {name} took {value:?}");
    }
});
