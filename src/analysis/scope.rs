//! What a file makes visible to the analysis: `use` aliases, `const`/`static` items and local
//! functions (free functions and methods), so that calls and constants can be followed one level.

use std::cell::RefCell;
use std::collections::HashMap;

use syn::visit::Visit;
use syn::{Block, Expr, ImplItemFn, ItemConst, ItemFn, ItemStatic, ItemUse, Signature, UseTree};

use super::known::{self, List};
use super::{names, Extensions, Via};

/// A function body of this file.
#[derive(Clone, Copy)]
pub struct LocalFn<'a> {
    pub sig: &'a Signature,
    pub block: &'a Block,
    pub attrs: &'a [syn::Attribute],
    /// The type of the `impl` (or the trait) whose method this is; `None` for a free function.
    pub owner: Option<&'a syn::Ident>,
}

/// The path of the type a field or parameter holds, through references and shared or locked
/// wrappers (`&Arc<Mutex<crate::net::Client>>` → `crate::net::Client`); `None` for a wrapper it
/// cannot see through, `impl Trait`, `dyn Trait`, a tuple or a slice. Not through `Option`:
/// `conn.take()` is `Option`'s.
#[must_use]
pub fn held_path(ty: &syn::Type) -> Option<&syn::Path> {
    let _guard = crate::analysis::limits::enter();
    match ty {
        syn::Type::Reference(r) => held_path(&r.elem),
        syn::Type::Paren(p) => held_path(&p.elem),
        syn::Type::Group(g) => held_path(&g.elem),
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let wrapper = matches!(
                last.ident.to_string().as_str(),
                "Arc"
                    | "Rc"
                    | "Box"
                    | "Mutex"
                    | "RwLock"
                    | "RefCell"
                    | "Cell"
                    | "OnceCell"
                    | "OnceLock"
                    | "Pin"
            );
            if !wrapper {
                return Some(&p.path);
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args) => {
                    args.args.iter().find_map(|a| match a {
                        syn::GenericArgument::Type(inner) => held_path(inner),
                        _ => None,
                    })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The name of the type a field holds ([`held_path`]'s last segment).
fn held_type(ty: &syn::Type) -> Option<String> {
    held_path(ty)?.segments.last().map(|s| s.ident.to_string())
}

/// The name of the type an `impl` block is for (`Uploader` in `impl<S> Uploader<S>`).
#[must_use]
pub fn type_ident(ty: &syn::Type) -> Option<&syn::Ident> {
    let _guard = crate::analysis::limits::enter();
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| &s.ident),
        syn::Type::Reference(r) => type_ident(&r.elem),
        syn::Type::Paren(p) => type_ident(&p.elem),
        syn::Type::Group(g) => type_ident(&g.elem),
        _ => None,
    }
}

impl<'a> LocalFn<'a> {
    /// The parameters other than `self`, in order.
    #[must_use]
    pub fn typed_params(&self) -> Vec<&'a syn::PatType> {
        self.sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(t) => Some(t),
                syn::FnArg::Receiver(_) => None,
            })
            .collect()
    }
}

/// Whether a function's body is short enough to be read for a caller's facts: every site
/// that calls a function reads it again, so a body of thousands of lines (generated code, a
/// `match` of thousands of arms) would cost its length once per call; its facts are unknown
/// instead, and unknown is silent (its own retry sites are still analysed where it is).
fn followable(f: &LocalFn<'_>) -> bool {
    let body = f.block.brace_token.span.join();
    body.end().line.saturating_sub(body.start().line) <= crate::analysis::limits::MAX_FOLLOWED_LINES
}

/// Where a module's or a function's braces open and close: (line, column) of each.
type Region = ((usize, usize), (usize, usize));

fn region(braces: &proc_macro2::extra::DelimSpan) -> Region {
    let whole = braces.join();
    let (a, b) = (whole.start(), whole.end());
    ((a.line, a.column), (b.line, b.column))
}

