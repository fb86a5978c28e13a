//! Reading what the suite wrote, and judging it.

pub mod baseline;
pub mod checks;
pub mod table;
pub mod verdict;

#[cfg(test)]
mod tests;
