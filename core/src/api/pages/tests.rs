use serde_json::{json, Value};

use super::*;
use crate::schema::methods::ListTools;

fn page(names: &[&str], next: Option<&str>) -> RawJson {
    let tools: Vec<Value> =
        names.iter().map(|n| json!({"name": n, "inputSchema": {"type": "object"}})).collect();
    let mut page = json!({ "tools": tools });
    if let Some(next) = next {
        page["nextCursor"] = json!(next);
    }
    RawJson::from(page)
}

fn cursor_of(params: &RawJson) -> Option<String> {
    params.parse::<PaginatedParams>().expect("params decode").cursor
}

fn invalid(e: CallError) -> String {
    match e {
        CallError::Request(RequestError::InvalidResult(why)) => why,
        other => panic!("expected an invalid result, got {other:?}"),
    }
}

#[test]
fn a_walk_follows_each_cursor_and_returns_every_item_in_order() {
    let mut walk = PageWalk::<ListTools>::new();
    let first = walk.next_params().expect("a first page");
    assert_eq!(cursor_of(&first), None);
    walk.page(page(&["a", "b"], Some("c1"))).unwrap();
    assert_eq!(cursor_of(&walk.next_params().unwrap()), Some("c1".into()));
    walk.page(page(&["c"], Some("c2"))).unwrap();
    assert_eq!(cursor_of(&walk.next_params().unwrap()), Some("c2".into()));
    walk.page(page(&["d"], None)).unwrap();
    assert!(walk.next_params().is_none());
    let names: Vec<String> = walk.items().unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
}

#[test]
fn a_server_that_repeats_a_cursor_is_refused_at_once() {
    let mut walk = PageWalk::<ListTools>::new();
    walk.page(page(&["a"], Some("x"))).unwrap();
    walk.page(page(&["b"], Some("y"))).unwrap();
    let why = invalid(walk.page(page(&["a"], Some("x"))).unwrap_err());
    assert_eq!(why, r#"tools/list gave the cursor "x" a second time"#);
    assert!(walk.next_params().is_none(), "the walk is over");
    assert_eq!(invalid(walk.items().unwrap_err()), why, "items repeats the failure");
}

#[test]
fn a_server_whose_cursors_never_end_is_refused_after_the_page_cap() {
    let mut walk = PageWalk::<ListTools>::new();
    let mut asked = 0;
    let mut last = Ok(());
    while walk.next_params().is_some() {
        asked += 1;
        last = walk.page(page(&[], Some(&format!("c{asked}"))));
    }
    assert_eq!(asked, MAX_PAGES);
    assert_eq!(
        invalid(last.unwrap_err()),
        format!("tools/list still had more pages after {MAX_PAGES}")
    );
}

#[test]
fn a_page_that_is_not_a_page_fails_the_list_with_its_reason() {
    let mut walk = PageWalk::<ListTools>::new();
    let why = invalid(walk.page(RawJson::from(json!({"nextCursor": 7}))).unwrap_err());
    assert!(why.contains("nextCursor"), "{why}");
    let mut walk = PageWalk::<ListTools>::new();
    walk.page(RawJson::from(json!({"tools": [{"name": 1}]}))).unwrap();
    assert!(invalid(walk.items().unwrap_err()).contains("tools"));
}

#[test]
fn items_before_the_last_page_are_refused() {
    let mut walk = PageWalk::<ListTools>::new();
    walk.page(page(&["a"], Some("more"))).unwrap();
    let why = invalid(walk.items().unwrap_err());
    assert_eq!(why, "tools/list was not followed to its last page");
}
