//! libFuzzer target: a fixture mutated by the input (see `retry_audit_fuzz::mutate`), to
//! `retry_audit::pipeline::engine::check_source`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _parsed = retry_audit_fuzz::run_mutated(data);
});
