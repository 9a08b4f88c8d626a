//! Retry loops and recursions: the site each one is, from its flow (what goes round again after a failure, how it is bounded, what it waits, what it retries), and what rules it out.

use syn::Expr;

use crate::analysis::flow::{Flow, Mode, Outcome};
use crate::analysis::keys::per_attempt_keys;
use crate::analysis::names;
use crate::analysis::scope::{Facts, LocalFn};
use crate::analysis::status::StatusEval;
use crate::analysis::values::{pat_bindings, Locals, LoopFacts, ValueCx};
use crate::analysis::{Bound, BoundKind, RetrySite, SiteKind};

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a> Builder<'a, '_> {
    /// `func`: the function the loop is in (its name, its signature, the type of its `impl`).
    /// `started`: where the function starts a thread, task or process (see [`spawns`]) or
    /// writes a loopback address (see [`loopbacks`]).
    pub(super) fn loop_site(
        &self,
        l: &'a Expr,
        locals: &Locals<'a>,
        func: &LocalFn<'a>,
        in_timeout: bool,
        started: &Started,
    ) -> Option<RetrySite> {
        let _guard = crate::analysis::limits::enter();
        let fn_name = func.sig.ident.to_string();
        let fn_name = fn_name.as_str();
        let owner = func.owner;
        let (body, label, head, start, extra_counters, loop_vars) = match l {
            Expr::Loop(x) => (
                &x.body,
                x.label.as_ref(),
                self.index.of(&x.loop_token),
                Outcome::Neutral,
                Vec::new(),
                Vec::new(),
            ),
            Expr::While(w) => {
                let head = self.index.between(&w.while_token, &w.cond);
                let start = while_outcome(&w.cond);
                (
                    &w.body,
                    w.label.as_ref(),
                    head,
                    start,
                    Vec::new(),
                    Vec::new(),
                )
            }
            Expr::ForLoop(f) => {
                let head = self.index.between(&f.for_token, &f.expr);
                let mut vars = Vec::new();
                pat_bindings(&f.pat, &mut vars);
                let counters = if counts_attempts(&f.expr) {
                    vars.clone()
                } else {
                    Vec::new()
                };
                (
                    &f.body,
                    f.label.as_ref(),
                    head,
                    Outcome::Neutral,
                    counters,
                    vars,
                )
            }
            _ => return None,
        };
        let facts = LoopFacts::collect(body, &extra_counters);
        let status = StatusEval {
            file: self.scope,
            locals,
            status_idents: Vec::new(),
            depth: 0,
        };
        let values = ValueCx {
            file: self.scope,
            locals,
            facts: &facts,
            params: None,
            depth: 0,
            current_fn: fn_name,
        };
        let mut waits = self.waits(body, fn_name, false);
        let label_name = label.map(|l| l.name.ident.to_string());
        // A wait after which every path leaves the loop paces no attempt.
        waits.leave_out(&waits_on_way_out(
            body,
            label_name.as_deref(),
            &waits.calls(),
        ));
        let mut flow = Flow::new(self.index, &status, &facts, label_name, Mode::Loop);
        flow.waits = waits.calls();
        if let Expr::While(w) = l {
            if !matches!(&*w.cond, Expr::Let(_)) {
                flow.flag_vars = facts
                    .mutations
                    .keys()
                    .filter(|k| crate::analysis::values::mentions(&w.cond, k))
                    .cloned()
                    .collect();
            }
        }
        let body_end = self.index.of(&body.brace_token.span.close());
        match l {
            Expr::While(w) if !matches!(&*w.cond, Expr::Let(_)) => {
                flow.run_while(&w.cond, body, body_end);
            }
            _ => flow.run_loop_body(body, start, body_end),
        }
        let mut result = flow.result;
        if start.may_fail() {
            // `while res.is_err()`: the loop leaves when the operation succeeds.
            result.success_exit = true;
        }
        // A supervisor restarts a long-running operation for ever, pausing only after it
        // failed: a site for the pacing rules only.
        // Probing what the function has just started (a test server, a child process), or an
        // address it writes as loopback, until it answers is a readiness wait on something
        // local, not a retry.
        if started.any_before(head.start) && is_readiness_probe(l, &result) {
            return None;
        }
        // Where the values the loop handles come from (which crate made a receiver).
        let receivers = Receivers {
            locals,
            scope: self.scope,
            fields: owner.and_then(|o| self.scope.field_paths.get(&o.to_string())),
        };
        // Probing until something answers, keeping nothing of the answer, waits for it to come
        // up: no request is repeated. After the function started a child process, whatever the
        // operation asks is a probe of that process (evidence.md #3).
        if drops_probe_answers(
            l,
            &result,
            self.index,
            &receivers,
            started.process_before(head.start),
        ) {
            return None;
        }
        // The operation a `while` repeats is the one its condition tests: a receive that
        // finds nothing keeps a ticker or a watchdog going until a message arrives.
        if let Expr::While(w) = l {
            if goes_round_on_spin_condition(&w.cond) {
                return None;
            }
        }
        // An operation given a target on this machine (a loopback address, a filesystem path,
        // a Unix-domain socket) serves no shared service: a loop that goes round until it
        // succeeds waits for something local to come up (evidence.md #9).
        if tests_only_local_targets(l, &result, self.index, locals, owner, self.scope) {
            return None;
        }
        // An operation on an in-process channel hands work to another task of this process:
        // a loop whose every tested operation is one re-registers or re-spawns a local worker
        // and asks no service again (evidence.md #9).
        // A loop that asks a person on its way round repeats at their choice or with their new
        // input: an interactive re-prompt.
        if asks_a_person(body, &receivers) {
            return None;
        }
        let channel = receivers.channel_calls(Root::Expr(l), self.index);
        if !result.tested_calls.is_empty()
            && result
                .tested_calls
                .iter()
                .all(|(_, at, _)| channel.contains(at))
        {
            return None;
        }
        // A loop that asks, between its attempts, whether a child process has exited waits for
        // that process to come up: the process is this code's own, and local.
        if watches_child_process(l) && result.success_exit {
            return None;
        }
        let retry_shape = is_retry_shape(&result);
        let supervisor = if retry_shape {
            restarts_session(&result, body, self.scope, fn_name)
        } else {
            is_supervisor(&result)
        };
        // A function that returns the connection its loop makes, with a signature that cannot
        // report a failure, reconnects until it succeeds by design.
        let reconnects_until_connected = retry_shape && returns_its_connection(func.sig, &result);
        // A reconnect (every operation the loop tests connects) whose wait races its owner's
        // signal (`select!` on the sleep and a shutdown that leaves) lives as long as that
        // signal: a supervisor's reconnect. An operation retried until cancelled is not one.
        let reconnects_until_told = retry_shape
            && result.tested_ops().next().is_some()
            && result.tested_ops().all(names::is_connect_operation)
            && wait_races_signal(l, self.scope);
        if !supervisor && !retry_shape {
            return None;
        }
        // A retry policy object's decision sends every failure round again: its limit (and
        // its choice of what to retry) is the policy's.
        let policy_decides = policy_decides(&result, body, self.index);
        let taken = taken_branches(body, self.index);
        let bound = match Self::loop_bound(l, &result, &facts, locals, in_timeout, &taken) {
            Bound::Unbounded if policy_decides => Bound::Bounded(BoundKind::Policy),
            b => b,
        };
        let limit = self.scope.consult(Facts::BOUND, || {
            attempt_limit(Some(l), body, &facts, self.scope, locals)
        });
        // `for _ in 0..self.limit`: the number of rounds is a setting, as in a counter compared
        // with one (`attempt < self.max_retries`).
        let wait_bound = match l {
            Expr::ForLoop(f) if limit.is_none() && range_end_is_setting(&f.expr) => {
                Bound::Bounded(BoundKind::Counter)
            }
            _ => bound.clone(),
        };
        let longest = |arg: Option<&'a Expr>| {
            longest_wait(&wait_bound, limit, arg, &facts, self.scope, locals)
        };
        let mut delays = self.delays_of(&waits, &values, &longest);
        mark_ceilings(&mut delays, &waits, body);
        mark_exit_caps(&mut delays, &waits, l, body, &facts);
        // A limit the callers give: how long the waits get for each limit they might give.
        let longest_by_limit = if limit.is_none() {
            longest_by_limit(&delays, &waits, &facts, self.scope, locals)
        } else {
            Vec::new()
        };
        // A `for` over a list of alternatives (addresses, mirrors) tries each once: not a retry.
        if let Expr::ForLoop(_) = l {
            // `for i in 0..resolvers.len() { resolvers[i].lookup(..) }` tries each one too.
            // Also through what is derived from the index (`let reply = nodes[i].call(..)`).
            let indexes_alternatives = !extra_counters.is_empty()
                && loop_vars.iter().any(|v| !names::is_retry_word(v))
                && derived_names(body, &loop_vars, true).iter().any(|v| {
                    !names::is_retry_word(v) && tested_ops_mention(&result, self.index, v)
                });
            if indexes_alternatives {
                return None;
            }
            // A `for` over elements (not a count of attempts) goes to the next element on each
            // round: unless the element is only the round's wait (a schedule of delays), each
            // round gives the operation a different input, and a retry repeats the same
            // operation with the same input (a failover list, a walk, a search; whatever the
            // names: `for attempt in ["NO_PROXY", "no_proxy"] { env::var(attempt) }`).
            if extra_counters.is_empty()
                && !loop_vars.is_empty()
                && elements_feed_the_rounds(body, &loop_vars, &waits)
            {
                return None;
            }
        }
        // `let idx = match hosts.pick_next() { Some(i) => i, None => break };` then
        // `connect(idx)`: each pass draws the next alternative, a search, not a retry.
        let drawn = match l {
            Expr::Loop(lp) => drawn_alternatives(&lp.body),
            Expr::While(w) => drawn_by_condition(&w.cond),
            _ => Vec::new(),
        };
        // Each pass uses what it drew (directly or through `let endpoint = &endpoints[idx]`).
        let drawn = derived_names(body, &drawn, false);
        if drawn
            .iter()
            .any(|v| !names::is_retry_word(v) && tested_ops_mention(&result, self.index, v))
        {
            return None;
        }
        // `let c = self.queues[i].get(); i += 1;`: a position stepped each pass and used to
        // index what the operation is asked of walks a list (the next queue, the next
        // replica), a search.
        if stepped_index_vars(body).iter().any(|v| {
            !names::is_retry_word(v)
                && !names::is_counter_name(v)
                && (tested_ops_index_with(&result, self.index, v)
                    || !lets_indexing_with(body, v).is_empty())
        }) {
            return None;
        }
        // `port += 1` then `bind(SocketAddr::new(ip, port))`, nothing comparing `port`: each
        // pass tries the next input, a search, not the same operation repeated.
        if stepped_inputs(l, body, &result, self.index) {
            return None;
        }
        // An attempt counter: the `for` range, or a count stepped on a path that goes round
        // again or tested on a way out (not any `+= 1` in the body, such as a tally of items).
        // Following redirects or a cursor: the operation's input is replaced by what the last
        // answer pointed to, so each pass sends something new.
        if follows_pointer(&result, body, &facts, self.index)
            || rewrites_input_from_failure(&result, body, self.index)
        {
            return None;
        }
        let has_counter = !extra_counters.is_empty()
            || result
                .continues
                .iter()
                .any(|c| c.outcome.may_fail() && c.stepped)
            || result.bounded_by == Some(BoundKind::Counter);
        // An immediate, uncounted re-run of one recognised kind of error (a stale pooled
        // connection, a cancelled request) is a protocol step bounded by what produces that
        // error, not a retry policy: stay silent.
        let failing: Vec<_> = result
            .continues
            .iter()
            .filter(|c| c.outcome.may_fail() && !c.readiness)
            .collect();
        if delays.is_empty() && !has_counter && failing.iter().all(|c| c.classified && c.picked) {
            return None;
        }
        if delays.is_empty()
            && !has_counter
            && !mentions_retry_words(l, fn_name)
            && !logs_and_does_io(l, &result)
        {
            return None;
        }
        let statuses = self.statuses(&result, body);
        if polls_named_client_errors(&result) {
            return None;
        }
        let mut keys = per_attempt_keys(body, self.scope, self.index, fn_name);
        for k in &mut keys {
            // A key made one call away has no mechanical fix: the `let` of the call binds what
            // the helper returns, the request carrying the key (or its answer), not the key;
            // above the loop, the first attempt would consume it (`request.send()`) or the
            // loop would no longer make the call.
            if k.via.is_none() {
                k.hoist = hoist_fix(body, head, k.span, &loop_vars, self.index);
            }
        }
        let retry_path = result
            .continues
            .iter()
            .find(|c| c.outcome.may_fail() && !c.readiness)
            .map(|c| c.err_arm.unwrap_or(c.span));
        let per_attempt = AttemptFacts::of_expr(l, self.scope, self.index, Some(locals));
        let blind = !policy_decides && is_blind(&result, body);
        let unclassified = if policy_decides {
            None
        } else {
            let mut quiet = receivers.transport_only_calls(Root::Expr(l), self.index);
            quiet.extend(receivers.local_tested(&result, Root::Expr(l), self.index));
            unclassified(&result, self.index, self.scope, &quiet)
        };
        // A path that found the attempts used up goes round only when nothing else ends the
        // loop (a `for` range, a `while` on the counter would).
        // `for attempt in 0..2`: at most one second try.
        // `let mut left = 2; while left > 0 { ..; left -= 1 }`: the same, counted down.
        let second_try_only = match l {
            Expr::ForLoop(f) => literal_range_len(&f.expr).is_some_and(|n| n <= 2),
            Expr::While(w) => countdown_len(&w.cond, locals, &facts).is_some_and(|n| n <= 2),
            _ => false,
        };
        // A loop nested in the body, or in a function of this file called on each attempt
        // (`self.poll_balance(..)`, itself a retry that waits between its tries), waits.
        // A failure path that awaits a call other than a known wait before going round waits
        // as long as that call does, which is not read here: unknown, not "no wait".
        let paced_inside = result
            .failing()
            .any(|c| c.awaited.iter().any(|name| self.may_wait(name, fn_name)))
            || inner_loop_waits(body, self.scope)
            || calls_timed_value(body, locals, self.scope)
            || awaits_before_attempt(body, &result.tested_ops().collect::<Vec<_>>())
                .iter()
                .any(|name| self.may_wait(name, fn_name))
            || per_attempt.calls.iter().any(|c| {
                c.name != fn_name
                    && self
                        .scope
                        .function_via(&c.name, Some(&c.via))
                        .is_some_and(|f| retries_with_waits(f.block, self.scope, fn_name, 2))
            });
        let unpaced = if delays.is_empty() || paced_inside {
            None
        } else {
            unpaced_path(&result).filter(|u| {
                matches!(u, crate::analysis::Unpaced::Skips(_))
                    || matches!(
                        bound,
                        Bound::Unbounded | Bound::Bounded(BoundKind::Deadline)
                    )
            })
        };
        let has_keys = !keys.is_empty();
        // The write a failure may have applied is the attempt's: one made by a statement run
        // for its effect alone after every operation the round tests, on its way round (a
        // clean-up: `self.stop().await;` once `self.start()` failed), is not what the retry
        // resends. A write whose value is kept (`sent = producer.send(..)`, tested next round)
        // is the attempt's. A `while` whose condition makes the attempt (`while let Err(e) =
        // self.start().await`) runs its body only after a failure.
        let last_test = result
            .tested_calls
            .iter()
            .map(|(_, at, _)| at.end)
            .max()
            .or(match l {
                Expr::While(w) if matches!(&*w.cond, Expr::Let(_) | Expr::MethodCall(_)) => {
                    Some(self.index.of(&*w.cond).end)
                }
                _ => None,
            });
        let cleanups: Vec<_> = last_test
            .map(|end| {
                effect_statements(body, self.index)
                    .into_iter()
                    .filter(|s| s.start > end)
                    .collect()
            })
            .unwrap_or_default();
        let writes: Vec<_> = per_attempt
            .writes
            .iter()
            .copied()
            .filter(|w| {
                !cleanups
                    .iter()
                    .any(|c| c.start <= w.start && w.end <= c.end)
            })
            .collect();
        Some(RetrySite {
            blind,
            unclassified,
            resend_safe: resends_only_unprocessed(&result),
            evidence: Vec::new(),
            supervisor: supervisor
                || ((reconnects_until_connected || reconnects_until_told)
                    && matches!(bound, Bound::Unbounded)),
            unpaced,
            paced_inside,
            second_try_only,
            cleanups,
            limit_from: None,
            longest_by_limit,
            delay_from: None,
            origins: Vec::new(),
            unawaited: waits.dropped.iter().map(|e| self.index.of(*e)).collect(),
            kind: SiteKind::Loop,
            head,
            bound,
            delays,
            statuses,
            keys,
            retry_path,
            in_async: false,
            function: String::new(),
            policy: None,
            reads_retry_after: per_attempt.reads_retry_after,
            writes,
            sends_key: per_attempt.sends_key || has_keys,
            calls: per_attempt.calls,
        })
    }
}

