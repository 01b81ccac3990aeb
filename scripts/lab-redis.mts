/**
 * The strategy lab's Redis: Debian's redis-server, in memory only (no RDB,
 * no AOF), on a free port of its own, run by this script so that it stops
 * with OncePay (lib/process/follow-launcher.ts) and never outlives it. The
 * app starts it the first time the lab needs it, unless LAB_REDIS_URL points
 * at a Redis already running.
 */
import { spawn } from "node:child_process";
import net from "node:net";
import { freePort } from "../lib/process/free-port.ts";
import { stopWhenLauncherEnds } from "../lib/process/follow-launcher.ts";

const port = await freePort();
const redis = spawn(
  "redis-server",
  [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--loglevel",
    "warning",
  ],
  {
    stdio: ["ignore", "pipe", "inherit"],
  },
);
redis.once("error", (error) => {
  console.error(
    `[lab-redis] cannot start redis-server (${error.message}); install it with: apt-get install redis-server`,
  );
  process.exit(1);
});
redis.once("exit", (code) => process.exit(code ?? 1));

await waitForPing(port);
console.log(`[lab-redis] listening on redis://127.0.0.1:${port} (redis-server, in memory)`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => redis.kill("SIGTERM"));
}
// However this script ends (a forced exit included), redis-server does not
// outlive it: nothing else would ever stop it.
process.on("exit", () => redis.kill("SIGKILL"));
stopWhenLauncherEnds("lab-redis");

/** Until redis-server answers PING (it logs nothing at this level when ready). */
async function waitForPing(on: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await pings(on)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server did not answer on port ${on}`);
}

function pings(on: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(on, "127.0.0.1", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
  });
}
