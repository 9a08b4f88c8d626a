//! The mechanical fixes: moving a key made in the loop above it, with the clones that keep the fixed code compiling.

use syn::visit::Visit;
use syn::{Block, Expr};

use crate::analysis::names;
use crate::analysis::span::LineIndex;
use crate::analysis::values::pat_bindings;
use crate::source::Span;

/// The mechanical fix of a key made in the loop: move its `let` above the loop. Offered only
/// when the `let` makes the key itself (not a call of a local function that makes and sends
/// one: the caller leaves that out), is a statement of the loop body on lines of its own, its
/// value uses nothing bound inside the loop, and the loop starts its line (`loop {`,
/// `let r = loop {`, `for attempt in 0..3 {`, `'retry: loop {`). The fixed code must compile:
/// a use that moves the key (see [`KeyUses`]) takes a clone, so the next attempt still has it,
/// and the fix is left out where that cannot be made safe (the key moved into a `move`
/// closure, mutated, a field of it used, its name bound again or used around the loop).
pub(super) fn hoist_fix(
    body: &Block,
    head: Span,
    key: Span,
    loop_vars: &[String],
    index: &LineIndex<'_>,
) -> Option<crate::source::Fix> {
    let mut inner: Vec<String> = loop_vars.to_vec();
    let mut found = None;
    for stmt in &body.stmts {
        if let syn::Stmt::Local(l) = stmt {
            let span = index.of(l);
            if span.start <= key.start && key.end <= span.end {
                found = Some((l, span));
                break;
            }
            pat_bindings(&l.pat, &mut inner);
        }
    }
    let (local, span) = found?;
    // A name the body binds again (or the loop's own variable): out of the loop, the `let`
    // would no longer shadow, or be shadowed by, the other binding.
    let mut bound = Vec::new();
    pat_bindings(&local.pat, &mut bound);
    let mut elsewhere = loop_vars.to_vec();
    for stmt in &body.stmts {
        match stmt {
            syn::Stmt::Local(l) if !std::ptr::eq(l, local) => pat_bindings(&l.pat, &mut elsewhere),
            _ => {}
        }
    }
    if bound.iter().any(|b| elsewhere.contains(b)) {
        return None;
    }
    let init = local.init.as_ref()?;
    // The `let` makes the key (`let key = Uuid::new_v4().to_string();`, `format!(..)` of it),
    // not a request that happens to carry one.
    let init_span = index.of(&*init.expr);
    let makes_key = init_span.start == key.start || matches!(&*init.expr, Expr::Macro(_));
    // Names bound in the loop, also inside format strings (`format!("{attempt}")`).
    let text = names::text(&*init.expr);
    let uses_inner = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| inner.iter().any(|n| n == w));
    if init.diverge.is_some() || !makes_key || uses_inner {
        return None;
    }
    let (stmt_line, stmt_line_end) = index.line_of(span.start);
    let (_, last_line_end) = index.line_of(span.end.saturating_sub(1));
    let before = index.slice(stmt_line, span.start);
    let after = index.slice(span.end, last_line_end);
    // The statement is alone on its lines (a trailing comment goes with it).
    if !before.trim().is_empty()
        || !(after.trim().is_empty() || after.trim_start().starts_with("//"))
    {
        return None;
    }
    let _ = stmt_line_end;
    let (loop_line, _) = index.line_of(head.start);
    let prefix = index.slice(loop_line, head.start);
    let indent: String = prefix.chars().take_while(|c| c.is_whitespace()).collect();
    let rest = prefix.trim();
    let plain = rest.is_empty()
        || (rest.starts_with('\'') && rest.ends_with(':'))
        || (rest.starts_with("let ") && rest.ends_with('='));
    if !plain || loop_line > span.start {
        return None;
    }
    let statement = reindent(index.slice(span.start, span.end), before, &indent, local);
    let clones = clones_for_moves(body, local, index, loop_line)?;
    let mut edits = vec![
        crate::source::Edit {
            start: loop_line,
            end: loop_line,
            replacement: format!("{indent}{statement}\n"),
        },
        crate::source::Edit {
            start: stmt_line,
            end: last_line_end,
            replacement: String::new(),
        },
    ];
    edits.extend(clones);
    Some(crate::source::Fix {
        message: "create the key once, before the loop".to_owned(),
        edits,
    })
}

/// The lines of a statement after its first (which the caller indents), moved from the
/// indentation `from` (in the loop) to `to` (the loop's): as written when a line is indented
/// otherwise or a literal spans lines (its text would change).
fn reindent(statement: &str, from: &str, to: &str, local: &syn::Local) -> String {
    let mut lines = statement.split('\n');
    let first = lines.next().unwrap_or_default();
    let rest: Vec<&str> = lines.collect();
    let blank = |line: &str| line.trim().is_empty();
    if from == to
        || rest.is_empty()
        || rest.iter().any(|l| !blank(l) && !l.starts_with(from))
        || has_multiline_literal(quote::ToTokens::to_token_stream(local))
    {
        return statement.to_owned();
    }
    let mut out = first.to_owned();
    for line in rest {
        out.push('\n');
        if blank(line) {
            out.push_str(line);
        } else {
            out.push_str(to);
            out.push_str(&line[from.len()..]);
        }
    }
    out
}

