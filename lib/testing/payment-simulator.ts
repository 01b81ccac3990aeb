import Stripe from "stripe";
import { afterAll, afterEach, beforeAll, inject } from "vitest";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { LOCAL_SIMULATOR_SECRET_KEY } from "@/lib/payments/simulator/process";
import {
  startPaymentSimulator,
  type PaymentSimulator,
  type PaymentSimulatorOptions,
} from "@/lib/payments/simulator/server";
import type { FaultSettings } from "@/lib/payments/simulator/faults";

/**
 * Test helpers for the payment simulator (used by tests only): a simulator on
 * the database under test, the real Stripe SDK pointed at it, and the admin
 * API. Each test registers its own account (newSecretKey), so tests never
 * see each other's objects or keys.
 */

/** What an admin call needs: where the simulator is and its admin key. */
export type SimulatorAdmin = Pick<PaymentSimulator, "url" | "adminKey">;

/** The simulator the shared test app's launcher started (global-setup.ts), with the key it made. */
export function appSimulator(): SimulatorAdmin {
  return { url: inject("paymentSimulatorUrl"), adminKey: inject("paymentSimulatorAdminKey") };
}

/** A call to the admin API (/_simulator/…), with the admin key. */
export function adminFetch(
  simulator: SimulatorAdmin,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${simulator.adminKey}`);
  return fetch(`${simulator.url}${path}`, { ...init, headers });
}

/** A simulator of the test's own on the database under test, with an admin key of its own. */
export async function startTestSimulator(
  options: Partial<PaymentSimulatorOptions> = {},
): Promise<PaymentSimulator> {
  return startPaymentSimulator({
    databaseUrl: inject("databaseUrl"),
    // On the embedded database, one connection: see spawnPaymentSimulator.
    poolMax: inject("realPostgres") ? 10 : 1,
    // An app pointed at this simulator (PAYMENT_SIMULATOR_URL) is given this key by its launcher.
    apiKeys: [LOCAL_SIMULATOR_SECRET_KEY],
    adminKey: newAdminKey(),
    ...options,
  });
}

/**
 * A simulator for one test file (or describe block): started before its
 * tests, its faults cleared after each, closed at the end. The handle reads
 * through to the running simulator, so it can be passed around like one.
 */
export function withTestSimulator(): PaymentSimulator {
  let running: PaymentSimulator | undefined;
  beforeAll(async () => {
    running = await startTestSimulator();
  });
  afterEach(async () => {
    if (running) await setFaults(running, {});
  });
  afterAll(async () => {
    await running?.close();
  });
  const started = () => {
    if (!running) throw new Error("The test simulator is used before its beforeAll hook ran");
    return running;
  };
  return {
    get url() {
      return started().url;
    },
    get port() {
      return started().port;
    },
    get adminKey() {
      return started().adminKey;
    },
    close: () => started().close(),
  };
}

export interface RegisteredKeys {
  secret_key: string;
  restricted_key: string;
}

/** A new account at the simulator (POST /_simulator/api_keys): its secret and restricted key. */
export async function newApiKeys(simulator: SimulatorAdmin): Promise<RegisteredKeys> {
  const response = await adminFetch(simulator, "/_simulator/api_keys", { method: "POST" });
  if (response.status !== 201)
    throw new Error(`POST /_simulator/api_keys answered ${response.status}`);
  return (await response.json()) as RegisteredKeys;
}

/** The secret key of a new account, for a test that wants one to itself. */
export async function newSecretKey(simulator: SimulatorAdmin): Promise<string> {
  return (await newApiKeys(simulator)).secret_key;
}

export function stripeFor(
  simulator: PaymentSimulator,
  secretKey: string,
  config: {
    maxNetworkRetries?: number;
    timeout?: number;
    /** Sends the SDK's requests through this fetch, e.g. one that keeps the raw answers. */
    fetch?: typeof fetch;
  } = {},
): Stripe {
  return new Stripe(secretKey, {
    host: "127.0.0.1",
    port: simulator.port,
    protocol: "http",
    maxNetworkRetries: config.maxNetworkRetries ?? 2,
    ...(config.timeout !== undefined && { timeout: config.timeout }),
    ...(config.fetch && { httpClient: Stripe.createFetchHttpClient(config.fetch) }),
  });
}

/** POST /v1/payment_intents with a raw form body, for what the SDK would not send. */
export async function postIntent(
  simulator: PaymentSimulator,
  options: { secretKey?: string; key?: string; body: string; headers?: Record<string, string> },
): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    ...options.headers,
  };
  if (options.secretKey) headers.Authorization = `Bearer ${options.secretKey}`;
  if (options.key) headers["Idempotency-Key"] = options.key;
  const response = await fetch(`${simulator.url}/v1/payment_intents`, {
    method: "POST",
    headers,
    body: options.body,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

export interface LedgerView {
  payment_intents: {
    id: string;
    status: string;
    account: string;
    idempotency_key: string | null;
    amount: number;
    metadata: Record<string, string>;
  }[];
  charges: {
    id: string;
    status: string;
    payment_intent: string;
    failure_code: string | null;
    outcome: { reason: string | null };
  }[];
}

export async function ledgerFor(
  simulator: SimulatorAdmin,
  filter: { idempotencyKey?: string; idempotencyKeyPrefix?: string; paymentIntent?: string },
): Promise<LedgerView> {
  const query = new URLSearchParams();
  if (filter.idempotencyKey !== undefined) query.set("idempotency_key", filter.idempotencyKey);
  if (filter.idempotencyKeyPrefix !== undefined)
    query.set("idempotency_key_prefix", filter.idempotencyKeyPrefix);
  if (filter.paymentIntent !== undefined) query.set("payment_intent", filter.paymentIntent);
  const response = await adminFetch(simulator, `/_simulator/ledger?${query}`);
  if (response.status !== 200)
    throw new Error(`GET /_simulator/ledger answered ${response.status}`);
  return (await response.json()) as LedgerView;
}

export async function setFaults(
  simulator: SimulatorAdmin,
  settings: Partial<FaultSettings>,
): Promise<Response> {
  return adminFetch(simulator, "/_simulator/faults", {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(settings),
  });
}

/** Events of one PaymentIntent at the simulator, newest first, each with its deliveries. */
export interface SimulatorEventView {
  id: string;
  type: string;
  account: string;
  payment_intent: string | null;
  created: number;
  deliveries: {
    id: number;
    endpoint: string;
    state: "pending" | "delivered" | "failed";
    attempts: number;
    last_status: number | null;
    last_error: string | null;
  }[];
}

export async function eventsOf(
  simulator: SimulatorAdmin,
  paymentIntent: string,
): Promise<SimulatorEventView[]> {
  const response = await adminFetch(
    simulator,
    `/_simulator/events?payment_intent=${encodeURIComponent(paymentIntent)}`,
  );
  if (response.status !== 200)
    throw new Error(`GET /_simulator/events answered ${response.status}`);
  return ((await response.json()) as { data: SimulatorEventView[] }).data;
}
