import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  baseUrl,
  createAccount,
  getOrder,
  postOrder,
  type ApiAccount,
} from "@/lib/testing/api-client";
import { closeTestDb } from "@/lib/testing/database";

/**
 * GET /api/orders: the ledger over HTTP. Newest first, cursor pages
 * (`limit`, `starting_after`) that add up to every order exactly once, and
 * never a line of another account's.
 */
afterAll(closeTestDb);

interface OrderList {
  object: string;
  data: {
    id: string;
    object: string;
    idempotencyKey: string | null;
    source: string;
    createdAt: string;
    amount: number;
  }[];
  has_more: boolean;
}

async function list(
  token: string | undefined,
  query = "",
): Promise<{
  status: number;
  body: OrderList & { type?: string; detail?: string };
  headers: Headers;
}> {
  const response = await fetch(`${baseUrl()}/api/orders${query}`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

let alice: ApiAccount;
let bob: ApiAccount;
/** Alice's orders, oldest first, with the key each was made under. */
const aliceOrders: { id: string; key: string }[] = [];
let bobOrder: string;

beforeAll(async () => {
  [alice, bob] = await Promise.all([createAccount(), createAccount()]);
  // One at a time, so the order of creation is the order of created_at.
  for (let i = 0; i < 5; i++) {
    const key = randomUUID();
    const paid = await postOrder({ token: alice.token, key });
    expect(paid.response.status).toBe(201);
    aliceOrders.push({ id: JSON.parse(paid.text).id, key });
  }
  const paid = await postOrder({ token: bob.token, key: aliceOrders[0]!.key });
  expect(paid.response.status).toBe(201);
  bobOrder = JSON.parse(paid.text).id;
});

describe("GET /api/orders", () => {
  it("lists the account's orders newest first, each with the key it was made under, as a private list", async () => {
    const { status, body, headers } = await list(alice.token);

    expect(status).toBe(200);
    expect(headers.get("cache-control")).toBe("private, no-store");
    expect(body).toMatchObject({ object: "list", has_more: false });
    expect(body.data.map((order) => order.id)).toEqual(
      aliceOrders.map((order) => order.id).reverse(),
    );
    expect(body.data.map((order) => order.idempotencyKey)).toEqual(
      aliceOrders.map((order) => order.key).reverse(),
    );
    expect(
      body.data.every((order) => order.object === "order" && order.source === "checkout"),
    ).toBe(true);
  });

  it("pages with limit and starting_after: every order exactly once, in order, has_more false on the last page", async () => {
    const seen: string[] = [];
    const hasMore: boolean[] = [];
    let query = "?limit=2";
    for (let page = 0; page < 10; page++) {
      const { status, body } = await list(alice.token, query);
      expect(status).toBe(200);
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((order) => order.id));
      hasMore.push(body.has_more);
      if (!body.has_more) break;
      query = `?limit=2&starting_after=${body.data.at(-1)!.id}`;
    }
    expect(seen).toEqual(aliceOrders.map((order) => order.id).reverse());
    expect(hasMore).toEqual([true, true, false]);
  });

  it("never shows another account's order, though it was made under the same key", async () => {
    const { body } = await list(bob.token, "?limit=100");
    expect(body.data.map((order) => order.id)).toEqual([bobOrder]);
    expect(
      (await list(alice.token, "?limit=100")).body.data.map((order) => order.id),
    ).not.toContain(bobOrder);
  });

  it("answers another account's order as a cursor exactly as an order that does not exist", async () => {
    const foreignId = aliceOrders[0]!.id;
    const missingId = randomUUID();
    const foreign = await list(bob.token, `?starting_after=${foreignId}`);
    const missing = await list(bob.token, `?starting_after=${missingId}`);

    expect(foreign.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(foreign.body).toMatchObject({ type: "/problems/invalid-query", status: 400 });
    expect(JSON.stringify(foreign.body).replaceAll(foreignId, "<id>")).toBe(
      JSON.stringify(missing.body).replaceAll(missingId, "<id>"),
    );
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=ten", "limit"],
    ["limit=-1", "limit"],
    ["limit=1.5", "limit"],
    ["limit=2&limit=3", "limit"],
    ["starting_after=not-a-uuid", "starting_after"],
    ["limt=5", "limt"],
  ])("refuses ?%s with a 400 that names %s", async (query, parameter) => {
    const { status, body, headers } = await list(alice.token, `?${query}`);
    expect(status).toBe(400);
    expect(headers.get("content-type")).toBe("application/problem+json");
    expect(body).toMatchObject({
      type: "/problems/invalid-query",
      errors: [expect.objectContaining({ path: parameter })],
    });
  });

  it("needs credentials", async () => {
    const { status, headers } = await list(undefined);
    expect(status).toBe(401);
    expect(headers.get("www-authenticate")).toMatch(/^Bearer /);
  });
});

describe("GET /api/orders/{id}", () => {
  it("answers the owner's order as private, never stored by a cache, and another account's as a 404, private too", async () => {
    const own = await getOrder({ token: alice.token, id: aliceOrders[0]!.id });
    expect(own.response.status).toBe(200);
    expect(own.response.headers.get("cache-control")).toBe("private, no-store");

    const other = await getOrder({ token: alice.token, id: bobOrder });
    expect(other.response.status).toBe(404);
    expect(other.response.headers.get("cache-control")).toBe("private, no-store");
  });
});