/// Whether a literal among `tokens` (in groups too) is written on more than one line.
fn has_multiline_literal(tokens: proc_macro2::TokenStream) -> bool {
    let mut stack = vec![tokens];
    while let Some(tokens) = stack.pop() {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Literal(l) if l.to_string().contains('\n') => return true,
                proc_macro2::TokenTree::Group(g) => stack.push(g.stream()),
                _ => {}
            }
        }
    }
    false
}

/// The edits that keep the hoisted key `local` alive for every attempt: `.clone()` after each
/// use in the loop `body` that moves it (none for a key of a `Copy` type), in file order; `None`
/// when the hoisted `let` would not compile or would change what the code does: a pattern other
/// than a plain name, a `mut` or `ref` binding, a use that cannot be made safe ([`KeyUses`]),
/// the name used before the `let` in the loop, in the loop's head (from `loop_line`), or after
/// the loop in the enclosing block (where it would now name the hoisted key).
pub(super) fn clones_for_moves(
    body: &Block,
    local: &syn::Local,
    index: &LineIndex<'_>,
    loop_line: usize,
) -> Option<Vec<crate::source::Edit>> {
    let mut pat = &local.pat;
    if let syn::Pat::Type(typed) = pat {
        pat = &typed.pat;
    }
    let syn::Pat::Ident(binding) = pat else {
        return None;
    };
    if binding.mutability.is_some() || binding.by_ref.is_some() || binding.subpat.is_some() {
        return None;
    }
    let name = binding.ident.to_string();
    let is_word = |text: &str| {
        text.split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == name)
    };
    let body_span = index.of(body);
    let (_, end_of_file) = index.line_of(usize::MAX);
    if is_word(index.slice(loop_line, body_span.start))
        || is_word(enclosing_rest(index.slice(body_span.end, end_of_file)))
    {
        return None;
    }
    let mut uses = KeyUses {
        name: &name,
        index,
        moves: Vec::new(),
        unsafe_use: false,
    };
    let mut after = false;
    for stmt in &body.stmts {
        match stmt {
            syn::Stmt::Local(l) if std::ptr::eq(l, local) => after = true,
            _ if after => uses.visit_stmt(stmt),
            _ if is_word(&names::text(stmt)) => return None,
            _ => {}
        }
    }
    if uses.unsafe_use {
        return None;
    }
    let copy = matches!(&local.pat, syn::Pat::Type(t) if is_integer_type(&t.ty))
        || local
            .init
            .as_ref()
            .is_some_and(|init| makes_copy_key(&init.expr));
    let mut edits: Vec<crate::source::Edit> = if copy {
        Vec::new()
    } else {
        uses.moves
            .iter()
            .map(|&(span, shorthand)| crate::source::Edit {
                start: if shorthand { span.start } else { span.end },
                end: span.end,
                replacement: if shorthand {
                    format!("{name}: {name}.clone()")
                } else {
                    ".clone()".to_owned()
                },
            })
            .collect()
    };
    edits.sort_by_key(|e| (e.start, e.end));
    edits.dedup_by_key(|e| (e.start, e.end));
    Some(edits)
}

/// The text of the enclosing block after a loop: `rest` up to the `}` that closes the block the
/// loop is in (braces counted in the raw text, which at worst looks too far).
pub(super) fn enclosing_rest(rest: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return &rest[..i],
            '}' => depth -= 1,
            _ => {}
        }
    }
    rest
}

/// Whether a key's value is of a `Copy` type, so that using it never moves it (and a clone
/// would be noise, `clippy::clone_on_copy`): a UUID or ULID made by its constructor
/// (`Uuid::new_v4()`, `Ulid::new()`), not turned into a string, or an integer
/// (`fastrand::u64(..)`, `rng.next_u32()`, `rand::random::<u64>()`, `rng.gen::<u64>()`).
pub(super) fn makes_copy_key(init: &Expr) -> bool {
    match init {
        Expr::Call(call) => {
            let Expr::Path(path) = &*call.func else {
                return false;
            };
            let segments: Vec<String> = path
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let turbofish = path.path.segments.last().map(|s| &s.arguments);
            match segments.as_slice() {
                [.., ty, ctor] if ty == "Uuid" => {
                    ctor.starts_with("new_v") || ctor.starts_with("now_v")
                }
                [.., ty, ctor] if ty == "Ulid" => ctor == "new",
                // A function named for an integer type returns one (`fastrand::u64(..)`).
                [.., ty] if names::is_integer_name(ty) => true,
                [.., f] if f == "random" => match turbofish {
                    Some(syn::PathArguments::AngleBracketed(a)) => integer_turbofish(a),
                    _ => false,
                },
                _ => false,
            }
        }
        Expr::MethodCall(m) => match m.method.to_string().as_str() {
            "next_u32" | "next_u64" => m.args.is_empty(),
            "gen" | "random" => m.turbofish.as_ref().is_some_and(integer_turbofish),
            _ => false,
        },
        _ => false,
    }
}

