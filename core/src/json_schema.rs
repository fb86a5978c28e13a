//! A small JSON Schema validator (a draft 2020-12 subset) for tool arguments and structured
//! output: `inputSchema` and `outputSchema`.
//!
//! Supported keywords: boolean schemas, `type`, `enum`, `const`; `properties`, `required`,
//! `additionalProperties`, `minProperties`, `maxProperties`; `prefixItems`, `items` (also the
//! older array form with `additionalItems`), `minItems`, `maxItems`, `uniqueItems`;
//! `minLength`, `maxLength` (in characters); `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `multipleOf`; `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`;
//! `$ref`.
//!
//! - `$ref` resolves `#` and JSON pointers (`#/$defs/..`, `#/definitions/..`, `~0`/`~1` and
//!   percent escapes) against the root schema. Other references (URLs, relative files, `#anchor`
//!   names) are never dereferenced and accept any value. An unresolvable local pointer is an
//!   error.
//! - Numbers compare by value: `1` equals `1.0`, and `"integer"` accepts `1.0`.
//! - Unknown keywords (`format`, `pattern`, `patternProperties`, `contains`, …) are ignored, as
//!   are keywords whose values have the wrong shape. `additionalProperties` is not checked when
//!   `patternProperties` is present, so unsupported patterns never cause false rejections.
//! - Nesting deeper than [`MAX_DEPTH`] and pathological work (exponential `anyOf` over `$ref`s,
//!   `uniqueItems` on huge arrays) end validation with an error instead of overflowing the stack
//!   or hanging.
//! - [`check_schema`] refuses, ahead of time, a schema these rules would misread: malformed
//!   keywords, dangling or self-looping local `$ref`s, excessive nesting.

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Number, Value};

mod check;

pub use check::check_schema;

/// The most problems [`validate`] reports.
pub const MAX_ERRORS: usize = 16;

/// The deepest chain of nested subschema applications (through `$ref`, `properties`, `items`,
/// combinators…) that [`validate`] follows before failing.
pub const MAX_DEPTH: usize = 64;

/// Work allowed for any instance, in subschema applications and compared values.
const BASE_BUDGET: usize = 1 << 18;

/// Extra work allowed per value in the instance, so large instances still validate.
const BUDGET_PER_VALUE: usize = 64;

/// One reason an instance does not match a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON pointer to the offending value in the instance; `""` is the instance itself.
    pub path: String,
    /// What is wrong, lowercase, without a trailing period.
    pub message: String,
}

/// Validates `instance` against `schema`.
///
/// `Err` lists problems in the order found, each with a JSON-pointer path, at most
/// [`MAX_ERRORS`]; it is never empty. When the schema cannot be applied (an unresolvable local
/// `$ref`, nesting beyond [`MAX_DEPTH`], too much work), that is the only problem listed.
/// Never panics, whatever the schema or instance.
pub fn validate(schema: &Value, instance: &Value) -> Result<(), Vec<SchemaError>> {
    let budget =
        BUDGET_PER_VALUE.saturating_mul(count_values(instance)).saturating_add(BASE_BUDGET);
    let mut validator = Validator { root: schema, budget, fatal: None };
    let mut errors = Errors { list: Vec::new(), cap: MAX_ERRORS };
    validator.check(schema, instance, &mut String::new(), 0, &mut errors);
    match validator.fatal {
        Some(fatal) => Err(vec![fatal]),
        None if errors.list.is_empty() => Ok(()),
        None => Err(errors.list),
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "(root)" } else { &self.path };
        write!(f, "{path}: {}", self.message)
    }
}

impl std::error::Error for SchemaError {}

/// State of one [`validate`] call.
struct Validator<'s> {
    root: &'s Value,
    /// Work left; see [`BASE_BUDGET`].
    budget: usize,
    /// A problem with the schema or its size that ends validation, even inside `not`.
    fatal: Option<SchemaError>,
}

/// Collected problems, up to a cap (1 when only validity matters).
struct Errors {
    list: Vec<SchemaError>,
    cap: usize,
}

impl Errors {
    fn full(&self) -> bool {
        self.list.len() >= self.cap
    }

