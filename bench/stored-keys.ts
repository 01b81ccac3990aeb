import pg from "pg";
import { pgStore } from "@oncepay/idempotency/pg";
import { reapExpiredKeys } from "../lib/idempotency/reaper.ts";

/**
 * The checkout's cost as the key table grows, and while the reaper empties
 * it: claim (a first-time checkout) and replay latency at 10,000 stored
 * keys, at 1,000,000, and at 10,000 again once the reaper has deleted the
 * rest (drift on this machine is larger than the difference sought, so the
 * large table is held against both small ones), and first-time checkouts'
 * p99 under load with and without the reaper deleting those keys. The keys are
 * seeded into an account of their own with one INSERT … SELECT
 * generate_series each, complete and past their TTL, as a busy shop's day
 * leaves them; the reaper is the app's own (lib/idempotency/reaper.ts, its
 * default batch of 1,000), run from here as another instance would run it.
 */
export interface Sample {
  answer: string;
  ms: number;
}

export interface StoredKeysInput {
  databaseUrl: string;
  /** An account of its own for the seeded keys. */
  seedAccountId: string;
  firstTime(): Promise<Sample>;
  replay(): Promise<Sample>;
  runConcurrently(
    total: number,
    concurrency: number,
    one: () => Promise<Sample>,
  ): Promise<{ samples: Sample[]; seconds: number }>;
  sequentialRequests: number;
  concurrentRequests: number;
  concurrency: number;
  largeTable: number;
}

export interface StoredKeysResult {
  small: { keys: number; claimP50: number; replayP50: number };
  large: { keys: number; claimP50: number; replayP50: number };
  reaper: {
    quietP99: number;
    reapingP99: number;
    deleted: number;
    reapSeconds: number;
    answers: string;
  };
}

const SMALL_TABLE = 10_000;
const REAPER_BATCH_SIZE = 1000;

export async function measureStoredKeys(
  input: StoredKeysInput,
  progress: (line: string) => void,
): Promise<StoredKeysResult> {
  process.env.LOG_LEVEL ??= "warn"; // the reaper logs each run; the benchmark prints its own lines
  const pool = new pg.Pool({ connectionString: input.databaseUrl, max: 2 });
  // The app's store as it runs on a server it reaches directly (statements
  // prepared); the reaper uses nothing of it but its DELETE.
  const keys = pgStore(pool, { leaseSeconds: 30, ttlSeconds: 24 * 60 * 60 });
  try {
    const latencyNow = async () => {
      const stored = await keyCount(pool);
      const claims = await input.runConcurrently(input.sequentialRequests, 1, input.firstTime);
      const replays = await input.runConcurrently(input.sequentialRequests, 1, input.replay);
      progress(
        `${stored.toLocaleString("en")} keys stored: claim p50 ${quantile(claims.samples, 0.5).toFixed(1)} ms, replay p50 ${quantile(replays.samples, 0.5).toFixed(1)} ms`,
      );
      return {
        keys: stored,
        claimP50: quantile(claims.samples, 0.5),
        replayP50: quantile(replays.samples, 0.5),
      };
    };
    await seedUpTo(pool, input.seedAccountId, SMALL_TABLE);
    const smallBefore = await latencyNow();
    await seedUpTo(pool, input.seedAccountId, input.largeTable);
    const large = await latencyNow();

    const quiet = await input.runConcurrently(
      input.concurrentRequests,
      input.concurrency,
      input.firstTime,
    );
    progress(`first-time checkouts, no reaper: p99 ${quantile(quiet.samples, 0.99).toFixed(1)} ms`);
    // The shoppers keep checking out for exactly as long as the reaper runs.
    let reaping = true;
    const samples: Sample[] = [];
    const shoppers = Array.from({ length: input.concurrency }, async () => {
      while (reaping) samples.push(await input.firstTime());
    });
    const reaperStarted = performance.now();
    let deleted = 0;
    try {
      for (;;) {
        const run = await reapExpiredKeys(keys, { batchSize: REAPER_BATCH_SIZE, maxBatches: 10 });
        if (run === 0) break;
        deleted += run;
      }
    } finally {
      reaping = false;
    }
    const reaped = { deleted, seconds: (performance.now() - reaperStarted) / 1000 };
    await Promise.all(shoppers);
    progress(
      `first-time checkouts while the reaper deleted ${reaped.deleted.toLocaleString("en")} keys in ${reaped.seconds.toFixed(0)} s: p99 ${quantile(samples, 0.99).toFixed(1)} ms`,
    );
    // Autovacuum's work after the reaper's, done now.
    await pool.query("VACUUM ANALYZE idempotency_keys");
    const smallAfter = await latencyNow();
    return {
      small: {
        keys: Math.round((smallBefore.keys + smallAfter.keys) / 2),
        claimP50: (smallBefore.claimP50 + smallAfter.claimP50) / 2,
        replayP50: (smallBefore.replayP50 + smallAfter.replayP50) / 2,
      },
      large,
      reaper: {
        quietP99: quantile(quiet.samples, 0.99),
        reapingP99: quantile(samples, 0.99),
        deleted: reaped.deleted,
        reapSeconds: reaped.seconds,
        answers: answers(samples),
      },
    };
  } finally {
    await pool.end();
  }
}

/** Tops the key table up to `total` rows: complete keys past their TTL, so the reaper may delete every one. */
async function seedUpTo(pool: pg.Pool, accountId: string, total: number): Promise<void> {
  const missing = total - (await keyCount(pool));
  if (missing <= 0) return;
  await pool.query(
    `INSERT INTO idempotency_keys
       (scope, idem_key, operation, fingerprint, request,
        state, recovery_point, response_status, response_headers, response_body, completed_at, expires_at)
     SELECT $1::text, 'seeded-' || n || '-' || gen_random_uuid(), 'checkout', repeat('0', 64), '{"cartId":"seeded"}'::jsonb,
            'complete', 'finished', 201, '{"Content-Type":"application/json"}'::jsonb, '{"object":"order"}'::jsonb,
            now() - interval '2 days', now() - interval '1 day'
       FROM generate_series(1, $2::int) AS n`,
    [accountId, missing],
  );
  // Fresh statistics, as autovacuum would give a table that grew over a day,
  // and the seed's dirty pages written out now rather than during a phase.
  await pool.query("VACUUM ANALYZE idempotency_keys");
  await pool.query("CHECKPOINT");
}

async function keyCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ count: string }>("SELECT count(*) FROM idempotency_keys");
  return Number(rows[0]!.count);
}

export function quantile(samples: Sample[], q: number): number {
  const sorted = samples.map((sample) => sample.ms).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function answers(samples: Sample[]): string {
  const byAnswer = new Map<string, number>();
  for (const sample of samples) byAnswer.set(sample.answer, (byAnswer.get(sample.answer) ?? 0) + 1);
  return [...byAnswer]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([answer, n]) => `${n}×${answer}`)
    .join(", ");
}