impl<'a> Builder<'a, '_> {
    pub(super) fn recursion_site<'l>(
        &self,
        f: LocalFn<'a>,
        locals: &dyn Fn() -> &'l Locals<'a>,
        deadline: bool,
    ) -> Option<RetrySite> {
        let _guard = crate::analysis::limits::enter();
        let name = f.sig.ident.to_string();
        if !calls_itself(f.block, &name) {
            return None;
        }
        let locals = locals();
        let mut facts = LoopFacts::collect(f.block, &[]);
        recursive_arg_mutations(f, &name, &mut facts);
        let counters: Vec<String> = facts.counters.iter().cloned().collect();
        let status = StatusEval {
            file: self.scope,
            locals,
            status_idents: Vec::new(),
            depth: 0,
        };
        let mut flow = Flow::new(self.index, &status, &facts, None, Mode::Recursion(&name));
        flow.run_fn_body(f.block);
        let result = flow.result;
        let retry_calls: Vec<_> = result
            .continues
            .iter()
            .filter(|c| c.outcome.may_fail() && !c.readiness)
            .collect();
        if retry_calls.is_empty() || !result.success_exit {
            return None;
        }
        // It calls itself from the arms of a match on a value it is handed, with one another
        // operation made: it handles the next value, not the same operation again.
        if handles_other_values(&f, &name, self.scope) {
            return None;
        }
        let values = ValueCx {
            file: self.scope,
            locals,
            facts: &facts,
            params: None,
            depth: 0,
            current_fn: &name,
        };
        let every_path_limited = retry_calls
            .iter()
            .all(|c| c.limited(!facts.counters.is_empty()));
        // Behind a flag it passes as `false`: one second try at most.
        let spends_flag = recursion_spends_flag(f, &name);
        let bound = if let Some(k) = result.bounded_by.filter(|_| every_path_limited) {
            Bound::Bounded(k)
        } else if deadline {
            Bound::Bounded(BoundKind::Deadline)
        } else if spends_flag {
            Bound::Bounded(BoundKind::Counter)
        } else {
            Bound::Unbounded
        };
        let limit = attempt_limit(None, f.block, &facts, self.scope, locals);
        let longest =
            |arg: Option<&'a Expr>| longest_wait(&bound, limit, arg, &facts, self.scope, locals);
        let delays = self.delays(f.block, &values, true, &longest);
        let retry_named = names::is_retry_word(&name)
            || f.sig
                .inputs
                .iter()
                .any(|i| names::is_retry_word(&names::text(i)));
        if delays.is_empty() && counters.is_empty() && !retry_named {
            return None;
        }
        let head = retry_calls[0].span;
        let statuses = self.statuses(&result, f.block);
        let keys = per_attempt_keys(f.block, self.scope, self.index, &name);
        let per_attempt = AttemptFacts::of_block(f.block, self.scope, self.index, Some(locals));
        let blind = is_blind(&result, f.block);
        let receivers = Receivers {
            locals,
            scope: self.scope,
            fields: f
                .owner
                .and_then(|o| self.scope.field_paths.get(&o.to_string())),
        };
        let mut quiet = receivers.transport_only_calls(Root::Block(f.block), self.index);
        quiet.extend(receivers.local_tested(&result, Root::Block(f.block), self.index));
        let unclassified = unclassified(&result, self.index, self.scope, &quiet);
        let has_keys = !keys.is_empty();
        Some(RetrySite {
            blind,
            unclassified,
            resend_safe: resends_only_unprocessed(&result),
            evidence: Vec::new(),
            supervisor: false,
            unpaced: None,
            paced_inside: false,
            second_try_only: spends_flag,
            cleanups: Vec::new(),
            limit_from: None,
            longest_by_limit: Vec::new(),
            delay_from: None,
            origins: Vec::new(),
            unawaited: Vec::new(),
            kind: SiteKind::Recursion,
            head,
            bound,
            delays,
            statuses,
            keys,
            retry_path: Some(head),
            in_async: false,
            function: String::new(),
            policy: None,
            reads_retry_after: per_attempt.reads_retry_after,
            writes: per_attempt.writes,
            sends_key: per_attempt.sends_key || has_keys,
            calls: per_attempt
                .calls
                .into_iter()
                .filter(|c| c.name != name)
                .collect(),
        })
    }
}