/// File-wide facts.
#[derive(Default)]
pub struct FileScope<'a> {
    /// Local name → full path (`sleep` → `tokio::time::sleep`, `nap` → `std::thread::sleep`).
    pub uses: HashMap<String, Vec<String>>,
    /// `const` and `static` items by name.
    pub consts: HashMap<String, &'a Expr>,
    /// Where each of [`FileScope::consts`] is named.
    const_names: HashMap<String, proc_macro2::Span>,
    /// Functions and methods by name (several impls may share one).
    pub fns: HashMap<String, Vec<LocalFn<'a>>>,
    /// The paths the file imports everything of (`use backon::*` → `["backon"]`).
    pub globs: Vec<Vec<String>>,
    /// The first segments of the multi-segment paths written in the file (`ureq` in
    /// `ureq::Agent`): which crates it talks to.
    pub roots: std::collections::HashSet<String>,
    /// What the team taught the analysis.
    pub ext: super::Extensions,
    /// The values being followed now (see [`FileScope::follow`]), by address.
    following: RefCell<Vec<usize>>,
    /// While visiting: the type of the `impl` (or the trait) being visited.
    owner: Option<&'a syn::Ident>,
    /// While visiting: the inline modules and function bodies that enclose the item, as the
    /// (line, column) of their braces.
    enclosing: Vec<Region>,
    /// The names the file's root imports (see [`FileScope::bind_use`]).
    root_uses: std::collections::HashSet<String>,
    /// The `use`s of inline modules and function bodies, with where each holds.
    scoped_uses: Vec<(Region, HashMap<String, Vec<String>>)>,
    /// The fields of the file's structs and their types' names (`client: Arc<StoreClient>` →
    /// `StoreClient`: through `Arc`, `Box`, `Rc`, `Mutex`, `RwLock` and the like).
    pub struct_fields: HashMap<String, HashMap<String, String>>,
    /// The same fields' types as written (`client: Arc<reqwest::Client>` → `reqwest::Client`),
    /// to resolve through the file's `use`.
    pub field_paths: HashMap<String, HashMap<String, Vec<String>>>,
    /// Associated constants declared by the file's traits (`const BYTES: usize;`): defined
    /// names, without a value to read.
    pub trait_consts: Vec<String>,
    /// The modules the file declares (`mod store;`): a path starting with one is the crate's.
    pub mods: std::collections::HashSet<String>,
    /// The futures of the file's `select!` branches, by invocation (see [`super::select`]).
    pub selects: Option<&'a HashMap<super::select::SelectKey, Vec<Expr>>>,
    /// Definitions of other files of the crate (see [`FileScope::import`]): consulted for a
    /// name this file does not define.
    imported: Imported<'a>,
    /// Names looked up and defined neither here nor in an imported file: what another file of
    /// the crate may tell.
    missed: RefCell<std::collections::BTreeSet<String>>,
    /// Definitions followed to a fact of a site, in the order of use (see
    /// [`FileScope::consult`]).
    used: RefCell<Vec<Use>>,
    /// How many [`FileScope::consult`]s are under way: a definition looked up outside them
    /// decides no fact and is not kept.
    consulting: std::cell::Cell<usize>,
}

/// The facts of a site a definition can decide (a set: a policy's builder decides its limit
/// and its waits). Each rule shows the definitions behind the facts it reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Facts(u8);

impl Facts {
    /// No fact.
    pub const NONE: Facts = Facts(0);
    /// How many attempts are made.
    pub const BOUND: Facts = Facts(1);
    /// How long each wait is, how it grows, whether it is randomised.
    pub const WAIT: Facts = Facts(1 << 1);
    /// Which errors and statuses go round again.
    pub const ERRORS: Facts = Facts(1 << 2);
    /// Where an idempotency key is made.
    pub const KEY: Facts = Facts(1 << 3);
    /// That the operation writes.
    pub const WRITE: Facts = Facts(1 << 4);

    /// Both sets.
    #[must_use]
    pub const fn and(self, other: Facts) -> Facts {
        Facts(self.0 | other.0)
    }

    /// Whether the two sets share a fact.
    #[must_use]
    pub const fn meets(self, other: Facts) -> bool {
        self.0 & other.0 != 0
    }
}

/// A definition a fact of a site was read from: a function or constant of this file (`at` is
/// `None`, `name_span` where it is named) or of another file of the crate (`at` is where its
/// name is, a [`super::Place::There`]).
#[derive(Clone, Debug)]
pub struct Use {
    pub name: String,
    pub at: Option<super::Place>,
    pub name_span: Option<proc_macro2::Span>,
    /// The facts it decided; empty while the lookup's answer is still being worked out.
    pub facts: Facts,
}

/// Answers of a lookup that say something: a definition consulted for an answer that says
/// nothing (`None`, `false`, nothing found) decided no fact.
pub trait Decides {
    fn decides(&self) -> bool;
}

impl Decides for bool {
    fn decides(&self) -> bool {
        *self
    }
}

impl<T> Decides for Option<T> {
    fn decides(&self) -> bool {
        self.is_some()
    }
}

impl<T> Decides for Vec<T> {
    fn decides(&self) -> bool {
        !self.is_empty()
    }
}

