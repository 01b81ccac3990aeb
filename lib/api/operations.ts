import { jsonResponse } from "@/lib/http/json";
import { RETRY_AFTER_HEADER } from "@/lib/http/headers";
import { problemResponse, problemType } from "@/lib/http/problem";
import { metrics } from "@/lib/observability/metrics";
import { checkReadiness } from "@/lib/operations/readiness";
import { getServices } from "@/lib/services";

/**
 * What an operator and a load balancer ask an instance: is the process up
 * (health), can it serve a checkout now (ready), and what has it done
 * (metrics). None needs credentials: the cluster's balancer serves only
 * health and ready from outside, and the instances listen on 127.0.0.1.
 */

const NEVER_CACHED = { "Cache-Control": "no-store" };

// Under the balancer's check timeout (2 s), so a hung dependency reads as
// "not ready" with its reason rather than as a check that never answered.
const READINESS_TIMEOUT_MS = 1500;
// A balancer checks again every second or two; a client told to wait is
// told about the same.
const NOT_READY_RETRY_AFTER_SECONDS = 2;

/** GET /api/health: the process is up and serving. Touches nothing else, so it never fails for a dependency. */
export async function health(): Promise<Response> {
  return jsonResponse(200, { status: "ok" }, NEVER_CACHED);
}

/** GET /api/ready: the database answers and the payment provider is reachable; 503 with the reason otherwise. */
export async function ready(): Promise<Response> {
  const { db, paymentProvider } = getServices();
  const readiness = await checkReadiness(
    [
      { name: "database", probe: () => db.$queryRaw`SELECT 1` },
      { name: "paymentProvider", probe: (timeoutMs) => paymentProvider.checkReachable(timeoutMs) },
    ],
    READINESS_TIMEOUT_MS,
  );
  if (readiness.ready)
    return jsonResponse(200, { status: "ready", checks: readiness.checks }, NEVER_CACHED);
  const failing = Object.entries(readiness.checks).filter(([, check]) => !check.ok);
  return problemResponse(
    {
      type: problemType("not-ready"),
      title: "Not ready to serve checkouts",
      status: 503,
      detail: failing.map(([name, check]) => `${name}: ${check.reason}`).join("; "),
      checks: readiness.checks,
    },
    { ...NEVER_CACHED, [RETRY_AFTER_HEADER]: String(NOT_READY_RETRY_AFTER_SECONDS) },
  );
}

/** GET /api/metrics: this instance's metrics in Prometheus's text format. */
export async function metricsText(): Promise<Response> {
  const { db } = getServices();
  const { registry, keysInFlight } = metrics();
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
