//! Path analysis of one retry candidate (a loop body, or a function body for recursion): which
//! paths leave on success, which go round again on failure, under which status tests and which
//! guards.
//!
//! Over 1 000 lines on purpose: one walker over every kind of Rust expression and statement, whose
//! arms share the path state; split, the walk would be harder to follow, not easier.
//!
//! Every path carries an [`Outcome`] set by the latest test it passed (`Ok`/`Err` patterns,
//! `is_ok()`/`is_err()`, status checks) and, once a status test narrowed it, the statuses it can
//! still carry. Paths that reach the loop's end or `continue` are recorded as [`Continue`]s; paths
//! that leave (`return`, `break`, `panic!`, `bail!`, setting the loop's flag) as exits.

use syn::{Block, Expr, Pat, Stmt};

use super::known::{self, List};
use super::names;
use super::span::LineIndex;
use super::status::StatusEval;
use super::values::{mentions, place_key, LoopFacts};
use super::{BoundKind, StatusSet};
use crate::source::Span;

/// What the latest test on a path says about the operation's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Neutral,
    Success,
    Failure,
    /// Either (`is_ok() || attempts > max`).
    Mixed,
}

impl Outcome {
    fn refine(self, test: Outcome) -> Outcome {
        if test == Outcome::Neutral {
            self
        } else {
            test
        }
    }

    fn negate(self) -> Outcome {
        match self {
            Outcome::Success => Outcome::Failure,
            Outcome::Failure => Outcome::Success,
            o => o,
        }
    }

    fn and(self, o: Outcome) -> Outcome {
        use Outcome::{Failure, Mixed, Neutral, Success};
        match (self, o) {
            (Neutral, x) | (x, Neutral) => x,
            (Mixed, _) | (_, Mixed) => Mixed,
            (Success, Success) => Success,
            _ => Failure,
        }
    }

    fn or(self, o: Outcome) -> Outcome {
        use Outcome::{Failure, Mixed, Neutral, Success};
        match (self, o) {
            (Neutral, Neutral) => Neutral,
            (Success, Success) => Success,
            (Failure, Failure) => Failure,
            _ => Mixed,
        }
    }

    /// May this path carry a failure?
    #[must_use]
    pub fn may_fail(self) -> bool {
        matches!(self, Outcome::Failure | Outcome::Mixed)
    }

    fn of_statuses(set: StatusSet) -> Outcome {
        let ok = StatusSet::range(200, 299);
        let errors = StatusSet::range(400, 599);
        if set.is_empty() {
            Outcome::Neutral
        } else if set.intersect(ok).is_empty() && set.intersect(errors).is_empty() {
            // 1xx and 3xx: an interim answer or a redirect is not a failure.
            Outcome::Neutral
        } else if set.intersect(ok) == set {
            Outcome::Success
        } else if set.intersect(ok).is_empty() {
            Outcome::Failure
        } else {
            Outcome::Mixed
        }
    }
}

/// The statuses a path can still carry after status tests, and the test that narrowed it last.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StatusCtx {
    pub set: StatusSet,
    pub span: Span,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PathState {
    outcome: Outcome,
    status: Option<StatusCtx>,
    /// A guard said the failure is "not ready yet" (`WouldBlock`, `Interrupted`, `Empty`).
    readiness: bool,
    /// The error was inspected on this path (guard, condition on the error binding).
    classified: bool,
    /// Inside an unguarded `Err(e)` arm: its pattern and binding.
    err_arm: Option<(Span, Option<String>)>,
    /// The path passed a test of an attempt counter, a clock or a schedule.
    bound: Option<BoundKind>,
    /// The operation whose result the latest `Ok`/`Err` test on this path looked at.
    op: Option<String>,
    /// The path steps an attempt counter (`attempt += 1`, `f(retries - 1)`).
    stepped: bool,
    /// The path found the attempts used up (`else` of `if attempt < max`): going round from here
    /// ends the loop rather than retrying. The limit test's span.
    exhausted: Option<Span>,
    /// What picking out the error on this path said of it.
    kinds: ErrorKinds,
    /// This path's own test picked out the error (a guard, a specific `Err(Kind)` pattern, a
    /// condition on the error), as opposed to "every error not excluded before".
    picked: bool,
    /// The path went through a wait.
    waited: bool,
    /// A failure on this path was told apart by a later test of the error's value (`match
    /// error { Kind::Db(e) if retryable(&e) => .., other => return Err(other) }` after the
    /// `Err` arm turned it into `error`): the site classifies what it retries.
    inspected: bool,
    /// After the failure, the path applied `?` to a call (`self.on_read_error(err).await?`):
    /// it may leave there, on a condition the call decides and the analysis does not read.
    unread_exit: bool,
    /// After the failure, the path awaited these calls, other than known waits: whether they
    /// wait is the callees' (`self.on_read_error(err).await`).
    awaited: Vec<String>,
    /// Names bound, after the failure, to values made from its error (`let msg =
    /// e.to_string(); let busy = msg.contains(..)`): a test of one tests the error.
    err_derived: Vec<String>,
    /// The path passed a test of such a name: leaving from here tells errors apart.
    err_tested: bool,
    /// The path takes successful answers that an earlier arm's test of the answer's value
    /// turned away (`Ok(s) if s.state == Stopped => break, _ => ..`): it goes round after the
    /// operation succeeded.
    rejected_ok: bool,
}

/// A `match` on a tuple: the parts `tuple_parts` finds.
struct TupleParts<'a> {
    subject: &'a Expr,
    len: usize,
    result: usize,
    limits: Vec<(usize, BoundKind)>,
}

/// What a test that picks out an error says of it, read from its words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ErrorKinds {
    /// A transient failure: a timeout, a refused or reset connection, an unavailable service.
    pub transient: bool,
    /// A failure known to have happened before the request was processed: the connection was
    /// refused, the transaction was rolled back (serialization failure, deadlock).
    pub not_processed: bool,
}

impl ErrorKinds {
    fn of(text: &str) -> Self {
        let t = text.to_ascii_lowercase().replace([' ', '_'], "");
        let v = known::builtin();
        // A timeout or a reset alongside makes it ambiguous: the request may have been processed.
        let ambiguous = v.part_of(List::AmbiguousErrorWords, &t);
        let not_processed = !ambiguous && v.part_of(List::NotProcessedErrorWords, &t);
        let transient = not_processed || v.part_of(List::TransientErrorWords, &t);
        ErrorKinds {
            transient,
            not_processed,
        }
    }

    fn or(self, o: ErrorKinds) -> ErrorKinds {
        ErrorKinds {
            transient: self.transient || o.transient,
            not_processed: self.not_processed || o.not_processed,
        }
    }
}

impl PathState {
    fn start(outcome: Outcome) -> Self {
        PathState {
            outcome,
            status: None,
            readiness: false,
            classified: false,
            err_arm: None,
            bound: None,
            op: None,
            stepped: false,
            exhausted: None,
            kinds: ErrorKinds::default(),
            picked: false,
            waited: false,
            inspected: false,
            unread_exit: false,
            awaited: Vec::new(),
            err_derived: Vec::new(),
            err_tested: false,
            rejected_ok: false,
        }
    }
}

/// A path that goes round again.
#[derive(Clone, Debug)]
pub struct Continue {
    pub outcome: Outcome,
    pub status: Option<StatusCtx>,
    pub readiness: bool,
    pub classified: bool,
    pub err_arm: Option<Span>,
    /// The operation that failed on this path (`send`, `compare_exchange`), when known.
    pub op: Option<String>,
    /// The limit test the path passed, if any.
    pub bound: Option<BoundKind>,
    /// The path steps an attempt counter.
    pub stepped: bool,
    /// The path found the attempts used up before going round.
    pub exhausted: Option<Span>,
    /// What picking out the error said of it.
    pub kinds: ErrorKinds,
    /// This path's own test picked out the error.
    pub picked: bool,
    /// The path went through a wait (one of [`Flow::waits`]).
    pub waited: bool,
    /// The failure was told apart by a test of the error's value after it was taken out of
    /// its `Err`.
    pub inspected: bool,
    /// After the failure, the path applied `?` to a call: it may leave on a condition the
    /// analysis does not read (an exit it cannot read makes the bound unknown).
    pub unread_exit: bool,
    /// After the failure, the path awaited these calls (by name), other than known waits: a
    /// wait, if any, is the callees' (a wait the analysis cannot see is not "no wait").
    pub awaited: Vec<String>,
    /// The path goes round with a successful answer whose value an earlier test turned away
    /// (not a status): the loop waits for the answer to change, a poll of a state.
    pub rejected_ok: bool,
    /// The `continue`, the recursive call, or the end of the body.
    pub span: Span,
}

impl Continue {
    /// Whether this path cannot go round for ever by itself: it steps the attempt counter, or it
    /// passed a clock or schedule test. A counter test alone does not do: a path that skips the
    /// step (`Err(RateLimited) => continue` before `attempt += 1`) goes round for ever; when no
    /// step of a counter is visible anywhere (it happens in a helper), the test is trusted.
    #[must_use]
    pub fn limited(&self, counters_visible: bool) -> bool {
        self.stepped
            || matches!(
                self.bound,
                Some(BoundKind::Deadline | BoundKind::Schedule | BoundKind::Unread)
            )
            || (self.bound == Some(BoundKind::Counter) && !counters_visible)
    }
}

/// How the body of a candidate behaves.
#[derive(Clone, Debug, Default)]
pub struct FlowResult {
    pub success_exit: bool,
    pub continues: Vec<Continue>,
    /// An exit guarded by an attempt counter, a clock or a schedule.
    pub bounded_by: Option<BoundKind>,
    /// The expressions whose results were tested.
    pub tested_exprs: Vec<Span>,
    /// Whether any exit exists at all.
    pub any_exit: bool,
    /// A failure leaves the candidate after its error was inspected (`if !e.is_transient()
    /// { return Err(e) }`, `Err(Error::Auth) => break`): some errors end the retries, so the
    /// site classifies what it retries.
    pub classifying_exit: bool,
    /// A condition reads a classifier's verdict held in a variable (`if should_retry { .. }`).
    pub reads_verdict: bool,
    /// The operations whose results were tested, with the call that makes each (the tested
    /// expression, or the `let` it was bound by) and how that call names its callee (`None`:
    /// neither a method call nor a call of a path).
    pub tested_calls: Vec<(String, Span, Option<crate::analysis::Via>)>,
}

