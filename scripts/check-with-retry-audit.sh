#!/usr/bin/env sh
# rust-analyzer's check command with retry-audit added: `cargo check` and then retry-audit, both
# printing cargo's JSON messages on standard output, so the editor shows both sets of diagnostics.
#
#   "rust-analyzer.check.overrideCommand": ["./scripts/check-with-retry-audit.sh", "--workspace", "--all-targets"]
#
# Arguments go to `cargo check`. rust-analyzer runs the command from the workspace root, which is
# what retry-audit then scans. RETRY_AUDIT names the retry-audit binary (default: `retry-audit`
# on the PATH). The exit status is cargo's if it failed, else retry-audit's (1: errors found).
set -u

cargo check --message-format=json "$@"
cargo_status=$?
"${RETRY_AUDIT:-retry-audit}" --format cargo-json
audit_status=$?

if [ "$cargo_status" -ne 0 ]; then
    exit "$cargo_status"
fi
exit "$audit_status"