/// Whether every call a function makes of itself happens behind a test of one of its `bool`
/// parameters (an `if`, or an arm's guard) and passes `false` for it (`if allow_retry &&
/// expired { return self.read(buf, false) }`): the second call cannot make a third, so the
/// function tries again at most once (evidence.md #4: a limit in the code is read, not
/// reported as none).
fn recursion_spends_flag(f: LocalFn<'_>, name: &str) -> bool {
    use syn::visit::Visit;
    struct Calls<'n> {
        name: &'n str,
        flags: &'n [(usize, String)],
        /// `Self::name(self, ..)` hands the receiver first: the parameters come one later.
        receiver: bool,
        /// The flags the enclosing `if`s require to be set.
        required: Vec<String>,
        made: usize,
        spent: usize,
    }
    impl Calls<'_> {
        fn call(&mut self, args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>, skip: usize) {
            self.made += 1;
            let spends = self.flags.iter().any(|(i, flag)| {
                self.required.contains(flag)
                    && matches!(args.iter().nth(*i + skip), Some(Expr::Lit(l))
                        if matches!(l.lit, syn::Lit::Bool(ref b) if !b.value))
            });
            self.spent += usize::from(spends);
        }
    }
    impl<'v> Visit<'v> for Calls<'_> {
        fn visit_expr_if(&mut self, i: &'v syn::ExprIf) {
            let _guard = crate::analysis::limits::enter();
            self.visit_expr(&i.cond);
            let before = self.required.len();
            cond_flags(&i.cond, true, &mut self.required);
            self.visit_block(&i.then_branch);
            self.required.truncate(before);
            if let Some((_, e)) = &i.else_branch {
                self.visit_expr(e);
            }
        }
        fn visit_arm(&mut self, arm: &'v syn::Arm) {
            let _guard = crate::analysis::limits::enter();
            let before = self.required.len();
            if let Some((_, g)) = &arm.guard {
                self.visit_expr(g);
                cond_flags(g, true, &mut self.required);
            }
            self.visit_expr(&arm.body);
            self.required.truncate(before);
        }
        fn visit_expr_method_call(&mut self, m: &'v syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            if m.method == self.name
                && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
            {
                self.call(&m.args, 0);
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'v syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if let Expr::Path(p) = &*c.func {
                if p.path.is_ident(self.name) {
                    self.call(&c.args, 0);
                } else if p.path.segments.len() == 2
                    && p.path.segments[0].ident == "Self"
                    && p.path.segments[1].ident == self.name
                {
                    self.call(&c.args, usize::from(self.receiver));
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    // The `bool` parameters, by their position among the call's arguments.
    let flags: Vec<(usize, String)> = f
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        })
        .enumerate()
        .filter_map(|(i, t)| match (&*t.pat, &*t.ty) {
            (syn::Pat::Ident(id), syn::Type::Path(ty)) if ty.path.is_ident("bool") => {
                Some((i, id.ident.to_string()))
            }
            _ => None,
        })
        .collect();
    if flags.is_empty() {
        return false;
    }
    let mut calls = Calls {
        name,
        flags: &flags,
        receiver: f.sig.receiver().is_some(),
        required: Vec::new(),
        made: 0,
        spent: 0,
    };
    calls.visit_block(f.block);
    calls.made > 0 && calls.spent == calls.made
}

