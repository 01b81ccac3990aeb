import net from "node:net";

// Below Linux's default ephemeral range (32768–60999), from which the kernel
// draws the local port of every outgoing connection: a port handed out
// from there can be taken by one of the many connections the tests open
// before the service binds it, or between a crash and the restart on the
// same port (seen: EADDRINUSE in the crash matrix).
const FIRST_PORT = 20_000;
const LAST_PORT = 32_767;

/**
 * A slice of that range for a process and all it starts: `first-last`.
 * The test lanes run at once (scripts/vitest-lanes.mts), each a process
 * tree of its own, and a port one lane had probed but not yet bound was
 * handed to the other too (seen under load: the payment simulator of one
 * lane took the port of the other's HAProxy). Each lane gets a slice, so
 * no two ever hand out the same port.
 */
export const PORT_SLICE_ENV = "ONCEPAY_PORT_SLICE";

export interface PortRange {
  first: number;
  last: number;
}

/** The range a process hands ports out of: its slice (`first-last`), if it was given one. */
export function portRangeOf(slice: string | undefined): PortRange {
  const bounds = /^(\d+)-(\d+)$/.exec(slice ?? "");
  if (!bounds) return { first: FIRST_PORT, last: LAST_PORT };
  const [first, last] = [Number(bounds[1]), Number(bounds[2])];
  if (first < FIRST_PORT || last > LAST_PORT || first > last)
    throw new Error(`${PORT_SLICE_ENV}=${slice} is not within ${FIRST_PORT}-${LAST_PORT}`);
  return { first, last };
}

/** The whole range cut into `count` slices of equal size, as `first-last`. */
export function portSlices(count: number): string[] {
  const size = Math.floor((LAST_PORT - FIRST_PORT + 1) / count);
  return Array.from({ length: count }, (_, index) => {
    const first = FIRST_PORT + index * size;
    return `${first}-${first + size - 1}`;
  });
}

const range = portRangeOf(process.env[PORT_SLICE_ENV]);
// Each process starts at a random place, so two processes of one slice rarely try the same port.
let nextPort = range.first + Math.floor(Math.random() * (range.last - range.first + 1));

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a service that
 * must be told its port before it starts (redis-server, the test app).
 * Another process could take it in between; on a test machine that is rare.
 */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried <= range.last - range.first; tried++) {
    const port = nextPort;
    nextPort = port === range.last ? range.first : port + 1;
    if (await canListen(port)) return port;
  }
  throw new Error(`No free port between ${range.first} and ${range.last}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}