/// Functions and constants of other files of the crate, with where each is defined.
#[derive(Default)]
struct Imported<'a> {
    fns: HashMap<String, Vec<(LocalFn<'a>, super::Place)>>,
    consts: HashMap<String, (&'a Expr, super::Place)>,
}

impl<'a> FileScope<'a> {
    /// An empty scope that knows what the team taught the analysis.
    #[must_use]
    pub fn new(ext: super::Extensions) -> Self {
        FileScope {
            ext,
            ..FileScope::default()
        }
    }

    /// A `const` or `static` of the file (an item, or an impl's associated constant).
    fn add_const(&mut self, ident: &syn::Ident, value: &'a Expr) {
        self.consts.insert(ident.to_string(), value);
        self.const_names.insert(ident.to_string(), ident.span());
    }

    /// The full path of `path` after `use` resolution of its first segment.
    #[must_use]
    pub fn resolve(&self, path: &syn::Path) -> Vec<String> {
        let segs = names::segments(path);
        if let Some(full) = path
            .segments
            .first()
            .and_then(|f| self.scoped_use(&f.ident))
        {
            return full
                .iter()
                .cloned()
                .chain(segs.into_iter().skip(1))
                .collect();
        }
        self.resolve_owned(segs)
    }

    /// [`FileScope::resolve`] for a path given as its segments (a path read from a macro's
    /// tokens).
    #[must_use]
    pub fn resolve_segments(&self, segs: &[String]) -> Vec<String> {
        self.resolve_owned(segs.to_vec())
    }

    fn resolve_owned(&self, segs: Vec<String>) -> Vec<String> {
        match segs.first().and_then(|first| self.uses.get(first)) {
            Some(full) => full
                .iter()
                .cloned()
                .chain(segs.into_iter().skip(1))
                .collect(),
            None => segs,
        }
    }

    /// `full` (a path as [`FileScope::resolve`] gives it) as it reads when one of the file's glob
    /// imports from a crate of `crates` provides its first name: a path that starts with a type
    /// or is a lone function (not a crate's name) and was not imported by name
    /// (`ExponentialBuilder::default` after `use backon::*`). `None` when no such glob is there.
    #[must_use]
    pub fn through_glob(&self, full: &[String], crates: &[String]) -> Option<Vec<String>> {
        let first = full.first()?;
        let from_glob = (full.len() == 1 || first.starts_with(|c: char| c.is_uppercase()))
            && !self.uses.contains_key(first);
        if !from_glob {
            return None;
        }
        let glob = self
            .globs
            .iter()
            .find(|g| g.first().is_some_and(|c| crates.contains(c)))?;
        Some(glob.iter().chain(full).cloned().collect())
    }

    /// The last segment of [`FileScope::resolve`]`(path)`, without building the whole path.
    #[must_use]
    pub fn resolved_last(&self, path: &syn::Path) -> String {
        let Some(last) = path.segments.last() else {
            return String::new();
        };
        let name = last.ident.to_string();
        if path.segments.len() > 1 {
            return name;
        }
        // A single segment may be a renamed import (`use tryhard::retry_fn as again;`).
        match self
            .scoped_use(&last.ident)
            .or_else(|| self.uses.get(&name))
        {
            Some(full) => full.last().cloned().unwrap_or_default(),
            None => name,
        }
    }

    /// Whether a resolved call path waits (a known timer, or a team's sleep wrapper).
    #[must_use]
    pub fn is_sleep(&self, full: &[String]) -> bool {
        names::is_sleep_path(full) || Extensions::matches(&self.ext.sleep_fns, full)
    }

    /// Whether a method name waits (`runtime.sleep(d)`, a team's wrapper).
    #[must_use]
    pub fn is_sleep_method(&self, name: &str) -> bool {
        names::is_sleep_method(name)
            || Extensions::names(&self.ext.sleep_fns, name)
            || Extensions::names(&self.ext.sleep_methods, name)
    }

    /// Whether a resolved path blocks the thread while it waits (`std::thread::sleep`).
    #[must_use]
    pub fn is_blocking_sleep(&self, full: &[String]) -> bool {
        known::builtin().path(List::BlockingSleeps, full).is_some()
            || Extensions::matches(&self.ext.blocking_sleeps, full)
    }

    /// Whether a resolved path makes a wait that is a future (`tokio::time::sleep`): made and
    /// dropped without `.await`, it waits nothing.
    #[must_use]
    pub fn is_future_sleep(&self, full: &[String]) -> bool {
        known::builtin().path(List::FutureSleeps, full).is_some()
            || Extensions::matches(&self.ext.future_sleeps, full)
    }

    /// Whether a resolved path runs a future for at most a time it is given
    /// (`tokio::time::timeout(d, fut)`).
    #[must_use]
    pub fn is_timeout(&self, full: &[String]) -> bool {
        known::builtin().path(List::Timeouts, full).is_some()
            || Extensions::matches(&self.ext.timeouts, full)
    }

    /// The call of an awaited timeout (`timeout(d, fut).await`, in parentheses or not).
    #[must_use]
    pub fn awaited_timeout<'e>(&self, e: &'e Expr) -> Option<&'e syn::ExprCall> {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Paren(p) => self.awaited_timeout(&p.expr),
            Expr::Await(a) => match &*a.base {
                Expr::Call(c)
                    if names::callee_path(&c.func)
                        .is_some_and(|p| self.is_timeout(&self.resolve(p))) =>
                {
                    Some(c)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether an awaited method resolves only after a wait of its own (`trx.on_error(e)`).
    #[must_use]
    pub fn is_wait_handler(&self, name: &str) -> bool {
        known::builtin().name(List::WaitHandlers, name)
            || Extensions::names(&self.ext.wait_handlers, name)
    }

    /// Whether an awaited call of this name resumes without waiting (`yield_now`).
    #[must_use]
    pub fn is_no_wait(&self, name: &str) -> bool {
        known::builtin().name(List::NoWaits, name) || Extensions::names(&self.ext.no_waits, name)
    }

    /// Whether a function or method name produces randomness.
    #[must_use]
    pub fn is_random(&self, name: &str) -> bool {
        names::is_random_name(name)
            || Extensions::names(&self.ext.random_sources, name)
            || self.ext.random_crates.iter().any(|c| c == name)
    }

    /// Whether a path segment is a crate whose every path is random (`rand`, a team's own).
    #[must_use]
    pub fn is_random_crate(&self, segment: &str) -> bool {
        names::is_random_root(segment) || self.ext.random_crates.iter().any(|c| c == segment)
    }

    /// Whether a resolved path produces randomness (`rand::..`, a team's source).
    #[must_use]
    pub fn is_random_path(&self, full: &[String]) -> bool {
        full.iter().any(|s| self.is_random_crate(s))
            || Extensions::matches(&self.ext.random_sources, full)
    }

    /// Whether `method`, called on a value the crate `krate` made (or a function of the crate),
    /// is one of a list of calls by crate and method (the models' and a team's): a call that
    /// fails on transport only, a response of any status being its `Ok`
    /// (`transport-error-calls`), or one that makes a request that changes nothing
    /// (`safe-request-calls`).
    #[must_use]
    pub fn is_crate_call(&self, list: List, krate: &str, method: &str) -> bool {
        let full = [krate.to_owned(), method.to_owned()];
        known::builtin().path(list, &full).is_some()
            || Extensions::matches(self.ext.list(list), &full)
    }

    /// Whether a method is the tick of a timer of the models' `period-ticks` (or a team's), by
    /// its name alone: which crate made its receiver is asked apart (see
    /// [`FileScope::is_crate_call`]).
    #[must_use]
    pub fn is_period_tick(&self, method: &str) -> bool {
        known::builtin()
            .entries(List::PeriodTicks)
            .iter()
            .any(|e| e.text.rsplit("::").next() == Some(method))
            || self
                .ext
                .period_ticks
                .iter()
                .any(|e| e.rsplit("::").next() == Some(method))
    }

    /// Whether a resolved path is in a module of in-process channels (`in-process-channels` of
    /// the models, or a team's): `tokio::sync::mpsc::UnboundedSender`, `std::sync::mpsc::SendError`.
    #[must_use]
    pub fn is_in_process_channel(&self, full: &[String]) -> bool {
        known::builtin()
            .module(List::InProcessChannels, full)
            .is_some()
            || in_module(&self.ext.in_process_channels, full)
    }

    /// Whether a resolved path is in a module of an embedded store (`local-stores` of the
    /// models, or a team's): `rocksdb::DB::open`, `rusqlite::Connection`.
    #[must_use]
    pub fn is_local_store(&self, full: &[String]) -> bool {
        known::builtin().module(List::LocalStores, full).is_some()
            || in_module(&self.ext.local_stores, full)
    }

    /// Whether a resolved type path is a child process's handle (`process-handles` of the
    /// models, or a team's): `std::process::Child`.
    #[must_use]
    pub fn is_process_handle(&self, full: &[String]) -> bool {
        known::builtin().path(List::ProcessHandles, full).is_some()
            || Extensions::matches(&self.ext.process_handles, full)
    }

    /// Whether a resolved path is a terminal prompt's or dialog's (`prompt-crates` of the
    /// models, or a team's): inside one of their modules, or the module's function itself
    /// (`std::io::stdin`).
    #[must_use]
    pub fn is_prompt(&self, full: &[String]) -> bool {
        let inside = within(full);
        known::builtin()
            .module(List::PromptCrates, &inside)
            .is_some()
            || in_module(&self.ext.prompt_crates, &inside)
    }

    /// Whether a value made by `origin` (a resolved constructor's or type's path, as
    /// [`Receivers::origin`](super::site) gives it) reaches only this machine: a local endpoint's
    /// type or constructor (`tokio::net::UnixDatagram::unbound`), or an embedded store's.
    #[must_use]
    pub fn made_locally(&self, origin: &[String]) -> bool {
        // A type's path names the store's module, or an item inside it.
        self.is_local_store(&within(origin))
            || self.is_local_endpoint(origin)
            || (origin.len() >= 2 && self.is_local_endpoint(&origin[..origin.len() - 1]))
    }

    /// `full` when it is a path of another crate (see [`FileScope::crate_of`]).
    #[must_use]
    pub fn foreign(&self, full: Vec<String>) -> Option<Vec<String>> {
        self.crate_of(&full).map(|_| full)
    }

    /// The crate a resolved path names: its first segment when that is a crate's name before
    /// the item (`reqwest::Client`): not this crate's (`crate::`, `self::`, `super::`, a module
    /// the file declares) and not a type (`Client::new` with no `use`: a type of this crate).
    #[must_use]
    pub fn crate_of(&self, full: &[String]) -> Option<String> {
        let first = full.first()?;
        let own = matches!(first.as_str(), "crate" | "self" | "super" | "Self")
            || self.mods.contains(first)
            || !first.starts_with(|c: char| c.is_ascii_lowercase());
        (full.len() >= 2 && !own).then(|| first.clone())
    }

    /// Whether a resolved type path connects only to this machine (a Unix-domain socket, a
    /// named pipe: `local-endpoints` of the models, or a team's).
    #[must_use]
    pub fn is_local_endpoint(&self, full: &[String]) -> bool {
        super::known::builtin()
            .path(super::known::List::LocalEndpoints, full)
            .is_some()
            || Extensions::matches(&self.ext.local_endpoints, full)
    }

    /// Whether a method of a random generator gives a value usable as a key.
    #[must_use]
    pub fn is_random_key_method(&self, name: &str) -> bool {
        names::is_random_key_method(name) || Extensions::names(&self.ext.random_key_methods, name)
    }

    /// The display name of a key constructor, when `full` (a resolved call path) is one.
    #[must_use]
    pub fn key_constructor(&self, full: &[String]) -> Option<String> {
        if let Some(n) = names::key_constructor(full) {
            return Some(n);
        }
        Extensions::matches(&self.ext.key_constructors, full)
            .then(|| format!("{}()", full.join("::")))
    }

    /// Whether a call whose path ends with `last` may be an every-error runner (before its whole
    /// path is resolved, which most calls are spared).
    #[must_use]
    pub fn may_be_every_error_runner(&self, last: &str) -> bool {
        let ends = |e: &str| e.rsplit("::").next() == Some(last);
        names::every_error_runner_ends_with(last)
            || self.ext.every_error_runners.iter().any(|e| ends(e))
    }

    /// Whether a resolved call path runs an operation again after any error it returns.
    #[must_use]
    pub fn is_every_error_runner(&self, full: &[String]) -> bool {
        names::is_every_error_runner(full)
            || Extensions::matches(&self.ext.every_error_runners, full)
    }

    /// Whether a resolved path is a value a retry crate's operation returns to be run again
    /// (`again-values` of the models, or a team's).
    #[must_use]
    pub fn is_again_value(&self, full: &[String]) -> bool {
        known::builtin().path(List::AgainValues, full).is_some()
            || Extensions::matches(&self.ext.again_values, full)
    }

    /// Whether a resolved path is a value a retry crate's operation returns to stop with its
    /// error (`final-values` of the models, or a team's).
    #[must_use]
    pub fn is_final_value(&self, full: &[String]) -> bool {
        known::builtin().path(List::FinalValues, full).is_some()
            || Extensions::matches(&self.ext.final_values, full)
    }

    /// The display name of a macro that makes a fresh unique id (`nanoid!()`).
    #[must_use]
    pub fn key_macro(&self, name: &str) -> Option<String> {
        names::key_constructor_macro(name)
            .or_else(|| Extensions::names(&self.ext.key_macros, name).then(|| format!("{name}!()")))
    }

    /// Whether a method asks a backoff strategy object for its next wait.
    #[must_use]
    pub fn is_next_wait_method(&self, name: &str) -> bool {
        names::is_next_wait_method(name) || Extensions::names(&self.ext.next_wait_methods, name)
    }

    /// The strategy type a resolved constructor path builds, if it names one of an external
    /// crate (see [`names::strategy_type`]); a team's `jittered-crates` jitter by default too,
    /// and its `capped-crates` cap their waits.
    #[must_use]
    pub fn strategy_type(&self, full: &[String]) -> Option<names::StrategyType> {
        let mut st = names::strategy_type(full)?;
        if st.growing && !st.jittered {
            st.jittered = full
                .first()
                .is_some_and(|c| self.ext.jittered_crates.iter().any(|j| j == c));
        }
        if st.growing && !st.capped {
            st.capped = full
                .first()
                .is_some_and(|c| self.ext.capped_crates.iter().any(|j| j == c));
        }
        Some(st)
    }

    /// Whether a method or field name is a team's status accessor.
    #[must_use]
    pub fn is_status_accessor(&self, name: &str) -> bool {
        Extensions::names(&self.ext.status_accessors, name)
    }

    /// Whether a function of this name is defined in this file or in an imported one (a lookup
    /// that records nothing, so names the crate does not define are not asked for elsewhere).
    #[must_use]
    pub fn defines_fn(&self, name: &str) -> bool {
        self.fns.contains_key(name) || self.imported.fns.contains_key(name)
    }

    /// The one function with this name, if exactly one exists with a body: in this file, or,
    /// when this file defines none, in the other files of the crate given to
    /// [`FileScope::import`].
    #[must_use]
    pub fn function(&self, name: &str) -> Option<LocalFn<'a>> {
        self.function_via(name, None)
    }

    /// [`FileScope::function`] for a call that names its callee `via` (see [`Via`]): only the
    /// functions that call can reach count (`Backoff::new` is not `StoreClient::new`; a method
    /// call never reaches a free function). `None` for `via`: any function of that name.
    #[must_use]
    pub fn function_via(&self, name: &str, via: Option<&Via>) -> Option<LocalFn<'a>> {
        match self.in_view(name, via) {
            Ok(Some((only, at))) => {
                if !followable(&only) {
                    return None;
                }
                match at {
                    None => self.used(name, None, Some(only.sig.ident.span())),
                    Some(at) => self.used(name, Some(at), None),
                }
                Some(only)
            }
            Err(()) => None,
            Ok(None) => {
                if !self.fns.contains_key(name) && !self.imported.fns.contains_key(name) {
                    self.miss(name);
                } else if let Some(Via::Type(ty)) =
                    via.filter(|v| matches!(v, Via::Type(t) if t != "Self"))
                {
                    // `Connector::connect` where the file has another type's `connect`: the
                    // type's method is looked for in the crate under its qualified name.
                    self.miss(&format!("{ty}::{name}"));
                }
                None
            }
        }
    }

    /// [`FileScope::function_via`] among the functions already in view (this file's, and the
    /// other files' brought in for names this file's retry sites look for), noting no name as
    /// missed: asking does not bring another file into view.
    #[must_use]
    pub fn function_in_view(&self, name: &str, via: &Via) -> Option<LocalFn<'a>> {
        match self.in_view(name, Some(via)) {
            Ok(Some((only, _))) => Some(only).filter(followable),
            _ => None,
        }
    }

    /// The one function of this name that `via` reaches (any, for `None`): this file's, else an
    /// imported file's with where it is; `Err` when several are, `Ok(None)` when none is.
    #[allow(clippy::type_complexity)]
    fn in_view(
        &self,
        name: &str,
        via: Option<&Via>,
    ) -> Result<Option<(LocalFn<'a>, Option<&super::Place>)>, ()> {
        let reaches = |f: &LocalFn<'a>| via.is_none_or(|v| v.reaches_ident(f.owner));
        let mut here = self
            .fns
            .get(name)
            .into_iter()
            .flatten()
            .filter(|f| reaches(f));
        match (here.next(), here.next()) {
            (Some(only), None) => return Ok(Some((*only, None))),
            (Some(_), Some(_)) => return Err(()),
            (None, _) => {}
        }
        let mut there = self
            .imported
            .fns
            .get(name)
            .into_iter()
            .flatten()
            .filter(|(f, _)| reaches(f));
        match (there.next(), there.next()) {
            (Some((only, at)), None) => Ok(Some((*only, Some(at)))),
            (Some(_), Some(_)) => Err(()),
            (None, _) => Ok(None),
        }
    }

    /// [`FileScope::function_via`] among this file's own functions only: what its signature
    /// names is read through this file's `use` (another file's `use` is not known here).
    #[must_use]
    pub fn own_function_via(&self, name: &str, via: &Via) -> Option<LocalFn<'a>> {
        let mut here = self
            .fns
            .get(name)
            .into_iter()
            .flatten()
            .filter(|f| via.reaches_ident(f.owner));
        match (here.next(), here.next()) {
            (Some(only), None) => {
                self.used(name, None, Some(only.sig.ident.span()));
                Some(*only)
            }
            _ => None,
        }
    }

    /// How a call of `path` names its callee (resolved through `use`).
    #[must_use]
    pub fn via_of(&self, path: &syn::Path) -> Via {
        Via::of_path(&self.resolve(path), None)
    }

    /// The futures raced by a `select!` invocation of this file (none for another macro).
    #[must_use]
    pub fn select_futures(&self, m: &syn::Macro) -> &'a [Expr] {
        match self.selects {
            Some(selects) if super::select::is_select(m) => selects
                .get(&super::select::key_of(m))
                .map_or(&[], Vec::as_slice),
            _ => &[],
        }
    }

    /// The value of a `const`/`static` named by the last segment of a path.
    #[must_use]
    pub fn constant(&self, path: &syn::Path) -> Option<&'a Expr> {
        names::last(path).and_then(|n| self.constant_named(&n))
    }

    /// The value of the `const`/`static` called `name`: this file's, or an imported one.
    #[must_use]
    pub fn constant_named(&self, name: &str) -> Option<&'a Expr> {
        if let Some(c) = self.consts.get(name) {
            self.used(name, None, self.const_names.get(name).copied());
            return Some(*c);
        }
        if let Some((c, at)) = self.imported.consts.get(name) {
            self.used(name, Some(at), None);
            Some(*c)
        } else {
            self.miss(name);
            None
        }
    }

    fn miss(&self, name: &str) {
        if !self.missed.borrow().contains(name) {
            self.missed.borrow_mut().insert(name.to_owned());
        }
    }

    /// Notes a definition looked up, kept only if a [`FileScope::consult`] under way finds
    /// that it decided a fact.
    fn used(&self, name: &str, at: Option<&super::Place>, name_span: Option<proc_macro2::Span>) {
        if self.consulting.get() == 0 {
            return;
        }
        self.used.borrow_mut().push(Use {
            name: name.to_owned(),
            at: at.cloned(),
            name_span,
            facts: Facts::NONE,
        });
    }

    /// `ask()`, a question about a site's `facts` (its waits, the errors it retries, ...):
    /// the definitions looked up to answer it are that fact's evidence when the answer says
    /// something ([`Decides`]), unless an enclosing consult finds its own answer says
    /// nothing. A definition looked up outside any consult (to see whether a name is the
    /// file's, or for an answer that says nothing) is no evidence.
    pub fn consult<R: Decides>(&self, facts: Facts, ask: impl FnOnce() -> R) -> R {
        let start = self.used.borrow().len();
        self.consulting.set(self.consulting.get() + 1);
        let answer = ask();
        self.consulting.set(self.consulting.get() - 1);
        let mut used = self.used.borrow_mut();
        if answer.decides() {
            for u in used.iter_mut().skip(start) {
                if u.facts == Facts::NONE {
                    u.facts = facts;
                }
            }
        } else {
            used.truncate(start);
        }
        answer
    }

    /// `ask()` whose lookups are no evidence whatever it answers (whether a name is the
    /// file's own function, inside a consult for something else).
    pub fn probe<R>(&self, ask: impl FnOnce() -> R) -> R {
        let start = self.used.borrow().len();
        let answer = ask();
        self.used.borrow_mut().truncate(start);
        answer
    }

    /// The names looked up that neither this file nor an imported one defines.
    #[must_use]
    pub fn missed(&self) -> Vec<String> {
        self.missed.borrow().iter().cloned().collect()
    }

    /// The definitions that decided facts since `from` (a [`FileScope::used_count`]), each
    /// once per set of facts, in the order of first use.
    #[must_use]
    pub fn used_since(&self, from: usize) -> Vec<Use> {
        let used = self.used.borrow();
        let mut out: Vec<Use> = Vec::new();
        for u in used.get(from..).unwrap_or_default() {
            if !out
                .iter()
                .any(|o| o.name == u.name && o.at == u.at && o.facts == u.facts)
            {
                out.push(u.clone());
            }
        }
        out
    }

    /// How many definitions have decided facts so far (for [`FileScope::used_since`]).
    #[must_use]
    pub fn used_count(&self) -> usize {
        self.used.borrow().len()
    }

    /// Makes the functions and constants of another file of the crate (`path`, for evidence)
    /// visible where this file defines nothing of that name. Its `use`s are not: a followed
    /// body reads its paths with this file's imports, an approximation.
    pub fn import(&mut self, file: &'a syn::File, path: &str) {
        let mut other = FileScope::default();
        other.visit_file(file);
        // 1-based line and column (proc-macro2 counts columns from 0, in characters).
        let at = |span: proc_macro2::Span| super::Place::There {
            path: path.to_owned(),
            line: span.start().line,
            column: span.start().column + 1,
        };
        for (name, fns) in other.fns {
            // A name this file defines means its own function, unless the other file's is a
            // method of a type none of this file's functions of that name belongs to
            // (`Connector::connect` beside this file's `Client::connect`).
            let here: Vec<Option<&syn::Ident>> = self
                .fns
                .get(&name)
                .map(|v| v.iter().map(|f| f.owner).collect())
                .unwrap_or_default();
            let fns: Vec<_> = fns
                .into_iter()
                .filter(|f| here.is_empty() || (f.owner.is_some() && !here.contains(&f.owner)))
                .collect();
            if fns.is_empty() {
                continue;
            }
            let entry = self.imported.fns.entry(name).or_default();
            entry.extend(fns.into_iter().map(|f| (f, at(f.sig.ident.span()))));
        }
        for (name, c) in other.consts {
            if self.consts.contains_key(&name) {
                continue;
            }
            let Some(named) = other.const_names.get(&name) else {
                continue;
            };
            let place = at(*named);
            self.imported.consts.entry(name).or_insert((c, place));
        }
    }

    /// `f` of the value a name stands for (a constant's, a `let`'s), unless that value is being
    /// followed already: then the name, met again inside its own value, is something the file
    /// does not tell (`const LIMBS: usize = LIMBS;` names a generic parameter, `let codes =
    /// codes.to_vec();` the parameter it shadows, `const BITS: u32 = Self::BITS;` another
    /// impl's constant), and the answer is `None`. Every evaluator that follows names goes
    /// through here, so that no cycle of names can make it recurse without end.
    pub fn follow<R>(&self, value: &'a Expr, f: impl FnOnce(&'a Expr) -> Option<R>) -> Option<R> {
        let key = std::ptr::from_ref(value) as usize;
        if self.following.borrow().contains(&key) {
            return None;
        }
        self.following.borrow_mut().push(key);
        let answer = f(value);
        self.following.borrow_mut().pop();
        answer
    }

    /// [`FileScope::follow`] of the constant named by `path`.
    pub fn follow_constant<R>(
        &self,
        path: &syn::Path,
        f: impl FnOnce(&'a Expr) -> Option<R>,
    ) -> Option<R> {
        self.follow(self.constant(path)?, f)
    }

    fn add_use(&mut self, prefix: &mut Vec<String>, tree: &UseTree) {
        let _guard = crate::analysis::limits::enter();
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.add_use(prefix, &p.tree);
                prefix.pop();
            }
            UseTree::Name(n) => {
                let name = n.ident.to_string();
                if name == "self" {
                    if let Some(last) = prefix.last() {
                        self.bind_use(last.clone(), prefix.clone());
                    }
                } else {
                    let mut full = prefix.clone();
                    full.push(name.clone());
                    self.bind_use(name, full);
                }
            }
            UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.bind_use(r.rename.to_string(), full);
            }
            UseTree::Group(g) => {
                for t in &g.items {
                    self.add_use(prefix, t);
                }
            }
            UseTree::Glob(_) => self.globs.push(prefix.clone()),
        }
    }

    /// Names `name` as `full` for the file's paths, as Rust scopes a `use`: one of the file's
    /// root for the whole file; one inside an inline module or a function body (a test
    /// module's `use std::thread::sleep`) for the paths written there, which
    /// [`FileScope::resolve`] finds by where they are. A name read without a place (from a
    /// macro's tokens) takes the root's import, else the first other one.
    fn bind_use(&mut self, name: String, full: Vec<String>) {
        let Some(here) = self.enclosing.last().copied() else {
            self.root_uses.insert(name.clone());
            self.uses.insert(name, full);
            return;
        };
        match self.scoped_uses.iter_mut().find(|(r, _)| *r == here) {
            Some((_, names)) => {
                names.insert(name.clone(), full.clone());
            }
            None => self
                .scoped_uses
                .push((here, HashMap::from([(name.clone(), full.clone())]))),
        }
        if !self.root_uses.contains(&name) {
            self.uses.entry(name).or_insert(full);
        }
    }

    /// What the innermost module or function body around `ident` that imports a name `ident`
    /// names it (`None`: the file's root decides).
    fn scoped_use(&self, ident: &syn::Ident) -> Option<&Vec<String>> {
        if self.scoped_uses.is_empty() {
            return None;
        }
        let start = ident.span().start();
        let at = (start.line, start.column);
        let name = ident.to_string();
        self.scoped_uses
            .iter()
            .filter(|((from, to), _)| *from <= at && at <= *to)
            .filter_map(|((from, _), names)| Some((*from, names.get(&name)?)))
            .max_by_key(|(from, _)| *from)
            .map(|(_, full)| full)
    }
}

