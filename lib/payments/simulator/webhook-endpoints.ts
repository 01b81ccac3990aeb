import type pg from "pg";
import { keyDigest } from "@/lib/payments/simulator/auth";
import { invalidRequest, jsonResponse, type ApiResponse } from "@/lib/payments/simulator/errors";
import { EVENT_TYPES } from "@/lib/payments/simulator/events";
import { listOf } from "@/lib/payments/simulator/form";
import { newId, newWebhookSecret } from "@/lib/payments/simulator/ids";
import {
  fail,
  httpUrl,
  ParamError,
  rejectUnknown,
  requiredParam,
  stringParam,
} from "@/lib/payments/simulator/params";
import type { FormObject } from "@/lib/payments/simulator/form";

/**
 * Where an account's events go: Stripe's webhook endpoints, each a URL and
 * the secret its deliveries are signed with (webhook-signature.ts).
 *
 *   POST /v1/webhook_endpoints   url, enabled_events[] (the event types, or `*`), description:
 *                                a new endpoint of the caller's account; its `secret`
 *                                is shown in this answer only, as at Stripe
 *
 * An endpoint can also be configured at start-up (SIMULATOR_WEBHOOK_URL and
 * SIMULATOR_WEBHOOK_SECRET): one per configured API key's account, taking
 * every event type, made once and given the configured secret each start.
 */
export interface WebhookEndpointRow {
  id: string;
  account: string;
  url: string;
  secret: string;
  enabled_events: string[];
  description: string | null;
  configured: boolean;
  held: boolean;
  retry_schedule_ms: number[];
  created: string;
}

const KNOWN = new Set(["url", "enabled_events", "description"]);

export function webhookEndpointObject(row: WebhookEndpointRow, withSecret: boolean) {
  return {
    id: row.id,
    object: "webhook_endpoint",
    api_version: null,
    application: null,
    created: Number(row.created),
    description: row.description,
    enabled_events: row.enabled_events,
    livemode: false,
    metadata: {},
    ...(withSecret && { secret: row.secret }),
    status: "enabled",
    url: row.url,
  };
}

function parseEnabledEvents(form: FormObject): string[] {
  if (form.enabled_events === undefined)
    fail("Missing required param: enabled_events.", "enabled_events", "parameter_missing");
  const list = listOf(form.enabled_events);
  if (!list || list.length === 0)
    fail("Invalid array: enabled_events must be a non-empty list.", "enabled_events");
  const types = list.map((type) =>
    typeof type === "string"
      ? type
      : fail("Invalid enabled_events: each must be a string.", "enabled_events"),
  );
  for (const type of types) {
    if (type !== "*" && !(EVENT_TYPES as readonly string[]).includes(type)) {
      fail(
        `Invalid enabled_events: ${type}. The payment simulator sends ${EVENT_TYPES.join(", ")} (or * for all).`,
        "enabled_events",
      );
    }
  }
  return [...new Set(types)];
}

export async function createWebhookEndpoint(
  pool: pg.Pool,
  account: string,
  form: FormObject,
  retryScheduleMs: readonly number[],
): Promise<ApiResponse> {
  let url: string;
  let enabledEvents: string[];
  let description: string | null;
  try {
    rejectUnknown(form, KNOWN);
    url = httpUrl(requiredParam(form, "url"), "url");
    enabledEvents = parseEnabledEvents(form);
    description = stringParam(form, "description") || null;
  } catch (error) {
    if (error instanceof ParamError) return error.response;
    throw error;
  }
  const { rows } = await pool.query<WebhookEndpointRow>(
    `INSERT INTO payment_simulator.webhook_endpoints
       (id, account, url, secret, enabled_events, description, retry_schedule_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [newId("we"), account, url, newWebhookSecret(), enabledEvents, description, retryScheduleMs],
  );
  return jsonResponse(200, webhookEndpointObject(rows[0]!, true));
}

/**
 * The start-up endpoint: for each configured API key's account, one endpoint
 * at `url` taking every event, signed with `secret` (replaced if it changed,
 * so a restart with a new secret signs with the new one).
 */
export async function configureWebhookEndpoint(
  pool: pg.Pool,
  apiKeys: readonly string[],
  endpoint: { url: string; secret: string },
  retryScheduleMs: readonly number[],
): Promise<void> {
  await pool.query(
    `INSERT INTO payment_simulator.webhook_endpoints
       (id, account, url, secret, enabled_events, configured, retry_schedule_ms)
     SELECT 'we_' || replace(gen_random_uuid()::text, '-', ''), k.account, $1, $2, ARRAY['*'], true, $4
       FROM (SELECT DISTINCT account FROM payment_simulator.api_keys WHERE key_sha256 = ANY($3::text[])) k
     ON CONFLICT (account, url) WHERE configured
     DO UPDATE SET secret = EXCLUDED.secret, retry_schedule_ms = EXCLUDED.retry_schedule_ms`,
    [endpoint.url, endpoint.secret, apiKeys.map(keyDigest), retryScheduleMs],
  );
}

/** Every endpoint, without its secret: the admin view. */
export async function listWebhookEndpoints(pool: pg.Pool) {
  const { rows } = await pool.query<WebhookEndpointRow>(
    `SELECT * FROM payment_simulator.webhook_endpoints ORDER BY created DESC, id LIMIT 100`,
  );
  return {
    object: "list",
    data: rows.map((row) => ({
      ...webhookEndpointObject(row, false),
      account: row.account,
      held: row.held,
      retry_schedule_ms: row.retry_schedule_ms,
    })),
  };
}

export const WEBHOOK_SECRET_RULE = "whsec_ followed by at least 24 letters, digits, _ or -";

export function isWebhookSecret(secret: string): boolean {
  return /^whsec_[A-Za-z0-9_-]{24,}$/.test(secret);
}

export function invalidEndpoint(id: string): ApiResponse {
  return invalidRequest(`No such webhook endpoint: '${id}'`, { code: "resource_missing" }, 404);
}
