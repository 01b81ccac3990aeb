/**
 * The demo scenarios of the checkout page, and the client for the server's
 * per-account fault settings (GET/PUT /api/demo/settings). A scenario is
 * data: what the server should do to this account's payments, and how the
 * browser should send them. The server accepts fault settings only when it
 * runs with DEMO_FAULTS=on; they affect only the account that set them.
 */
import type { DemoSettingsView } from "@/lib/api/demo";
import type { DemoSettings as AccountFaults } from "@/lib/demo/settings";
import { THREE_D_SECURE_CARD, toProblem, type PaymentMethod } from "./api-types";
import { ORDERS_URL } from "./checkout";
import type { FetchLike } from "./attempt";

export const DEMO_SETTINGS_URL = "/api/demo/settings";
/** The lab's deliberately broken endpoint: no Idempotency-Key, a new order on every call. Never the real one. */
export const UNSAFE_ORDERS_URL = "/api/lab/unsafe-orders";

// The server's own types, by type-only imports: none of the server's code
// reaches the browser, and a fault added there is a fault here.
/** What the server does to this account's payments (lib/demo/settings.ts). */
export type ServerFaults = AccountFaults;
/** What GET/PUT /api/demo/settings answer: the faults, and whether the server allows any (lib/api/demo.ts). */
export type DemoSettings = DemoSettingsView;

export const NO_FAULTS: Readonly<ServerFaults> = Object.freeze({
  networkDelayMs: 0,
  loseResponse: false,
});

export type DemoScenarioId =
  | "none"
  | "double-click"
  | "slow-network"
  | "lost-response"
  | "reload"
  | "no-key"
  | "three-d-secure"
  | "duplicate-webhooks";

/** How the browser sends a payment; everything but the normal checkout is a demo. */
export interface CheckoutStrategy {
  /** The Pay button's own guard: disabled and ignoring clicks while a payment runs. */
  guardSubmit: boolean;
  /** False only for the broken strategy, which sends no Idempotency-Key. */
  sendIdempotencyKey: boolean;
  url: string;
}

export interface DemoScenario {
  id: DemoScenarioId;
  label: string;
  /** One sentence: what happens when you press Pay. */
  summary: string;
  /** What to look for in the attempts timeline. */
  expect: string;
  /** Server-side faults need DEMO_FAULTS=on; client-only scenarios always work. */
  needsServerFaults: boolean;
  /** Labelled as the broken behaviour. */
  broken: boolean;
  faults: (slowDelayMs: number) => ServerFaults;
  strategy: CheckoutStrategy;
  /** The card it picks when armed (the shopper can still change it). */
  paymentMethod?: PaymentMethod;
  /** Once the order is settled, have the provider deliver its events again (the simulator's admin API). */
  redeliversWebhooks?: boolean;
}

/** The real checkout: guarded button, one key per intent, the real endpoint. */
export const DEFAULT_STRATEGY: Readonly<CheckoutStrategy> = Object.freeze({
  guardSubmit: true,
  sendIdempotencyKey: true,
  url: ORDERS_URL,
});
const SAFE = DEFAULT_STRATEGY;

/** Delays offered for the slow-network scenario; the client's attempt timeout (6 s) fires on the longer ones. */
export const SLOW_DELAY_OPTIONS_MS = [3_000, 8_000, 12_000] as const;
export const DEFAULT_SLOW_DELAY_MS = 8_000;
/**
 * How long the server holds the first request of the double-click demo: a
 * payment answered in 95 ms is over before a person's second click (up to
 * 500 ms later) leaves the browser, and then nothing overlaps. Held this
 * long, the second request always finds the key in flight.
 */
export const DOUBLE_CLICK_HOLD_MS = 1_500;
/** Long enough to reload the page while the first attempt is still held, short enough not to time out. */
export const RELOAD_DELAY_MS = 5_000;