    fn push(&mut self, path: &str, message: impl Into<String>) {
        if !self.full() {
            self.list.push(SchemaError { path: path.to_owned(), message: message.into() });
        }
    }
}

impl<'s> Validator<'s> {
    /// Applies `schema` to `inst`, located at `path`, recording problems in `errs`.
    fn check(
        &mut self,
        schema: &'s Value,
        inst: &Value,
        path: &mut String,
        depth: usize,
        errs: &mut Errors,
    ) {
        if self.fatal.is_some() || errs.full() || !self.spend(1) {
            return;
        }
        if depth > MAX_DEPTH {
            self.fail(path, format!("schema nesting exceeds {MAX_DEPTH} levels"));
            return;
        }
        let schema = match schema {
            Value::Object(schema) => Keywords::of(schema),
            Value::Bool(false) => {
                errs.push(path, "no value is allowed here");
                return;
            }
            _ => return, // `true`, or not a schema at all
        };
        if let Some(Value::String(reference)) = schema.get("$ref") {
            self.check_ref(reference, inst, path, depth, errs);
        }
        self.check_value(schema, inst, path, errs);
        self.check_combinators(schema, inst, path, depth, errs);
        match inst {
            Value::Number(n) => check_number(schema, n, path, errs),
            Value::String(s) => check_string(schema, s, path, errs),
            Value::Array(items) => self.check_array(schema, items, path, depth, errs),
            Value::Object(members) => self.check_object(schema, members, path, depth, errs),
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// Whether `inst` matches `schema`; problems are not kept.
    fn valid(&mut self, schema: &'s Value, inst: &Value, path: &mut String, depth: usize) -> bool {
        let mut probe = Errors { list: Vec::new(), cap: 1 };
        self.check(schema, inst, path, depth, &mut probe);
        probe.list.is_empty()
    }

    fn check_ref(
        &mut self,
        reference: &str,
        inst: &Value,
        path: &mut String,
        depth: usize,
        errs: &mut Errors,
    ) {
        let Some(fragment) = reference.strip_prefix('#') else {
            return; // not local: never dereferenced
        };
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return; // an `$anchor` name: unsupported, accepted
        }
        let root = self.root;
        match percent_decode(fragment).and_then(|pointer| root.pointer(&pointer)) {
            Some(target) => self.check(target, inst, path, depth + 1, errs),
            None => self.fail(path, format!("unresolvable $ref {reference:?}")),
        }
    }

    /// `type`, `enum` and `const`.
    fn check_value(&mut self, schema: Keywords<'_>, inst: &Value, path: &str, errs: &mut Errors) {
        let names = match schema.get("type") {
            Some(name @ Value::String(_)) => std::slice::from_ref(name),
            Some(Value::Array(names)) => names.as_slice(),
            _ => &[],
        };
        // Checked without collecting the names: this runs for every value validated.
        let mut named = names.iter().filter_map(Value::as_str).peekable();
        if named.peek().is_some() && !named.any(|name| has_type(inst, name)) {
            let expected: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
            let got = type_name(inst);
            errs.push(path, format!("expected {}, got {got}", expected.join(" or ")));
        }
        if let Some(Value::Array(options)) = schema.get("enum") {
            if !options.iter().any(|option| self.equal(option, inst)) {
                errs.push(path, "value is not one of the enum values");
            }
        }
        if let Some(constant) = schema.get("const") {
            if !self.equal(constant, inst) {
                errs.push(path, "value does not equal the const value");
            }
        }
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
    fn check_combinators(
        &mut self,
        schema: Keywords<'s>,
        inst: &Value,
        path: &mut String,
        depth: usize,
        errs: &mut Errors,
    ) {
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for sub in all {
                self.check(sub, inst, path, depth + 1, errs);
            }
        }
        if let Some(Value::Array(any)) = schema.get("anyOf") {
            if !any.is_empty() && !any.iter().any(|sub| self.valid(sub, inst, path, depth + 1)) {
                errs.push(path, "value does not match any schema in anyOf");
            }
        }
        if let Some(Value::Array(one)) = schema.get("oneOf") {
            let mut matched = Vec::new();
            for (i, sub) in one.iter().enumerate() {
                if matched.len() < 2 && self.valid(sub, inst, path, depth + 1) {
                    matched.push(i);
                }
            }
            match matched[..] {
                [] if !one.is_empty() => {
                    errs.push(path, "value does not match any schema in oneOf")
                }
                [a, b] => errs.push(
                    path,
                    format!("value matches more than one schema in oneOf ({a} and {b})"),
                ),
                _ => {}
            }
        }
        if let Some(not) = schema.get("not") {
            if self.valid(not, inst, path, depth + 1) {
                errs.push(path, "value matches the schema in not");
            }
        }
        if let Some(condition) = schema.get("if") {
            let branch = if self.valid(condition, inst, path, depth + 1) {
                schema.get("then")
            } else {
                schema.get("else")
            };
            if let Some(branch) = branch {
                self.check(branch, inst, path, depth + 1, errs);
            }
        }
    }

    fn check_array(
        &mut self,
        schema: Keywords<'s>,
        items: &[Value],
        path: &mut String,
        depth: usize,
        errs: &mut Errors,
    ) {
        let len = items.len();
        if let Some(min) = count(schema, "minItems").filter(|&min| len < min) {
            errs.push(path, format!("array has {len} items, fewer than minItems {min}"));
        }
        if let Some(max) = count(schema, "maxItems").filter(|&max| len > max) {
            errs.push(path, format!("array has {len} items, more than maxItems {max}"));
        }
        let (prefix, rest): (&'s [Value], _) =
            match (schema.get("prefixItems"), schema.get("items")) {
                (Some(Value::Array(prefix)), rest) => (prefix, rest),
                (None, Some(Value::Array(prefix))) => (prefix, schema.get("additionalItems")),
                (_, rest) => (&[], rest),
            };
        for (i, item) in items.iter().enumerate() {
            let Some(sub) = prefix.get(i).or(rest) else {
                break;
            };
            let parent = push_segment(path, &i.to_string());
            self.check(sub, item, path, depth + 1, errs);
            path.truncate(parent);
            if errs.full() || self.fatal.is_some() {
                return;
            }
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (i, a) in items.iter().enumerate() {
                for (j, b) in items.iter().enumerate().skip(i + 1) {
                    if self.equal(a, b) {
                        errs.push(
                            path,
                            format!("items {i} and {j} are equal but uniqueItems is set"),
                        );
                        return;
                    }
                    if self.fatal.is_some() {
                        return;
                    }
                }
            }
        }
    }

    fn check_object(
        &mut self,
        schema: Keywords<'s>,
        members: &Map<String, Value>,
        path: &mut String,
        depth: usize,
        errs: &mut Errors,
    ) {
        let len = members.len();
        if let Some(min) = count(schema, "minProperties").filter(|&min| len < min) {
            errs.push(path, format!("object has {len} properties, fewer than minProperties {min}"));
        }
        if let Some(max) = count(schema, "maxProperties").filter(|&max| len > max) {
            errs.push(path, format!("object has {len} properties, more than maxProperties {max}"));
        }
        if let Some(Value::Array(required)) = schema.get("required") {
            if !self.spend(required.len()) {
                return;
            }
            for name in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    errs.push(path, format!("missing required property {name:?}"));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            if !self.spend(properties.len()) {
                return;
            }
            for (name, sub) in properties {
                if let Some(value) = members.get(name) {
                    let parent = push_segment(path, name);
                    self.check(sub, value, path, depth + 1, errs);
                    path.truncate(parent);
                }
            }
        }
        let Some(additional) = schema.get("additionalProperties") else {
            return;
        };
        if schema.get("patternProperties").is_some() || !self.spend(len) {
            return;
        }
        let declared = |name: &str| properties.is_some_and(|p| p.contains_key(name));
        for (name, value) in members.iter().filter(|(name, _)| !declared(name)) {
            if additional == &Value::Bool(false) {
                errs.push(path, format!("property {name:?} is not allowed"));
            } else {
                let parent = push_segment(path, name);
                self.check(additional, value, path, depth + 1, errs);
                path.truncate(parent);
            }
            if errs.full() || self.fatal.is_some() {
                return;
            }
        }
    }

    /// JSON Schema equality: like `==`, but numbers compare by value. Spends one unit per value.
    fn equal(&mut self, a: &Value, b: &Value) -> bool {
        let mut pending = vec![(a, b)];
        while let Some((a, b)) = pending.pop() {
            if !self.spend(1) {
                return false;
            }
            match (a, b) {
                (Value::Number(x), Value::Number(y)) => {
                    if compare(x, y) != Some(Ordering::Equal) {
                        return false;
                    }
                }
                (Value::Array(x), Value::Array(y)) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    pending.extend(x.iter().zip(y));
                }
                (Value::Object(x), Value::Object(y)) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    for (key, x) in x {
                        let Some(y) = y.get(key) else {
                            return false;
                        };
                        pending.push((x, y));
                    }
                }
                _ => {
                    if a != b {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Takes `units` of work from the budget; false (and a fatal error) once it is spent.
    fn spend(&mut self, units: usize) -> bool {
        if let Some(left) = self.budget.checked_sub(units) {
            self.budget = left;
            true
        } else {
            self.budget = 0;
            self.fail("", "validation needs too much work; the schema is too complex".into());
            false
        }
    }

    /// Records the first fatal problem; validation then stops.
    fn fail(&mut self, path: &str, message: String) {
        if self.fatal.is_none() {
            self.fatal = Some(SchemaError { path: path.to_owned(), message });
        }
    }
}

fn check_number(schema: Keywords<'_>, n: &Number, path: &str, errs: &mut Errors) {
    let bound = |key: &str| schema.get(key).and_then(Value::as_number);
    if let Some(min) = bound("minimum") {
        if compare(n, min) == Some(Ordering::Less) {
            errs.push(path, format!("{n} is less than the minimum {min}"));
        }
    }
    if let Some(min) = bound("exclusiveMinimum") {
        if matches!(compare(n, min), Some(Ordering::Less | Ordering::Equal)) {
            errs.push(path, format!("{n} is not greater than the exclusive minimum {min}"));
        }
    }
    if let Some(max) = bound("maximum") {
        if compare(n, max) == Some(Ordering::Greater) {
            errs.push(path, format!("{n} is greater than the maximum {max}"));
        }
    }
    if let Some(max) = bound("exclusiveMaximum") {
        if matches!(compare(n, max), Some(Ordering::Greater | Ordering::Equal)) {
            errs.push(path, format!("{n} is not less than the exclusive maximum {max}"));
        }
    }
    if let Some(step) = bound("multipleOf") {
        if is_multiple(n, step) == Some(false) {
            errs.push(path, format!("{n} is not a multiple of {step}"));
        }
    }
}

fn check_string(schema: Keywords<'_>, s: &str, path: &str, errs: &mut Errors) {
    let (min, max) = (count(schema, "minLength"), count(schema, "maxLength"));
    if min.is_none() && max.is_none() {
        return;
    }
    let len = s.chars().count();
    if let Some(min) = min.filter(|&min| len < min) {
        errs.push(path, format!("string has {len} characters, fewer than minLength {min}"));
    }
    if let Some(max) = max.filter(|&max| len > max) {
        errs.push(path, format!("string has {len} characters, more than maxLength {max}"));
    }
}

/// A non-negative integer keyword (`minItems`, `maxLength`…); `2.0` counts as 2.
fn count(schema: Keywords<'_>, key: &str) -> Option<usize> {
    let value = schema.get(key)?;
    if let Some(n) = value.as_u64() {
        return Some(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let f = value.as_f64()?;
    (f >= 0.0 && f.fract() == 0.0).then_some(f as usize) // `as` saturates
}

/// The most keys a schema object may have for [`Keywords::of`] to read them all.
const MASKED_KEYS_MAX: usize = 32;

/// A schema object with a note of which of the keywords [`validate`] applies it has: most
/// schemas use few of the thirty, and each absent one is then known absent without a search.
#[derive(Clone, Copy)]
struct Keywords<'s> {
    map: &'s Map<String, Value>,
    present: u32,
}

impl<'s> Keywords<'s> {
    fn of(map: &'s Map<String, Value>) -> Self {
        // Validation's budget counts subschemas, not their keys: a schema with very many
        // keys (the peer's own `outputSchema`, say) is searched as before, key by key.
        let present = if map.len() > MASKED_KEYS_MAX {
            u32::MAX
        } else {
            map.keys().fold(0, |present, key| present | keyword_bit(key))
        };
        Self { map, present }
    }

    /// The keyword's value; a keyword `validate` does not apply is searched for as it is.
    fn get(self, key: &str) -> Option<&'s Value> {
        let bit = keyword_bit(key);
        if bit != 0 && self.present & bit == 0 {
            return None;
        }
        self.map.get(key)
    }
}

/// The bit of a keyword [`validate`] applies; 0 for any other key.
fn keyword_bit(key: &str) -> u32 {
    let index = match key {
        "$ref" => 0,
        "type" => 1,
        "enum" => 2,
        "const" => 3,
        "allOf" => 4,
        "anyOf" => 5,
        "oneOf" => 6,
        "not" => 7,
        "if" => 8,
        "then" => 9,
        "else" => 10,
        "minItems" => 11,
        "maxItems" => 12,
        "prefixItems" => 13,
        "items" => 14,
        "additionalItems" => 15,
        "uniqueItems" => 16,
        "minProperties" => 17,
        "maxProperties" => 18,
        "required" => 19,
        "properties" => 20,
        "additionalProperties" => 21,
        "patternProperties" => 22,
        "minimum" => 23,
        "exclusiveMinimum" => 24,
        "maximum" => 25,
        "exclusiveMaximum" => 26,
        "multipleOf" => 27,
        "minLength" => 28,
        "maxLength" => 29,
        _ => return 0,
    };
    1 << index
}

fn has_type(inst: &Value, name: &str) -> bool {
    match (name, inst) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        _ => false,
    }
}

fn type_name(inst: &Value) -> &'static str {
    match inst {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A JSON number, exact when it is an integer.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Option<Self> {
        if let Some(i) = n.as_i64() {
            Some(Self::Int(i.into()))
        } else if let Some(u) = n.as_u64() {
            Some(Self::Int(u.into()))
        } else {
            n.as_f64().map(Self::Float)
        }
    }

    fn float(self) -> f64 {
        match self {
            Self::Int(i) => i as f64,
            Self::Float(f) => f,
        }
    }
}

fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (Num::of(a)?, Num::of(b)?) {
        (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
        (a, b) => a.float().partial_cmp(&b.float()),
    }
}

/// Whether `n` is an integer multiple of `step`; `None` when `step` is not positive.
fn is_multiple(n: &Number, step: &Number) -> Option<bool> {
    match (Num::of(n)?, Num::of(step)?) {
        (_, Num::Int(step)) if step <= 0 => None,
        (Num::Int(n), Num::Int(step)) => Some(n % step == 0),
        (n, step) => {
            let step = step.float();
            if step <= 0.0 || !step.is_finite() {
                return None;
            }
            // Tolerate the rounding of decimal fractions: 0.3 is a multiple of 0.1.
            let quotient = n.float() / step;
            let error = (quotient - quotient.round()).abs();
            Some(error <= 4.0 * f64::EPSILON * quotient.abs())
        }
    }
}

/// Appends `/segment` (JSON-pointer escaped) to `path`; returns the length to truncate back to.
fn push_segment(path: &mut String, segment: &str) -> usize {
    let parent = path.len();
    path.push('/');
    for c in segment.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
    parent
}

/// Decodes `%XX` escapes in a URI fragment; `None` if malformed or not UTF-8.
fn percent_decode(fragment: &str) -> Option<String> {
    if !fragment.contains('%') {
        return Some(fragment.to_owned());
    }
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(fragment.len());
    let mut bytes = fragment.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let (hi, lo) = (hex(bytes.next()?)?, hex(bytes.next()?)?);
            out.push(u8::try_from(hi * 16 + lo).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

/// How many JSON values `value` holds, itself included.
fn count_values(value: &Value) -> usize {
    let mut pending = vec![value];
    let mut n = 0usize;
    while let Some(value) = pending.pop() {
        n += 1;
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(members) => pending.extend(members.values()),
            _ => {}
        }
    }
    n
}

#[cfg(test)]
mod tests;