impl FlowResult {
    /// Names of the operations whose results were tested (`send`, `connect`,
    /// `compare_exchange`).
    pub fn tested_ops(&self) -> impl Iterator<Item = &str> {
        self.tested_calls.iter().map(|(name, _, _)| name.as_str())
    }

    /// The ways round after a failure that retry it: the operation may have failed, the path
    /// is not waiting for readiness, and it did not find the attempts used up.
    pub fn failing(&self) -> impl Iterator<Item = &Continue> {
        self.continues
            .iter()
            .filter(|c| c.outcome.may_fail() && !c.readiness && c.exhausted.is_none())
    }
}

/// Where the candidate's "go round again" comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode<'n> {
    Loop,
    /// A function calling itself: the name, and whether calls are `self.name(..)`.
    Recursion(&'n str),
    /// An operation a retry crate runs: it goes round by returning one of [`Flow::again`].
    Operation,
}

pub struct Flow<'a, 'c> {
    pub index: &'c LineIndex<'a>,
    pub status: &'c StatusEval<'a, 'c>,
    pub facts: &'c LoopFacts<'a>,
    /// The candidate loop's label (`'retry`), without the quote.
    pub label: Option<String>,
    pub mode: Mode<'c>,
    /// Places in a `while` condition: assigning them leaves the loop.
    pub flag_vars: Vec<String>,
    /// The addresses of the body's wait calls (sleeps, waiting helpers): a path through one
    /// waits before it goes round.
    pub waits: std::collections::HashSet<usize>,
    /// In [`Mode::Operation`], the addresses of the values it returns to be run again: a path
    /// that makes one goes round.
    pub again: std::collections::HashSet<usize>,
    depth: usize,
    /// The labelled blocks of the candidate's body being walked (`'pause: { .. }`), innermost
    /// last, with the paths that broke out of each: they go on after the block.
    block_breaks: Vec<(String, Vec<PathState>)>,
    pub result: FlowResult,
}

const MAX_STATES: usize = 48;

fn merge(mut v: Vec<PathState>) -> Vec<PathState> {
    let mut out: Vec<PathState> = Vec::with_capacity(v.len());
    for s in v.drain(..) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.len() > MAX_STATES {
        let mut rest = out.split_off(MAX_STATES - 1);
        let mut m = rest
            .pop()
            .unwrap_or_else(|| PathState::start(Outcome::Mixed));
        for s in rest {
            m.outcome = m.outcome.or(s.outcome);
            m.readiness &= s.readiness;
            m.classified &= s.classified;
            m.waited &= s.waited;
            m.status = match (m.status, s.status) {
                (Some(a), Some(b)) => Some(StatusCtx {
                    set: a.set.union(b.set),
                    ..a
                }),
                _ => None,
            };
        }
        out.push(m);
    }
    out
}

/// What a condition says on each side.
struct CondInfo {
    then_o: Outcome,
    else_o: Outcome,
    then_set: Option<StatusSet>,
    else_set: Option<StatusSet>,
    readiness: bool,
    /// The `else` is "not there yet" as much as a failure: `if let Ok(Some(status)) = get()`
    /// awaits a value that a successful read may not have yet (a poll).
    else_pending: bool,
}

impl CondInfo {
    /// A test whose true side has outcome `o` and whose false side the opposite, with no status
    /// set and no readiness.
    fn outcome(o: Outcome) -> Self {
        CondInfo {
            then_o: o,
            else_o: o.negate(),
            then_set: None,
            else_set: None,
            readiness: false,
            else_pending: false,
        }
    }
}

impl<'a, 'c> Flow<'a, 'c> {
    pub fn new(
        index: &'c LineIndex<'a>,
        status: &'c StatusEval<'a, 'c>,
        facts: &'c LoopFacts<'a>,
        label: Option<String>,
        mode: Mode<'c>,
    ) -> Self {
        Flow {
            index,
            status,
            facts,
            label,
            mode,
            flag_vars: Vec::new(),
            waits: std::collections::HashSet::new(),
            again: std::collections::HashSet::new(),
            depth: 0,
            block_breaks: Vec::new(),
            result: FlowResult::default(),
        }
    }

    /// Walks a loop body entered with `outcome` (Failure for `while res.is_err()`).
    pub fn run_loop_body(&mut self, body: &'a Block, outcome: Outcome, end: Span) {
        let _guard = crate::analysis::limits::enter();
        let out = self.block(body, vec![PathState::start(outcome)]);
        self.record_continue(out, end);
    }

    /// Walks a `while` loop: the condition is the first test (`while res.is_err()`,
    /// `while !res.status().is_success() && attempt < 3`); leaving by it is success or a limit.
    pub fn run_while(&mut self, cond: &'a Expr, body: &'a Block, end: Span) {
        let _guard = crate::analysis::limits::enter();
        let info = self.cond_info(cond);
        let span = self.index.of(cond);
        let text = short(self.index.text(span));
        let set = info.then_set.map(|s| (s, span, format!("`{text}`")));
        let mut states = Self::refined(
            &[PathState::start(Outcome::Neutral)],
            info.then_o,
            set.as_ref(),
            self.cond_op_of(cond).as_deref(),
        );
        Self::hint(&mut states, self.bound_kind_of(cond));
        if info.then_o.may_fail() {
            self.result.success_exit = true;
        }
        let out = self.block(body, states);
        self.record_continue(out, end);
    }

    /// Walks a function body for self-calls; falling off the end returns.
    pub fn run_fn_body(&mut self, body: &'a Block) {
        let _guard = crate::analysis::limits::enter();
        let out = self.block(body, vec![PathState::start(Outcome::Neutral)]);
        self.record_exit(&out);
    }

    /// Walks the body of an operation a runner calls (a closure's, [`Mode::Operation`]): what
    /// it returns ends the round, unless it is one of [`Flow::again`].
    pub fn run_operation(&mut self, body: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        let out = self.expr(body, vec![PathState::start(Outcome::Neutral)]);
        self.record_exit(&out);
    }

    fn record_exit(&mut self, states: &[PathState]) {
        if states.is_empty() {
            return;
        }
        self.result.any_exit = true;
        if states.iter().any(|s| {
            s.outcome != Outcome::Success
                && s.outcome.may_fail()
                && (s.classified || s.picked || s.inspected || s.err_tested || s.status.is_some())
        }) {
            self.result.classifying_exit = true;
        }
        if states
            .iter()
            .any(|s| matches!(s.outcome, Outcome::Success | Outcome::Mixed))
        {
            self.result.success_exit = true;
        }
        // Only a path that leaves without success can be the limit (`Ok(v) => return v` is not).
        for s in states {
            if s.outcome != Outcome::Success {
                if let Some(kind) = s.bound {
                    self.result.bounded_by = Some(kind);
                }
            }
        }
    }

    /// Marks the paths that passed a test of a counter, a clock or a schedule.
    fn hint(states: &mut [PathState], kind: Option<BoundKind>) {
        if let Some(k) = kind {
            for s in states {
                // A limit the analysis reads is not traded for one it cannot.
                if k != BoundKind::Unread || s.bound.is_none() {
                    s.bound = Some(k);
                }
            }
        }
    }

    /// Whether a guard on an exit limits the retries: an attempt counter, a clock, a schedule.
    fn bound_kind_of(&self, guard: &Expr) -> Option<BoundKind> {
        let _guard = crate::analysis::limits::enter();
        super::bound::bound_kind(guard, self.facts, self.status.locals).or_else(|| {
            super::bound::asks_kept_state(guard, self.status.locals, self.facts)
                .then_some(BoundKind::Unread)
        })
    }

    /// A wait call: every path through it has waited.
    fn mark_wait(&self, e: &Expr, states: &mut [PathState]) {
        if self.waits.contains(&(std::ptr::from_ref(e) as usize)) {
            for s in states {
                s.waited = true;
            }
        }
    }

    fn record_continue(&mut self, states: Vec<PathState>, span: Span) {
        for s in states {
            self.result.continues.push(Continue {
                outcome: s.outcome,
                status: s.status,
                readiness: s.readiness,
                classified: s.classified,
                err_arm: s.err_arm.map(|(sp, _)| sp),
                bound: s.bound,
                stepped: s.stepped,
                exhausted: s.exhausted,
                kinds: s.kinds,
                picked: s.picked,
                waited: s.waited,
                inspected: s.inspected,
                unread_exit: s.unread_exit,
                awaited: s.awaited,
                rejected_ok: s.rejected_ok,
                op: s.op,
                span,
            });
        }
    }

    fn targets_candidate(&self, label: Option<&syn::Lifetime>) -> bool {
        match label {
            Some(l) => self.label.as_deref() == Some(&l.ident.to_string()),
            None => self.depth == 0,
        }
    }

    fn block(&mut self, block: &'a Block, mut states: Vec<PathState>) -> Vec<PathState> {
        let _guard = crate::analysis::limits::enter();
        for stmt in &block.stmts {
            if states.is_empty() {
                break;
            }
            states = self.stmt(stmt, states);
        }
        states
    }

