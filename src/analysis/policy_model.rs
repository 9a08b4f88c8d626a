//! Retry crates' policies as data (`[[policies]]` in `models/policies.toml`, and under
//! `[extend]` in `retry-audit.toml`): the constructors that start a policy, the crate's
//! defaults, and what each builder step (or struct literal field) changes. [`PolicyModel::read`]
//! turns one chain into what it amounts to; `policies.rs` finds the chains.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use super::DelayKind;

/// How to fix a policy of one crate, per defect (label texts). A text left out (a team's own
/// entry need not give them all) leaves the check's own wording.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyAdvice {
    /// The crate, as shown.
    #[serde(skip)]
    pub crate_name: String,
    pub bound: Option<String>,
    pub jitter: Option<String>,
    pub cap: Option<String>,
    pub fixed: Option<String>,
    pub immediate: Option<String>,
}

/// The wait a policy makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitKind {
    Growing,
    Constant,
    Unknown,
    /// No wait at all.
    None,
}

impl WaitKind {
    fn delay(self) -> Option<DelayKind> {
        match self {
            WaitKind::Growing => Some(DelayKind::Growing),
            WaitKind::Constant => Some(DelayKind::Constant),
            WaitKind::Unknown => Some(DelayKind::Unknown),
            WaitKind::None => None,
        }
    }
}

/// How the longest wait follows from the first wait, the factor and the number of attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Growth {
    /// first * factor^attempts
    Exponential,
    /// first * factor^(attempts - 1)
    ExponentialAfterFirst,
    /// first^attempts * factor (tokio-retry's `ExponentialBackoff`)
    Power,
    /// first * fib(attempts)
    Fibonacci,
    /// first * attempts
    Linear,
}

impl Growth {
    fn longest_ms(self, first: f64, factor: f64, n: f64) -> f64 {
        match self {
            Growth::Exponential => first * factor.powf(n),
            Growth::ExponentialAfterFirst => first * factor.powf((n - 1.0).max(0.0)),
            Growth::Power => first.powf(n) * factor,
            Growth::Fibonacci => {
                let (mut a, mut b) = (1.0_f64, 1.0_f64);
                let mut i = 1.0;
                while i < n && b.is_finite() {
                    (a, b) = (b, a + b);
                    i += 1.0;
                }
                first * a
            }
            Growth::Linear => first * n,
        }
    }
}

/// A number of a schedule: written, or read from an argument (1-based) of the constructor or
/// step that sets it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Value(f64),
    Arg(usize),
}

