import net from "node:net";

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a service that
 * must be told its port before it starts (redis-server, the test app).
 * Another process could take it in between; on a test machine that is rare.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
