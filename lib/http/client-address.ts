/**
 * The address a request came from, for per-address limits.
 *
 * Every proxy appends to X-Forwarded-For the address it was reached from,
 * and OncePay's own server (lib/http/front-door.ts) appends its peer, the
 * connection's other end, before a route handler sees the request. So the
 * client is the entry `trustedProxies` hops left of the last one: the peer
 * itself with no proxy in front, the entry the balancer appended behind one
 * (the cluster). Whatever a caller wrote to the left of that is ignored: a
 * forged X-Forwarded-For does not move a caller to another address.
 */
export function clientAddress(headers: Headers, trustedProxies: number): string {
  const hops = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0);
  const address = hops[hops.length - 1 - trustedProxies];
  return address === undefined ? "unknown" : normalize(address);
}

// One client, one bucket: "::ffff:10.0.0.1" is 10.0.0.1, and no caller can
// grow the key past what an address needs.
function normalize(address: string): string {
  const unmapped = address.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  return unmapped.slice(0, 64);
}