    fn stmt(&mut self, stmt: &'a Stmt, states: Vec<PathState>) -> Vec<PathState> {
        let _guard = crate::analysis::limits::enter();
        match stmt {
            Stmt::Local(l) => {
                let Some(init) = &l.init else {
                    return states;
                };
                let states = self.expr(&init.expr, states);
                if let Some((_, else_expr)) = &init.diverge {
                    // let Ok(x) = op() else { ... };  /  let Some(d) = delays.next() else { .. };
                    let pat_o = pat_outcome(&l.pat).unwrap_or(Outcome::Neutral);
                    self.note_tested(&init.expr, pat_o);
                    let init_op = self.op_of(&init.expr);
                    let bound = self.bound_kind_of(&init.expr);
                    let mut else_states =
                        Self::refined(&states, pat_o.negate(), None, init_op.as_deref());
                    Self::hint(&mut else_states, bound);
                    let _ = self.expr(else_expr, else_states);
                    let mut go_on = Self::refined(&states, pat_o, None, init_op.as_deref());
                    Self::hint(&mut go_on, bound);
                    // `let Err(error) = result else { return Ok(()) };`: what follows runs
                    // on the failure, and `error` holds it, as an `Err(error)` arm's
                    // binding does.
                    if pat_o == Outcome::Failure {
                        let mut binding = Vec::new();
                        super::values::pat_bindings(&l.pat, &mut binding);
                        let arm = (self.index.of(&l.pat), binding.into_iter().next());
                        for s in &mut go_on {
                            s.err_arm = Some(arm.clone());
                        }
                    }
                    go_on
                } else {
                    // `let error = match op() { Ok(v) => return Ok(v), Err(e) => e };`:
                    // the failure's value is `error` from here on.
                    let mut states = states;
                    // `let msg = e.to_string();`: a value made from the error holds it too.
                    if let Pat::Ident(name) = &l.pat {
                        let name = name.ident.to_string();
                        for s in &mut states {
                            if Self::state_mentions_err(s, &init.expr)
                                || Self::state_mentions_derived(s, &init.expr)
                            {
                                s.err_derived.push(name.clone());
                            }
                        }
                    }
                    if let (Expr::Match(m), Pat::Ident(name)) = (&*init.expr, &l.pat) {
                        let handed: Vec<String> = m
                            .arms
                            .iter()
                            .filter(|a| pat_outcome(&a.pat) == Some(Outcome::Failure))
                            .filter_map(|a| match (&*a.body, place_key(&a.body)) {
                                (Expr::Path(_), Some(k)) => Some(k),
                                _ => None,
                            })
                            .collect();
                        for s in &mut states {
                            if let Some((_, Some(b))) = &mut s.err_arm {
                                if handed.contains(b) {
                                    *b = name.ident.to_string();
                                }
                            }
                        }
                    }
                    states
                }
            }
            Stmt::Expr(e, _) => self.expr(e, states),
            Stmt::Macro(m) => self.mac(&m.mac, states),
            Stmt::Item(_) => states,
        }
    }

    /// The states after a test: `o` is what the test says of the result of `op`; `set`, the
    /// statuses it admits. A success of another operation (`self.login()` inside a failure arm)
    /// does not turn a failed attempt into a success.
    fn refined(
        states: &[PathState],
        o: Outcome,
        set: Option<&(StatusSet, Span, String)>,
        op: Option<&str>,
    ) -> Vec<PathState> {
        states
            .iter()
            .map(|s| {
                let mut s = s.clone();
                let other_op_success = o == Outcome::Success
                    && s.outcome.may_fail()
                    && op.is_some()
                    && s.op.as_deref() != op;
                if other_op_success {
                    return s;
                }
                s.outcome = s.outcome.refine(o);
                // A later test that leaves only failures on this side took the successful
                // answers out of the path.
                if o == Outcome::Failure {
                    s.rejected_ok = false;
                }
                if let (Some(op), Outcome::Success | Outcome::Failure | Outcome::Mixed) = (op, o) {
                    s.op = Some(op.to_owned());
                }
                if let Some((set, span, reason)) = set {
                    // What earlier tests on this path admitted narrows this one: after
                    // `if !status.is_success() { return .. }`, `status != 301` is a success.
                    let prev = s.status.as_ref().map_or(StatusSet::all(), |c| c.set);
                    let now = prev.intersect(*set);
                    s.status = Some(StatusCtx {
                        set: now,
                        span: *span,
                        reason: reason.clone(),
                    });
                    s.outcome = s.outcome.refine(Outcome::of_statuses(now));
                }
                if o == Outcome::Success {
                    s.err_arm = None;
                }
                s
            })
            .collect()
    }

    fn expr(&mut self, e: &'a Expr, states: Vec<PathState>) -> Vec<PathState> {
        let _guard = crate::analysis::limits::enter();
        if states.is_empty() {
            return states;
        }
        // `OperationResult::Retry(e)`, `Err(backoff::Error::transient(e))`: the runner goes round.
        if self.again.contains(&(std::ptr::from_ref(e) as usize)) {
            let span = self.index.of(e);
            self.record_continue(states, span);
            return Vec::new();
        }
        match e {
            Expr::Return(r) => {
                let states = match &r.expr {
                    Some(x) => self.expr(x, states),
                    None => states,
                };
                self.record_exit(&states);
                Vec::new()
            }
            Expr::Break(b) => {
                let states = match &b.expr {
                    Some(x) => self.expr(x, states),
                    None => states,
                };
                let block = b.label.as_ref().and_then(|l| {
                    let name = l.ident.to_string();
                    self.block_breaks.iter().rposition(|(n, _)| *n == name)
                });
                if let (Some(at), 0) = (block, self.depth) {
                    // Leaves a labelled block of the body: goes on after that block.
                    self.block_breaks[at].1.extend(states);
                } else if self.targets_candidate(b.label.as_ref()) {
                    self.record_exit(&states);
                } else if b.label.is_some() && self.depth == 0 {
                    // Breaks out of an enclosing block or loop: leaves the candidate too.
                    self.record_exit(&states);
                }
                Vec::new()
            }
            Expr::Continue(c) => {
                if self.targets_candidate(c.label.as_ref()) {
                    // The `continue` and its label, not the attributes written on it (a doc
                    // comment there is an attribute that the pre-filter blanks).
                    let at = match &c.label {
                        Some(label) => self.index.between(&c.continue_token, label),
                        None => self.index.of(&c.continue_token),
                    };
                    self.record_continue(states, at);
                } else if c.label.is_some() && self.depth == 0 {
                    // Continues an outer loop: leaves this one.
                    self.record_exit(&states);
                }
                Vec::new()
            }
            Expr::If(i) => self.if_expr(i, states),
            Expr::Match(m) => self.match_expr(m, states),
            Expr::Block(b) => match &b.label {
                Some(label) if self.depth == 0 => {
                    self.block_breaks
                        .push((label.name.ident.to_string(), Vec::new()));
                    let mut out = self.block(&b.block, states);
                    if let Some((_, broke)) = self.block_breaks.pop() {
                        out.extend(broke);
                    }
                    merge(out)
                }
                _ => self.block(&b.block, states),
            },
            Expr::Unsafe(b) => self.block(&b.block, states),
            Expr::Loop(l) => {
                self.depth += 1;
                let _ = self.block(&l.body, states.clone());
                self.depth -= 1;
                states
            }
            Expr::While(w) => {
                let states = self.expr(&w.cond, states);
                self.depth += 1;
                let _ = self.block(&w.body, states.clone());
                self.depth -= 1;
                states
            }
            Expr::ForLoop(f) => {
                let states = self.expr(&f.expr, states);
                self.depth += 1;
                let _ = self.block(&f.body, states.clone());
                self.depth -= 1;
                states
            }
            // `Box::pin(async move { .. self.f(..).await })`: the body of a recursive function.
            Expr::Async(a) if matches!(self.mode, Mode::Recursion(_) | Mode::Operation) => {
                self.block(&a.block, states)
            }
            Expr::Macro(m) => self.mac(&m.mac, states),
            Expr::Call(c) => {
                let mut states = self.expr(&c.func, states);
                for a in &c.args {
                    states = self.expr(a, states);
                }
                self.mark_wait(e, &mut states);
                if let Mode::Recursion(name) = self.mode {
                    if names::callee_path(&c.func).is_some_and(|p| is_self_call_path(p, name)) {
                        return self.recursive_call(e, states);
                    }
                }
                // A call that never returns (`std::process::exit(1)`, a function of the crate
                // whose return type is `!`) leaves the loop as a `return` does.
                if self.never_returns(&c.func) {
                    let failing = Self::refined(&states, Outcome::Failure, None, None);
                    self.record_exit(&failing);
                    return Vec::new();
                }
                states
            }
            // `Err(e).unwrap()` / `Err(e).expect(..)`: panics, i.e. leaves.
            Expr::MethodCall(m)
                if matches!(m.method.to_string().as_str(), "unwrap" | "expect")
                    && matches!(&*m.receiver, Expr::Call(c)
                        if names::callee_path(&c.func).and_then(names::last).as_deref() == Some("Err")) =>
            {
                let failing = Self::refined(&states, Outcome::Failure, None, None);
                self.record_exit(&failing);
                Vec::new()
            }
            Expr::MethodCall(m) => {
                let mut states = self.expr(&m.receiver, states);
                for a in &m.args {
                    states = self.expr(a, states);
                }
                self.mark_wait(e, &mut states);
                if let Mode::Recursion(name) = self.mode {
                    if m.method == name
                        && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
                    {
                        return self.recursive_call(e, states);
                    }
                }
                // `Output::error(e).exit()` where the crate's one method of that name returns
                // `!` and the receiver is made by that method's type: it leaves the loop as a
                // `return` does.
                if self.method_never_returns(m) {
                    let failing = Self::refined(&states, Outcome::Failure, None, None);
                    self.record_exit(&failing);
                    return Vec::new();
                }
                states
            }
            Expr::Assign(a) => {
                let mut states = self.expr(&a.right, states);
                self.mark_step(&a.left, &mut states);
                if let Some(k) = place_key(&a.left) {
                    // `height = height.decrement()`: a value made from the variable itself steps
                    // it, and the condition goes on to test the next one; it ends nothing.
                    let steps_itself = mentions(&a.right, &k);
                    if self.flag_vars.contains(&k) && self.depth == 0 && !steps_itself {
                        // `done = true`, or storing the result on success: the loop's condition
                        // now ends it. Re-running the operation into the tested variable does not.
                        let literal = matches!(&*a.right, Expr::Lit(_));
                        let (leaving, staying): (Vec<PathState>, Vec<PathState>) = states
                            .into_iter()
                            .partition(|s| literal || matches!(s.outcome, Outcome::Success));
                        self.record_exit(&leaving);
                        return staying;
                    }
                }
                states
            }
            Expr::Try(t) => {
                // `Err(e)?` leaves, as `return Err(e.into())` does.
                if is_err_value(&t.expr) {
                    let states = self.expr(&t.expr, states);
                    self.record_exit(&states);
                    return Vec::new();
                }
                let mut states = self.expr(&t.expr, states);
                if is_call(&t.expr) {
                    for s in states.iter_mut().filter(|s| s.outcome.may_fail()) {
                        s.unread_exit = true;
                        // `retry.into_duration(attempt)?` with `Err(retry)` bound: the error is
                        // handed to a call that may leave on it, so the call tells errors
                        // apart (which ones go round is the callee's, unknown here).
                        if Self::state_mentions_err(s, &t.expr)
                            || Self::state_mentions_derived(s, &t.expr)
                        {
                            s.inspected = true;
                        }
                    }
                }
                // `attempts.checked_sub(1).ok_or(Error::GaveUp)?` leaves when the count runs out.
                if let Some(kind) = self.bound_kind_of(&t.expr) {
                    if kind != BoundKind::Schedule || mentions_call(&t.expr) {
                        self.result.bounded_by = Some(kind);
                    }
                }
                states
            }
            Expr::Await(a) => {
                let mut states = self.expr(&a.base, states);
                let waits = self
                    .waits
                    .contains(&(std::ptr::from_ref(&*a.base) as usize))
                    || self.waits.contains(&(std::ptr::from_ref(e) as usize));
                // A wait of zero is no wait (`sleep(Duration::ZERO).await`): a sleep, known as
                // one, given a duration written as zero.
                let scope = self.status.file;
                let zero = match &*a.base {
                    Expr::Call(c) => names::callee_path(&c.func)
                        .filter(|p| scope.is_sleep(&scope.resolve(p)))
                        .and(c.args.first()),
                    Expr::MethodCall(m) => scope
                        .is_sleep_method(&m.method.to_string())
                        .then(|| m.args.first())
                        .flatten(),
                    _ => None,
                }
                .and_then(crate::analysis::crate_values::duration)
                    == Some(0);
                if let (true, false, false, Some(name)) =
                    (is_call(&a.base), waits, zero, operation_name(&a.base))
                {
                    for s in states.iter_mut().filter(|s| s.outcome.may_fail()) {
                        s.awaited.push(name.clone());
                    }
                }
                states
            }
            Expr::Binary(b) => {
                let states = self.expr(&b.left, states);
                let mut states = self.expr(&b.right, states);
                if matches!(b.op, syn::BinOp::AddAssign(_) | syn::BinOp::SubAssign(_)) {
                    self.mark_step(&b.left, &mut states);
                }
                states
            }
            Expr::Paren(p) => self.expr(&p.expr, states),
            Expr::Group(g) => self.expr(&g.expr, states),
            Expr::Reference(r) => self.expr(&r.expr, states),
            Expr::Unary(u) => self.expr(&u.expr, states),
            Expr::Cast(c) => self.expr(&c.expr, states),
            Expr::Field(f) => self.expr(&f.base, states),
            Expr::Let(l) => self.expr(&l.expr, states),
            Expr::Tuple(t) => t.elems.iter().fold(states, |s, e| self.expr(e, s)),
            Expr::Array(a) => a.elems.iter().fold(states, |s, e| self.expr(e, s)),
            Expr::Struct(s) => s.fields.iter().fold(states, |st, f| self.expr(&f.expr, st)),
            _ => states,
        }
    }

