/**
 * Splits one direction of a PostgreSQL connection into whole protocol
 * messages (a type byte, then a length that counts itself), however the
 * bytes arrive in chunks, for the tools that read the wire: the benchmark's
 * round-trip counter and the pooler test's statement recorder. The client's
 * side opens with a start-up packet that has no type byte (`startupFirst`).
 */
export function postgresMessageReader(
  onMessage: (type: number, body: Buffer) => void,
  { startupFirst = false } = {},
): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let startedUp = !startupFirst;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    if (!startedUp) {
      if (pending.length < 4 || pending.length < pending.readInt32BE(0)) return;
      pending = pending.subarray(pending.readInt32BE(0));
      startedUp = true;
    }
    while (pending.length >= 5) {
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) break;
      onMessage(pending[0]!, pending.subarray(5, 1 + length));
      pending = pending.subarray(1 + length);
    }
  };
}