export const DEMO_SCENARIOS: readonly DemoScenario[] = [
  {
    id: "none",
    label: "Normal checkout",
    summary: "No faults: one attempt, one key, one order.",
    expect: "One attempt, answered 201.",
    needsServerFaults: false,
    broken: false,
    faults: () => NO_FAULTS,
    strategy: SAFE,
  },
  {
    id: "double-click",
    label: "Double-click",
    summary: `Removes the Pay button's guard and holds the payment ${DOUBLE_CLICK_HOLD_MS / 1000} s at the server, so a double-click sends two overlapping requests of the same intent.`,
    expect:
      "Two requests with one key: the first is answered 201; the second finds the key in flight (409), and its retry gets the stored order, replayed. One order.",
    // The hold needs DEMO_FAULTS=on; without it the scenario still runs,
    // and its two requests overlap only when the payment is slow.
    needsServerFaults: false,
    broken: false,
    faults: () => ({ networkDelayMs: DOUBLE_CLICK_HOLD_MS, loseResponse: false }),
    strategy: { ...SAFE, guardSubmit: false },
  },
  {
    id: "slow-network",
    label: "Slow network",
    summary:
      "The server holds the payment; the client's 6 s attempt timeout fires while the first attempt still runs.",
    expect: "A timeout, 409 while the first attempt finishes, then the replayed 201. One order.",
    needsServerFaults: true,
    broken: false,
    faults: (slowDelayMs) => ({ networkDelayMs: slowDelayMs, loseResponse: false }),
    strategy: SAFE,
  },
  {
    id: "lost-response",
    label: "Lost response",
    summary:
      "The server charges and saves the order, then drops the connection without answering (once).",
    expect:
      "A network error, then a retry with the same key gets the stored 201, replayed. One order.",
    needsServerFaults: true,
    broken: false,
    faults: () => ({ networkDelayMs: 0, loseResponse: true }),
    strategy: SAFE,
  },
  {
    id: "reload",
    label: "Reload mid-payment",
    summary: `The server holds the payment for ${RELOAD_DELAY_MS / 1000} s: reload the page while it runs.`,
    expect:
      "The reload resumes the same key from sessionStorage: 409 until the first attempt ends, then the replay. One order.",
    needsServerFaults: true,
    broken: false,
    faults: () => ({ networkDelayMs: RELOAD_DELAY_MS, loseResponse: false }),
    strategy: SAFE,
  },
  {
    id: "no-key",
    label: "No key (broken)",
    summary:
      "The lost-response fault again, but the payment goes to the lab's unsafe endpoint without an Idempotency-Key.",
    expect: "The retry cannot be told from a new purchase: two orders, two charges.",
    needsServerFaults: true,
    broken: true,
    faults: () => ({ networkDelayMs: 0, loseResponse: true }),
    strategy: { guardSubmit: true, sendIdempotencyKey: false, url: UNSAFE_ORDERS_URL },
  },
  {
    id: "three-d-secure",
    label: "3-D Secure",
    summary:
      "Pays with the test card that asks for 3-D Secure: the bank's page, then back to the shop, where the provider's event settles the order.",
    expect:
      "202 with the bank's page; after Complete, one delivery of payment_intent.succeeded makes the order paid and ships it once.",
    needsServerFaults: false,
    broken: false,
    faults: () => NO_FAULTS,
    strategy: SAFE,
    paymentMethod: THREE_D_SECURE_CARD,
  },
  {
    id: "duplicate-webhooks",
    label: "Duplicate webhooks",
    summary:
      "3-D Secure again; once the order is paid, the provider delivers its event 13 more times: ten copies at once, three late.",
    expect:
      "Under the confirmation, 14 deliveries of one event: one settled the order, 13 changed nothing. Shipped once.",
    needsServerFaults: true,
    broken: false,
    faults: () => NO_FAULTS,
    strategy: SAFE,
    paymentMethod: THREE_D_SECURE_CARD,
    redeliversWebhooks: true,
  },
];

export function demoScenario(id: DemoScenarioId): DemoScenario {
  return DEMO_SCENARIOS.find((scenario) => scenario.id === id) ?? DEMO_SCENARIOS[0]!;
}

export function isDemoScenarioId(value: unknown): value is DemoScenarioId {
  return DEMO_SCENARIOS.some((scenario) => scenario.id === value);
}

export type DemoSettingsResult =
  { ok: true; settings: DemoSettings } | { ok: false; status: number | null; reason: string };

export function getDemoSettings(fetch: FetchLike = defaultFetch): Promise<DemoSettingsResult> {
  return settingsRequest(fetch, { method: "GET" });
}

/** Sets this account's faults; 403 when the server runs without demo faults. */
export function putDemoSettings(
  faults: ServerFaults,
  fetch: FetchLike = defaultFetch,
): Promise<DemoSettingsResult> {
  return settingsRequest(fetch, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      networkDelayMs: faults.networkDelayMs,
      loseResponse: faults.loseResponse,
    }),
  });
}

async function settingsRequest(fetch: FetchLike, init: RequestInit): Promise<DemoSettingsResult> {
  let response: Response;
  try {
    response = await fetch(DEMO_SETTINGS_URL, {
      ...init,
      credentials: "same-origin",
      cache: "no-store",
    });
  } catch {
    return { ok: false, status: null, reason: "Could not reach the server." };
  }
  const json: unknown = await response.json().catch(() => null);
  if (response.ok && isDemoSettings(json)) return { ok: true, settings: json };
  return {
    ok: false,
    status: response.status,
    reason: toProblem(json, response.status, response.statusText).detail,
  };
}

function isDemoSettings(value: unknown): value is DemoSettings {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.faultsEnabled === "boolean" &&
    typeof v.networkDelayMs === "number" &&
    typeof v.loseResponse === "boolean"
  );
}

function defaultFetch(input: string, init: RequestInit): Promise<Response> {
  return globalThis.fetch(input, init);
}
