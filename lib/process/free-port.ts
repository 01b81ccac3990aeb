import net from "node:net";

// Below Linux's default ephemeral range (32768–60999), from which the kernel
// draws the local port of every outgoing connection: a port handed out
// from there can be taken by one of the many connections the tests open
// before the service binds it, or between a crash and the restart on the
// same port (seen: EADDRINUSE in the crash matrix).
const FIRST_PORT = 20_000;
const LAST_PORT = 32_767;

// Each process starts at a random place, so two processes rarely try the same port.
let nextPort = FIRST_PORT + Math.floor(Math.random() * (LAST_PORT - FIRST_PORT + 1));

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a service that
 * must be told its port before it starts (redis-server, the test app).
 * Another process could take it in between; on a test machine that is rare.
 */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried <= LAST_PORT - FIRST_PORT; tried++) {
    const port = nextPort;
    nextPort = port === LAST_PORT ? FIRST_PORT : port + 1;
    if (await canListen(port)) return port;
  }
  throw new Error(`No free port between ${FIRST_PORT} and ${LAST_PORT}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}
