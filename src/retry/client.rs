//! What the HTTP client integrations share (`tower`, `reqwest-middleware`): the settings of an
//! upstream (policy, budget, breaker, bulkhead) and how a request is judged idempotent.

use super::{
    shared_budget, shared_bulkhead, Bulkhead, CircuitBreaker, Policy, Rejected, Retry, RetryBudget,
};

#[derive(Clone, Copy, Debug)]
pub(crate) enum BudgetChoice {
    /// The shared budget of the upstream (its key, else the request's host).
    Shared,
    Fixed(&'static RetryBudget),
    Off,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum BulkheadChoice {
    None,
    /// The shared bulkhead of the upstream, with this limit.
    Shared(u32),
    Fixed(&'static Bulkhead),
}

/// The settings of a retrying client.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub policy: Policy,
    /// The upstream's key, instead of the request's host.
    pub key: Option<String>,
    pub budget: BudgetChoice,
    pub breaker: Option<&'static CircuitBreaker>,
    pub bulkhead: BulkheadChoice,
}

impl Settings {
    pub fn new(policy: Policy) -> Self {
        Settings {
            policy,
            key: None,
            budget: BudgetChoice::Shared,
            breaker: None,
            bulkhead: BulkheadChoice::None,
        }
    }

    /// The retry of one request to the upstream `host`: `idempotent` when its method or an
    /// idempotency key says so, a single attempt when it cannot be sent again.
    pub fn retry<E>(&self, host: &str, idempotent: bool, replayable: bool) -> Retry<'static, E>
    where
        E: From<Rejected> + super::Transient,
    {
        let key = self.key.as_deref().unwrap_or(host);
        let mut policy = self.policy;
        if idempotent {
            policy = policy.idempotent(true);
        }
        if !replayable {
            policy = policy.attempts(1);
        }
        let mut retry = Retry::new(policy);
        match self.budget {
            BudgetChoice::Shared => retry = retry.budget(shared_budget(key)),
            BudgetChoice::Fixed(budget) => retry = retry.budget(budget),
            BudgetChoice::Off => {}
        }
        if let Some(breaker) = self.breaker {
            retry = retry.breaker(breaker);
        }
        match self.bulkhead {
            BulkheadChoice::Shared(n) => retry = retry.bulkhead(shared_bulkhead(key, n)),
            BulkheadChoice::Fixed(bulkhead) => retry = retry.bulkhead(bulkhead),
            BulkheadChoice::None => {}
        }
        retry
    }
}

/// Whether an ambiguous failure of this request may be resent: an idempotent method (RFC 9110
/// §9.2.2: `GET`, `HEAD`, `PUT`, `DELETE`, `OPTIONS`, `TRACE`), or an `Idempotency-Key`.
pub(crate) fn idempotent_request(method: &http::Method, headers: &http::HeaderMap) -> bool {
    method.is_idempotent() || headers.contains_key("idempotency-key")
}

/// The builder methods of a retrying client, shared by `RetryLayer` and `RetryMiddleware`.
macro_rules! upstream_builders {
    () => {
        /// The key of the upstream's shared budget and bulkhead, instead of the request's host.
        #[must_use]
        pub fn budget_key(self, key: impl Into<String>) -> Self {
            let key = key.into();
            self.change(|s| s.key = Some(key))
        }

        /// Draws retries from `budget` instead of the upstream's shared one.
        #[must_use]
        pub fn budget(self, budget: &'static $crate::retry::RetryBudget) -> Self {
            self.change(|s| s.budget = $crate::retry::client::BudgetChoice::Fixed(budget))
        }

        /// No retry budget (not recommended: an outage then multiplies the traffic).
        #[must_use]
        pub fn no_budget(self) -> Self {
            self.change(|s| s.budget = $crate::retry::client::BudgetChoice::Off)
        }

        /// Sends each attempt only when `breaker` lets it through.
        #[must_use]
        pub fn breaker(self, breaker: &'static $crate::retry::CircuitBreaker) -> Self {
            self.change(|s| s.breaker = Some(breaker))
        }

        /// Caps the attempts in flight to each upstream at `max_concurrent` (a shared
        /// `Bulkhead` per upstream key, `shared_bulkhead`).
        ///
        /// # Panics
        /// When `max_concurrent` is 0.
        #[must_use]
        pub fn max_concurrent(self, max_concurrent: u32) -> Self {
            assert!(max_concurrent >= 1, "a bulkhead lets at least one call in");
            self.change(|s| {
                s.bulkhead = $crate::retry::client::BulkheadChoice::Shared(max_concurrent);
            })
        }

        /// Caps the attempts in flight with `bulkhead`.
        #[must_use]
        pub fn bulkhead(self, bulkhead: &'static $crate::retry::Bulkhead) -> Self {
            self.change(|s| s.bulkhead = $crate::retry::client::BulkheadChoice::Fixed(bulkhead))
        }
    };
}

pub(crate) use upstream_builders;
