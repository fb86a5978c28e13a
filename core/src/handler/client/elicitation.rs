//! The user's answer to a form (`elicitation/create`, form mode): defaults filled in, then
//! checked against the requested schema before it goes back to the server.

use serde_json::{Map, Value};

use crate::json_schema;
use crate::schema::{ElicitAction, ElicitFormParams, ElicitResult};

/// Completes an answer to `form` as the spec asks of a client: on `accept`, every field the
/// answer leaves out that has a `default` in the requested schema gets that default
/// (SEP-1034, 2025-11-25; a client pre-fills its form with them, so a field left alone
/// keeps it), then the content is checked against the schema: each field's type, `enum`,
/// titled `oneOf`, multi-select `items` with `minItems` and `maxItems`, string lengths, number
/// bounds, the formats `email`, `uri`, `date` and `date-time`, every `required` field, and no
/// field the schema does not name.
///
/// `Err` says what is wrong, for the user or for the app's log. A `decline` or `cancel` is
/// left as it is. Handlers registered with `on_elicitation` have this applied to their answers;
/// a UI can call it first to re-prompt instead of failing the request.
pub fn complete_form_answer(
    form: &ElicitFormParams,
    answer: &mut ElicitResult,
) -> Result<(), String> {
    if answer.action != ElicitAction::Accept {
        return Ok(());
    }
    let content = answer.content.get_or_insert_with(Map::new);
    for (name, field) in &form.requested_schema.properties {
        if let (Some(default), false) = (&field.default, content.contains_key(name)) {
            content.insert(name.clone(), default.clone());
        }
    }
    let mut schema = serde_json::to_value(&form.requested_schema)
        .map_err(|e| format!("the requested schema does not serialize: {e}"))?;
    if let Value::Object(schema) = &mut schema {
        schema.entry("additionalProperties").or_insert(Value::Bool(false));
    }
    let instance = Value::Object(content.clone());
    if let Err(errors) = json_schema::validate(&schema, &instance) {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        return Err(errors.join("; "));
    }
    for (name, field) in &form.requested_schema.properties {
        let (Some(format), Some(Value::String(text))) = (&field.format, content.get(name)) else {
            continue;
        };
        if !fits_format(format, text) {
            return Err(format!("/{name}: {text:?} is not a valid {format}"));
        }
    }
    Ok(())
}

/// The four formats elicitation allows, checked for shape (not for existence: a date of
/// February 30 passes). Unknown formats pass.
pub(super) fn fits_format(format: &str, text: &str) -> bool {
    match format {
        "email" => match text.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.is_empty()
                    && !domain.contains('@')
                    && !text.chars().any(char::is_whitespace)
            }
            None => false,
        },
        "uri" => match text.split_once(':') {
            Some((scheme, _)) => {
                scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                    && !text.chars().any(char::is_whitespace)
            }
            None => false,
        },
        "date" => is_date(text),
        "date-time" => match text.split_once(['T', 't']) {
            Some((date, time)) => is_date(date) && is_time(time),
            None => false,
        },
        _ => true,
    }
}

/// `YYYY-MM-DD` with a month of 1–12 and a day of 1–31.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && [0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| b[i].is_ascii_digit())
        && (1..=12).contains(&number(&b[5..7]))
        && (1..=31).contains(&number(&b[8..10]))
}

/// RFC 3339 `HH:MM:SS[.frac](Z|±HH:MM)`.
fn is_time(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..2) && digits(3..5) && digits(6..8)) {
        return false;
    }
    let mut rest = &b[8..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

fn number(two: &[u8]) -> u8 {
    two.iter().fold(0, |n, d| n * 10 + (d - b'0'))
}
