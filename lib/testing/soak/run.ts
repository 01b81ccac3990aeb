import pg from "pg";
import {
  breaches,
  checkInvariants,
  settledBreaches,
  settledCounts,
  type SettledCounts,
} from "@/lib/testing/soak/invariants";
import { nextServerRssMb } from "@/lib/testing/soak/process-memory";
import {
  percentile,
  trendBreaches,
  type TrendLimits,
  type Window,
} from "@/lib/testing/soak/report";
import { Traffic, type Attempt, type Shopper } from "@/lib/testing/soak/traffic";

/**
 * A soak: mixed traffic against one built app for a while, with the
 * provider failing now and then, the invariants checked continuously and
 * the app's memory and p99 sampled per window. It ends with the traffic
 * stopped and the in-flight keys settled, then checks that every charge has
 * its payment and the other way round.
 */
export interface SoakOptions {
  baseUrl: string;
  databaseUrl: string;
  /** The app's simulator and its admin key, to inject the provider's faults. */
  paymentSimulator: { url: string; adminKey: string };
  /** The app's process group, to read the Next.js server's memory. */
  processGroup: number;
  durationMs: number;
  windowMs: number;
  /** Shoppers sending at once. */
  concurrency: number;
  /** A key may stay in flight this long past its lease before it counts as stuck. */
  stuckAfterSeconds: number;
  /** See Traffic: only keys this recent are replayed. */
  replayWindowMs: number;
  /**
   * How far memory and p99 may rise from the first half of the run to the
   * second; unchecked without. A trend means something only over minutes on
   * a machine doing nothing else (`npm run soak`), not in a test run.
   */
  trendLimits?: TrendLimits;
  onWindow?: (window: Window) => void;
}

export interface SoakResult {
  windows: Window[];
  contractBreaches: string[];
  settled: SettledCounts;
  /** Everything that went wrong; empty when the soak passed. */
  failures: string[];
}

// A provider failure every few seconds: often enough to hit checkouts of
// every kind, rarely enough that most traffic is the ordinary kind.
const PROVIDER_FAULT_EVERY_MS = 3_000;
const PROVIDER_FAULTS = [
  "http_500",
  "drop_connection",
  "http_500_stored_after_charge",
  "http_500_stored_before_charge",
] as const;
const SETTLE_TIMEOUT_MS = 60_000;
const SHOPPERS = 20;

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const db = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  try {
    const shoppers = await Promise.all(
      Array.from({ length: SHOPPERS }, () => createShopper(options.baseUrl)),
    );
    const accountIds = shoppers.map((shopper) => shopper.accountId);
    const contractBreaches: string[] = [];
    let attempts: Attempt[] = [];
    const traffic = new Traffic(
      options.baseUrl,
      shoppers,
      {
        attempt: (attempt) => attempts.push(attempt),
        contractBreach: (scenario, detail) => contractBreaches.push(`${scenario}: ${detail}`),
      },
      options.replayWindowMs,
    );

    const deadline = Date.now() + options.durationMs;
    const senders = Array.from({ length: options.concurrency }, async () => {
      while (Date.now() < deadline) await traffic.next();
    });
    const faults = injectProviderFaults(options.paymentSimulator, deadline);

    const windows: Window[] = [];
    let windowStart = performance.now();
    while (Date.now() < deadline) {
      await sleep(Math.min(options.windowMs, Math.max(0, deadline - Date.now())));
      const taken = attempts;
      attempts = [];
      const sorted = taken.map((attempt) => attempt.ms).sort((a, b) => a - b);
      const counts = await checkInvariants(db, accountIds, options.stuckAfterSeconds);
      const window: Window = {
        index: windows.length + 1,
        requests: taken.length,
        seconds: (performance.now() - windowStart) / 1000,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        rssMb: await nextServerRssMb(options.processGroup),
        inFlightKeys: (await settledCounts(db, accountIds)).inFlightKeys,
        breaches: breaches(counts),
      };
      windowStart = performance.now();
      windows.push(window);
      options.onWindow?.(window);
    }
    await Promise.all([...senders, faults]);

    const settled = await settle(db, accountIds);
    const final = breaches(await checkInvariants(db, accountIds, options.stuckAfterSeconds));
    const failures = [
      ...contractBreaches,
      ...windows.flatMap((window) =>
        window.breaches.map((breach) => `window ${window.index}: ${breach}`),
      ),
      ...final.map((breach) => `at the end: ${breach}`),
      ...settledBreaches(settled),
      ...(options.trendLimits ? trendBreaches(windows, options.trendLimits) : []),
    ];
    return { windows, contractBreaches, settled, failures };
  } finally {
    await db.end();
  }
}

/** Waits for the recovery worker to finish every key still in flight, then counts. */
async function settle(db: pg.Pool, accountIds: string[]): Promise<SettledCounts> {
  const until = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const counts = await settledCounts(db, accountIds);
    if (counts.inFlightKeys === 0 || Date.now() > until) return counts;
    await sleep(500);
  }
}

async function injectProviderFaults(
  simulator: SoakOptions["paymentSimulator"],
  deadline: number,
): Promise<void> {
  const setFaults = async (settings: object) => {
    const response = await fetch(`${simulator.url}/_simulator/faults`, {
      method: "PUT",
      headers: {
        "Content-Type": "application/json",
        Authorization: `Bearer ${simulator.adminKey}`,
      },
      body: JSON.stringify(settings),
    });
    // A soak whose faults were refused would pass without the trouble it is meant to survive.
    if (!response.ok) throw new Error(`PUT /_simulator/faults answered ${response.status}`);
  };
  let next = 0;
  while (Date.now() + PROVIDER_FAULT_EVERY_MS < deadline) {
    await sleep(PROVIDER_FAULT_EVERY_MS);
    await setFaults({ failNext: PROVIDER_FAULTS[next++ % PROVIDER_FAULTS.length] });
  }
  await setFaults({});
}

async function createShopper(baseUrl: string): Promise<Shopper> {
  const response = await fetch(`${baseUrl}/api/accounts`, { method: "POST" });
  if (response.status !== 201) throw new Error(`POST /api/accounts answered ${response.status}`);
  const { id, token } = (await response.json()) as { id: string; token: string };
  return { accountId: id, token };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