    /// The operation an expression's value comes from, looking through one `let`
    /// (`let exchange = q.compare_exchange(..); if let Err(..) = exchange`).
    fn op_of(&self, e: &Expr) -> Option<String> {
        self.op_call_of(e).and_then(operation_name)
    }

    /// The value of a condition that cannot change: a `bool` literal, or a local bound once to
    /// one and never assigned in the loop, negated or not.
    fn constant_cond(&self, cond: &Expr) -> Option<bool> {
        let _guard = crate::analysis::limits::enter();
        match cond {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => Some(b.value),
            Expr::Paren(p) => self.constant_cond(&p.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                self.constant_cond(&u.expr).map(|b| !b)
            }
            Expr::Path(p) => {
                let key = p.path.get_ident()?.to_string();
                if self.facts.mutations.contains_key(&key) || self.flag_vars.contains(&key) {
                    return None;
                }
                match self.status.locals.lets.get(&key).map(Vec::as_slice) {
                    Some(
                        [Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Bool(b),
                            ..
                        })],
                    ) => Some(b.value),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The expression that makes the operation: `e` itself, or the one `let` that bound it.
    fn op_call_of(&self, e: &'a Expr) -> Option<&'a Expr> {
        if operation_name(e).is_some() {
            return Some(e);
        }
        let key = place_key(e)?;
        // The one binding of that name made by an operation: `let rez = cmd.query().await;`
        // beside the `Ok(rez)` of the match that tests it. Bindings of the name in several
        // places (two loops of one function) that all make the same operation hold it too.
        let mut made = self
            .status
            .locals
            .lets
            .get(&key)?
            .iter()
            .filter_map(|init| operation_name(init).map(|name| (*init, name)));
        let (init, name) = made.next()?;
        made.all(|(_, other)| other == name).then_some(init)
    }

    /// Whether a value tested by `is_ok()`/`is_err()` is an awaited timeout (`timeout(d,
    /// token.cancelled()).await`, or the one `let` that bound it): the test says whether the
    /// future finished in time, not whether an attempt succeeded.
    fn elapsed_only(&self, tested: &'a Expr) -> bool {
        let scope = self.status.file;
        scope.awaited_timeout(tested).is_some()
            || self
                .op_call_of(tested)
                .is_some_and(|made| scope.awaited_timeout(made).is_some())
    }

    /// The operation tested by a condition: `if let Err(e) = op()`, `if op().is_ok()`.
    fn cond_op_of(&self, cond: &Expr) -> Option<String> {
        let _guard = crate::analysis::limits::enter();
        match cond {
            Expr::Let(l) => pat_outcome(&l.pat).and_then(|_| self.op_of(&l.expr)),
            Expr::MethodCall(m) if m.method == "is_ok" || m.method == "is_err" => {
                if self.elapsed_only(&m.receiver) {
                    return None;
                }
                self.op_of(&m.receiver)
            }
            Expr::Unary(u) => self.cond_op_of(&u.expr),
            Expr::Paren(p) => self.cond_op_of(&p.expr),
            Expr::Binary(b) => self
                .cond_op_of(&b.left)
                .or_else(|| self.cond_op_of(&b.right)),
            _ => None,
        }
    }

    /// Whether a condition being true means the attempts are used up (`attempt >= max`,
    /// `retries_left == 0`): `Some(true)`; true means another attempt is allowed
    /// (`attempt < max`): `Some(false)`; not a plain limit test: `None`.
    fn limit_side(&self, cond: &Expr) -> Option<bool> {
        let _guard = crate::analysis::limits::enter();
        match cond {
            Expr::Paren(p) => self.limit_side(&p.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                self.limit_side(&u.expr).map(|b| !b)
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                let v = known::builtin();
                if v.word(List::ExhaustedChecks, &name) {
                    Some(true)
                } else if v.word(List::AttemptsLeftChecks, &name) {
                    Some(false)
                } else {
                    None
                }
            }
            Expr::Binary(b) => {
                // The counter of a comparison: a place the loop steps, else a name like one
                // (`attempt < max_retries`: `attempt`, although both read like counters).
                let counts = |e: &Expr, stepped: bool| {
                    let mut found = None;
                    for_each_name(e, &mut |n, is_call| {
                        // Not a time named like a count (`retry_end`, `retry_deadline`).
                        let hit = if stepped {
                            self.facts.counters.contains(n)
                        } else {
                            names::is_counter_name(n)
                                && !names::is_time_name(n)
                                && !known::builtin()
                                    .suffix_of(List::NotCounterSuffixes, &n.to_ascii_lowercase())
                        };
                        if found.is_none() && !is_call && hit {
                            found = Some(n.to_owned());
                        }
                    });
                    found
                };
                let pick =
                    |stepped: bool| match (counts(&b.left, stepped), counts(&b.right, stepped)) {
                        (Some(c), None) => Some((c, true)),
                        (None, Some(c)) => Some((c, false)),
                        _ => None,
                    };
                let (counter, on_left) = pick(true).or_else(|| pick(false))?;
                // `retries_left > 0` counts down: its limit is reached going down.
                let down = {
                    let n = counter.to_ascii_lowercase();
                    known::builtin().part_of(List::CountDownWords, &n) || self.counts_down(&counter)
                };
                let reached_when_greater = !down;
                let side = match b.op {
                    syn::BinOp::Lt(_) | syn::BinOp::Le(_) => !on_left,
                    syn::BinOp::Gt(_) | syn::BinOp::Ge(_) => on_left,
                    syn::BinOp::Eq(_) => return Some(true),
                    syn::BinOp::Ne(_) => return Some(false),
                    _ => return None,
                };
                // `side`: true when the condition holds for a large counter.
                Some(side == reached_when_greater)
            }
            _ => None,
        }
    }

    fn counts_down(&self, key: &str) -> bool {
        self.facts.mutations.get(key).is_some_and(|ms| {
            ms.iter().any(|m| {
                matches!(
                    m,
                    super::values::Mutation::Compound(syn::BinOp::SubAssign(_), _)
                ) || matches!(m, super::values::Mutation::Assign(e)
                    if names::text(e).contains(&format!("{key} - ")))
            })
        })
    }

    /// Marks the paths that step an attempt counter (`attempt += 1`).
    fn mark_step(&self, place: &Expr, states: &mut [PathState]) {
        if place_key(place).is_some_and(|k| self.facts.counters.contains(&k)) {
            for s in states {
                s.stepped = true;
            }
        }
    }

    /// Whether a callee never returns: std's `process::exit` and `process::abort` (API), or a
    /// function the file can see whose signature returns `!`.
    fn never_returns(&self, func: &Expr) -> bool {
        let Some(path) = names::callee_path(func) else {
            return false;
        };
        let scope = self.status.file;
        let full = scope.resolve(path);
        let std_exit = matches!(full.as_slice(), [std, process, f]
            if std == "std" && process == "process" && matches!(f.as_str(), "exit" | "abort"));
        std_exit
            || (path.segments.len() == 1
                && scope.defines_fn(&full[full.len() - 1])
                && scope.probe(|| {
                    scope
                        .function_via(
                            &full[full.len() - 1],
                            Some(&super::Via::of_path(&full, None)),
                        )
                        .is_some_and(|f| {
                            matches!(&f.sig.output, syn::ReturnType::Type(_, t)
                                if matches!(**t, syn::Type::Never(_)))
                        })
                }))
    }

    /// Whether a method call never returns: the crate defines exactly one method of that
    /// name, its return type is `!`, and the receiver is made by a call of an associated
    /// function of that method's type (`Output::error(e).exit()`, `exit` in `impl Output`):
    /// a receiver of another type may have a method of the same name that returns. Two
    /// methods of the name, none, or a receiver whose type is not shown are unknown, and the
    /// call is taken to return.
    fn method_never_returns(&self, m: &syn::ExprMethodCall) -> bool {
        let _guard = crate::analysis::limits::enter();
        // The type whose associated function made the receiver, through method chains.
        let mut at = &*m.receiver;
        let made_by = loop {
            match at {
                Expr::MethodCall(inner) => at = &inner.receiver,
                Expr::Paren(p) => at = &p.expr,
                Expr::Call(c) => match &*c.func {
                    Expr::Path(p) if p.path.segments.len() >= 2 => {
                        let segs = &p.path.segments;
                        break Some(segs[segs.len() - 2].ident.to_string());
                    }
                    _ => break None,
                },
                _ => break None,
            }
        };
        let Some(ty) = made_by else {
            return false;
        };
        let name = m.method.to_string();
        let scope = self.status.file;
        scope.defines_fn(&name)
            && scope.probe(|| {
                scope
                    .function_via(&name, Some(&super::Via::Method))
                    .is_some_and(|f| {
                        f.owner.is_some_and(|o| *o == ty)
                            && matches!(&f.sig.output, syn::ReturnType::Type(_, t)
                                if matches!(**t, syn::Type::Never(_)))
                    })
            })
    }

    fn recursive_call(&mut self, call: &'a Expr, states: Vec<PathState>) -> Vec<PathState> {
        let _guard = crate::analysis::limits::enter();
        let (mut fail, rest): (Vec<PathState>, Vec<PathState>) =
            states.into_iter().partition(|s| s.outcome.may_fail());
        // `self.fetch(url, retries - 1)`: the call itself steps the counter.
        if self.facts.counters.iter().any(|c| mentions(call, c)) {
            for s in &mut fail {
                s.stepped = true;
            }
        }
        self.record_continue(fail, self.index.of(call));
        rest
    }

    fn mac(&mut self, mac: &'a syn::Macro, states: Vec<PathState>) -> Vec<PathState> {
        let name = names::last(&mac.path).unwrap_or_default();
        match name.as_str() {
            _ if known::builtin().word(List::FailingMacros, &name) => {
                let failing = Self::refined(&states, Outcome::Failure, None, None);
                self.record_exit(&failing);
                Vec::new()
            }
            "ensure" => {
                // ensure!(attempt < MAX, ..) leaves when the condition fails (anyhow's: its
                // condition is read, so its name is API here, not vocabulary).
                if let Ok(args) = mac.parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                ) {
                    if let Some(first) = args.first() {
                        let text = names::text(first);
                        if text
                            .split(|c: char| !c.is_alphanumeric() && c != '_')
                            .any(|w| self.facts.counters.contains(w) || names::is_counter_name(w))
                        {
                            self.result.bounded_by = Some(BoundKind::Counter);
                        } else if text
                            .split(|c: char| !c.is_alphanumeric() && c != '_')
                            .any(names::is_time_name)
                        {
                            self.result.bounded_by = Some(BoundKind::Deadline);
                        }
                    }
                }
                states
            }
            _ => states,
        }
    }

    fn if_expr(&mut self, i: &'a syn::ExprIf, states: Vec<PathState>) -> Vec<PathState> {
        let _guard = crate::analysis::limits::enter();
        // `let timed_out = false; .. if !timed_out { continue }`: a flag nothing sets decides
        // the branch; the other one never runs.
        match self.constant_cond(&i.cond) {
            Some(true) => return self.block(&i.then_branch, states),
            Some(false) => {
                return match &i.else_branch {
                    Some((_, e)) => self.expr(e, states),
                    None => states,
                }
            }
            None => {}
        }
        let states = self.expr(&i.cond, states);
        let info = self.cond_info(&i.cond);
        let span = self.index.of(&i.cond);
        let cond_text = short(self.index.text(span));
        let classified = Self::mentions_err(&states, &i.cond);
        // `if busy || stale { .. } else { bail!(..) }` where `let busy = msg.contains(..)`,
        // `let msg = e.to_string()`: the error is tested through what was made from it, and
        // the errors the test did not pick leave: a way out on that side tells errors apart.
        // One on the picked side (a further check that finds the work done) does not: the
        // errors not recognised still go round.
        let tested_derived = !classified
            && states
                .iter()
                .any(|s| Self::state_mentions_derived(s, &i.cond));
        let then_set = info.then_set.map(|s| (s, span, format!("`{cond_text}`")));
        let else_span = i
            .else_branch
            .as_ref()
            .map_or(span, |(tok, _)| self.index.of(tok));
        let else_set = info
            .else_set
            .map(|s| (s, else_span, format!("everything that fails `{cond_text}`")));
        let op = self.cond_op_of(&i.cond);
        // A test of the error an `Err` arm bound (`if e.is_transient()`) tells failures apart:
        // on either side the operation failed, neither is a success.
        let (then_o, else_o) = if classified && states.iter().all(|s| s.outcome == Outcome::Failure)
        {
            (Outcome::Neutral, Outcome::Neutral)
        } else {
            (info.then_o, info.else_o)
        };
        let mut then_states = Self::refined(&states, then_o, then_set.as_ref(), op.as_deref());
        let mut else_states = Self::refined(&states, else_o, else_set.as_ref(), op.as_deref());
        let kinds = if classified {
            ErrorKinds::of(&cond_text)
        } else {
            ErrorKinds::default()
        };
        for s in &mut else_states {
            s.err_tested |= tested_derived;
        }
        for s in &mut then_states {
            s.readiness |= info.readiness;
            s.classified |= classified;
            s.picked |= classified;
            s.kinds = s.kinds.or(kinds);
        }
        for s in &mut else_states {
            s.readiness |= info.else_pending;
            s.classified |= classified;
            s.picked |= classified;
            s.kinds = s.kinds.or(kinds);
        }
        let bound = self.bound_kind_of(&i.cond);
        Self::hint(&mut then_states, bound);
        Self::hint(&mut else_states, bound);
        match self.limit_side(&i.cond) {
            Some(true) => then_states
                .iter_mut()
                .for_each(|s| s.exhausted = Some(span)),
            Some(false) => else_states
                .iter_mut()
                .for_each(|s| s.exhausted = Some(span)),
            None => {}
        }

        let mut out = self.block(&i.then_branch, then_states);
        let else_out = match &i.else_branch {
            Some((_, e)) => self.expr(e, else_states),
            None => else_states,
        };
        out.extend(else_out);
        merge(out)
    }

    fn match_expr(&mut self, m: &'a syn::ExprMatch, states: Vec<PathState>) -> Vec<PathState> {
        let _guard = crate::analysis::limits::enter();
        let states = self.expr(&m.expr, states);
        let gate = self.gate_bound(m);
        if gate.is_some() {
            self.result.bounded_by = gate;
        }
        // A match on an HTTP status: every arm names statuses or catches the rest (an arm on
        // `tonic::Code::Unavailable` says the scrutinee is something else).
        let is_status = (self.status.is_status_expr(&m.expr)
            || m.arms.iter().any(|a| {
                self.status
                    .pattern(&a.pat)
                    .is_some_and(|s| !s.is_empty() && has_status_path(&a.pat))
            }))
            && m.arms
                .iter()
                .all(|a| is_catch_all(&a.pat) || self.status.pattern(&a.pat).is_some())
            // A match whose every arm only makes a value (`let hint = match status { 429 =>
            // read_hint(..), _ => None }`) decides that value, not which statuses go round.
            && m.arms.iter().any(|a| may_divert(&a.body));
        let classified = Self::mentions_err(&states, &m.expr);
        // A match on the failure's value, not on a `Result`: its specific arms and guards
        // tell errors apart.
        // The scrutinee holds the error: named for one (`error`, `err`, `e`), or bound by a
        // `match`/`if` that took it out of its `Err` (`let error = match send(..) { .. }`).
        let holds_error = place_key(&m.expr).is_some_and(|k| {
            let lower = k.to_ascii_lowercase();
            let v = known::builtin();
            v.word(List::ErrorNames, &lower)
                || v.part_of(List::ErrorVariableWords, &lower)
                || matches!(
                    self.status.locals.lets.get(&k).map(Vec::as_slice),
                    Some([Expr::Match(_) | Expr::If(_)])
                )
        });
        let on_failure = holds_error && states.iter().all(|s| s.outcome == Outcome::Failure);
        let mut seen_ok = false;
        let mut seen_err = false;
        let mut seen_result_pattern = false;
        let mut remaining = StatusSet::all();
        // `match delays.next() { Some(d) => .., None => return Err(e) }`: a schedule.
        // `match policy.decide(attempt)`: a decision that is handed the attempt counter, at
        // any call of the chain (`WAITS.get(attempt).copied()`).
        let scrutinee_bound = self
            .bound_kind_of(&m.expr)
            .filter(|k| *k == BoundKind::Schedule)
            .or_else(|| {
                let mut call_args: Vec<&Expr> = Vec::new();
                let mut link = &*m.expr;
                loop {
                    match link {
                        Expr::MethodCall(mc) => {
                            call_args.extend(mc.args.iter());
                            link = &mc.receiver;
                        }
                        Expr::Call(c) => {
                            call_args.extend(c.args.iter());
                            break;
                        }
                        _ => break,
                    }
                }
                call_args
                    .iter()
                    .any(|a| self.facts.counters.iter().any(|c| mentions(a, c)))
                    .then_some(BoundKind::Counter)
            });
        // Guards of earlier arms govern later arms (negated).
        let mut earlier_bound: Option<BoundKind> = None;
        let mut earlier_err_guard = false;
        let mut earlier_kinds = ErrorKinds::default();
        // `Ok(resp) if resp.status().is_success() => ..` then `_ => ..`: the later arms get the
        // responses whose status the earlier `Ok` guards did not take.
        let mut remaining_ok = StatusSet::all();
        let mut ok_guard: Option<String> = None;
        // `Ok(s) if s.state == Stopped => break`: an earlier arm took the successful answers
        // whose value passed a test other than a status's; a later catch-all gets the others.
        let mut ok_value_guard = false;
        // An earlier arm may have taken successful answers: an `Ok(..)` pattern, guarded or
        // not, or a catch-all whose guard reads the answer it binds (`r if r.is_ok()`).
        let mut ok_taken = false;
        let mut out = Vec::new();
        // `match failed { None => .., Some(err) => .. }`: an optional error, or the reason to
        // go again (`retry_code = Some(e)` set from an error inside a successful reply).
        let optional_error = place_key(&m.expr).is_some_and(|k| {
            known::builtin().part_of(List::OptionalErrorWords, &k.to_ascii_lowercase())
        });
        // `match (reply, attempt < max) { (Ok(v), _) => .., (Err(e), true) => .., (Err(e),
        // false) => return Err(e) }`: a tuple tests its parts; an arm's pattern for the result
        // says the outcome, and a `true`/`false` for a test of a limit says the arm passed it.
        let tuple = self.tuple_parts(m);
        let subject = tuple.as_ref().map_or(&*m.expr, |t| t.subject);
        for arm in &m.arms {
            let (arm_pat, tuple_limit) = match (&tuple, &arm.pat) {
                (Some(t), Pat::Tuple(pt)) if pt.elems.len() == t.len => {
                    let limit = t.limits.iter().find_map(|(i, k)| {
                        matches!(&pt.elems[*i], Pat::Lit(l) if matches!(l.lit, syn::Lit::Bool(_)))
                            .then_some(*k)
                    });
                    (&pt.elems[t.result], limit)
                }
                _ => (&arm.pat, None),
            };
            let pat_o = pat_outcome(arm_pat).or_else(|| {
                if optional_error {
                    option_outcome(arm_pat)
                } else {
                    None
                }
            });
            let catch_all = match (&tuple, &arm.pat) {
                (Some(_), Pat::Tuple(pt)) => pt.elems.iter().all(is_catch_all),
                _ => is_catch_all(&arm.pat),
            };
            let mut o = match pat_o {
                Some(o) => o,
                None if catch_all => match (seen_ok, seen_err) {
                    (true, false) => Outcome::Failure,
                    (false, true) => Outcome::Success,
                    // Guarded `Ok`/`Err` arms before: what is left is some of each.
                    _ if seen_result_pattern => Outcome::Mixed,
                    _ => Outcome::Neutral,
                },
                None => Outcome::Neutral,
            };
            if matches!(pat_o, Some(Outcome::Success | Outcome::Failure)) {
                self.note_tested(subject, o);
                seen_result_pattern = true;
            }
            let mut readiness = pat_mentions_readiness(&arm.pat);
            let pat_span = self.index.of(&arm.pat);
            let mut set: Option<(StatusSet, Span, String)> = None;
            if is_status {
                let s = self
                    .status
                    .pattern(&arm.pat)
                    .unwrap_or(remaining)
                    .intersect(remaining);
                let reason = if catch_all {
                    format!("the catch-all arm `{}`", short(self.index.text(pat_span)))
                } else {
                    format!("`{}`", short(self.index.text(pat_span)))
                };
                set = Some((s, pat_span, reason));
            }
            if set.is_none() && pat_o == Some(Outcome::Failure) {
                // `Err(ureq::Error::Status(429, _))`: the error carries a status.
                if let Some(s) = err_status_pattern(&arm.pat).and_then(|p| self.status.pattern(p)) {
                    let reason = format!("`{}`", short(self.index.text(pat_span)));
                    set = Some((s, pat_span, reason));
                }
            }
            let mut binding = Vec::new();
            super::values::pat_bindings(&arm.pat, &mut binding);
            // A guard inspects the error when it reads the binding (`Err(e) if e.is_timeout()`),
            // or, for `Err(Kind::X)`-style patterns, when it tests more than the attempt count.
            let inspects_error = |g: &Expr| {
                binding.iter().any(|b| mentions(g, b)) || (binding.is_empty() && !is_bound_only(g))
            };
            // `Err(Error::Timeout)`, `Err(ClientError::Canceled { .. })`: the pattern itself picks
            // a kind of error.
            let specific_err =
                pat_o == Some(Outcome::Failure) && !err_pattern_is_catch_all(&arm.pat);
            let mut arm_classified = classified
                || specific_err
                || (earlier_err_guard && pat_o == Some(Outcome::Failure));
            let mut arm_kinds = if specific_err {
                ErrorKinds::of(self.index.text(pat_span))
            } else {
                // What the earlier guards excluded says what is left (`!err.is_timeout()` out,
                // so timeouts go round).
                earlier_kinds
            };
            let mut arm_picked = specific_err;
            // Past a budget gate, a path has passed its limit test.
            let mut arm_bound = scrutinee_bound.or(earlier_bound).or(gate);
            if let Some(k) = tuple_limit {
                arm_bound = Some(k);
                earlier_bound = Some(k);
            }
            if let Some((_, g)) = &arm.guard {
                if let Some(k) = self.bound_kind_of(g) {
                    arm_bound = Some(k);
                    earlier_bound = Some(k);
                }
                let gi = self.cond_info(g);
                if pat_o == Some(Outcome::Failure) && (inspects_error(g) || gi.then_set.is_some()) {
                    earlier_err_guard = true;
                    arm_classified = true;
                    arm_picked = true;
                    let words = ErrorKinds::of(self.index.text(self.index.of(&**g)));
                    arm_kinds = arm_kinds.or(words);
                    earlier_kinds = earlier_kinds.or(words);
                }
                // `response if is_retryable(&response) => ..` on the value itself: the guard
                // tests the operation's outcome (a failed status inside a success).
                if catch_all && pat_o.is_none() && gi.then_o != Outcome::Neutral {
                    self.note_tested(&m.expr, gi.then_o);
                    seen_result_pattern = true;
                }
                o = o.refine(gi.then_o);
                readiness |= gi.readiness;
                if let Some(gs) = gi.then_set {
                    let g_span = self.index.of(&**g);
                    let reason = format!("`{}`", short(self.index.text(g_span)));
                    set = Some(match set {
                        Some((s, _, _)) => (s.intersect(gs), g_span, reason),
                        None => (gs, g_span, reason),
                    });
                }
            } else if let Some((s, _, _)) = &set {
                remaining = remaining.intersect(s.complement());
            }
            let takes_ok = matches!(pat_o, Some(Outcome::Success | Outcome::Mixed)) || catch_all;
            if takes_ok && set.is_none() && remaining_ok != StatusSet::all() {
                if let Some(g) = &ok_guard {
                    let reason = format!("`{}` after `{g}`", short(self.index.text(pat_span)));
                    set = Some((remaining_ok, pat_span, reason));
                }
            }
            // A catch-all that gets successful answers no earlier arm took (`Err(NotFound) =>
            // break, _ => sleep`): every answer of a successful operation goes round, the
            // loop waits for the state to change.
            let rejected_ok =
                (ok_value_guard || !ok_taken) && catch_all && o == Outcome::Mixed && set.is_none();
            if matches!(pat_o, Some(Outcome::Success | Outcome::Mixed))
                || (catch_all
                    && arm
                        .guard
                        .as_ref()
                        .is_some_and(|(_, g)| binding.iter().any(|b| mentions(g, b))))
            {
                ok_taken = true;
            }
            if pat_o == Some(Outcome::Success) {
                if let Some((_, g)) = &arm.guard {
                    if let Some(sets) = self.status.cond(g) {
                        remaining_ok = remaining_ok.intersect(sets.other);
                        ok_guard = Some(short(self.index.text(self.index.of(&**g))));
                    } else if binding.iter().any(|b| mentions(g, b))
                        && self.cond_info(g).then_o == Outcome::Neutral
                    {
                        // Not `Ok(ack) if ack.await.is_ok()`: that tests a further operation,
                        // whose failure is a failure.
                        ok_value_guard = true;
                    }
                }
            }
            if arm.guard.is_none() {
                match pat_o {
                    Some(Outcome::Success) => seen_ok = true,
                    Some(Outcome::Failure) => seen_err = true,
                    _ => {}
                }
            }
            let err_arm =
                (pat_o == Some(Outcome::Failure)).then(|| (pat_span, binding.first().cloned()));
            let arm_op = if seen_result_pattern {
                self.op_of(subject)
            } else {
                None
            };
            let inspected = on_failure
                && pat_o.is_none()
                && (!catch_all || arm.guard.as_ref().is_some_and(|(_, g)| !is_bound_only(g)));
            let mut arm_states = Self::refined(&states, o, set.as_ref(), arm_op.as_deref());
            for s in &mut arm_states {
                s.inspected |= inspected;
                s.readiness |= readiness;
                s.classified |= arm_classified;
                s.picked |= arm_picked;
                s.kinds = s.kinds.or(arm_kinds);
                s.rejected_ok |= rejected_ok;
                if err_arm.is_some() {
                    s.err_arm.clone_from(&err_arm);
                }
            }
            Self::hint(&mut arm_states, arm_bound);

            let res = self.expr(&arm.body, arm_states);
            out.extend(res);
        }
        merge(out)
    }

    /// The parts of a `match` on a tuple that holds a result and tests of a limit (`match
    /// (reply, attempt < max)`): which element the arms' `Ok`/`Err` patterns are for, and which
    /// elements test a counter, a clock or a schedule.
    fn tuple_parts(&self, m: &'a syn::ExprMatch) -> Option<TupleParts<'a>> {
        let Expr::Tuple(t) = &*m.expr else {
            return None;
        };
        let len = t.elems.len();
        let result = (0..len).find(|&i| {
            m.arms.iter().any(|a| {
                matches!(&a.pat, Pat::Tuple(pt) if pt.elems.len() == len
                    && matches!(pat_outcome(&pt.elems[i]), Some(Outcome::Success | Outcome::Failure)))
            })
        })?;
        let limits = t
            .elems
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != result)
            .filter_map(|(i, e)| self.bound_kind_of(e).map(|k| (i, k)))
            .collect();
        Some(TupleParts {
            subject: &t.elems[result],
            len,
            result,
            limits,
        })
    }

    /// A budget gate: `match budget.before_round(..) { Ok(()) => {}, Err(Stop::AttemptsExhausted)
    /// => break, Err(Stop::DeadlineExhausted) => return .. }`. Every `Err` arm names a used-up
    /// attempt count or time and leaves the loop, and `Ok` goes on: the loop is bounded by it
    /// (by a deadline when an arm names one).
    fn gate_bound(&self, m: &'a syn::ExprMatch) -> Option<BoundKind> {
        let mut kind = None;
        for arm in &m.arms {
            match pat_outcome(&arm.pat) {
                Some(Outcome::Failure) if arm.guard.is_none() && leaves(&arm.body) => {
                    let text = self.index.text(self.index.of(&arm.pat));
                    match names::exhaustion_kind(text)? {
                        BoundKind::Deadline => kind = Some(BoundKind::Deadline),
                        k => {
                            kind.get_or_insert(k);
                        }
                    }
                }
                Some(Outcome::Success) if is_empty_body(&arm.body) => {}
                _ => return None,
            }
        }
        kind
    }

    /// Whether a condition inspects the error bound by the enclosing `Err(e)` arm.
    fn mentions_err(states: &[PathState], cond: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        states.iter().any(|s| Self::state_mentions_err(s, cond))
    }

    /// [`Flow::mentions_err`] on one path.
    fn state_mentions_err(s: &PathState, e: &Expr) -> bool {
        s.err_arm
            .as_ref()
            .and_then(|(_, b)| b.as_ref())
            .is_some_and(|b| mentions(e, b))
    }

    /// Whether a path holds its error in a name made from it that `e` mentions (`let msg =
    /// e.to_string()`, then `msg.contains(..)`).
    fn state_mentions_derived(s: &PathState, e: &Expr) -> bool {
        s.err_arm.is_some() && s.err_derived.iter().any(|d| mentions(e, d))
    }

    fn note_tested(&mut self, scrutinee: &Expr, o: Outcome) {
        if !matches!(o, Outcome::Success | Outcome::Failure) {
            return;
        }
        if let Some(op) = self.op_of(scrutinee) {
            let call = self.op_call_of(scrutinee).unwrap_or(scrutinee);
            let via = callee_via(call, self.status.file);
            self.result
                .tested_calls
                .push((op, self.index.of(call), via));
        }
        self.result.tested_exprs.push(self.index.of(scrutinee));
    }

    /// A variable named for a retry verdict (`should_retry`, `need_retry`, `retryable`) that
    /// each pass sets from a call: assigned in the loop, or bound by a `let` to a call.
    fn is_verdict_var(&self, p: &syn::ExprPath) -> bool {
        let Some(id) = p.path.get_ident().map(ToString::to_string) else {
            return false;
        };
        if !names::is_retry_verdict_name(&id) {
            return false;
        }
        self.facts.mutations.contains_key(&id)
            || self.status.locals.lets.get(&id).is_some_and(|inits| {
                inits.iter().any(|i| {
                    let mut e = *i;
                    while let Expr::Await(a) = e {
                        e = &a.base;
                    }
                    matches!(e, Expr::Call(_) | Expr::MethodCall(_))
                })
            })
    }

    /// What the verdict variable `p` is assigned from in the loop (every assignment a call
    /// whose classifier tests statuses): the statuses it says go again.
    fn verdict_statuses(&self, p: &syn::ExprPath) -> Option<super::status::Sets> {
        let id = p.path.get_ident()?.to_string();
        let mut set: Option<super::status::Sets> = None;
        let mut from: Vec<&Expr> = Vec::new();
        match self.facts.mutations.get(&id) {
            Some(mutations) => {
                for m in mutations {
                    let super::values::Mutation::Assign(rhs) = m else {
                        return None;
                    };
                    from.push(rhs);
                }
            }
            // `let should_retry = self.policy.should_retry(&err);` in the loop.
            None => from.extend(self.status.locals.lets.get(&id)?.iter().copied()),
        }
        for rhs in from {
            let s = self.status.verdict_of_call(rhs)?;
            set = Some(set.map_or(s, |acc| acc.either(s)));
        }
        set
    }

    fn cond_info(&mut self, cond: &'a Expr) -> CondInfo {
        let _guard = crate::analysis::limits::enter();
        let readiness = mentions_readiness(cond);
        let mut info = match cond {
            Expr::Paren(p) => return self.cond_info(&p.expr),
            Expr::Group(g) => return self.cond_info(&g.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                let i = self.cond_info(&u.expr);
                CondInfo {
                    then_o: i.else_o,
                    else_o: i.then_o,
                    then_set: i.else_set,
                    else_set: i.then_set,
                    readiness: i.else_pending,
                    else_pending: i.readiness,
                }
            }
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) => {
                let l = self.cond_info(&b.left);
                let r = self.cond_info(&b.right);
                let and = matches!(b.op, syn::BinOp::And(_));
                let (then_o, else_o) = if and {
                    (l.then_o.and(r.then_o), l.else_o.or(r.else_o))
                } else {
                    (l.then_o.or(r.then_o), l.else_o.and(r.else_o))
                };
                // `if let Ok(hash) = get() && hash != old`: a successful read whose value is not
                // the awaited one goes to the `else` too (a poll).
                let tests_value = and
                    && matches!(&*b.left, Expr::Let(le) if pat_outcome(&le.pat) == Some(Outcome::Success) && {
                        let mut bound = Vec::new();
                        super::values::pat_bindings(&le.pat, &mut bound);
                        bound.iter().any(|n| mentions(&b.right, n))
                    });
                CondInfo {
                    then_o,
                    else_o,
                    then_set: None,
                    else_set: None,
                    readiness: l.readiness || r.readiness,
                    else_pending: if and {
                        l.else_pending || r.else_pending || tests_value
                    } else {
                        l.else_pending && r.else_pending
                    },
                }
            }
            Expr::Let(l) => {
                let o = pat_outcome(&l.pat).unwrap_or(Outcome::Neutral);
                self.note_tested(&l.expr, o);
                CondInfo {
                    then_o: o,
                    else_o: o.negate(),
                    then_set: None,
                    else_set: None,
                    readiness: pat_mentions_readiness(&l.pat),
                    else_pending: o == Outcome::Success && awaits_value(&l.pat),
                }
            }
            Expr::Call(c)
                if names::callee_path(&c.func)
                    .and_then(names::last)
                    .is_some_and(|n| names::is_retry_predicate(&n)) =>
            {
                CondInfo::outcome(Outcome::Failure)
            }
            // `if timeout(d, token.cancelled()).await.is_ok() { break }`: whether the future
            // finished in time, no attempt's outcome.
            Expr::MethodCall(mc)
                if (mc.method == "is_ok" || mc.method == "is_err")
                    && self.elapsed_only(&mc.receiver) =>
            {
                CondInfo::outcome(Outcome::Neutral)
            }
            Expr::MethodCall(mc) => {
                let name = mc.method.to_string();
                let o = match name.as_str() {
                    "is_ok" => Outcome::Success,
                    "is_err" => Outcome::Failure,
                    // `should_retry(..)`, `err.is_retryable()`: true means "failed, go again".
                    n if names::is_retry_predicate(n) => Outcome::Failure,
                    _ => Outcome::Neutral,
                };
                self.note_tested(&mc.receiver, o);
                CondInfo::outcome(o)
            }
            // `let retry = policy.should_retry(&err); if retry { .. }`, `(need_retry, rep) =
            // send(..); if !need_retry { return rep }`: a classifier's verdict held in a
            // variable the loop sets from the attempt.
            Expr::Path(p) if self.is_verdict_var(p) => {
                self.result.reads_verdict = true;
                let mut info = CondInfo::outcome(Outcome::Failure);
                // The statuses the classifier behind the verdict says go again.
                if let Some(sets) = self.verdict_statuses(p) {
                    info.then_set = Some(sets.then);
                    // A classifier we read only in part says no to no status we know of.
                    info.else_set = Some(sets.other).filter(|o| !o.is_empty());
                }
                info
            }
            Expr::Macro(m) if names::last(&m.mac.path).as_deref() == Some("matches") => {
                let o = super::status::parse_matches(&m.mac)
                    .and_then(|(_, p)| pat_outcome(&p))
                    .unwrap_or(Outcome::Neutral);
                CondInfo::outcome(o)
            }
            _ => CondInfo {
                then_o: Outcome::Neutral,
                else_o: Outcome::Neutral,
                then_set: None,
                else_set: None,
                readiness: false,
                else_pending: false,
            },
        };
        if let Some(sets) = self.status.cond(cond) {
            if sets.then != StatusSet::all() || sets.other != StatusSet::all() {
                info.then_set = Some(sets.then);
                // A classifier we read only in part says no to no status we know of.
                info.else_set = Some(sets.other).filter(|o| !o.is_empty());
                info.then_o = info.then_o.refine(Outcome::of_statuses(sets.then));
                info.else_o = info.else_o.refine(Outcome::of_statuses(sets.other));
            }
        }
        info.readiness |= readiness;
        info
    }
}

/// `Ok(..)` → Success, `Err(..)` → Failure, looking through `Some(..)`, `Poll::Ready(..)`, refs.
#[must_use]
pub fn pat_outcome(pat: &Pat) -> Option<Outcome> {
    let _guard = crate::analysis::limits::enter();
    match pat {
        Pat::TupleStruct(t) => {
            let last = names::last(&t.path)?;
            match last.as_str() {
                "Ok" => Some(Outcome::Success),
                "Err" => Some(Outcome::Failure),
                _ if t.elems.len() == 1 => pat_outcome(&t.elems[0]),
                _ => None,
            }
        }
        Pat::Or(o) => {
            let mut acc: Option<Outcome> = None;
            for c in &o.cases {
                let co = pat_outcome(c)?;
                acc = Some(acc.map_or(co, |a| if a == co { a } else { Outcome::Mixed }));
            }
            acc
        }
        Pat::Reference(r) => pat_outcome(&r.pat),
        Pat::Paren(p) => pat_outcome(&p.pat),
        Pat::Ident(i) => i.subpat.as_ref().and_then(|(_, p)| pat_outcome(p)),
        _ => None,
    }
}

fn is_catch_all(pat: &Pat) -> bool {
    match pat {
        Pat::Wild(_) => true,
        Pat::Ident(i) => i.subpat.is_none() && !is_const_like(&i.ident.to_string()),
        _ => false,
    }
}

fn is_const_like(name: &str) -> bool {
    name.chars().next().is_some_and(char::is_uppercase)
}

fn has_status_path(pat: &Pat) -> bool {
    names::text(pat).contains("StatusCode")
}

fn pat_mentions_readiness(pat: &Pat) -> bool {
    let t = names::text(pat);
    t.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(names::is_readiness_error)
}

fn mentions_readiness(e: &Expr) -> bool {
    let t = names::text(e);
    t.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(names::is_readiness_error)
}

/// The `Status(..)` sub-pattern of an `Err(..)` pattern, if any.
fn err_status_pattern(pat: &Pat) -> Option<&Pat> {
    let _guard = crate::analysis::limits::enter();
    match pat {
        Pat::TupleStruct(t) => {
            let last = names::last(&t.path)?;
            if last.contains("Status") {
                Some(pat)
            } else {
                t.elems.iter().find_map(err_status_pattern)
            }
        }
        Pat::Reference(r) => err_status_pattern(&r.pat),
        Pat::Paren(p) => err_status_pattern(&p.pat),
        _ => None,
    }
}

/// `Some(err)` → Failure, `None` → Success, for a match on an optional error.
pub(super) fn option_outcome(pat: &Pat) -> Option<Outcome> {
    match pat {
        Pat::TupleStruct(t) if names::last(&t.path).as_deref() == Some("Some") => {
            Some(Outcome::Failure)
        }
        Pat::Ident(i) if i.ident == "None" => Some(Outcome::Success),
        Pat::Path(p) if p.path.is_ident("None") => Some(Outcome::Success),
        _ => None,
    }
}

/// `Err(e)`, `Err(_)`, `Err(ref e)`: any error.
fn err_pattern_is_catch_all(pat: &Pat) -> bool {
    let _guard = crate::analysis::limits::enter();
    match pat {
        Pat::TupleStruct(t) if t.elems.len() == 1 => is_catch_all(&t.elems[0]),
        Pat::Reference(r) => err_pattern_is_catch_all(&r.pat),
        Pat::Paren(p) => err_pattern_is_catch_all(&p.pat),
        _ => false,
    }
}

/// A guard that only checks the attempt count or the clock (`if attempt < MAX`).
fn is_bound_only(g: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    let mut other = false;
    for_each_name(g, &mut |name, _| {
        let constant = name
            .chars()
            .all(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit());
        if !(names::is_counter_name(name) || names::is_time_name(name) || constant) {
            other = true;
        }
    });
    !other
}

fn mentions_call(e: &Expr) -> bool {
    matches!(e, Expr::MethodCall(_) | Expr::Call(_))
}

fn is_self_call_path(p: &syn::Path, name: &str) -> bool {
    let segs = names::segments(p);
    match segs.as_slice() {
        [one] => one == name,
        [first, second] => first == "Self" && second == name,
        _ => false,
    }
}

/// The operation whose result is tested: `client.get(u).send().await` → `send`.
#[must_use]
pub fn operation_name(e: &Expr) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::MethodCall(m) => {
            let n = m.method.to_string();
            // Adapters of std, futures and anyhow that keep the operation's result: API, not
            // vocabulary.
            if matches!(
                n.as_str(),
                "map_err"
                    | "ok"
                    | "err"
                    | "as_ref"
                    | "as_mut"
                    | "context"
                    | "with_context"
                    | "into_future"
                    | "boxed"
                    | "map"
                    | "and_then"
                    | "await"
            ) {
                operation_name(&m.receiver).or(Some(n))
            } else {
                Some(n)
            }
        }
        Expr::Call(c) => names::callee_path(&c.func).and_then(names::last),
        Expr::Await(a) => operation_name(&a.base),
        // `ready!(self.listener.poll_accept(cx))`, `try_ready!(..)`: the call inside.
        Expr::Macro(m) => m
            .mac
            .parse_body::<Expr>()
            .ok()
            .and_then(|inner| operation_name(&inner)),
        Expr::Try(t) => operation_name(&t.expr),
        Expr::Paren(p) => operation_name(&p.expr),
        Expr::Reference(r) => operation_name(&r.expr),
        // `unsafe { slot.compare_exchange_weak(..) }`: a block's value is its last expression.
        Expr::Unsafe(u) => block_value(&u.block).and_then(operation_name),
        Expr::Block(b) if b.label.is_none() => block_value(&b.block).and_then(operation_name),
        _ => None,
    }
}