/// Whether a recursive function `f` (named `name`) calls itself only from the arms of a `match`
/// on a value it is handed (its parameter `result`), passing in that parameter's place a value
/// made by an operation that none of the file's other calls of it hand it
/// (`self.handle(tunn.format_handshake_initiation(..))` where the callers hand it
/// `tunn.update_timers(..)`): each call handles a value another operation made, the next step
/// of a protocol, not the same operation repeated after it failed. Unknown (no other call of
/// it in the file, an argument that names no operation) is not evidence.
fn handles_other_values(
    f: &LocalFn<'_>,
    name: &str,
    scope: &crate::analysis::scope::FileScope<'_>,
) -> bool {
    use syn::visit::Visit;
    /// The calls of itself inside the arms of a `match` on a parameter, with that
    /// parameter's place.
    struct Handled<'a, 'n> {
        params: &'n [Option<String>],
        name: &'n str,
        found: Vec<(usize, Vec<&'a Expr>)>,
    }
    impl<'a> Visit<'a> for Handled<'a, '_> {
        fn visit_expr_match(&mut self, m: &'a syn::ExprMatch) {
            let _guard = crate::analysis::limits::enter();
            let at = match &*m.expr {
                Expr::Path(p) => p.path.get_ident().and_then(|id| {
                    self.params
                        .iter()
                        .position(|q| q.as_deref() == Some(id.to_string().as_str()))
                }),
                _ => None,
            };
            if let Some(at) = at {
                for arm in &m.arms {
                    let mut calls = SelfCalls {
                        name: self.name,
                        args: Vec::new(),
                    };
                    calls.visit_expr(&arm.body);
                    self.found.extend(calls.args.into_iter().map(|a| (at, a)));
                }
            }
            syn::visit::visit_expr_match(self, m);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let params = param_names(f);
    // The operation that made an argument: the call itself, or the `let` that holds it.
    let made_by = |arg: &Expr, locals: &Locals<'_>| -> Option<String> {
        crate::analysis::flow::operation_name(arg).or_else(|| {
            let key = crate::analysis::values::place_key(arg)?;
            let inits = locals.lets.get(&key)?;
            let mut names = inits
                .iter()
                .map(|e| crate::analysis::flow::operation_name(e));
            let first = names.next()??;
            names
                .all(|n| n.as_deref() == Some(first.as_str()))
                .then_some(first)
        })
    };
    let own = Locals::of_fn(f);
    let mut mine = SelfCalls {
        name,
        args: Vec::new(),
    };
    mine.visit_block(f.block);
    let mut in_arms = Handled {
        params: &params,
        name,
        found: Vec::new(),
    };
    in_arms.visit_block(f.block);
    let mut places: Vec<usize> = in_arms.found.iter().map(|(at, _)| *at).collect();
    places.sort_unstable();
    places.dedup();
    if in_arms.found.len() != mine.args.len() || places.len() != 1 {
        return false;
    }
    let tested = places;
    let mut theirs = SelfCalls {
        name,
        args: Vec::new(),
    };
    let mut callers_locals = Vec::new();
    for g in scope.fns.values().flatten() {
        if std::ptr::eq(g.block, f.block) {
            continue;
        }
        let before = theirs.args.len();
        theirs.visit_block(g.block);
        for _ in before..theirs.args.len() {
            callers_locals.push(Locals::of_fn(g));
        }
    }
    if theirs.args.is_empty() || mine.args.is_empty() {
        return false;
    }
    tested.iter().all(|&at| {
        let handed: Option<Vec<String>> = theirs
            .args
            .iter()
            .zip(&callers_locals)
            .map(|(args, locals)| args.get(at).and_then(|a| made_by(a, locals)))
            .collect();
        let again: Option<Vec<String>> = mine
            .args
            .iter()
            .map(|args| args.get(at).and_then(|a| made_by(a, &own)))
            .collect();
        match (handed, again) {
            (Some(handed), Some(again)) => again.iter().all(|op| !handed.contains(op)),
            _ => false,
        }
    })
}
