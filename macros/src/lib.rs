//! `#[retryable]`: the proc-macro half of retry-audit (arrives with the macro issue).
