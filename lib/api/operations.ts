import { jsonResponse } from "@/lib/http/json";
import { RETRY_AFTER_HEADER } from "@/lib/http/headers";
import { problemResponse, problemType } from "@/lib/http/problem";
import { log } from "@/lib/log";
import { metrics, observeReadinessProbe } from "@/lib/observability/metrics";
import {
  sharedReadiness,
  type CheckResult,
  type SharedReadinessResult,
} from "@/lib/operations/readiness";
import { getServices } from "@/lib/services";

/**
 * What an operator and a load balancer ask an instance: is the process up
 * (health), can it serve now (ready), and what has it done (metrics). None
 * needs credentials: the cluster's balancer serves only health and ready
 * from outside, and the instances listen on 127.0.0.1. So what they cost
 * cannot depend on how many ask: readiness answers from one shared probe.
 */

const NEVER_CACHED = { "Cache-Control": "no-store" };

// Under the balancer's check timeout (2 s), so a hung dependency reads as
// "not ready" rather than as a check that never answered.
const READINESS_TIMEOUT_MS = 1500;
// The balancer asks every instance every second (every half second while
// it changes its mind), so one probe a second is what it needs; any number
// of other callers share that probe and add none.
const READINESS_TTL_MS = 1000;
// A balancer checks again every second or two; a client told to wait is
// told about the same.
const NOT_READY_RETRY_AFTER_SECONDS = 2;

let readiness: (() => Promise<SharedReadinessResult>) | undefined;

/**
 * Only what this instance cannot serve anything without: the database. Not
 * the payment provider: it is shared by every instance, so a provider
 * outage would take them all out of the balancer together, and replays,
 * orders and pages, which never ask it, would be refused with the
 * checkouts. A request that needs the provider learns of its outage itself
 * (503 with Retry-After).
 */
function currentReadiness(): Promise<SharedReadinessResult> {
  readiness ??= sharedReadiness({
    // On the pool itself: its errors say what failed (ECONNREFUSED and the
    // address), where Prisma's raw query wraps them in a bare P2010.
    dependencies: [{ name: "database", probe: () => getServices().pool.query("SELECT 1") }],
    timeoutMs: READINESS_TIMEOUT_MS,
    ttlMs: READINESS_TTL_MS,
    onProbe(result) {
      observeReadinessProbe(result.ready);
      if (!result.ready)
        log.warn("readiness.not_ready", {
          checkedAt: result.checkedAt.toISOString(),
          checks: result.checks,
        });
    },
  });
  return readiness();
}

/** GET /api/health: the process is up and serving. Touches nothing else, so it never fails for a dependency. */
export async function health(): Promise<Response> {
  return jsonResponse(200, { status: "ok" }, NEVER_CACHED);
}

/**
 * GET /api/ready: 200 while the database answers, else 503. Both say when
 * the shared probe ran and how each check went, never why one failed: the
 * reason (a host, a port, a driver's message) is in the log line of that
 * probe, which carries the same checkedAt.
 */
export async function ready(): Promise<Response> {
  const result = await currentReadiness();
  const answer = {
    checkedAt: result.checkedAt.toISOString(),
    checks: Object.fromEntries(
      Object.entries(result.checks).map(([name, check]) => [name, publicCheck(check)]),
    ),
  };
  if (result.ready) return jsonResponse(200, { status: "ready", ...answer }, NEVER_CACHED);
  return problemResponse(
    {
      type: problemType("not-ready"),
      title: "Not ready to serve",
      status: 503,
      detail: "This instance cannot reach what it needs to serve requests. Retry in a moment.",
      ...answer,
    },
    { ...NEVER_CACHED, [RETRY_AFTER_HEADER]: String(NOT_READY_RETRY_AFTER_SECONDS) },
  );
}

function publicCheck({ ok, ms }: CheckResult): Pick<CheckResult, "ok" | "ms"> {
  return { ok, ms };
}

/** GET /api/metrics: this instance's metrics in Prometheus's text format. */
export async function metricsText(): Promise<Response> {
  const { db, keyWaiters: waiting } = getServices();
  const { registry, keysInFlight, keyWaiters, keyListenerUp } = metrics();
  keyWaiters.set(waiting.subscribed);
  keyListenerUp.set(waiting.listening ? 1 : 0);
  try {
    keysInFlight.set(await db.idempotencyKey.count({ where: { state: "in_flight" } }));
  } catch {
    keysInFlight.set(Number.NaN); // a scrape must not fail because the database did
  }
  return new Response(await registry.metrics(), {
    status: 200,
    headers: { "Content-Type": registry.contentType, ...NEVER_CACHED },
  });
}
