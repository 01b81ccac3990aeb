/**
 * Which `Host` the simulator answers. A web page can make a shopper's
 * browser send requests to 127.0.0.1 by DNS rebinding: the page's own name
 * (evil.example) resolves first to the attacker's server, then to
 * 127.0.0.1, and the browser, seeing one origin, lets the page read the
 * answers. What gives it away is the Host header, which still names the
 * page's site. So the simulator answers only requests addressed to it by a
 * name it goes by: the loopback names, the address it listens on, and any
 * name it was told (SIMULATOR_ALLOWED_HOSTS, e.g. for a container's name).
 *
 * The port is not compared: a rebinding page cannot change the name part
 * whatever port it uses, and a proxy that forwards the connection as it is
 * (the tests' outage proxy, the bench's counting proxy) leaves its own port
 * in Host.
 */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

// A host name or IPv4 address, or an IPv6 address in brackets (lower case)...
const NAME = String.raw`\[[0-9a-f:.]+\]|[a-z0-9.-]+`;
const HOST_NAME = new RegExp(`^(?:${NAME})$`);
// ...and in a Host field, an optional port after it.
const HOST_FIELD = new RegExp(`^(${NAME})(?::\\d{1,5})?$`);

export type HostNames = ReadonlySet<string>;

/** The names the simulator answers to, told to listen on `listenHost` (an address or a name). */
export function hostNames(listenHost: string, configured: readonly string[] = []): HostNames {
  const names = new Set(LOOPBACK_NAMES);
  // 0.0.0.0 and :: are every address: the machine's other names must be configured.
  if (listenHost !== "0.0.0.0" && listenHost !== "::")
    names.add(
      listenHost.includes(":") ? `[${listenHost.toLowerCase()}]` : listenHost.toLowerCase(),
    );
  for (const name of configured) names.add(name.toLowerCase());
  return names;
}

/** A name SIMULATOR_ALLOWED_HOSTS may list: a host name, an IPv4 address, or an IPv6 one in brackets. */
export function isHostName(name: string): boolean {
  return HOST_NAME.test(name.toLowerCase());
}

/** Whether a request's `Host` (absent: undefined) names this simulator. */
export function addressedToUs(host: string | undefined, names: HostNames): boolean {
  const name = HOST_FIELD.exec((host ?? "").toLowerCase())?.[1];
  return name !== undefined && names.has(name);
}