/// `::<u64>`: one type argument, an integer type.
fn integer_turbofish(args: &syn::AngleBracketedGenericArguments) -> bool {
    args.args.len() == 1
        && matches!(args.args.first(), Some(syn::GenericArgument::Type(ty)) if is_integer_type(ty))
}

/// `u64`, `i32`, `usize`, ...: a primitive integer type (all `Copy`).
fn is_integer_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.get_ident().is_some_and(|i| names::is_integer_name(&i.to_string())))
}

/// The uses of a key's name in the statements after its `let` in the loop: those that move it
/// (`moves`: a bare `key` passed, returned, stored or added to, the receiver of an `into_*`
/// method, a struct field given by shorthand, with whether it is one), and whether any use
/// cannot be made safe by a clone (`unsafe_use`): the key moved into a `move` closure or `async
/// move` block (the clone would be moved in too), assigned to, a field of it used, its name
/// bound again, or named in a macro that may take it by value. A reference (`&key`), a method
/// call on it (`key.as_str()`), a comparison, a dereference and the formatting and logging
/// macros only borrow it.
pub(super) struct KeyUses<'u, 'a> {
    pub(in crate::analysis) name: &'u str,
    pub(in crate::analysis) index: &'u LineIndex<'a>,
    pub(in crate::analysis) moves: Vec<(Span, bool)>,
    pub(in crate::analysis) unsafe_use: bool,
}

impl KeyUses<'_, '_> {
    pub(super) fn is_key(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.name))
    }

    pub(super) fn mentions(&self, node: &impl quote::ToTokens) -> bool {
        let mut stack = vec![node.to_token_stream()];
        while let Some(tokens) = stack.pop() {
            for token in tokens {
                match token {
                    proc_macro2::TokenTree::Ident(i) if i == self.name => return true,
                    proc_macro2::TokenTree::Group(g) => stack.push(g.stream()),
                    _ => {}
                }
            }
        }
        false
    }
}

impl<'ast> Visit<'ast> for KeyUses<'_, '_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            _ if self.is_key(e) => self.moves.push((self.index.of(e), false)),
            Expr::Reference(r) if self.is_key(&r.expr) => {}
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && self.is_key(&u.expr) => {}
            Expr::MethodCall(m) if self.is_key(&m.receiver) => {
                if m.method.to_string().starts_with("into") {
                    self.moves.push((self.index.of(&*m.receiver), false));
                }
                for arg in &m.args {
                    self.visit_expr(arg);
                }
            }
            Expr::Field(f) if self.is_key(&f.base) => self.unsafe_use = true,
            Expr::Assign(a) if self.is_key(&a.left) => self.unsafe_use = true,
            Expr::Binary(b) => {
                let compares = names::is_comparison(&b.op);
                let assigns = matches!(
                    b.op,
                    syn::BinOp::AddAssign(_)
                        | syn::BinOp::SubAssign(_)
                        | syn::BinOp::MulAssign(_)
                        | syn::BinOp::DivAssign(_)
                        | syn::BinOp::RemAssign(_)
                        | syn::BinOp::BitXorAssign(_)
                        | syn::BinOp::BitAndAssign(_)
                        | syn::BinOp::BitOrAssign(_)
                        | syn::BinOp::ShlAssign(_)
                        | syn::BinOp::ShrAssign(_)
                );
                if assigns && self.is_key(&b.left) {
                    self.unsafe_use = true;
                }
                for side in [&*b.left, &*b.right] {
                    if !(compares && self.is_key(side)) {
                        self.visit_expr(side);
                    }
                }
            }
            Expr::Closure(c) if c.capture.is_some() && self.mentions(&c.body) => {
                self.unsafe_use = true;
            }
            Expr::Async(a) if a.capture.is_some() && self.mentions(&a.block) => {
                self.unsafe_use = true;
            }
            Expr::Struct(s) => {
                for field in &s.fields {
                    let shorthand = field.colon_token.is_none()
                        && matches!(&field.member, syn::Member::Named(n) if n == self.name);
                    if shorthand {
                        self.moves.push((self.index.of(field), true));
                    } else {
                        self.visit_expr(&field.expr);
                    }
                }
                if let Some(rest) = &s.rest {
                    self.visit_expr(rest);
                }
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.ident == self.name {
            self.unsafe_use = true;
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let borrows = m.path.segments.last().is_some_and(|s| {
            matches!(
                s.ident.to_string().as_str(),
                "format"
                    | "format_args"
                    | "print"
                    | "println"
                    | "eprint"
                    | "eprintln"
                    | "write"
                    | "writeln"
                    | "panic"
                    | "assert"
                    | "assert_eq"
                    | "assert_ne"
                    | "debug_assert"
                    | "debug_assert_eq"
                    | "debug_assert_ne"
                    | "unreachable"
                    | "todo"
                    | "trace"
                    | "debug"
                    | "info"
                    | "warn"
                    | "error"
                    | "event"
                    | "json"
            )
        });
        if !borrows && self.mentions(&m.tokens) {
            self.unsafe_use = true;
        }
    }

    // A nested item cannot see the loop's locals.
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
