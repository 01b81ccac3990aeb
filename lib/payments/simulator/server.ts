import http from "node:http";
import type { AddressInfo } from "node:net";
import type pg from "pg";
import { ADMIN_KEY_RULE, isAdminKey, presentsAdminKey } from "@/lib/payments/simulator/admin-key";
import { authenticate, configureApiKeys, registerAccount } from "@/lib/payments/simulator/auth";
import { listCharges, retrieveCharge } from "@/lib/payments/simulator/charges";
import {
  CHALLENGE_PATH,
  challengePage,
  challengeUrl,
} from "@/lib/payments/simulator/challenge-page";
import { boundServer, SERVER_TIMEOUTS } from "@/lib/http/server-limits";
import { openSimulatorPool } from "@/lib/payments/simulator/db";
import {
  DEFAULT_DISPATCHER_OPTIONS,
  WebhookDispatcher,
  type DispatcherOptions,
} from "@/lib/payments/simulator/dispatcher";
import {
  adminKeyRequired,
  apiError,
  invalidRequest,
  jsonResponse,
  misdirectedRequest,
  unrecognizedUrl,
  type ApiResponse,
} from "@/lib/payments/simulator/errors";
import { faultSettingsSchema, Faults, type FailureMode } from "@/lib/payments/simulator/faults";
import { addressedToUs, hostNames, type HostNames } from "@/lib/payments/simulator/host-check";
import { readPostForm, runMoneyPost } from "@/lib/payments/simulator/idempotent-post";
import { newId } from "@/lib/payments/simulator/ids";
import { createPaymentIntent, readLedger } from "@/lib/payments/simulator/ledger";
import { describeError, logEvent } from "@/lib/payments/simulator/log";
import { parseCreatePaymentIntent } from "@/lib/payments/simulator/params";
import { retrievePaymentIntent } from "@/lib/payments/simulator/retrieve-payment-intent";
import { createRefund, listRefunds, retrieveRefund } from "@/lib/payments/simulator/refunds";
import { ensureSimulatorSchema } from "@/lib/payments/simulator/schema";
import { searchPaymentIntents } from "@/lib/payments/simulator/search";
import { webhookAdmin } from "@/lib/payments/simulator/webhook-admin";
import {
  configureWebhookEndpoint,
  createWebhookEndpoint,
  isWebhookSecret,
  WEBHOOK_SECRET_RULE,
} from "@/lib/payments/simulator/webhook-endpoints";

/**
 * A local stand-in for the part of Stripe's API that OncePay uses, spoken in
 * Stripe's wire format so the official `stripe` SDK talks to it unchanged
 * (`new Stripe(key, { host, port, protocol: "http" })`). See README.md in
 * this folder for the endpoints.
 *
 *   POST /v1/payment_intents        create; with confirm=true, charge at once
 *   GET  /v1/payment_intents/:id    read back; expand[]=latest_charge, payment_method (retrieve-payment-intent.ts)
 *   GET  /v1/payment_intents/search search by metadata, status and currency, page by page (search.ts)
 *   GET  /v1/charges                list charges, those of one payment intent with ?payment_intent= (charges.ts)
 *   GET  /v1/charges/:id            read one charge back (charges.ts)
 *   POST /v1/refunds                refund all or part of a charge (refunds.ts)
 *   GET  /v1/refunds                list refunds, those of one payment intent with ?payment_intent= (refunds.ts)
 *   GET  /v1/refunds/:id            read one refund back (refunds.ts)
 *   POST /v1/webhook_endpoints      where this account's events are posted (webhook-endpoints.ts)
 *   GET|POST /authenticate/:id      the bank's 3-D Secure challenge, for the shopper (challenge-page.ts)
 *   GET  /_simulator/health         200 once the schema is in place
 *   GET  /_simulator/ledger         payment intents, charges and refunds (?idempotency_key=, ?idempotency_key_prefix=, ?payment_intent=)
 *   GET|PUT /_simulator/faults      latency and one-shot failure injection (faults.ts)
 *   POST /_simulator/api_keys       a new account: its secret and restricted key (auth.ts)
 *   /_simulator/events, /_simulator/webhook_endpoints   see and stir webhook deliveries (webhook-admin.ts)
 *
 * Every response carries a fresh `Request-Id`. The admin endpoints take the
 * admin key, not an API key (admin-key.ts): they reach every account.
 */
