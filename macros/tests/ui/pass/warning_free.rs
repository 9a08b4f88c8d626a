// Every shape `#[retryable]` takes, compiled with warnings denied: a warning the expansion causes
// (such as `unused_braces` at the braces of a one-expression body) fails this case.
#![deny(warnings)]

#[path = "../../shapes/mod.rs"]
mod shapes;

fn main() {
    shapes::run();
}
