//! How long the longest wait of a growing backoff can get: a small constant evaluator over the
//! delay expression, with the attempt counter at its last value.

use std::collections::HashMap;

use syn::{BinOp, Expr, Lit};

use super::names;
use super::scope::FileScope;
use super::values::{place_key, Locals, LoopFacts, Mutation};

/// Evaluates numbers and durations (in milliseconds) written in the file.
pub struct Estimator<'c, 'a> {
    pub file: &'c FileScope<'a>,
    pub locals: &'c Locals<'a>,
    pub facts: &'c LoopFacts<'a>,
    /// Values given to names (the attempt counter at its last value).
    pub env: HashMap<String, f64>,
}

const DEPTH: usize = 16;

impl Estimator<'_, '_> {
    /// The value of an expression: a number, or a duration in milliseconds.
    #[must_use]
    pub fn eval(&self, e: &Expr) -> Option<f64> {
        self.eval_in(e, 0)
    }

    fn eval_in(&self, e: &Expr, depth: usize) -> Option<f64> {
        let _guard = crate::analysis::limits::enter();
        if depth > DEPTH {
            return None;
        }
        let d = depth + 1;
        match e {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => i.base10_parse::<u32>().ok().map(f64::from),
                Lit::Float(f) => f.base10_parse::<f64>().ok(),
                _ => None,
            },
            Expr::Paren(p) => self.eval_in(&p.expr, d),
            Expr::Group(g) => self.eval_in(&g.expr, d),
            // A random pick from `0..=ceiling` is at most the ceiling.
            Expr::Range(r) => self.eval_in(r.end.as_deref()?, d),
            // A value picked between values (`if traced { 5 } else { 1 }`, the arms of a
            // `match`) is at most the largest of them, when every one of them is known.
            Expr::If(i) => {
                let (_, other) = i.else_branch.as_ref()?;
                let then = self.eval_in(block_value(&i.then_branch)?, d)?;
                Some(then.max(self.eval_in(other, d)?))
            }
            Expr::Match(m) => m
                .arms
                .iter()
                .map(|a| self.eval_in(&a.body, d))
                .try_fold(f64::MIN, |acc, v| v.map(|v| acc.max(v)))
                .filter(|_| !m.arms.is_empty()),
            Expr::Block(b) if b.label.is_none() => self.eval_in(block_value(&b.block)?, d),
            Expr::Cast(c) => self.eval_in(&c.expr, d),
            Expr::Reference(r) => self.eval_in(&r.expr, d),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.eval_in(&u.expr, d),
            Expr::Path(_) | Expr::Field(_) => {
                let key = place_key(e)?;
                if let Some(v) = self.env.get(&key) {
                    return Some(*v);
                }
                if let Some(inits) = self.locals.lets.get(&key) {
                    // One value only: a name bound twice is not a constant.
                    if let [one] = inits.as_slice() {
                        return self.eval_in(one, d);
                    }
                    return None;
                }
                if let Expr::Path(p) = e {
                    if let Some(c) = self.file.constant(&p.path) {
                        return self.eval_in(c, d);
                    }
                }
                None
            }
            // A remainder is below its divisor (`rand::random::<u64>() % 100`, a jitter): at
            // most the divisor, whatever is divided.
            Expr::Binary(bin) if matches!(bin.op, BinOp::Rem(_)) => {
                self.eval_in(&bin.right, d).filter(|r| *r > 0.0)
            }
            Expr::Binary(bin) => {
                let lhs = self.eval_in(&bin.left, d)?;
                let rhs = self.eval_in(&bin.right, d)?;
                Some(match bin.op {
                    BinOp::Add(_) => lhs + rhs,
                    BinOp::Sub(_) => lhs - rhs,
                    BinOp::Mul(_) => lhs * rhs,
                    BinOp::Div(_) if rhs != 0.0 => lhs / rhs,
                    BinOp::Shl(_) => lhs * 2f64.powf(rhs),
                    BinOp::Shr(_) => lhs / 2f64.powf(rhs),
                    _ => return None,
                })
            }
            Expr::MethodCall(m) if self.file.is_random(&m.method.to_string()) => {
                // `rng.gen_range(0..=x)` is at most x; `rng.gen::<f64>()` at most 1.
                m.args.first().map_or(Some(1.0), |a| self.eval_in(a, d))
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                let recv = || self.eval_in(&m.receiver, d);
                let arg = |i: usize| m.args.iter().nth(i).and_then(|a| self.eval_in(a, d));
                match name.as_str() {
                    "pow" | "saturating_pow" | "checked_pow" | "wrapping_pow" | "powi" | "powf" => {
                        Some(recv()?.powf(arg(0)?))
                    }
                    "saturating_mul" | "checked_mul" | "wrapping_mul" | "mul_f64" | "mul_f32" => {
                        Some(recv()? * arg(0)?)
                    }
                    "saturating_add" | "checked_add" | "wrapping_add" => Some(recv()? + arg(0)?),
                    "min" => Some(recv()?.min(arg(0)?)),
                    "max" => Some(recv()?.max(arg(0)?)),
                    "unwrap" | "expect" | "unwrap_or_default" | "into" | "as_millis" | "clone" => {
                        recv()
                    }
                    "as_secs" | "as_secs_f64" | "as_secs_f32" => Some(recv()? / 1000.0),
                    _ => None,
                }
            }
            Expr::Call(call)
                if names::callee_path(&call.func).is_some_and(|p| {
                    let full = self.file.resolve(p);
                    self.file.is_random_path(&full)
                        || full.last().is_some_and(|l| self.file.is_random(l))
                }) =>
            {
                // `fastrand::u64(0..=x)`, `rand::random::<f64>()`: at most x, at most 1.
                call.args.first().map_or(Some(1.0), |a| self.eval_in(a, d))
            }
            Expr::Call(call) => {
                let last = names::callee_path(&call.func).and_then(names::last)?;
                let arg = || call.args.first().and_then(|a| self.eval_in(a, d));
                match last.as_str() {
                    "from_millis" | "milliseconds" | "Some" | "Ok" => arg(),
                    "from_secs" | "from_secs_f64" | "from_secs_f32" | "seconds" => {
                        Some(arg()? * 1000.0)
                    }
                    "from_micros" | "microseconds" => Some(arg()? / 1000.0),
                    "from_nanos" => Some(arg()? / 1_000_000.0),
                    "from_mins" | "minutes" => Some(arg()? * 60_000.0),
                    // `sleep_until(Instant::now() + d)`: what matters is `d`.
                    "now" if call.args.is_empty() => Some(0.0),
                    "min" => {
                        let first = self.eval_in(call.args.first()?, d)?;
                        let second = self.eval_in(call.args.iter().nth(1)?, d)?;
                        Some(first.min(second))
                    }
                    // An unknown one-argument helper (`jitter(d)`, `with_jitter(d)`): taken to
                    // return about what it is given, for an estimate of the longest wait.
                    _ if call.args.len() == 1 => arg(),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// For a place the loop grows (`delay *= 2`, `delay = delay * 2`, `delay <<= 1`): its
    /// factor per pass.
    #[must_use]
    pub fn growth_factor(&self, key: &str) -> Option<f64> {
        let muts = self.facts.mutations.get(key)?;
        let mut factor = None;
        for m in muts {
            let f = match m {
                Mutation::Compound(BinOp::MulAssign(_), rhs) => self.eval(rhs)?,
                Mutation::Compound(BinOp::ShlAssign(_), rhs) => 2f64.powf(self.eval(rhs)?),
                Mutation::Assign(rhs) => self.factor_of(rhs, key)?,
                Mutation::Compound(..) => return None,
            };
            factor = Some(factor.map_or(f, |x: f64| x.max(f)));
        }
        factor
    }

    /// `key * 2`, `key.mul_f64(1.5)`, `key.saturating_mul(2)`, `(key * 2).min(cap)`: the factor.
    fn factor_of(&self, rhs: &Expr, key: &str) -> Option<f64> {
        let _guard = crate::analysis::limits::enter();
        match rhs {
            Expr::Paren(p) => self.factor_of(&p.expr, key),
            Expr::Binary(b) if matches!(b.op, BinOp::Mul(_)) => {
                if place_key(&b.left).as_deref() == Some(key) {
                    self.eval(&b.right)
                } else if place_key(&b.right).as_deref() == Some(key) {
                    self.eval(&b.left)
                } else {
                    None
                }
            }
            Expr::Binary(b) if matches!(b.op, BinOp::Shl(_)) => (place_key(&b.left).as_deref()
                == Some(key))
            .then(|| self.eval(&b.right).map(|r| 2f64.powf(r)))
            .flatten(),
            // Decorrelated jitter: `delay = rng.gen_range(base..=delay * 3)` grows up to the end.
            Expr::MethodCall(m) if self.file.is_random(&m.method.to_string()) => {
                m.args.first().and_then(|a| self.factor_of(a, key))
            }
            Expr::Range(r) => r.end.as_deref().and_then(|e| self.factor_of(e, key)),
            Expr::MethodCall(m) => {
                let n = m.method.to_string();
                if matches!(
                    n.as_str(),
                    "mul_f64" | "mul_f32" | "saturating_mul" | "checked_mul"
                ) && place_key(&m.receiver).as_deref() == Some(key)
                {
                    m.args.first().and_then(|a| self.eval(a))
                } else if matches!(n.as_str(), "unwrap" | "expect" | "unwrap_or" | "min") {
                    self.factor_of(&m.receiver, key)
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// The value a block gives when it is only that value (`{ 5 }`), else none.
fn block_value(b: &syn::Block) -> Option<&Expr> {
    match b.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => Some(e),
        _ => None,
    }
}