// The values come from TOML and are never NaN.
impl Eq for Num {}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Num, D::Error> {
        struct NumVisitor;
        impl Visitor<'_> for NumVisitor {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, or \"arg\" / \"arg2\" / \"arg3\" (an argument)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                #[allow(clippy::cast_precision_loss)]
                Ok(Num::Value(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                #[allow(clippy::cast_precision_loss)]
                Ok(Num::Value(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                if v.is_finite() {
                    Ok(Num::Value(v))
                } else {
                    Err(E::custom("a finite number"))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                match v {
                    "arg" | "arg1" => Ok(Num::Arg(1)),
                    "arg2" => Ok(Num::Arg(2)),
                    "arg3" => Ok(Num::Arg(3)),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(NumVisitor)
    }
}

/// What a step (or a root, or a literal's field) changes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Effect {
    /// Only when the first argument is this value (`None`, `Jitter::None`, `0`, `false`).
    if_arg: Option<String>,
    /// Only when some argument's text contains this.
    if_arg_has: Option<String>,
    delay: Option<WaitKind>,
    jitter: Option<bool>,
    capped: Option<bool>,
    limited: Option<bool>,
    time_limited: Option<bool>,
    first_ms: Option<Num>,
    factor: Option<Num>,
    attempts: Option<Num>,
    total_ms: Option<Num>,
    cap_ms: Option<Num>,
    growth: Option<Growth>,
    /// For a root only: steps the chain must call to be this policy.
    #[serde(default)]
    requires: Vec<String>,
}

/// An entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPolicy {
    #[serde(rename = "crate")]
    crate_name: String,
    roots: Vec<Spanned<String>>,
    #[serde(default)]
    within: Vec<String>,
    #[serde(default)]
    literal: bool,
    #[serde(default)]
    attribute: bool,
    delay: WaitKind,
    #[serde(default)]
    jitter: bool,
    #[serde(default)]
    capped: bool,
    #[serde(default)]
    limited: bool,
    #[serde(default)]
    time_limited: bool,
    first_ms: Option<Num>,
    factor: Option<Num>,
    attempts: Option<Num>,
    total_ms: Option<Num>,
    cap_ms: Option<Num>,
    growth: Option<Growth>,
    #[serde(default)]
    advice: PolicyAdvice,
    #[serde(default)]
    per_root: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    steps: BTreeMap<String, Spanned<toml::Value>>,
}

/// One policy of a crate, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyModel {
    /// Constructors (or literal types) that start it, as path segments.
    roots: Vec<Vec<String>>,
    within: Vec<String>,
    /// Whether its roots are struct literals.
    pub literal: bool,
    /// Whether its roots are attribute macros (whose grammar `policies.rs` reads).
    pub attribute: bool,
    defaults: Effect,
    /// The advice shown, with the crate's name.
    pub advice: Arc<PolicyAdvice>,
    /// Per root (index in `roots`): its effect, or none.
    per_root: Vec<Option<Effect>>,
    /// Steps (methods, or fields of a literal) and their effects.
    steps: Vec<(String, Vec<Effect>)>,
}

/// What a chain of one policy amounts to.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub delay: Option<DelayKind>,
    pub jitter: bool,
    pub capped: bool,
    pub unbounded: bool,
    /// The longest wait in seconds, when it has no cap (infinite when the attempts are the
    /// callers' choice or have no limit).
    pub longest_secs: Option<f64>,
}

/// How [`PolicyModel::read`] sees a chain's arguments.
pub trait Args<'e> {
    /// The number (ms for a duration) an argument amounts to.
    fn number(&self, e: &'e syn::Expr) -> Option<f64>;
    /// Whether an argument is a parameter of the enclosing function (a caller's choice).
    fn is_callers_choice(&self, e: &'e syn::Expr) -> bool;
    /// The argument's text, spaces removed.
    fn text(&self, e: &'e syn::Expr) -> String;
}

/// A number being read: known, unknown, or the callers'.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Known(f64),
    Unknown,
    Callers,
}

impl Value {
    fn known(self) -> Option<f64> {
        match self {
            Value::Known(v) => Some(v),
            _ => None,
        }
    }
}

struct State {
    delay: WaitKind,
    jitter: bool,
    capped: bool,
    limited: bool,
    time_limited: bool,
    first: Option<Value>,
    factor: Option<Value>,
    attempts: Option<Value>,
    total: Option<Value>,
    cap: Option<Value>,
    growth: Option<Growth>,
}

impl PolicyModel {
    /// The parts of this entry that can decide something, for the models test: the entry
    /// itself (0), then each step, then each root's own effect, then each root.
    #[must_use]
    pub fn parts(&self) -> Vec<String> {
        let mut out = vec![format!(
            "{} `{}`",
            self.advice.crate_name,
            self.root_text(0)
        )];
        for (name, _) in &self.steps {
            out.push(format!(
                "{} `{}` step `{name}`",
                self.advice.crate_name,
                self.root_text(0)
            ));
        }
        for (i, effect) in self.per_root.iter().enumerate() {
            if effect.is_some() {
                out.push(format!(
                    "{} root `{}`",
                    self.advice.crate_name,
                    self.root_text(i)
                ));
            }
        }
        for i in 0..self.roots.len() {
            out.push(format!(
                "{} root `{}` recognised",
                self.advice.crate_name,
                self.root_text(i)
            ));
        }
        out
    }

    fn root_text(&self, i: usize) -> String {
        self.roots.get(i).map(|r| r.join("::")).unwrap_or_default()
    }

    /// The part number of root `i`'s effect (see [`PolicyModel::parts`]).
    fn root_part(&self, i: usize) -> usize {
        1 + self.steps.len() + self.per_root[..i].iter().filter(|e| e.is_some()).count()
    }

    /// The part number of root `i` itself: whether a chain starting with it is read at all.
    #[must_use]
    pub fn root_use_part(&self, i: usize) -> usize {
        1 + self.steps.len() + self.per_root.iter().filter(|e| e.is_some()).count() + i
    }

    /// The words one of whose presence in a file's text is needed for this policy to be found
    /// there: a resolved path is made of names written in the file.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        let crates = self.within.iter().map(String::as_str);
        // A root's name too: a body that writes `ExponentialBuilder::default()` under a file's
        // `use backon::ExponentialBuilder` names no crate.
        let roots = self
            .roots
            .iter()
            .filter_map(|r| r.first().map(String::as_str));
        crates.chain(roots)
    }

    /// A built-in model applies to its own crate only: with no `within` written, the crate's
    /// name as code writes it (`tokio-retry` → `tokio_retry`) is the one its paths must resolve
    /// to. (A team's `[[extend.policies]]` entry describes its own types, wherever they are.)
    pub fn anchor_to_crate(&mut self) {
        if self.within.is_empty() {
            self.within = vec![self.advice.crate_name.replace('-', "_")];
        }
    }

    /// The crates its paths must resolve to (empty: any).
    #[must_use]
    pub fn within(&self) -> &[String] {
        &self.within
    }

    /// Its first root (`ExponentialBuilder::default`): the chain a macro of the crate that
    /// takes a builder starts from when none is given.
    #[must_use]
    pub fn first_root(&self) -> Option<&[String]> {
        self.roots.first().map(Vec::as_slice)
    }

    /// The root this resolved path starts, if any.
    #[must_use]
    pub fn root_of(&self, full: &[String]) -> Option<usize> {
        if !self.within.is_empty() && !full.first().is_some_and(|c| self.within.contains(c)) {
            return None;
        }
        self.roots
            .iter()
            .position(|r| full.len() >= r.len() && full[full.len() - r.len()..] == r[..])
    }

    /// Reads a chain started at root `root` with `ctor` arguments and then `steps` (in order).
    /// `gate(part)` says whether a part may decide (and records that it did); `None` when the
    /// entry itself is gated off or a required step is missing.
    pub fn read<'e>(
        &self,
        root: usize,
        ctor: &[&'e syn::Expr],
        steps: &[(&str, Vec<&'e syn::Expr>)],
        args: &dyn Args<'e>,
        gate: &dyn Fn(usize) -> bool,
    ) -> Option<Reading> {
        if !gate(0) || !gate(self.root_use_part(root)) {
            return None;
        }
        // The root's own effect (and the steps it requires), unless the test switched it off.
        let root_effect = self
            .per_root
            .get(root)
            .and_then(Option::as_ref)
            .filter(|_| gate(self.root_part(root)));
        if let Some(effect) = root_effect {
            if !effect
                .requires
                .iter()
                .all(|r| steps.iter().any(|(s, _)| s == r))
            {
                return None;
            }
        }
        let d = &self.defaults;
        let num = |n: Option<Num>, from: &[&'e syn::Expr]| -> Option<Value> {
            n.map(|n| match n {
                Num::Value(v) => Value::Known(v),
                Num::Arg(i) => match from.get(i - 1) {
                    Some(e) if args.is_callers_choice(e) => Value::Callers,
                    Some(e) => args.number(e).map_or(Value::Unknown, Value::Known),
                    None => Value::Unknown,
                },
            })
        };
        let mut st = State {
            delay: d.delay.unwrap_or(WaitKind::Unknown),
            jitter: d.jitter.unwrap_or(false),
            capped: d.capped.unwrap_or(false),
            limited: d.limited.unwrap_or(false),
            time_limited: d.time_limited.unwrap_or(false),
            first: num(d.first_ms, ctor),
            factor: num(d.factor, ctor),
            attempts: num(d.attempts, ctor),
            total: num(d.total_ms, ctor),
            cap: num(d.cap_ms, ctor),
            growth: d.growth,
        };
        let apply = |st: &mut State, e: &Effect, from: &[&'e syn::Expr]| {
            if let Some(v) = e.delay {
                st.delay = v;
            }
            for (to, v) in [
                (&mut st.jitter, e.jitter),
                (&mut st.capped, e.capped),
                (&mut st.limited, e.limited),
                (&mut st.time_limited, e.time_limited),
            ] {
                if let Some(v) = v {
                    *to = v;
                }
            }
            for (to, v) in [
                (&mut st.first, e.first_ms),
                (&mut st.factor, e.factor),
                (&mut st.attempts, e.attempts),
                (&mut st.total, e.total_ms),
                (&mut st.cap, e.cap_ms),
            ] {
                if v.is_some() {
                    *to = num(v, from);
                }
            }
            if e.growth.is_some() {
                st.growth = e.growth;
            }
        };
        if let Some(effect) = root_effect {
            apply(&mut st, effect, ctor);
        }
        for (name, step_args) in steps {
            let Some(j) = self.steps.iter().position(|(s, _)| s == name) else {
                continue;
            };
            let mut decided = false;
            for effect in &self.steps[j].1 {
                if applies(effect, step_args, args) {
                    if !decided && !gate(1 + j) {
                        break;
                    }
                    decided = true;
                    apply(&mut st, effect, step_args);
                }
            }
        }
        // A cap of a minute or less is a cap; a larger default (30 minutes) is not.
        if let Some(Value::Known(cap)) = st.cap {
            st.capped = cap <= 60_000.0;
        }
        let unbounded = !st.limited && !st.time_limited;
        let delay = st.delay.delay();
        let longest_secs = (delay == Some(DelayKind::Growing) && !st.capped)
            .then(|| longest(&st, unbounded))
            .flatten();
        Some(Reading {
            delay,
            jitter: st.jitter,
            capped: st.capped,
            unbounded,
            longest_secs,
        })
    }
}

fn longest(st: &State, unbounded: bool) -> Option<f64> {
    if unbounded || st.attempts == Some(Value::Callers) {
        return Some(f64::INFINITY);
    }
    let cap = st.cap.and_then(Value::known).unwrap_or(f64::INFINITY);
    let ms = if let Some(Value::Known(n)) = st.attempts {
        let first = st.first.and_then(Value::known)?;
        let factor = st.factor.map_or(Some(1.0), Value::known)?;
        st.growth?.longest_ms(first, factor, n)
    } else {
        // Only a total budget: one wait can take most of it.
        st.total.and_then(Value::known)?
    };
    Some(ms.min(cap) / 1000.0)
}

/// Whether an effect's condition holds for these arguments.
fn applies<'e>(effect: &Effect, step_args: &[&'e syn::Expr], args: &dyn Args<'e>) -> bool {
    if let Some(want) = &effect.if_arg {
        let Some(first) = step_args.first() else {
            return false;
        };
        let text = args.text(first);
        let last = text.rsplit("::").next().unwrap_or(&text);
        let same_number = matches!(
            (text.parse::<f64>(), want.parse::<f64>()),
            (Ok(a), Ok(b)) if (a - b).abs() < 1e-9
        );
        if text != *want && last != want && !same_number {
            return false;
        }
    }
    if let Some(part) = &effect.if_arg_has {
        if !step_args
            .iter()
            .any(|a| args.text(a).contains(part.as_str()))
        {
            return false;
        }
    }
    true
}

/// An effect, or a list of effects, as written under `steps` or `per-root`.
fn effects(value: &toml::Value) -> Result<Vec<Effect>, String> {
    match value {
        toml::Value::Array(items) => items
            .iter()
            .map(|v| Effect::deserialize(v.clone()).map_err(|e| e.to_string()))
            .collect(),
        v => Effect::deserialize(v.clone())
            .map(|e| vec![e])
            .map_err(|e| e.to_string()),
    }
}

impl RawPolicy {
    /// The entry checked: roots are paths, effects are valid. The error is the byte range of
    /// the bad part in its file and why.
    ///
    /// # Errors
    /// A root that is not a Rust path, an effect with an unknown key or value, a per-root
    /// effect for a root the entry does not list, or `requires` in a step.
    pub fn to_model(&self) -> Result<PolicyModel, (Range<usize>, String)> {
        let mut roots = Vec::new();
        for r in &self.roots {
            if !super::known::is_rust_path(r.get_ref()) {
                return Err((
                    r.span(),
                    format!(
                        "`{}` is not a Rust path such as `ExponentialBuilder::default`",
                        r.get_ref()
                    ),
                ));
            }
            roots.push(
                r.get_ref()
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
            );
        }
        let mut per_root: Vec<Option<Effect>> = vec![None; roots.len()];
        for (root, value) in &self.per_root {
            let Some(i) = self.roots.iter().position(|r| r.get_ref() == root) else {
                return Err((
                    value.span(),
                    format!("`{root}` is not one of this entry's roots"),
                ));
            };
            let mut list = effects(value.get_ref()).map_err(|e| (value.span(), e))?;
            if list.len() != 1 {
                return Err((value.span(), "a root has one effect".to_owned()));
            }
            per_root[i] = list.pop();
        }
        let mut steps = Vec::new();
        for (name, value) in &self.steps {
            let list = effects(value.get_ref()).map_err(|e| (value.span(), e))?;
            if list.iter().any(|e| !e.requires.is_empty()) {
                return Err((
                    value.span(),
                    "`requires` belongs to a root, not a step".to_owned(),
                ));
            }
            steps.push((name.clone(), list));
        }
        let mut advice = self.advice.clone();
        advice.crate_name.clone_from(&self.crate_name);
        Ok(PolicyModel {
            roots,
            within: self.within.clone(),
            literal: self.literal,
            attribute: self.attribute,
            defaults: Effect {
                delay: Some(self.delay),
                jitter: Some(self.jitter),
                capped: Some(self.capped),
                limited: Some(self.limited),
                time_limited: Some(self.time_limited),
                first_ms: self.first_ms,
                factor: self.factor,
                attempts: self.attempts,
                total_ms: self.total_ms,
                cap_ms: self.cap_ms,
                growth: self.growth,
                ..Effect::default()
            },
            advice: Arc::new(advice),
            per_root,
            steps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lit;
    impl<'e> Args<'e> for Lit {
        fn number(&self, e: &'e syn::Expr) -> Option<f64> {
            match e {
                syn::Expr::Lit(l) => match &l.lit {
                    syn::Lit::Int(i) => i.base10_parse().ok(),
                    _ => None,
                },
                _ => None,
            }
        }
        fn is_callers_choice(&self, e: &'e syn::Expr) -> bool {
            matches!(e, syn::Expr::Path(p) if p.path.is_ident("n"))
        }
        fn text(&self, e: &'e syn::Expr) -> String {
            super::super::names::text(e).replace(' ', "")
        }
    }

    fn policy(text: &str) -> PolicyModel {
        let raw: RawPolicy = toml::from_str(text).unwrap();
        raw.to_model().unwrap()
    }

    const DOUBLING: &str = r#"
crate = "c"
roots = ["Doubling::new"]
delay = "growing"
limited = true
first-ms = "arg"
factor = 2
attempts = 3
growth = "exponential-after-first"
advice = { bound = "b", jitter = "j", cap = "c", fixed = "f", immediate = "i" }
[per-root]
"Doubling::new" = { requires = ["build"] }
[steps]
forever = { limited = false }
times = { attempts = "arg" }
jitter = [{ jitter = true }, { if-arg = "false", jitter = false }]
"#;

    fn expr(s: &str) -> syn::Expr {
        syn::parse_str(s).unwrap()
    }

    #[test]
    fn a_chain_is_read_from_defaults_then_steps_in_order() {
        let p = policy(DOUBLING);
        let path: Vec<String> = ["x", "Doubling", "new"].map(str::to_owned).to_vec();
        assert_eq!(p.root_of(&path), Some(0));
        let (first, ten, n, no) = (expr("1000"), expr("10"), expr("n"), expr("false"));
        let read = |steps: &[(&str, Vec<&syn::Expr>)]| p.read(0, &[&first], steps, &Lit, &|_| true);
        // `requires`: no `build`, not this policy.
        assert_eq!(read(&[]), None);
        let r = read(&[("times", vec![&ten]), ("build", vec![])]).unwrap();
        assert!(!r.unbounded && !r.jitter && !r.capped);
        assert_eq!(r.longest_secs, Some(512.0));
        let r = read(&[("times", vec![&n]), ("build", vec![])]).unwrap();
        assert_eq!(r.longest_secs, Some(f64::INFINITY), "the callers' count");
        let r = read(&[("forever", vec![]), ("build", vec![])]).unwrap();
        assert!(r.unbounded);
        let r = read(&[("jitter", vec![&no]), ("build", vec![])]).unwrap();
        assert!(!r.jitter, "the second effect applies to `false`");
        let r = read(&[("jitter", vec![&ten]), ("build", vec![])]).unwrap();
        assert!(r.jitter);
        // A gated-off step decides nothing.
        let r = p
            .read(
                0,
                &[&first],
                &[("forever", vec![]), ("build", vec![])],
                &Lit,
                &|part| part != 1,
            )
            .unwrap();
        assert!(!r.unbounded);
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        let bad_root = DOUBLING.replace("\"Doubling::new\"]", "\"Doubling new\"]");
        let raw: RawPolicy = toml::from_str(&bad_root).unwrap();
        assert!(raw.to_model().unwrap_err().1.contains("not a Rust path"));
        let bad_step = DOUBLING.replace(
            "forever = { limited = false }",
            "forever = { limit = false }",
        );
        let raw: RawPolicy = toml::from_str(&bad_step).unwrap();
        assert!(raw
            .to_model()
            .unwrap_err()
            .1
            .contains("unknown field `limit`"));
        let bad_num = DOUBLING.replace("factor = 2", "factor = \"two\"");
        assert!(toml::from_str::<RawPolicy>(&bad_num).is_err());
        let bad_requires = DOUBLING.replace(
            "forever = { limited = false }",
            "forever = { requires = [\"x\"] }",
        );
        let raw: RawPolicy = toml::from_str(&bad_requires).unwrap();
        assert!(raw.to_model().unwrap_err().1.contains("belongs to a root"));
    }

    #[test]
    #[allow(clippy::float_cmp)] // small whole numbers, exact in f64
    fn growths() {
        assert_eq!(Growth::Fibonacci.longest_ms(1.0, 1.0, 6.0), 8.0);
        assert_eq!(Growth::Linear.longest_ms(2.0, 1.0, 5.0), 10.0);
        assert_eq!(Growth::Power.longest_ms(10.0, 1.0, 3.0), 1000.0);
        assert_eq!(Growth::Exponential.longest_ms(1.0, 2.0, 3.0), 8.0);
        assert_eq!(Growth::ExponentialAfterFirst.longest_ms(1.0, 2.0, 3.0), 4.0);
    }
}
