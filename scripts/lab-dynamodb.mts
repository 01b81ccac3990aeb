/**
 * The strategy lab's DynamoDB: dynalite (DynamoDB's API on LevelDB, here in
 * memory), as a process of its own so that a crash of the app leaves the
 * keys it holds, as DynamoDB would. The app starts it the first time the lab
 * needs it (lib/lab/key-stores/connections.ts); LAB_DYNAMODB_PORT (0, a free
 * one) says where it listens. Only the official AWS SDK talks to it.
 */
import type { AddressInfo } from "node:net";
import dynalite from "dynalite";
import { boundServer } from "../lib/http/server-limits.ts";
import { stopWhenLauncherEnds } from "../lib/process/follow-launcher.ts";

// Tables are ready at once, as they are not at AWS: the lab creates its own on first use.
// A flood of connections is shed, not fatal (lib/http/server-limits.ts).
const server = boundServer(dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }));
await new Promise<void>((resolve) =>
  server.listen(Number(process.env.LAB_DYNAMODB_PORT ?? 0), "127.0.0.1", resolve),
);
const { port } = server.address() as AddressInfo;
console.log(`[lab-dynamodb] listening on http://127.0.0.1:${port} (dynalite, in memory)`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
stopWhenLauncherEnds("lab-dynamodb");