/// The expression a block ends with, its value.
fn block_value(b: &Block) -> Option<&Expr> {
    match b.stmts.last()? {
        Stmt::Expr(e, None) => Some(e),
        _ => None,
    }
}

/// Calls `f(name, is_call)` for every identifier, field name and method name in an expression.
pub fn for_each_name(e: &Expr, f: &mut dyn FnMut(&str, bool)) {
    use syn::visit::Visit;
    struct V<'f> {
        f: &'f mut dyn FnMut(&str, bool),
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            (self.f)(&m.method.to_string(), true);
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let Some(p) = names::callee_path(&c.func) {
                for s in &p.segments {
                    (self.f)(&s.ident.to_string(), true);
                }
            } else {
                self.visit_expr(&c.func);
            }
            for a in &c.args {
                self.visit_expr(a);
            }
        }
        fn visit_path(&mut self, p: &'ast syn::Path) {
            for s in &p.segments {
                (self.f)(&s.ident.to_string(), false);
            }
        }
        fn visit_member(&mut self, m: &'ast syn::Member) {
            if let syn::Member::Named(i) = m {
                (self.f)(&i.to_string(), false);
            }
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let _guard = crate::analysis::limits::enter();
    let mut v = V { f };
    v.visit_expr(e);
}

/// A short, one-line rendering of source text for messages.
#[must_use]
pub fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 60 {
        let cut: String = one.chars().take(57).collect();
        format!("{cut}...")
    } else {
        one
    }
}

