import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { baseUrl, createAccount, postOrder } from "@/lib/testing/api-client";
import {
  activeBrowserSession,
  chargedAmount,
  expectNoServerError,
  expectProblem,
  footprintOf,
  plusOnePaid,
  type Footprint,
} from "@/lib/testing/bad-input";
import {
  CORPUS,
  validCart,
  type CorpusClass,
  type CorpusContext,
} from "@/lib/testing/bad-input-corpus";
import { closeTestDb } from "@/lib/testing/database";
import { sendWire, type WireRequest, type WireResponse } from "@/lib/testing/raw-http";

/**
 * Every class of the bad-input corpus (lib/testing/bad-input-corpus.ts),
 * sent over a socket to the built app, against the same invariants: the
 * status and problem+json DESIGN.md promises, never a 5xx, nothing stored
 * or charged for the account (our rows, the simulator's ledger, the lab's
 * keyless charges), and the key still usable afterwards.
 */
afterAll(closeTestDb);

async function contextFor(entry: CorpusClass): Promise<CorpusContext> {
  const key = randomUUID();
  const context: CorpusContext =
    entry.signIn === "browser"
      ? await activeBrowserSession().then((session) => ({
          accountId: session.accountId,
          cookie: session.cookie,
          sessionToken: session.token,
          key,
        }))
      : await createAccount().then((account) => ({
          accountId: account.id,
          token: account.token,
          key,
        }));
  if (entry.neighbourPaysFirst) {
    const neighbour = await createAccount();
    const paid = await postOrder({ token: neighbour.token, key, rawBody: validCart() });
    expect(paid.response.status).toBe(201);
    context.neighbour = {
      accountId: neighbour.id,
      token: neighbour.token,
      orderId: JSON.parse(paid.text).id,
      orderText: paid.text,
    };
  }
  return context;
}

function describeRequest(request: WireRequest): string {
  return `${request.method} ${request.path} ${JSON.stringify(request.headers.map(([name, value]) => `${name}: ${value.toString("latin1")}`))}`;
}

/** The same key, now with a valid body and valid credentials: must be a first-time 201, so nothing of the bad request stuck to it. */
async function retryWithValidRequest(context: CorpusContext) {
  const credentials = context.token
    ? { token: context.token }
    : { headers: { Cookie: context.cookie!, "Sec-Fetch-Site": "same-origin" } };
  const retry = await postOrder({ key: context.key, rawBody: validCart(), ...credentials });
  expect(retry.response.status, retry.text).toBe(201);
  expect(retry.response.headers.get("idempotent-replayed")).toBeNull();
}

async function expectPaid(
  answer: WireResponse,
  accountId: string,
  amount: number,
  paymentMethod = "pm_card_visa",
) {
  expect(answer.status, answer.body.slice(0, 300)).toBe(201);
  expect(answer.headers["content-type"]).toBe("application/json");
  const order = JSON.parse(answer.body);
  expect(order).toMatchObject({
    object: "order",
    status: "paid",
    amount,
    payment: { status: "succeeded", paymentMethod },
  });
  expect(await chargedAmount(accountId, order.payment.id)).toBe(amount);
  // A relative Location: no forged Host or forwarding header can point it elsewhere.
  expect(answer.headers.location).toBe(`/api/orders/${order.id}`);
  return order as { id: string };
}

async function checkAnswer(
  entry: CorpusClass,
  context: CorpusContext,
  request: WireRequest,
  answer: WireResponse,
  before: Footprint,
) {
  const { expected } = entry;
  switch (expected.answer) {
    case "problem":
      expectProblem(answer, expected.status, expected.type, {
        bodyless: request.method === "HEAD",
      });
      break;
    case "options":
      expect(answer.status).toBe(204);
      expect(answer.headers.allow).toBe(expected.allow);
      break;
    case "redirect":
      expect(answer.status).toBe(308);
      expect(answer.headers.location).toBe(expected.location);
      break;
    case "orders-list": {
      expect(answer.status, answer.body.slice(0, 300)).toBe(200);
      if (request.method === "HEAD") {
        expect(answer.body).toBe("");
        break;
      }
      const list = JSON.parse(answer.body) as {
        object: string;
        data: { id: string }[];
        has_more: boolean;
      };
      expect(list).toMatchObject({ object: "list", has_more: false });
      expect(list.data.length).toBe(before.orders);
      if (context.neighbour)
        expect(list.data.map((order) => order.id)).not.toContain(context.neighbour.orderId);
      break;
    }
    case "paid": {
      const order = await expectPaid(
        answer,
        context.accountId,
        expected.amount,
        expected.paymentMethod,
      );
      if (context.neighbour) {
        expect(order.id).not.toBe(context.neighbour.orderId);
        expect(answer.headers["idempotent-replayed"]).toBeUndefined();
      }
      expect(await footprintOf(context.accountId)).toEqual(plusOnePaid(before));
      // The key works: the same request again is its replay, byte for byte.
      const replay = await sendWire(baseUrl(), request);
      expect(replay.status).toBe(201);
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(replay.body).toBe(answer.body);
      expect(await footprintOf(context.accountId)).toEqual(plusOnePaid(before));
      return;
    }
  }
  if (entry.expectHeader) {
    const [name, value] = entry.expectHeader;
    expect(answer.headers[name]).toMatch(value);
  }
  expect(await footprintOf(context.accountId)).toEqual(before);
  await retryWithValidRequest(context);
}

describe("the bad-input corpus", () => {
  it("has at least 40 classes, each named once, across every group", () => {
    const names = CORPUS.map((entry) => entry.name);
    expect(names.length).toBeGreaterThanOrEqual(40);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(CORPUS.map((entry) => entry.group))).toEqual(
      new Set([
        "keys",
        "framing",
        "encodings",
        "json-shapes",
        "values",
        "auth",
        "tenants",
        "methods",
        "paths",
        "forged-headers",
      ]),
    );
  });

  describe.each([...new Set(CORPUS.map((entry) => entry.group))])("%s", (group) => {
    it.each(
      CORPUS.filter((entry) => entry.group === group).map((entry) => [entry.name, entry] as const),
    )("%s", async (_name, entry) => {
      const context = await contextFor(entry);
      const before = await footprintOf(context.accountId);
      const neighbourBefore = context.neighbour && (await footprintOf(context.neighbour.accountId));
      const request = entry.request(context);

      const answer = await sendWire(baseUrl(), request);

      expectNoServerError(answer, describeRequest(request));
      await checkAnswer(entry, context, request, answer, before);
      if (context.neighbour)
        expect(await footprintOf(context.neighbour.accountId)).toEqual(neighbourBefore);
    });
  });
});
