import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fingerprintRequest } from "@oncepay/idempotency";
import { MAX_BODY_BYTES } from "@oncepay/idempotency/request";
import { paymentProviderKeyPrefix } from "@/lib/orders/provider-key";
import {
  baseUrl,
  cartBody,
  createAccount,
  postOrder,
  type ApiAccount,
} from "@/lib/testing/api-client";
import {
  closeTestDb,
  countRows,
  expireKey,
  expireLease,
  keyRow,
  loseKey,
  testDb,
} from "@/lib/testing/database";
import { appSimulator, ledgerFor } from "@/lib/testing/payment-simulator";
import { sendRaw } from "@/lib/testing/raw-http";

/**
 * The HTTP contract of POST /api/orders (DESIGN.md, "The idempotency
 * contract"), row by row, against the built app over real HTTP.
 */
let account: ApiAccount;

beforeAll(async () => {
  account = await createAccount();
});
afterAll(closeTestDb);

/** A checkout that fails on purpose once the provider has charged: its key stays in flight at payment_started. */
async function checkoutFailingAfterCharge(token: string, key: string, body: unknown) {
  const failed = await postOrder({
    token,
    key,
    body,
    headers: { "OncePay-Fault": "after-charge" },
  });
  expect(failed.response.status).toBe(500);
}

/** The payment simulator's records of every charge the app asked for on this account's behalf. */
function providerLedger(accountId: string) {
  return ledgerFor(appSimulator(), { idempotencyKeyPrefix: paymentProviderKeyPrefix(accountId) });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("first request, paid", () => {
  it("answers 201 with the order, its Location and a request id, and stores the result with the key", async () => {
    const key = randomUUID();
    const { response, text } = await postOrder({ token: account.token, key });
    const order = JSON.parse(text);

    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("location")).toBe(`/api/orders/${order.id}`);
    expect(response.headers.get("x-request-id")).toMatch(UUID);
    expect(response.headers.get("idempotent-replayed")).toBeNull();
    expect(order).toMatchObject({
      object: "order",
      status: "paid",
      currency: "usd",
      amount: 2 * 1800 + 1450,
      payment: { status: "succeeded", paymentMethod: "pm_card_visa" },
    });

    const row = await keyRow(account.id, key);
    expect(row).toMatchObject({
      state: "complete",
      recovery_point: "finished",
      response_status: 201,
      response_body: order,
    });
  });
});

describe("same key, same payload, after completion", () => {
  it("replays the stored 201 byte for byte with Idempotent-Replayed and a fresh request id", async () => {
    const key = randomUUID();
    const body = cartBody();
    const first = await postOrder({ token: account.token, key, body });
    const replay = await postOrder({ token: account.token, key, body });

    expect(replay.response.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.response.headers.get("location")).toBe(first.response.headers.get("location"));
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.response.headers.get("x-request-id")).not.toBe(
      first.response.headers.get("x-request-id"),
    );
    expect(await countRows("orders", account.id)).toBeGreaterThan(0);
    const { rows } = await testDb().query(
      `SELECT count(*)::int AS n FROM orders WHERE cart_id = $1`,
      [body.cartId],
    );
    expect(rows[0].n).toBe(1);
  });

  it("treats the RFC 8941 quoted form of the key as the same key", async () => {
    const key = randomUUID();
    const body = cartBody();
    const first = await postOrder({ token: account.token, key, body });
    const quoted = await postOrder({ token: account.token, key: `"${key}"`, body });
    expect(quoted.response.status).toBe(201);
    expect(quoted.response.headers.get("idempotent-replayed")).toBe("true");
    expect(quoted.text).toBe(first.text);
  });

  it("treats the same JSON with its keys in another order as the same request", async () => {
    const key = randomUUID();
    const cartId = `cart-${randomUUID()}`;
    const first = await postOrder({
      token: account.token,
      key,
      rawBody: `{"cartId":"${cartId}","items":[{"sku":"dripper-v60-02","quantity":1}],"paymentMethod":"pm_card_visa"}`,
    });
    const reordered = await postOrder({
      token: account.token,
      key,
      rawBody: `{ "paymentMethod": "pm_card_visa", "items": [ { "quantity": 1, "sku": "dripper-v60-02" } ], "cartId": "${cartId}" }`,
    });
    expect(first.response.status).toBe(201);
    expect(reordered.response.headers.get("idempotent-replayed")).toBe("true");
    expect(reordered.text).toBe(first.text);
  });
});