export interface PaymentSimulatorOptions {
  databaseUrl: string;
  /** 0 (the default) picks a free port; the chosen one is in the result. */
  port?: number;
  host?: string;
  /** Connections in the simulator's pool (default 10; always 1 on the embedded PGlite, see db.ts). */
  poolMax?: number;
  /**
   * The API keys to accept (`sk_test_…`, `rk_test_…`), each its own account,
   * besides those already known to the database and those registered later
   * through POST /_simulator/api_keys. A malformed or live key is an error.
   */
  apiKeys?: readonly string[];
  /** What every call under /_simulator/ must present as `Authorization: Bearer …` (admin-key.ts). */
  adminKey: string;
  /** Names it answers to besides the loopback names and its own address (host-check.ts). */
  allowedHosts?: readonly string[];
  /** Its address as the shopper's browser reaches it, for the challenge page's links; default its own URL. */
  publicUrl?: string;
  /** An endpoint for the configured keys' accounts: every event is posted there, signed with `secret`. */
  webhook?: { url: string; secret: string };
  /** The retry schedule, attempt timeout and polling of webhook deliveries (dispatcher.ts). */
  webhookDelivery?: Partial<DispatcherOptions>;
}

export interface PaymentSimulator {
  url: string;
  port: number;
  /** The admin key it was started with, for its admin API. */
  adminKey: string;
  close(): Promise<void>;
}

// Stripe's own request bodies are small; anything bigger is a mistake.
const MAX_BODY_BYTES = 64 * 1024;

class BodyTooLargeError extends Error {}

