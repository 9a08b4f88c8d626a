//! libFuzzer target: arbitrary bytes as a file, to `retry_audit::pipeline::engine::check_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    retry_audit_fuzz::run_bytes(data);
});
