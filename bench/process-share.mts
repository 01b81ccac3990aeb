/**
 * Where a checkout's CPU time goes, process by process: the app (Next.js),
 * its payment simulator and PostgreSQL's backends, for the keyless route
 * and the keyed first-time checkout side by side:
 *
 *   npm run build && DATABASE_URL=postgresql://… npm run bench:cpu
 *
 * Alternating slices of SLICE checkouts, 16 at once, SLICES of each, in
 * the order AB BA AB …, so that drift favours neither; each process's CPU
 * time (from /proc) over its scenario's slices, per checkout. The ratios of
 * `npm run bench` say how far the key layer is from its targets; this says
 * which process spends the difference.
 */
import { randomUUID } from "node:crypto";
import { startAppServer } from "../lib/testing/app-server.ts";
import { processStats } from "./process-cpu.ts";
import { BENCH_APP_ENV, createAccount, newCart } from "./shop-client.ts";

if (!process.env.DATABASE_URL) {
  console.error("npm run bench:cpu needs DATABASE_URL: it reads PostgreSQL's backends' CPU time.");
  process.exit(2);
}
const SLICE = 160;
const SLICES = 12;
const CONCURRENCY = 16;

const app = await startAppServer({ env: BENCH_APP_ENV });
try {
  const token = await createAccount(app.baseUrl);
  const post = async (path: string, key: string | null) => {
    const response = await fetch(`${app.baseUrl}${path}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        ...(key && { "Idempotency-Key": key }),
      },
      body: JSON.stringify(newCart()),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`${path} answered ${response.status}, not 201`);
  };
  const scenarios = {
    keyless: () => post("/api/lab/unsafe-orders", null),
    "keyed, first time": () => post("/api/orders", randomUUID()),
  };
  type Name = keyof typeof scenarios;
  // Warm-up: compiles routes and fills the pools.
  for (const one of Object.values(scenarios)) await inParallel(200, 4, one);

  const totals = new Map<Name, { seconds: number; cpu: Map<string, number> }>();
  for (let slice = 0; slice < SLICES; slice++) {
    const names = Object.keys(scenarios) as Name[];
    for (const name of slice % 2 ? names.reverse() : names) {
      const before = await cpuByProcess();
      const started = performance.now();
      await inParallel(SLICE, CONCURRENCY, scenarios[name]);
      const seconds = (performance.now() - started) / 1000;
      const after = await cpuByProcess();
      const total = totals.get(name) ?? { seconds: 0, cpu: new Map() };
      total.seconds += seconds;
      for (const [process, cpu] of after)
        total.cpu.set(process, (total.cpu.get(process) ?? 0) + cpu - (before.get(process) ?? 0));
      totals.set(name, total);
    }
    process.stdout.write(`  slice ${slice + 1} of ${SLICES}\r`);
  }
  const checkouts = SLICE * SLICES;
  console.log(`\nCPU ms per checkout, ${checkouts} of each, ${CONCURRENCY} at once`);
  for (const [name, total] of totals) {
    const parts = [...total.cpu].map(
      ([process, cpu]) => `${process} ${((cpu / checkouts) * 1000).toFixed(2)}`,
    );
    console.log(
      `  ${name.padEnd(18)} ${(checkouts / total.seconds).toFixed(0).padStart(4)} req/s   ${parts.join("   ")}`,
    );
  }
} finally {
  await app.stop();
}

/** CPU seconds so far of PostgreSQL's backends and of each process the app's launcher started. */
async function cpuByProcess(): Promise<Map<string, number>> {
  const byProcess = new Map<string, number>();
  for (const stat of await processStats()) {
    const name =
      stat.comm === "postgres"
        ? "postgres"
        : stat.processGroup === app.processGroup
          ? stat.comm.startsWith("next-server")
            ? "app"
            : stat.comm === "MainThread"
              ? "simulator"
              : undefined
          : undefined;
    if (name) byProcess.set(name, (byProcess.get(name) ?? 0) + stat.cpuSeconds);
  }
  return byProcess;
}

async function inParallel(total: number, concurrency: number, one: () => Promise<void>) {
  let sent = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent++ < total) await one();
    }),
  );
}
