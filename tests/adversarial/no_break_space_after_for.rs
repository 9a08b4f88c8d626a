// Fuzzer regression (check_mutated): a no-break space (U+00A0) after `for` separates the
// words for the parser, so the pre-filter must keep this body: the loop is a retry (RA007).
fn send_all(socket: std::net::UdpSocket, packet: &[u8]) -> std::io::Result<()> {
    let mut ceiling_ms: u64 = 250;
    for attempt in 0..16 {
        match socket.send(packet) {
            Ok(_) => return Ok(()),
            Err(err) => log::debug!("send failed (attempt {attempt}): {err}"),
        }
        std::thread::sleep(std::time::Duration::from_millis(fastrand::u64(0..=ceiling_ms)));
        ceiling_ms *= 2;
    }
    Err(std::io::ErrorKind::TimedOut.into())
}