describe("same key while the first is still running", () => {
  it("answers 409 with Retry-After and leaves the key untouched", async () => {
    const key = randomUUID();
    const body = cartBody();
    // The first attempt: failed after charging, so its key is in flight with a live lease.
    await checkoutFailingAfterCharge(account.token, key, body);
    const before = await keyRow(account.id, key);

    const second = await postOrder({ token: account.token, key, body });
    expect(second.response.status).toBe(409);
    expect(second.response.headers.get("content-type")).toBe("application/problem+json");
    expect(Number(second.response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await keyRow(account.id, key)).toEqual(before);
    expect(before).toMatchObject({ state: "in_flight", recovery_point: "payment_started" });
  });
});

describe("same key, different payload", () => {
  it("answers 422 and keeps the original result", async () => {
    const key = randomUUID();
    const first = await postOrder({ token: account.token, key });
    const other = await postOrder({
      token: account.token,
      key,
      body: cartBody({ items: [{ sku: "kettle-gooseneck-1l", quantity: 1 }] }),
    });
    expect(other.response.status).toBe(422);
    expect(JSON.parse(other.text)).toMatchObject({
      status: 422,
      type: "/problems/idempotency-key-reused",
    });
    const row = await keyRow(account.id, key);
    expect(row?.response_body).toEqual(JSON.parse(first.text));
  });

  it("checks the payload before replaying, even while the first is in flight", async () => {
    const key = randomUUID();
    await postOrder({ token: account.token, key, headers: { "OncePay-Fault": "after-charge" } });
    const other = await postOrder({
      token: account.token,
      key,
      body: cartBody({ cartId: "another-cart" }),
    });
    expect(other.response.status).toBe(422);
  });
});

describe("requests rejected before the key is used (400, 413, 415)", () => {
  const rejected: [string, number, Parameters<typeof postOrder>[0]][] = [
    ["a missing key", 400, { key: null }],
    ["a key over 255 characters", 400, { key: "k".repeat(256) }],
    ["a key with non-ASCII characters", 400, { key: "clé-ünïcode" }],
    ["an empty quoted key", 400, { key: '""' }],
    ["malformed JSON", 400, { rawBody: '{"cartId": "c1", "items": [' }],
    ["an empty cart", 400, { body: cartBody({ items: [] }) }],
    [
      "a quantity that is not a whole number",
      400,
      { body: cartBody({ items: [{ sku: "mug-ceramic-350", quantity: 1.5 }] }) },
    ],
    [
      "an unknown sku",
      400,
      { body: cartBody({ items: [{ sku: "espresso-machine-pro", quantity: 1 }] }) },
    ],
    [
      "an unsupported payment method",
      400,
      { body: cartBody({ paymentMethod: "pm_card_real_money" }) },
    ],
    [
      "a non-JSON body",
      415,
      { rawBody: "cartId=c1", headers: { "Content-Type": "application/x-www-form-urlencoded" } },
    ],
    ["a body over 16 KiB", 413, { body: cartBody({ cartId: "x".repeat(MAX_BODY_BYTES) }) }],
  ];

  it.each(rejected)(
    "%s gets a problem+json %i and writes nothing",
    async (_label, status, options) => {
      const before = await countRows("idempotency_keys", account.id);
      const { response, text } = await postOrder({
        token: account.token,
        key: randomUUID(),
        ...options,
      });
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(response.headers.get("x-request-id")).toMatch(UUID);
      expect(JSON.parse(text)).toMatchObject({
        status,
        type: expect.any(String),
        title: expect.any(String),
        detail: expect.any(String),
      });
      expect(await countRows("idempotency_keys", account.id)).toBe(before);
    },
  );

  it("does not consume the key: the corrected request with the same key succeeds", async () => {
    const key = randomUUID();
    const bad = await postOrder({
      token: account.token,
      key,
      body: cartBody({ items: [{ sku: "nope", quantity: 1 }] }),
    });
    expect(bad.response.status).toBe(400);
    expect(JSON.parse(bad.text).detail).toContain("nope");
    expect(await keyRow(account.id, key)).toBeUndefined();

    const good = await postOrder({ token: account.token, key });
    expect(good.response.status).toBe(201);
    expect(good.response.headers.get("idempotent-replayed")).toBeNull();
  });

  it("rejects two Idempotency-Key fields", async () => {
    const response = await sendRaw(baseUrl(), {
      method: "POST",
      path: "/api/orders",
      headers: {
        Authorization: `Bearer ${account.token}`,
        "Content-Type": "application/json",
        "Idempotency-Key": [randomUUID(), randomUUID()],
      },
      body: JSON.stringify(cartBody()),
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({
      type: "/problems/idempotency-key-repeated",
    });
  });
});

describe("credentials", () => {
  it.each([
    ["no credentials", {}],
    ["an unknown bearer token", { Authorization: `Bearer opk_${"A".repeat(43)}` }],
    ["a malformed bearer token", { Authorization: "Bearer hunter2" }],
    ["a malformed session cookie", { Cookie: "oncepay_session=forged" }],
  ])("%s gets 401 before the key is looked at", async (_label, headers) => {
    const key = randomUUID();
    const { response, text } = await postOrder({ key, headers });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(JSON.parse(text)).toMatchObject({ status: 401 });
    const { rows } = await testDb().query(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE idem_key = $1`,
      [key],
    );
    expect(rows[0].n).toBe(0);
  });

  it("keeps keys apart per account: the same key is a new request for another account", async () => {
    const other = await createAccount();
    const key = randomUUID();
    const mine = await postOrder({ token: account.token, key, body: cartBody() });
    const theirs = await postOrder({
      token: other.token,
      key,
      body: cartBody({ items: [{ sku: "grinder-hand-burr", quantity: 1 }] }),
    });

    expect(theirs.response.status).toBe(201);
    expect(theirs.response.headers.get("idempotent-replayed")).toBeNull();
    expect(JSON.parse(theirs.text).id).not.toBe(JSON.parse(mine.text).id);
    expect(await countRows("orders", other.id)).toBe(1);
  });

  it("shows an order to its owner only", async () => {
    const other = await createAccount();
    const { text } = await postOrder({ token: account.token, key: randomUUID() });
    const order = JSON.parse(text);

    const own = await fetch(`${baseUrl()}/api/orders/${order.id}`, {
      headers: { Authorization: `Bearer ${account.token}` },
    });
    expect(own.status).toBe(200);
    expect(await own.text()).toBe(text);

    const foreign = await fetch(`${baseUrl()}/api/orders/${order.id}`, {
      headers: { Authorization: `Bearer ${other.token}` },
    });
    expect(foreign.status).toBe(404);
    const missing = await fetch(`${baseUrl()}/api/orders/not-a-uuid`, {
      headers: { Authorization: `Bearer ${account.token}` },
    });
    expect(missing.status).toBe(404);
    const anonymous = await fetch(`${baseUrl()}/api/orders/${order.id}`);
    expect(anonymous.status).toBe(401);
  });

  it("creates a browser's account on first use of its session cookie", async () => {
    const page = await fetch(`${baseUrl()}/`);
    const cookie = page.headers.get("set-cookie")?.split(";")[0];
    expect(cookie).toMatch(/^oncepay_session=ops_/);
    expect(page.headers.get("set-cookie")).toMatch(/HttpOnly/i);

    const key = randomUUID();
    const body = cartBody();
    const first = await postOrder({ key, body, headers: { Cookie: cookie! } });
    const again = await postOrder({ key, body, headers: { Cookie: cookie! } });
    expect(first.response.status).toBe(201);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("payment declined", () => {
  it("answers 402, stores it and replays it; no order, one declined payment", async () => {
    const declined = await createAccount();
    const key = randomUUID();
    const body = cartBody({ paymentMethod: "pm_card_chargeDeclined" });
    const first = await postOrder({ token: declined.token, key, body });
    const replay = await postOrder({ token: declined.token, key, body });

    expect(first.response.status).toBe(402);
    expect(first.response.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(first.text)).toMatchObject({ status: 402, declineCode: "generic_decline" });
    expect(replay.response.status).toBe(402);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.text).toBe(first.text);
    expect(await keyRow(declined.id, key)).toMatchObject({
      state: "complete",
      response_status: 402,
    });
    expect(await countRows("orders", declined.id)).toBe(0);
    expect(await countRows("payments", declined.id)).toBe(1);
  });

  it("lets the shopper pay the same cart with another card under a new key", async () => {
    const shopper = await createAccount();
    const cartId = `cart-${randomUUID()}`;
    const declined = await postOrder({
      token: shopper.token,
      key: randomUUID(),
      body: cartBody({ cartId, paymentMethod: "pm_card_chargeDeclined" }),
    });
    const paid = await postOrder({
      token: shopper.token,
      key: randomUUID(),
      body: cartBody({ cartId }),
    });
    expect(declined.response.status).toBe(402);
    expect(paid.response.status).toBe(201);
    expect(await countRows("orders", shopper.id)).toBe(1);
  });
});

describe("server failure before the payment starts", () => {
  it("answers 500 and releases the key: a retry with the same key runs again and pays", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    const failed = await postOrder({
      token: shopper.token,
      key,
      body,
      headers: { "OncePay-Fault": "before-charge" },
    });
    expect(failed.response.status).toBe(500);
    expect(failed.response.headers.get("content-type")).toBe("application/problem+json");
    expect(await keyRow(shopper.id, key)).toBeUndefined();
    expect(await countRows("payments", shopper.id)).toBe(0);

    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get("idempotent-replayed")).toBeNull();
    expect(await countRows("orders", shopper.id)).toBe(1);
  });
});

describe("failure after the payment started", () => {
  it("keeps the key in flight under its lease; once the lease expires a retry takes over and finishes exactly once", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    await checkoutFailingAfterCharge(shopper.token, key, body);
    const inFlight = await keyRow(shopper.id, key);
    expect(inFlight).toMatchObject({ state: "in_flight", recovery_point: "payment_started" });
    expect(inFlight!.lease_expires_at!.getTime()).toBeGreaterThan(Date.now());

    expect((await postOrder({ token: shopper.token, key, body })).response.status).toBe(409);

    await expireLease(shopper.id, key);
    const takeover = await postOrder({ token: shopper.token, key, body });
    expect(takeover.response.status).toBe(201);
    const replay = await postOrder({ token: shopper.token, key, body });
    expect(replay.text).toBe(takeover.text);
    expect(await countRows("orders", shopper.id)).toBe(1);
    expect(await countRows("payments", shopper.id)).toBe(1);
  });
});

describe("a key the version before left at `claimed`", () => {
  it("never moved, its attempt gone: the retry claims the key afresh and pays once", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    // The checkout's first phase used to be an atomic one at `claimed`, after a claim that wrote nothing else.
    await testDb().query(
      `INSERT INTO idempotency_keys (scope, idem_key, operation, fingerprint, recovery_point,
                                     lease_owner, lease_expires_at, expires_at)
       VALUES ($1, $2, 'checkout', $3, 'claimed', gen_random_uuid(), now() - interval '1 second', now() + interval '1 day')`,
      [shopper.id, key, fingerprintRequest("POST", "/api/orders", body)],
    );
    const retry = await postOrder({ token: shopper.token, key, body });
    expect(retry.response.status).toBe(201);
    expect(await keyRow(shopper.id, key)).toMatchObject({ state: "complete" });
    expect(await countRows("orders", shopper.id)).toBe(1);
    expect(await countRows("payments", shopper.id)).toBe(1);
  });
});

describe("a key row lost after its charge", () => {
  it("charges nothing more when the row is gone (as a failover that dropped commits would leave it): the retry gets the provider's first charge back", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    await checkoutFailingAfterCharge(shopper.token, key, body);
    await loseKey(shopper.id, key);

    const retry = await postOrder({ token: shopper.token, key, body });

    expect(retry.response.status).toBe(201);
    const ledger = await providerLedger(shopper.id);
    expect(ledger.payment_intents).toHaveLength(1);
    expect(ledger.charges.map((charge) => charge.status)).toEqual(["succeeded"]);
    expect(JSON.parse(retry.text)).toMatchObject({
      payment: { id: ledger.payment_intents[0]!.id },
    });
    expect(await countRows("orders", shopper.id)).toBe(1);
  });
});

describe("key lifetime", () => {
  it("forgets a key after its TTL: the same key is then a new request", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const first = await postOrder({ token: shopper.token, key });
    await expireKey(shopper.id, key);
    const later = await postOrder({
      token: shopper.token,
      key,
      body: cartBody({ items: [{ sku: "filters-paper-100", quantity: 3 }] }),
    });

    expect(later.response.status).toBe(201);
    expect(later.response.headers.get("idempotent-replayed")).toBeNull();
    expect(JSON.parse(later.text).id).not.toBe(JSON.parse(first.text).id);
    // Another cart is another provider key: a charge of its own.
    expect((await providerLedger(shopper.id)).payment_intents).toHaveLength(2);
    // The first order keeps its data; only its link to the old key is gone.
    const { rows } = await testDb().query(`SELECT idempotency_key_id FROM orders WHERE id = $1`, [
      JSON.parse(first.text).id,
    ]);
    expect(rows).toEqual([{ idempotency_key_id: null }]);
  });

  it("refuses a key reused after its TTL for the same cart while the provider still remembers it: 422, nothing charged or recorded, and the refusal is replayed", async () => {
    const shopper = await createAccount();
    const key = randomUUID();
    const body = cartBody();
    expect((await postOrder({ token: shopper.token, key, body })).response.status).toBe(201);
    await expireKey(shopper.id, key);

    const reused = await postOrder({ token: shopper.token, key, body });

    expect(reused.response.status).toBe(422);
    expect(reused.response.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(reused.text)).toMatchObject({
      status: 422,
      type: "/problems/idempotency-key-expired",
    });
    expect(await countRows("orders", shopper.id)).toBe(1);
    expect(await countRows("payments", shopper.id)).toBe(1);
    expect((await providerLedger(shopper.id)).payment_intents).toHaveLength(1);
    const again = await postOrder({ token: shopper.token, key, body });
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(reused.text);
  });

  it("stores an expiry 24 hours after the claim by default", async () => {
    const key = randomUUID();
    await postOrder({ token: account.token, key });
    const { rows } = await testDb().query(
      `SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`,
      [account.id, key],
    );
    expect(rows[0].ttl).toBe(24 * 60 * 60);
  });

  it("tells the key's expiry and the policy on the 201, its replay and a 409, the same each time", async () => {
    const key = randomUUID();
    const body = cartBody();
    const first = await postOrder({ token: account.token, key, body });
    const replay = await postOrder({ token: account.token, key, body });
    const inFlightKey = randomUUID();
    await checkoutFailingAfterCharge(account.token, inFlightKey, body);
    const inFlight = await postOrder({ token: account.token, key: inFlightKey, body });
    expect([first, replay, inFlight].map(({ response }) => response.status)).toEqual([
      201, 201, 409,
    ]);
    for (const [answer, answeredKey] of [
      [first, key],
      [replay, key],
      [inFlight, inFlightKey],
    ] as const) {
      const row = await keyRow(account.id, answeredKey);
      const expires = Date.parse(answer.response.headers.get("idempotency-key-expires")!);
      // An HTTP date keeps whole seconds.
      expect(expires).toBe(Math.floor(row!.expires_at.getTime() / 1000) * 1000);
      expect(answer.response.headers.get("idempotency-key-policy")).toBe(
        "retention=86400, lease=30",
      );
    }
  });
});

describe("problems a person can open", () => {
  it("links the draft's 400 and 422 to the pages their types name, and each page explains its problem", async () => {
    const key = randomUUID();
    const missing = await postOrder({ token: account.token, key: null });
    await postOrder({ token: account.token, key });
    const reused = await postOrder({
      token: account.token,
      key,
      body: cartBody({ items: [{ sku: "kettle-gooseneck-1l", quantity: 1 }] }),
    });
    for (const [answer, status, slug] of [
      [missing, 400, "idempotency-key-missing"],
      [reused, 422, "idempotency-key-reused"],
    ] as const) {
      expect(answer.response.status).toBe(status);
      const { type, title } = JSON.parse(answer.text) as { type: string; title: string };
      expect(type).toBe(`/problems/${slug}`);
      expect(answer.response.headers.get("link")).toBe(
        `<${type}>; rel="describedby"; type="text/html"`,
      );
      // The type resolves against the API's origin, to a page that explains it.
      const page = await fetch(new URL(type, baseUrl()));
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await page.text();
      expect(html).toContain(title);
      expect(html).toContain("What to do");
    }
    expect((await fetch(new URL("/problems/no-such-problem", baseUrl()))).status).toBe(404);
  });
});

describe("methods that ignore the header", () => {
  it("serves GET /api/products whatever Idempotency-Key says", async () => {
    const response = await fetch(`${baseUrl()}/api/products`, {
      headers: { "Idempotency-Key": "k".repeat(300) },
    });
    expect(response.status).toBe(200);
    const { data } = await response.json();
    expect(data.length).toBeGreaterThan(3);
    expect(data[0]).toMatchObject({
      sku: expect.any(String),
      unitAmount: expect.any(Number),
      currency: "usd",
    });
  });
});