export async function startPaymentSimulator({
  databaseUrl,
  port = 0,
  host = "127.0.0.1",
  poolMax = 10,
  apiKeys = [],
  adminKey,
  allowedHosts = [],
  publicUrl,
  webhook,
  webhookDelivery = {},
}: PaymentSimulatorOptions): Promise<PaymentSimulator> {
  if (!isAdminKey(adminKey)) throw new Error(`The admin key must be ${ADMIN_KEY_RULE}.`);
  if (webhook) {
    if (!URL.canParse(webhook.url) || !/^https?:/.test(webhook.url))
      throw new Error(`The webhook URL must be an absolute http or https URL, not ${webhook.url}.`);
    if (!isWebhookSecret(webhook.secret))
      throw new Error(`The webhook secret must be ${WEBHOOK_SECRET_RULE}.`);
  }
  const delivery = { ...DEFAULT_DISPATCHER_OPTIONS, ...webhookDelivery };
  const pool = openSimulatorPool(databaseUrl, poolMax);
  try {
    await ensureSimulatorSchema(pool);
    await configureApiKeys(pool, apiKeys);
    if (webhook) await configureWebhookEndpoint(pool, apiKeys, webhook, delivery.retryScheduleMs);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const faults = new Faults();
  const names = hostNames(host, allowedHosts);
  const dispatcher = new WebhookDispatcher(pool, delivery);
  const simulator: Simulator = {
    pool,
    faults,
    adminKey,
    names,
    dispatcher,
    retryScheduleMs: delivery.retryScheduleMs,
    publicUrl: publicUrl ?? "",
  };
  // A flood of connections is shed, not fatal (lib/http/server-limits.ts).
  const server = http.createServer(SERVER_TIMEOUTS, (request, response) => {
    void handle(simulator, request, response);
  });
  boundServer(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${urlHost}:${address.port}`;
  simulator.publicUrl ||= url;
  dispatcher.start();
  return {
    url,
    port: address.port,
    adminKey,
    async close() {
      // Stops accepting connections, closes idle keep-alive ones, and waits
      // for requests in progress, so none is cut off between charge and answer.
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
      await dispatcher.close();
      await pool.end();
    },
  };
}

interface Simulator {
  pool: pg.Pool;
  faults: Faults;
  adminKey: string;
  names: HostNames;
  dispatcher: WebhookDispatcher;
  /** Given to the webhook endpoints it makes. */
  retryScheduleMs: readonly number[];
  /** Where the shopper's browser reaches the challenge page. */
  publicUrl: string;
}

async function handle(
  simulator: Simulator,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const { pool, faults, adminKey, names, dispatcher } = simulator;
  const requestId = newId("req");
  const method = request.method ?? "GET";
  const path = pathOf(request);
  // Before anything else, /v1/ included: a page that rebound its name to
  // this machine must learn nothing, not even which keys exist.
  if (!addressedToUs(request.headers.host, names)) {
    logEvent("warn", "payment_simulator.misdirected", { requestId, method, path });
    send(response, requestId, misdirectedRequest(request.headers.host));
    return;
  }
  try {
    const body = await readBody(request);
    if (path.startsWith("/_simulator/")) {
      if (!presentsAdminKey(adminKey, request.headers.authorization)) {
        logEvent("warn", "payment_simulator.admin_refused", { requestId, method, path });
        send(response, requestId, adminKeyRequired());
        return;
      }
      send(response, requestId, await admin(simulator, method, request, body));
      return;
    }
    // The shopper's page, reached by the browser: no API key, the intent's client secret instead.
    if (path.startsWith(CHALLENGE_PATH)) {
      send(
        response,
        requestId,
        await challengePage(pool, method, path, urlOf(request).searchParams, body),
      );
      return;
    }
    if (!path.startsWith("/v1/")) {
      send(response, requestId, unrecognizedUrl(method, path));
      return;
    }
    const auth = await authenticate(pool, request.headers.authorization);
    if (!auth.ok) {
      send(response, requestId, auth.response);
      return;
    }
    const failure = faults.takeFailure();
    if (failure === "http_500") {
      send(
        response,
        requestId,
        apiError(
          "An unknown error occurred (injected by the payment simulator: failNext=http_500). Nothing was charged.",
        ),
      );
      return;
    }
    const answer = await api(simulator, {
      method,
      path,
      request,
      body,
      account: auth.account,
      requestId,
      failure,
    });
    // A POST may have committed events: deliver them now rather than at the next poll.
    if (method === "POST") dispatcher.poke();
    if (failure === "drop_connection") {
      // The work is done and committed; only the answer is lost on the way.
      response.destroy();
      return;
    }
    send(response, requestId, answer, stripeVersionOf(request));
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      send(
        response,
        requestId,
        invalidRequest(`Request bodies are limited to ${MAX_BODY_BYTES} bytes.`, {}, 413),
      );
      return;
    }
    logEvent("error", "payment_simulator.request_failed", {
      requestId,
      method,
      path,
      ...describeError(error),
    });
    if (response.headersSent) response.destroy();
    else
      send(
        response,
        requestId,
        apiError(
          "An unknown error occurred in the payment simulator. Retry with the same Idempotency-Key.",
        ),
      );
  }
}

interface ApiRequest {
  method: string;
  path: string;
  request: http.IncomingMessage;
  body: string;
  account: string;
  requestId: string;
  /** The one-shot failure this request took, if any. */
  failure: FailureMode | null;
}

async function api(simulator: Simulator, call: ApiRequest): Promise<ApiResponse> {
  const { pool, faults } = simulator;
  if (call.path === "/v1/payment_intents" && call.method === "POST")
    return createIntent(simulator, call);
  if (call.path === "/v1/webhook_endpoints" && call.method === "POST") {
    const read = readPostForm(call);
    return read.ok
      ? createWebhookEndpoint(pool, call.account, read.form, simulator.retryScheduleMs)
      : read.response;
  }
  // Before the retrieve route, which would take "search" for an id.
  if (call.path === "/v1/payment_intents/search" && call.method === "GET")
    return searchPaymentIntents(pool, call.account, queryOf(call.request));
  if (call.path === "/v1/charges" && call.method === "GET")
    return listCharges(pool, call.account, queryOf(call.request));
  if (call.path === "/v1/refunds" && call.method === "POST")
    return createRefund(pool, faults, call);
  if (call.path === "/v1/refunds" && call.method === "GET")
    return listRefunds(pool, call.account, queryOf(call.request));
  if (call.method === "GET") {
    const intent = pathId(/^\/v1\/payment_intents\/([^/]+)$/, call.path);
    if (intent !== undefined)
      return retrievePaymentIntent(pool, call.account, intent, queryOf(call.request));
    const charge = pathId(/^\/v1\/charges\/([^/]+)$/, call.path);
    if (charge !== undefined)
      return retrieveCharge(pool, call.account, charge, queryOf(call.request));
    const refund = pathId(/^\/v1\/refunds\/([^/]+)$/, call.path);
    if (refund !== undefined)
      return retrieveRefund(pool, call.account, refund, queryOf(call.request));
  }
  return unrecognizedUrl(call.method, call.path);
}

/**
 * The object id in a path like /v1/charges/:id, decoded; undefined when the
 * path is not of that shape, or its escapes are not valid UTF-8 (`%E0%A4`),
 * which is then an unrecognized URL rather than a thrown URIError and a 500.
 */
function pathId(shape: RegExp, path: string): string | undefined {
  const match = shape.exec(path);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

/**
 * POST /v1/payment_intents: validate, then charge once per Idempotency-Key
 * (idempotent-post.ts), the charge and its stored answer in one transaction.
 */
async function createIntent(simulator: Simulator, call: ApiRequest): Promise<ApiResponse> {
  const read = readPostForm(call);
  if (!read.ok) return read.response;
  const parsed = parseCreatePaymentIntent(read.form);
  if (!parsed.ok) return parsed.response;
  const params = parsed.params;
  return runMoneyPost(simulator.pool, simulator.faults, call, read.form, (tx, key) =>
    createPaymentIntent(tx, call.account, params, key, {
      requestId: call.requestId,
      idempotencyKey: key,
      challengeUrl: (intent, clientSecret) =>
        challengeUrl(simulator.publicUrl, intent, clientSecret),
    }),
  );
}

async function admin(
  { pool, faults, dispatcher }: Simulator,
  method: string,
  request: http.IncomingMessage,
  body: string,
): Promise<ApiResponse> {
  const url = urlOf(request);
  const webhooks = await webhookAdmin(pool, dispatcher, method, url, body);
  if (webhooks) return webhooks;
  const route = `${method} ${url.pathname}`;
  switch (route) {
    case "GET /_simulator/health":
      return jsonResponse(200, { ok: true });
    case "GET /_simulator/ledger":
      return jsonResponse(
        200,
        await readLedger(pool, {
          idempotencyKey: url.searchParams.get("idempotency_key") ?? undefined,
          idempotencyKeyPrefix: url.searchParams.get("idempotency_key_prefix") ?? undefined,
          paymentIntent: url.searchParams.get("payment_intent") ?? undefined,
        }),
      );
    case "GET /_simulator/faults":
      return jsonResponse(200, faults.current());
    case "POST /_simulator/api_keys": {
      const registered = await registerAccount(pool);
      return jsonResponse(201, {
        secret_key: registered.secretKey,
        restricted_key: registered.restrictedKey,
      });
    }
    case "PUT /_simulator/faults": {
      let json: unknown;
      try {
        json = JSON.parse(body || "{}");
      } catch {
        return invalidRequest(
          'The body must be JSON, such as {"latencyMs": 500, "failNext": "http_500"}.',
        );
      }
      const parsed = faultSettingsSchema.safeParse(json);
      if (!parsed.success) {
        return invalidRequest(
          `Invalid fault settings: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; ")}`,
        );
      }
      return jsonResponse(200, faults.replace(parsed.data));
    }
    default:
      return invalidRequest(
        `Unknown simulator endpoint (${route}). Available: GET /_simulator/health, GET /_simulator/ledger, GET and PUT /_simulator/faults, POST /_simulator/api_keys, GET /_simulator/events, POST /_simulator/events/:id/redeliver, GET /_simulator/webhook_endpoints, POST /_simulator/webhook_endpoints/:id/hold and /release.`,
        {},
        404,
      );
  }
}

function urlOf(request: http.IncomingMessage): URL {
  try {
    return new URL(request.url ?? "/", "http://simulator");
  } catch {
    return new URL("/", "http://simulator");
  }
}

function pathOf(request: http.IncomingMessage): string {
  try {
    return new URL(request.url ?? "/", "http://simulator").pathname;
  } catch {
    return "/";
  }
}

/** The raw query string (`?a=b`), still encoded: the endpoint reads it as a form (query-params.ts). */
function queryOf(request: http.IncomingMessage): string {
  return new URL(request.url ?? "/", "http://simulator").search;
}

function stripeVersionOf(request: http.IncomingMessage): Record<string, string> {
  const version = request.headers["stripe-version"];
  return typeof version === "string" ? { "Stripe-Version": version } : {};
}

function send(
  response: http.ServerResponse,
  requestId: string,
  answer: ApiResponse,
  extraHeaders: Record<string, string> = {},
): void {
  response.writeHead(answer.status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(answer.body),
    "Cache-Control": "no-cache, no-store",
    "Request-Id": requestId,
    ...extraHeaders,
    ...answer.headers,
  });
  response.end(answer.body);
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        request.removeAllListeners("data");
        request.resume();
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}
