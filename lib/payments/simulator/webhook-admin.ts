import type pg from "pg";
import { z } from "zod";
import { invalidRequest, jsonResponse, type ApiResponse } from "@/lib/payments/simulator/errors";
import type { AttemptResult, WebhookDispatcher } from "@/lib/payments/simulator/dispatcher";
import {
  invalidEndpoint,
  listWebhookEndpoints,
  type WebhookEndpointRow,
} from "@/lib/payments/simulator/webhook-endpoints";

/**
 * The admin API's webhook controls, for tests and the demo panel: what
 * Stripe's delivery does at its worst, on demand.
 *
 *   GET  /_simulator/events?payment_intent=pi_…        events, newest first, each with its deliveries
 *   POST /_simulator/events/:id/redeliver               {copies, delayMs}: the event again, `copies`
 *                                                        times to each of its endpoints, all at once
 *                                                        (delayMs 0), or that much later
 *   GET  /_simulator/webhook_endpoints                  every endpoint (no secrets), with `held`
 *   POST /_simulator/webhook_endpoints/:id/hold         its deliveries wait from now on
 *   POST /_simulator/webhook_endpoints/:id/release      {order}: deliver what waited, one by one,
 *                                                        `oldest_first` or `newest_first` (the
 *                                                        wrong order), then carry on as usual
 */
const redeliverSchema = z.strictObject({
  copies: z.int().min(1).max(100).default(1),
  delayMs: z.int().min(0).max(3_600_000).default(0),
});

const releaseSchema = z.strictObject({
  order: z.enum(["oldest_first", "newest_first"]).default("oldest_first"),
});

// The most deliveries one release sends; more wait for the next.
const MAX_RELEASED = 1000;

export async function webhookAdmin(
  pool: pg.Pool,
  dispatcher: WebhookDispatcher,
  method: string,
  url: URL,
  body: string,
): Promise<ApiResponse | undefined> {
  const path = url.pathname;
  if (method === "GET" && path === "/_simulator/events")
    return jsonResponse(200, await listEvents(pool, url.searchParams.get("payment_intent")));
  if (method === "GET" && path === "/_simulator/webhook_endpoints")
    return jsonResponse(200, await listWebhookEndpoints(pool));
  if (method !== "POST") return undefined;

  const redeliver = /^\/_simulator\/events\/(evt_[A-Za-z0-9]+)\/redeliver$/.exec(path);
  if (redeliver) {
    const options = parseJson(body, redeliverSchema);
    if ("response" in options) return options.response;
    return redeliverEvent(pool, dispatcher, redeliver[1]!, options.value);
  }
  const endpoint = /^\/_simulator\/webhook_endpoints\/(we_[A-Za-z0-9]+)\/(hold|release)$/.exec(
    path,
  );
  if (endpoint) {
    const id = endpoint[1]!;
    if (endpoint[2] === "hold") {
      const held = await setHeld(pool, id, true);
      return held ? jsonResponse(200, { id, held: true }) : invalidEndpoint(id);
    }
    const options = parseJson(body, releaseSchema);
    if ("response" in options) return options.response;
    return releaseEndpoint(pool, dispatcher, id, options.value.order);
  }
  return undefined;
}

