//! The process-wide budgets and bulkheads of upstreams, by key: what `#[retryable]` uses when no
//! `budget` is written (one [`RetryBudget::standard`] per module path, or per `budget_key`), what
//! `max_concurrent = N` shares, and what the tower and reqwest integrations use per host.
//!
//! Each is created on first use and lives as long as the process (one small allocation per key,
//! once); a lookup takes a lock, so `#[retryable]` keeps what it found in a `static` of its own
//! ([`Slot`]) and pays one atomic load per call after the first.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use super::budget::RetryBudget;
use super::bulkhead::Bulkhead;

static BUDGETS: Mutex<BTreeMap<String, &'static RetryBudget>> = Mutex::new(BTreeMap::new());
static BULKHEADS: Mutex<BTreeMap<String, &'static Bulkhead>> = Mutex::new(BTreeMap::new());

/// The process-wide retry budget of the upstream `key` (a [`RetryBudget::standard`]: retries up
/// to 20 % of the calls plus 10 per second), created on first use. Every caller with the same
/// key draws from the same budget.
///
/// ```
/// use retry_audit::retry::{shared_budget, Policy, Retry};
///
/// let payments = shared_budget("payments");
/// assert!(std::ptr::eq(payments, shared_budget("payments")));
/// let no_wait = |_| {};
/// let charged = Retry::new(Policy::new())
///     .budget(payments)
///     .run_sync(&no_wait, |_| Ok::<_, std::io::Error>(42));
/// assert_eq!(charged.unwrap(), 42);
/// ```
pub fn shared_budget(key: &str) -> &'static RetryBudget {
    // A panic while the lock was held cannot leave the map half-updated: use it anyway.
    let mut budgets = BUDGETS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(budget) = budgets.get(key) {
        return budget;
    }
    let budget: &'static RetryBudget = Box::leak(Box::new(RetryBudget::standard()));
    budgets.insert(key.to_owned(), budget);
    budget
}

/// The process-wide bulkhead of the upstream `key`, created on first use with `max_concurrent`
/// permits. Callers that share a key share the bulkhead; when they ask for different limits, the
/// smallest asked so far applies.
///
/// # Panics
/// When `max_concurrent` is 0.
pub fn shared_bulkhead(key: &str, max_concurrent: u32) -> &'static Bulkhead {
    assert!(max_concurrent >= 1, "a bulkhead lets at least one call in");
    let mut bulkheads = BULKHEADS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(bulkhead) = bulkheads.get(key) {
        bulkhead.lower_limit(max_concurrent);
        return bulkhead;
    }
    let bulkhead: &'static Bulkhead = Box::leak(Box::new(Bulkhead::new(max_concurrent)));
    bulkheads.insert(key.to_owned(), bulkhead);
    bulkhead
}

/// A place for one function to keep what it found in the registry: `#[retryable]` puts one in a
/// `static` beside each function, so the lock is taken on the function's first call only.
#[derive(Debug, Default)]
pub struct Slot<T: 'static>(OnceLock<&'static T>);

impl<T> Slot<T> {
    /// An empty slot.
    #[must_use]
    pub const fn new() -> Self {
        Slot(OnceLock::new())
    }
}

impl Slot<RetryBudget> {
    /// The shared budget of `key`, looked up on the first call.
    pub fn budget(&self, key: &str) -> &'static RetryBudget {
        self.0.get_or_init(|| shared_budget(key))
    }
}

impl Slot<Bulkhead> {
    /// The shared bulkhead of `key`, looked up on the first call.
    pub fn bulkhead(&self, key: &str, max_concurrent: u32) -> &'static Bulkhead {
        self.0.get_or_init(|| shared_bulkhead(key, max_concurrent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_budget_per_key() {
        let a = shared_budget("shared::tests::a");
        assert!(std::ptr::eq(a, shared_budget("shared::tests::a")));
        assert!(!std::ptr::eq(a, shared_budget("shared::tests::b")));
        assert!(a.is_ratio());
    }

    #[test]
    fn the_smallest_limit_applies() {
        let first = shared_bulkhead("shared::tests::bulkhead", 20);
        assert_eq!(first.max_concurrent(), 20);
        let second = shared_bulkhead("shared::tests::bulkhead", 5);
        assert!(std::ptr::eq(first, second));
        assert_eq!(first.max_concurrent(), 5);
        shared_bulkhead("shared::tests::bulkhead", 50);
        assert_eq!(first.max_concurrent(), 5);
    }

    #[test]
    fn a_slot_looks_up_once() {
        static SLOT: Slot<RetryBudget> = Slot::new();
        let found = SLOT.budget("shared::tests::slot");
        assert!(std::ptr::eq(
            found,
            SLOT.budget("another key is not looked up")
        ));
        assert!(std::ptr::eq(found, shared_budget("shared::tests::slot")));
    }
}