impl<'a> Visit<'a> for FileScope<'a> {
    fn visit_item_mod(&mut self, node: &'a syn::ItemMod) {
        let _guard = crate::analysis::limits::enter();
        self.mods.insert(node.ident.to_string());
        let inline = node
            .content
            .as_ref()
            .map(|(braces, _)| region(&braces.span));
        self.enclosing.extend(inline);
        syn::visit::visit_item_mod(self, node);
        if inline.is_some() {
            self.enclosing.pop();
        }
    }

    fn visit_item_use(&mut self, node: &'a ItemUse) {
        let mut prefix = Vec::new();
        self.add_use(&mut prefix, &node.tree);
    }

    fn visit_item_const(&mut self, node: &'a ItemConst) {
        let _guard = crate::analysis::limits::enter();
        self.add_const(&node.ident, &node.expr);
        syn::visit::visit_item_const(self, node);
    }

    fn visit_item_static(&mut self, node: &'a ItemStatic) {
        let _guard = crate::analysis::limits::enter();
        self.add_const(&node.ident, &node.expr);
        syn::visit::visit_item_static(self, node);
    }

    fn visit_trait_item_const(&mut self, node: &'a syn::TraitItemConst) {
        let _guard = crate::analysis::limits::enter();
        self.trait_consts.push(node.ident.to_string());
        syn::visit::visit_trait_item_const(self, node);
    }

    fn visit_impl_item_const(&mut self, node: &'a syn::ImplItemConst) {
        let _guard = crate::analysis::limits::enter();
        self.add_const(&node.ident, &node.expr);
        syn::visit::visit_impl_item_const(self, node);
    }

    fn visit_item_fn(&mut self, node: &'a ItemFn) {
        let _guard = crate::analysis::limits::enter();
        self.fns
            .entry(node.sig.ident.to_string())
            .or_default()
            .push(LocalFn {
                sig: &node.sig,
                block: &node.block,
                attrs: &node.attrs,
                owner: None,
            });
        let owner = self.owner.take();
        self.enclosing.push(region(&node.block.brace_token.span));
        syn::visit::visit_item_fn(self, node);
        self.enclosing.pop();
        self.owner = owner;
    }

    fn visit_item_struct(&mut self, node: &'a syn::ItemStruct) {
        let _guard = crate::analysis::limits::enter();
        let fields: HashMap<String, String> = node
            .fields
            .iter()
            .filter_map(|f| Some((f.ident.as_ref()?.to_string(), held_type(&f.ty)?)))
            .collect();
        if !fields.is_empty() {
            self.struct_fields.insert(node.ident.to_string(), fields);
        }
        let paths: HashMap<String, Vec<String>> = node
            .fields
            .iter()
            .filter_map(|f| {
                let path = held_path(&f.ty)?;
                Some((f.ident.as_ref()?.to_string(), names::segments(path)))
            })
            .collect();
        if !paths.is_empty() {
            self.field_paths.insert(node.ident.to_string(), paths);
        }
        syn::visit::visit_item_struct(self, node);
    }

    fn visit_item_impl(&mut self, node: &'a syn::ItemImpl) {
        let _guard = crate::analysis::limits::enter();
        let owner = std::mem::replace(&mut self.owner, type_ident(&node.self_ty));
        syn::visit::visit_item_impl(self, node);
        self.owner = owner;
    }

    fn visit_item_trait(&mut self, node: &'a syn::ItemTrait) {
        let _guard = crate::analysis::limits::enter();
        let owner = self.owner.replace(&node.ident);
        syn::visit::visit_item_trait(self, node);
        self.owner = owner;
    }

    fn visit_impl_item_fn(&mut self, node: &'a ImplItemFn) {
        let _guard = crate::analysis::limits::enter();
        self.fns
            .entry(node.sig.ident.to_string())
            .or_default()
            .push(LocalFn {
                sig: &node.sig,
                block: &node.block,
                attrs: &node.attrs,
                owner: self.owner,
            });
        self.enclosing.push(region(&node.block.brace_token.span));
        syn::visit::visit_impl_item_fn(self, node);
        self.enclosing.pop();
    }

    fn visit_trait_item_fn(&mut self, node: &'a syn::TraitItemFn) {
        let _guard = crate::analysis::limits::enter();
        if let Some(block) = &node.default {
            self.fns
                .entry(node.sig.ident.to_string())
                .or_default()
                .push(LocalFn {
                    sig: &node.sig,
                    block,
                    attrs: &node.attrs,
                    owner: self.owner,
                });
        }
        let body = node.default.as_ref().map(|b| region(&b.brace_token.span));
        self.enclosing.extend(body);
        syn::visit::visit_trait_item_fn(self, node);
        if body.is_some() {
            self.enclosing.pop();
        }
    }

    fn visit_path(&mut self, p: &'a syn::Path) {
        let _guard = crate::analysis::limits::enter();
        if p.segments.len() > 1 {
            self.roots.insert(p.segments[0].ident.to_string());
        }
        syn::visit::visit_path(self, p);
    }

    // Local items inside function bodies are visited too (the default walk reaches them).
}

/// Whether a resolved path lies inside one of a team's modules (`tokio::sync::mpsc` holds
/// `tokio::sync::mpsc::Sender`), as `[extend]` lists them.
fn in_module(modules: &[String], full: &[String]) -> bool {
    modules.iter().any(|m| {
        let segs: Vec<&str> = m.split("::").filter(|s| !s.is_empty()).collect();
        !segs.is_empty() && full.len() > segs.len() && full.iter().zip(&segs).all(|(a, b)| a == b)
    })
}

/// A path one segment deeper than `full`, so that a module test (`module` of the models, which
/// wants an item inside the module) also accepts the module's own path (`std::io::stdin`,
/// `rusqlite::Connection` for the module `rusqlite`).
fn within(full: &[String]) -> Vec<String> {
    let mut inside = full.to_vec();
    inside.push(String::new());
    inside
}
