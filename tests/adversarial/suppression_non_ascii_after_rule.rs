// RA100 on a malformed suppression whose next character is not ASCII: the span of that
// character must not cut it (found by fuzz target check_mutated).
// retry-audit: allow(fixed-delay重试)
fn f() {}
