import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  MAX_SEARCH_CLAUSES,
  MAX_SEARCH_QUERY_LENGTH,
  pageToken,
  parseSearchQuery,
  readPageToken,
  readSearchQuery,
} from "@/lib/payments/simulator/search";
import { newSecretKey, stripeFor, withTestSimulator } from "@/lib/testing/payment-simulator";

describe("parseSearchQuery", () => {
  it("reads metadata, status and currency clauses joined by AND, in either quotes", () => {
    expect(
      parseSearchQuery(
        `metadata['oncepay_provider_key']:'oncepay:a:b' AND status:"succeeded" AND currency:'usd'`,
      ),
    ).toEqual({
      ok: true,
      clauses: [
        { field: "metadata", key: "oncepay_provider_key", value: "oncepay:a:b" },
        { field: "status", value: "succeeded" },
        { field: "currency", value: "usd" },
      ],
    });
    expect(parseSearchQuery(`metadata["ref"]:"x"`)).toEqual({
      ok: true,
      clauses: [{ field: "metadata", key: "ref", value: "x" }],
    });
  });

  it.each([
    "",
    "amount>100",
    "status:'a' OR status:'b'",
    "metadata['k']:unquoted",
    "customer:'cus_1'",
  ])("refuses %j, saying what it supports", (query) => {
    expect(parseSearchQuery(query)).toMatchObject({ ok: false, message: expect.any(String) });
  });

  it(`takes ${MAX_SEARCH_CLAUSES} clauses, as Stripe does, and refuses one more`, () => {
    const clauses = (count: number) =>
      Array.from({ length: count }, (_, index) => `metadata['k${index}']:'v'`).join(" AND ");
    expect(parseSearchQuery(clauses(MAX_SEARCH_CLAUSES))).toMatchObject({ ok: true });
    expect(parseSearchQuery(clauses(MAX_SEARCH_CLAUSES + 1))).toEqual({
      ok: false,
      message: `Search queries are limited to ${MAX_SEARCH_CLAUSES} clauses.`,
    });
  });

  it(`refuses a query over ${MAX_SEARCH_QUERY_LENGTH} characters before reading it, blanks included`, () => {
    const longest = `metadata['k']:'${"v".repeat(MAX_SEARCH_QUERY_LENGTH - 16)}'`;
    expect(longest).toHaveLength(MAX_SEARCH_QUERY_LENGTH);
    expect(parseSearchQuery(longest)).toMatchObject({ ok: true });
    for (const query of [`${longest} `, " ".repeat(16_000), `status:'a'${" ".repeat(16_000)}b`])
      expect(parseSearchQuery(query)).toEqual({
        ok: false,
        message: `Search queries are limited to ${MAX_SEARCH_QUERY_LENGTH} characters; this one has ${query.length}.`,
      });
  });

  // With the bounds lifted, a query 8 times as long costs about 8 times as
  // much to read; a parse that rescans (the old split on /\s+AND\s+/ did, at
  // every blank of a run) costs 64 times as much. The best of five runs
  // keeps a garbage collection or a busy neighbour out of the figures, and
  // 24 sits three times from either. Each shape is one that made a scan
  // start over: a long run of blanks, blanks before an AND cut short, a
  // quote never closed. Many clauses allocate one object each, so their
  // cost is the clause bound's business (above).
  it.each([
    ["a run of blanks between clause and text", (n: number) => `status:'a'${" ".repeat(n)}b`],
    ["a run of blanks before an AND cut short", (n: number) => `status:'a'${" ".repeat(n)}AN`],
    ["a quote never closed", (n: number) => `metadata['${"x".repeat(n)}`],
    ["a long value (the benign case)", (n: number) => `status:'${"x".repeat(n)}'`],
  ])("reads %s in time linear in its length", (_shape, query) => {
    const unbounded = { maxLength: Infinity, maxClauses: Infinity };
    const cost = (text: string) => {
      let best = Infinity;
      for (let run = 0; run < 5; run++) {
        const started = performance.now();
        readSearchQuery(text, unbounded);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const short = cost(query(50_000));
    const long = cost(query(400_000));
    expect(long / short).toBeLessThan(24);
  });
});

describe("page tokens", () => {
  it("name the position after a row, and read back as it", () => {
    const token = pageToken({ created: "1764000000", id: "pi_abc123" });
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(readPageToken(token)).toEqual({ created: 1_764_000_000, id: "pi_abc123" });
  });

  it.each([
    "",
    "a b",
    "e30",
    Buffer.from('[1,"pi_1",3]').toString("base64url"),
    Buffer.from('[-1,"pi_1"]').toString("base64url"),
    Buffer.from('[1,"pi_1\' OR 1"]').toString("base64url"),
  ])("refuse %j", (token) => {
    expect(readPageToken(token)).toBeUndefined();
  });
});

// Searches through the SDK, each test in an account of its own.
describe("GET /v1/payment_intents/search", () => {
  const simulator = withTestSimulator();

  /** `count` intents tagged with `tag` (created, not charged), a few at a time like a busy shop. */
  async function createTagged(
    stripe: Stripe,
    tag: string,
    count: number,
  ): Promise<Stripe.PaymentIntent[]> {
    const created: Stripe.PaymentIntent[] = [];
    for (let start = 0; start < count; start += 25) {
      const batch = Array.from({ length: Math.min(25, count - start) }, () =>
        stripe.paymentIntents.create({ amount: 1900, currency: "usd", metadata: { run: tag } }),
      );
      created.push(...(await Promise.all(batch)));
    }
    return created;
  }

  async function searchAll(
    stripe: Stripe,
    query: string,
    limit: number,
  ): Promise<Stripe.ApiSearchResult<Stripe.PaymentIntent>[]> {
    const pages: Stripe.ApiSearchResult<Stripe.PaymentIntent>[] = [];
    let page: string | undefined;
    do {
      const result = await stripe.paymentIntents.search({
        query,
        limit,
        ...(page !== undefined && { page }),
      });
      pages.push(result);
      page = result.next_page ?? undefined;
    } while (page !== undefined && pages.length < 10);
    return pages;
  }

  it("pages through 250 matches 100 at a time: 3 pages, newest first, none twice, none missing", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const tag = randomUUID();
    const older = await createTagged(stripe, tag, 125);
    // Created is in whole seconds: wait for the next one, so "newest first" has something to tell apart.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const newer = await createTagged(stripe, tag, 125);
    expect(Math.max(...older.map((intent) => intent.created))).toBeLessThan(
      Math.min(...newer.map((intent) => intent.created)),
    );
    await createTagged(stripe, randomUUID(), 5);

    const pages = await searchAll(stripe, `metadata['run']:'${tag}'`, 100);
    expect(pages.map((page) => [page.data.length, page.has_more, page.next_page === null])).toEqual(
      [
        [100, true, false],
        [100, true, false],
        [50, false, true],
      ],
    );
    const found = pages.flatMap((page) => page.data);
    const ids = found.map((intent) => intent.id);
    expect(new Set(ids).size).toBe(250);
    expect(new Set(ids)).toEqual(new Set([...older, ...newer].map((intent) => intent.id)));
    const created = found.map((intent) => intent.created);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(new Set(ids.slice(0, 125))).toEqual(new Set(newer.map((intent) => intent.id)));
  });

  it("keeps its place when intents are added between pages: later pages neither repeat nor skip one", async () => {
    const stripe = stripeFor(simulator, await newSecretKey(simulator));
    const tag = randomUUID();
    const original = await createTagged(stripe, tag, 7);
    const query = `metadata['run']:'${tag}'`;
    const first = await stripe.paymentIntents.search({ query, limit: 3 });
    // Newer than page one, so an offset would push two of its rows onto page two again.
    const added = await createTagged(stripe, tag, 4);
    const pages = [first];
    while (pages.at(-1)!.next_page)
      pages.push(
        await stripe.paymentIntents.search({ query, limit: 3, page: pages.at(-1)!.next_page! }),
      );
    const ids = pages.flatMap((page) => page.data.map((intent) => intent.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(original.map((intent) => intent.id)));
    // One added in the second of the position may sort after it (ties by id) and show up; none other can.
    const addedIds = new Set(added.map((intent) => intent.id));
    expect(
      ids
        .filter((id) => !original.some((intent) => intent.id === id))
        .every((id) => addedIds.has(id)),
    ).toBe(true);
  });

  it.each([
    ["not a token", "garbage!"],
    ["base64url of something else", Buffer.from("{}").toString("base64url")],
    [
      "a position with a bad id",
      Buffer.from(JSON.stringify([1_700_000_000, "ch_1"])).toString("base64url"),
    ],
    ["empty", ""],
  ])(
    "answers 400 invalid_request_error, param page, to a page token that is %s",
    async (_case, page) => {
      const secretKey = await newSecretKey(simulator);
      const query = new URLSearchParams({ query: "status:'succeeded'", page });
      const response = await fetch(`${simulator.url}/v1/payment_intents/search?${query}`, {
        headers: { Authorization: `Bearer ${secretKey}` },
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toMatchObject({
        type: "invalid_request_error",
        param: "page",
      });
      const error = await stripeFor(simulator, secretKey)
        .paymentIntents.search({ query: "status:'succeeded'", page })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error).toMatchObject({ statusCode: 400, param: "page" });
    },
  );

  it("refuses a parameter it does not know (a list cursor would otherwise return page one forever)", async () => {
    const response = await fetch(
      `${simulator.url}/v1/payment_intents/search?query=status:'succeeded'&starting_after=pi_1`,
      {
        headers: { Authorization: `Bearer ${await newSecretKey(simulator)}` },
      },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: unknown }).error).toMatchObject({
      type: "invalid_request_error",
      code: "parameter_unknown",
      param: "starting_after",
    });
  });

  it("answers 16,000 `+` between a clause and the rest with 400 param query, by the length rule, before reading the query", async () => {
    const query = new URLSearchParams({ query: `status:'succeeded'${" ".repeat(16_000)}x` });
    expect(query.toString()).toContain("+".repeat(16_000));
    const response = await fetch(`${simulator.url}/v1/payment_intents/search?${query}`, {
      headers: { Authorization: `Bearer ${await newSecretKey(simulator)}` },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: unknown }).error).toEqual({
      type: "invalid_request_error",
      param: "query",
      message: `Search queries are limited to ${MAX_SEARCH_QUERY_LENGTH} characters; this one has 16019.`,
    });
  });

  it(`answers ${MAX_SEARCH_CLAUSES + 1} clauses with 400 param query, through the SDK as StripeInvalidRequestError`, async () => {
    const query = Array.from({ length: MAX_SEARCH_CLAUSES + 1 }, () => "status:'succeeded'").join(
      " AND ",
    );
    const error = await stripeFor(simulator, await newSecretKey(simulator))
      .paymentIntents.search({ query })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({
      statusCode: 400,
      param: "query",
      message: `Search queries are limited to ${MAX_SEARCH_CLAUSES} clauses.`,
    });
  });

  it.each(["0", "101", "ten", "1.5"])(
    "answers 400 parameter_invalid_integer to limit=%s",
    async (limit) => {
      const response = await fetch(
        `${simulator.url}/v1/payment_intents/search?query=status:'succeeded'&limit=${limit}`,
        {
          headers: { Authorization: `Bearer ${await newSecretKey(simulator)}` },
        },
      );
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toMatchObject({
        code: "parameter_invalid_integer",
        param: "limit",
      });
    },
  );
});
