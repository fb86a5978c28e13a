//! Following a paginated list's cursors to its end, sans IO: the one loop behind every
//! runtime's [`ClientApi::list_all`](super::ClientApi::list_all).

use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;

use super::{CallError, Paged, MAX_PAGES};
use crate::error::RequestError;
use crate::jsonrpc::RawJson;
use crate::schema::PaginatedParams;

/// The state of one `list_all` walk over method `M`.
///
/// Following a paginated list's cursors to its end, sans IO: the one loop behind every
/// runtime's [`ClientApi::list_all`](super::ClientApi::list_all).
///
/// ```text
/// let mut walk = PageWalk::<ListTools>::new();
/// while let Some(params) = walk.next_params() {
/// walk.page(call(ListTools::NAME, params)?)?;   // the runtime's one request
/// }
/// walk.items()
/// ```
///
/// A server whose cursors never end is refused in two ways, with one error on every
/// runtime: a cursor it already gave (a loop) ends the walk at once, and so does a page past
/// [`MAX_PAGES`]. Pages stay raw until the last is in (a runtime's future must be `Send`,
/// and an item type need not be), so only each page's `nextCursor` is read on the way.
pub struct PageWalk<M> {
    /// The cursor to ask for next; `None` before the first page and after the last.
    cursor: Option<String>,
    /// Every cursor the server gave so far.
    seen: HashSet<String>,
    pages: Vec<RawJson>,
    done: bool,
    /// Why the walk failed, for [`items`](Self::items) to repeat.
    failed: Option<String>,
    method: PhantomData<fn() -> M>,
}

/// The one field of a page the walk reads before the end.
#[derive(Deserialize)]
struct NextCursor {
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

impl<M: Paged> PageWalk<M> {
    /// A walk that has asked for nothing yet.
    pub fn new() -> Self {
        Self {
            cursor: None,
            seen: HashSet::new(),
            pages: Vec::new(),
            done: false,
            failed: None,
            method: PhantomData,
        }
    }

    /// The params of the next page's request; `None` once the last page is in.
    pub fn next_params(&self) -> Option<RawJson> {
        if self.done {
            return None;
        }
        let params = PaginatedParams { cursor: self.cursor.clone(), ..Default::default() };
        Some(RawJson::from_serialize(&params))
    }

    /// Takes the raw result of the request [`next_params`](Self::next_params) described.
    /// `Err` (and the walk is over) when the page has no readable `nextCursor`, when its
    /// cursor is one the server gave before, or when it would be page [`MAX_PAGES`] + 1.
    pub fn page(&mut self, raw: RawJson) -> Result<(), CallError> {
        let next = raw.parse::<NextCursor>().map_err(|e| self.fail(e))?.next_cursor;
        self.pages.push(raw);
        match next {
            None => self.done = true,
            Some(cursor) if !self.seen.insert(cursor.clone()) => {
                let why = format!("{} gave the cursor {cursor:?} a second time", M::NAME);
                return Err(self.fail(why));
            }
            Some(_) if self.pages.len() >= MAX_PAGES => {
                let why = format!("{} still had more pages after {MAX_PAGES}", M::NAME);
                return Err(self.fail(why));
            }
            Some(cursor) => self.cursor = Some(cursor),
        }
        Ok(())
    }

    /// Every item of every page, in order, once the last page is in (a page whose items do
    /// not decode fails the whole list).
    pub fn items(self) -> Result<Vec<M::Item>, CallError> {
        if let Some(why) = self.failed {
            return Err(CallError::Request(RequestError::InvalidResult(why)));
        }
        if !self.done {
            let why = format!("{} was not followed to its last page", M::NAME);
            return Err(CallError::Request(RequestError::InvalidResult(why)));
        }
        let mut items = Vec::new();
        for raw in self.pages {
            let page = raw.parse::<M::Result>().map_err(RequestError::InvalidResult)?;
            items.extend(M::split(page).0);
        }
        Ok(items)
    }

    /// Ends the walk with `why`.
    fn fail(&mut self, why: String) -> CallError {
        self.done = true;
        self.pages.clear();
        self.failed = Some(why.clone());
        CallError::Request(RequestError::InvalidResult(why))
    }
}

impl<M: Paged> Default for PageWalk<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M> fmt::Debug for PageWalk<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageWalk")
            .field("cursor", &self.cursor)
            .field("pages", &self.pages.len())
            .field("done", &self.done)
            .finish()
    }
}

#[cfg(test)]
mod tests;
