/**
 * The address a request came from, for per-address limits.
 *
 * Route handlers never see the socket: Next.js records its peer in
 * X-Forwarded-For, but only when the request has no such header, and each
 * proxy in front appends the address it was reached from. So with
 * `trustedProxies` proxies in front (the cluster's balancer is one), the
 * client is the entry the outermost of them appended, counted from the
 * right, and whatever a caller wrote to the left of it is ignored: a forged
 * X-Forwarded-For does not move a caller to another address. With none in
 * front, the last entry is the peer Next.js recorded, unless the caller sent
 * the header itself; only a proxy in front (or a listener on 127.0.0.1, the
 * default) closes that gap, which is why a deployment puts one there.
 */
export function clientAddress(headers: Headers, trustedProxies: number): string {
  const hops = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0);
  const address = hops[hops.length - Math.max(trustedProxies, 1)];
  return address === undefined ? "unknown" : normalize(address);
}

// One client, one bucket: "::ffff:10.0.0.1" is 10.0.0.1, and no caller can
// grow the key past what an address needs.
function normalize(address: string): string {
  const unmapped = address.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  return unmapped.slice(0, 64);
}
