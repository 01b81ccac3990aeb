import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { hashToken } from "@/lib/auth/accounts";
import { findProduct } from "@/lib/orders/catalog";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import { baseUrl, browserSession } from "@/lib/testing/api-client";
import { LAB_PROVIDER_KEY_PREFIX } from "@/lib/lab/charge-tags";
import { accountIdByTokenHash, providerIntents, tableCounts } from "@/lib/testing/database";
import { appSimulator, ledgerFor } from "@/lib/testing/payment-simulator";
import type { WireResponse } from "@/lib/testing/raw-http";

/**
 * What the bad-input corpus and the property tests check after every
 * request: everything it could have left behind (our three tables for the
 * account, its charges in the payment simulator's ledger, and the lab's
 * keyless charges), and the shape of an error answer.
 */
export interface Footprint {
  orders: number;
  payments: number;
  idempotency_keys: number;
  /** Payment intents at the simulator under this account's provider keys. */
  charges: number;
  /** The lab's charges (any account, any strategy): bad input must not reach them either. */
  labCharges: number;
}

export async function footprintOf(accountId: string): Promise<Footprint> {
  const [rows, charges, lab] = await Promise.all([
    tableCounts(accountId),
    providerIntents({ keyPrefix: paymentProviderKeyPrefix(accountId) }),
    providerIntents({ keyPrefix: LAB_PROVIDER_KEY_PREFIX }),
  ]);
  return { ...rows, charges: charges.total, labCharges: lab.total };
}

/** What the payment simulator charged for one of this account's payment intents (undefined: no such charge). */
export async function chargedAmount(
  accountId: string,
  paymentIntentId: string,
): Promise<number | undefined> {
  const ledger = await ledgerFor(appSimulator(), {
    idempotencyKeyPrefix: paymentProviderKeyPrefix(accountId),
  });
  return ledger.payment_intents.find((intent) => intent.id === paymentIntentId)?.amount;
}

/** The footprint one paid checkout adds: an order, its payment, the key, one charge. */
export function plusOnePaid(before: Footprint): Footprint {
  return {
    ...before,
    orders: before.orders + 1,
    payments: before.payments + 1,
    idempotency_keys: before.idempotency_keys + 1,
    charges: before.charges + 1,
  };
}

/** What the server's own catalog charges for these lines; a client's idea of the price never counts. */
export function serverPrice(items: { sku: string; quantity: number }[]): number {
  return items.reduce((sum, { sku, quantity }) => {
    const product = findProduct(sku);
    if (!product) throw new Error(`No product ${sku} in the catalog`);
    return sum + product.unitAmount * quantity;
  }, 0);
}

/** A browser session whose account exists (an account is made on the first API call that presents the cookie). */
export async function activeBrowserSession(): Promise<{
  cookie: string;
  token: string;
  accountId: string;
}> {
  const session = await browserSession();
  // A safe GET authenticates (and so creates the account) without touching any key.
  const probe = await fetch(`${baseUrl()}/api/orders/${randomUUID()}`, {
    headers: { Cookie: session.cookie },
  });
  if (probe.status !== 404)
    throw new Error(`Activating a browser session answered ${probe.status}`);
  const accountId = await accountIdByTokenHash(hashToken(session.token));
  if (!accountId) throw new Error("The browser session has no account after its first API call");
  return { ...session, accountId };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An error answered by OncePay itself: RFC 9457 problem+json whose `status` is the HTTP status, with a request id. */
export function expectProblem(
  response: WireResponse,
  status: number,
  type?: string,
  options: { bodyless?: boolean } = {},
): void {
  expect(response.status, `status, answer: ${response.body.slice(0, 300)}`).toBe(status);
  expect(response.headers["content-type"]).toBe("application/problem+json");
  expect(response.headers["x-request-id"]).toMatch(UUID);
  // HEAD carries the problem's headers without its body.
  if (options.bodyless) return;
  const problem = JSON.parse(response.body) as Record<string, unknown>;
  expect(problem).toMatchObject({
    type: type ?? expect.stringMatching(/^\/problems\/[a-z-]+$/),
    status,
    title: expect.stringMatching(/\S/),
    detail: expect.stringMatching(/\S/),
  });
}

export function expectNoServerError(response: WireResponse, request: string): void {
  expect(response.status, `a 5xx for ${request}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
}