/// Whether an arm's body leaves the loop: it is, or holds as a statement, a `break` or a
/// `return`.
pub(super) fn leaves(e: &Expr) -> bool {
    match e {
        Expr::Break(_) | Expr::Return(_) => true,
        Expr::Block(b) => b.block.stmts.iter().any(|st| match st {
            Stmt::Expr(e, _) => matches!(e, Expr::Break(_) | Expr::Return(_)),
            _ => false,
        }),
        _ => false,
    }
}

/// Whether evaluating `e` may leave the ordinary flow: a `return`, `break`, `continue` or `?`
/// in it (closures and items aside), or a macro, which may hide one (`bail!`).
fn may_divert(e: &Expr) -> bool {
    use syn::visit::Visit;
    struct Divert(bool);
    impl<'ast> Visit<'ast> for Divert {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.0 {
                return;
            }
            match e {
                Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) | Expr::Try(_) => {
                    self.0 = true;
                }
                Expr::Macro(_) => self.0 = true,
                Expr::Closure(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_stmt_macro(&mut self, _: &'ast syn::StmtMacro) {
            self.0 = true;
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut d = Divert(false);
    d.visit_expr(e);
    d.0
}

/// `{}` or `()`: an arm that does nothing.
fn is_empty_body(e: &Expr) -> bool {
    match e {
        Expr::Block(b) => b.block.stmts.is_empty(),
        Expr::Tuple(t) => t.elems.is_empty(),
        _ => false,
    }
}

/// Whether an `Ok(..)` pattern waits for a particular value inside (`Ok(Some(_))`,
/// `Ok(Status::Done)`, `Ok(true)`): a successful read of something else does not match it.
fn awaits_value(pat: &Pat) -> bool {
    let _guard = crate::analysis::limits::enter();
    match pat {
        Pat::TupleStruct(t) if names::last(&t.path).is_some_and(|n| n == "Ok") => {
            t.elems.iter().any(|e| {
                matches!(
                    e,
                    Pat::TupleStruct(_)
                        | Pat::Path(_)
                        | Pat::Lit(_)
                        | Pat::Struct(_)
                        | Pat::Range(_)
                )
            })
        }
        Pat::Reference(r) => awaits_value(&r.pat),
        Pat::Paren(p) => awaits_value(&p.pat),
        _ => false,
    }
}

/// A call or a method call (through parentheses and `.await`).
fn is_call(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Call(_) | Expr::MethodCall(_) => true,
        Expr::Await(a) => is_call(&a.base),
        Expr::Paren(p) => is_call(&p.expr),
        _ => false,
    }
}

/// `Err(e)`, `Err(e.into())`: an error value (its `?` leaves).
fn is_err_value(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Err")),
        Expr::Paren(p) => is_err_value(&p.expr),
        // `Err(e).with_context(..)`: adapters of std, anyhow and eyre that keep an `Err` one
        // (API, not vocabulary).
        Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "map_err" | "context" | "with_context" | "wrap_err" | "wrap_err_with"
            ) =>
        {
            is_err_value(&m.receiver)
        }
        _ => false,
    }
}

/// How a call names its callee (see [`crate::analysis::Via`]): a method, or the path it calls
/// resolved through the file's `use`; `None` for anything else.
fn callee_via(
    call: &Expr,
    scope: &crate::analysis::scope::FileScope<'_>,
) -> Option<crate::analysis::Via> {
    let _guard = crate::analysis::limits::enter();
    match call {
        Expr::Await(a) => callee_via(&a.base, scope),
        Expr::Paren(p) => callee_via(&p.expr, scope),
        Expr::Try(t) => callee_via(&t.expr, scope),
        Expr::MethodCall(_) => Some(crate::analysis::Via::Method),
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => Some(scope.via_of(&p.path)),
            _ => None,
        },
        _ => None,
    }
}