function parseJson<T>(
  body: string,
  schema: z.ZodType<T>,
): { value: T } | { response: ApiResponse } {
  let json: unknown;
  try {
    json = JSON.parse(body || "{}");
  } catch {
    return { response: invalidRequest("The body must be JSON.") };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    return {
      response: invalidRequest(
        parsed.error.issues
          .map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`)
          .join("; "),
      ),
    };
  }
  return { value: parsed.data };
}

interface EventRow {
  id: string;
  account: string;
  type: string;
  payment_intent: string | null;
  created: string;
  deliveries: {
    id: number;
    endpoint: string;
    state: string;
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    next_attempt_at: string;
    delivered_at: string | null;
  }[];
}

async function listEvents(pool: pg.Pool, paymentIntent: string | null) {
  const { rows } = await pool.query<EventRow>(
    `SELECT ev.id, ev.account, ev.type, ev.payment_intent, ev.created,
            coalesce((SELECT json_agg(json_build_object(
                       'id', d.id, 'endpoint', d.endpoint, 'state', d.state, 'attempts', d.attempts,
                       'last_status', d.last_status, 'last_error', d.last_error,
                       'next_attempt_at', d.next_attempt_at, 'delivered_at', d.delivered_at) ORDER BY d.id)
                        FROM payment_simulator.webhook_deliveries d WHERE d.event = ev.id), '[]') AS deliveries
       FROM payment_simulator.events ev
      WHERE $1::text IS NULL OR ev.payment_intent = $1
      ORDER BY ev.seq DESC LIMIT 100`,
    [paymentIntent],
  );
  return {
    object: "list",
    data: rows.map((row) => ({ ...row, created: Number(row.created) })),
  };
}

async function redeliverEvent(
  pool: pg.Pool,
  dispatcher: WebhookDispatcher,
  event: string,
  options: { copies: number; delayMs: number },
): Promise<ApiResponse> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO payment_simulator.webhook_deliveries (event, endpoint, next_attempt_at)
     SELECT ev.id, e.id, now() + make_interval(secs => $3::float8 / 1000)
       FROM payment_simulator.events ev
       JOIN payment_simulator.webhook_endpoints e
         ON e.account = ev.account AND e.enabled_events && ARRAY[ev.type, '*']::text[]
       CROSS JOIN generate_series(1, $2)
      WHERE ev.id = $1
     RETURNING id`,
    [event, options.copies, options.delayMs],
  );
  if (rows.length === 0) {
    const known = await pool.query(`SELECT 1 FROM payment_simulator.events WHERE id = $1`, [event]);
    if (known.rowCount === 0)
      return invalidRequest(`No such event: '${event}'`, { code: "resource_missing" }, 404);
  }
  const ids = rows.map((row) => row.id);
  if (options.delayMs > 0) return jsonResponse(202, { deliveries: ids });
  // All at once: the endpoint meets the copies concurrently, as a storm of duplicates.
  const claimed = await dispatcher.claim(ids);
  const results = await Promise.all(claimed.map((delivery) => dispatcher.attempt(delivery)));
  return jsonResponse(200, { deliveries: results.map(shown) });
}

async function releaseEndpoint(
  pool: pg.Pool,
  dispatcher: WebhookDispatcher,
  endpoint: string,
  order: "oldest_first" | "newest_first",
): Promise<ApiResponse> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM payment_simulator.webhook_deliveries
      WHERE endpoint = $1 AND state = 'pending' ORDER BY id LIMIT $2`,
    [endpoint, MAX_RELEASED],
  );
  // Claimed before the endpoint is released, so the background rounds cannot take them out of order.
  const claimed = await dispatcher.claim(rows.map((row) => row.id));
  if (!(await setHeld(pool, endpoint, false))) return invalidEndpoint(endpoint);
  if (order === "newest_first") claimed.reverse();
  const results: AttemptResult[] = [];
  for (const delivery of claimed) results.push(await dispatcher.attempt(delivery));
  return jsonResponse(200, { id: endpoint, held: false, deliveries: results.map(shown) });
}

async function setHeld(pool: pg.Pool, endpoint: string, held: boolean): Promise<boolean> {
  const { rows } = await pool.query<Pick<WebhookEndpointRow, "id">>(
    `UPDATE payment_simulator.webhook_endpoints SET held = $2 WHERE id = $1 RETURNING id`,
    [endpoint, held],
  );
  return rows.length > 0;
}

function shown(result: AttemptResult) {
  return {
    id: result.id,
    event: result.event,
    endpoint: result.endpoint,
    attempt: result.attempt,
    status: result.status,
    error: result.error,
    delivered: result.delivered,
  };
}
