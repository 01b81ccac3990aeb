import pg from "pg";
import { paymentProviderKey } from "@/lib/orders/provider-key";

/**
 * Every query the tests make to check the database ("exactly one order
 * row"), written once, over whatever connection the context has: Vitest's
 * pool (lib/testing/database.ts), a short connection per check for tests
 * that restart the app (rowsAt), Playwright's pool (lib/testing/e2e/).
 * Only for assertions and for simulating the passing of time: the behaviour
 * under test always goes through the app.
 */
export interface Queryable {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export type CountedTable = "orders" | "payments" | "idempotency_keys";

export interface KeyRow {
  id: string;
  state: string;
  recovery_point: string;
  fingerprint: string;
  /** What the key keeps of its request, for a resume. */
  request: unknown;
  side_effect_generation: number;
  /** The provider key its request charges under (computed from the row, as the checkout computes it). */
  provider_key: string;
  response_status: number | null;
  response_body: unknown;
  /** What the checkout's phases kept: the cart being charged, then the provider's answer. */
  progress: { cart?: unknown; charge?: unknown; providerKey?: string };
  lease_expires_at: Date | null;
  /** When the key and its stored answer may be forgotten. */
  expires_at: Date;
}

export interface OrderRefunds {
  refunds: { status: string; amount: number; provider_refund_id: string | null }[];
  /** payments.refunded_amount: the refunds pending or succeeded. */
  refundedAmount: number;
}

/** A refund at the payment simulator, read where it lives. */
export interface ProviderRefundRow {
  id: string;
  amount: number;
  status: string;
  /** The idempotency key the provider was asked under (its metadata's oncepay_provider_key). */
  provider_key: string | null;
}

export interface KeyRequestRow {
  nth: number;
  request_id: string;
  status: number;
  answer: string;
  received_at: Date;
  answered_at: Date;
}

export interface Rows {
  countRows(table: CountedTable, accountId: string): Promise<number>;
  /** Both counts that say "charged once": one order, one payment. */
  rowCounts(accountId: string): Promise<{ orders: number; payments: number }>;
  /** Everything a request can leave behind for an account, counted in one statement so the three agree. */
  tableCounts(accountId: string): Promise<Record<CountedTable, number>>;
  keyRow(accountId: string, key: string): Promise<KeyRow | undefined>;
  /** An order's refund rows, oldest first, and what its payment holds as refunded. */
  refundsOfOrder(orderId: string): Promise<OrderRefunds>;
  /** The refunds the payment simulator holds for an order's PaymentIntent, oldest first. */
  providerRefundsOfOrder(orderId: string): Promise<ProviderRefundRow[]>;
  /** Keys still in flight although their lease ran out: what a crash must never leave behind. */
  stuckKeys(accountId: string): Promise<number>;
  /**
   * The requests recorded under one of the account's keys, in the order
   * they arrived (then the order they were recorded in), with the key's
   * counter (`seen`, 0 when none was recorded).
   */
  keyRequestsOf(accountId: string, key: string): Promise<{ seen: number; rows: KeyRequestRow[] }>;
  /** Every recorded request and counter row of a key row, by its id: what must go with the key. */
  keyRequestRowsOfKeyId(keyId: string): Promise<number>;
  /** Simulates the passing of time for one key: its lease ran out. */
  expireLease(accountId: string, key: string): Promise<void>;
  /** Simulates the passing of time for one key: its whole life ran out. */
  expireKey(accountId: string, key: string): Promise<void>;
  /**
   * Simulates lost commits, as a failover to a standby that missed them
   * leaves things: the key's row is gone, with the order and the payment its
   * completion wrote.
   */
  loseKey(accountId: string, key: string): Promise<void>;
  /** The account a bearer or session token stands for (only its SHA-256 is stored). */
  accountIdByTokenHash(tokenHash: string): Promise<string | undefined>;
  ordersOf(accountId: string): Promise<{ id: string; total_amount: number }[]>;
  paymentsOf(accountId: string): Promise<{ status: string; amount: number }[]>;
  /** What the shop recorded of the events about one payment: each event's outcome. */
  webhookEventsOf(paymentIntentId: string): Promise<{ event_id: string; outcome: string }[]>;
  /** What each delivery of an event about the account's payments did, in the order received (the delivery log). */
  deliveriesOf(accountId: string): Promise<string[]>;
  /** A lab webhook storm's order as it ended: its status and how often it shipped, either handler's shipments counted. */
  labWebhookStormOf(stormId: string): Promise<{ status: string; shipments: number }>;
  /** The account's orders as fulfilment sees them: each one's status, who settled its payment, its shipments. */
  fulfilmentOf(
    accountId: string,
  ): Promise<{ status: string; settled_by: string | null; shipments: number }[]>;
  /** The Idempotency-Keys this account used, with the order each one produced (if any). */
  idempotencyKeysOf(
    accountId: string,
  ): Promise<{ key: string; response_status: number | null; order_id: string | null }[]>;
  /** The account's demo faults as stored (none stored means none on). */
  demoFaultsOf(accountId: string): Promise<{ networkDelayMs: number; loseResponse: boolean }>;
  /** The points counted in a rate limit's window (`<name>:<caller>`); 0 when it has none. */
  rateLimitPoints(windowKey: string): Promise<number>;
  /**
   * Simulates the passing of time for one rate limit's window: it has ended,
   * so the caller's next request starts a new one. Tests keep their windows
   * far longer than they run (a slow machine must not end one mid-test) and
   * end them here instead of sleeping. Fails when there is no such window.
   */
  endRateLimitWindow(windowKey: string): Promise<void>;
  /**
   * The payment simulator's ledger, read where it lives (its own schema in
   * the same database): the PaymentIntents whose metadata holds all these
   * pairs, or whose provider key (Stripe's Idempotency-Key) starts with a
   * prefix, across all of the simulator's accounts. Exact counts, unlike
   * its admin API, which lists the newest 100.
   */
  providerIntents(
    filter: { metadata: Record<string, string> } | { keyPrefix: string },
  ): Promise<ProviderIntentCounts>;
  /** How far each of the account's keys got (`finished` once complete), of the given keys or of all of them. */
  recoveryPointsOf(accountId: string, keys?: readonly string[]): Promise<string[]>;
  /** Orders by the Idempotency-Key that made them, for one account. */
  ordersByKey(accountId: string): Promise<Map<string, number>>;
  /** Succeeded PaymentIntents at the payment simulator by provider key, for the provider keys that start with a prefix. */
  chargesByProviderKey(keyPrefix: string): Promise<Map<string, number>>;
  /** The provider keys the account's succeeded payments were charged under: each belongs to an order. */
  paidProviderKeys(accountId: string): Promise<Set<string>>;
  /** The orders written for one cart, as the lab counts a storm's. */
  ordersForCart(accountId: string, cartId: string): Promise<number>;
  /** How many lab runs of each strategy and kind the account has recorded. */
  labRunCounts(accountId: string): Promise<{ strategy: string; kind: string; runs: number }[]>;
  /** One lab storm as stored. */
  labStorm(stormId: string): Promise<
    | {
        account_id: string;
        strategy: string;
        size: number;
        idem_key: string | null;
        cart_id: string;
      }
    | undefined
  >;
}

export interface ProviderIntentCounts {
  /** Succeeded PaymentIntents: money taken. */
  succeeded: number;
  total: number;
  /** In minor units, of the succeeded ones. */
  amountCharged: number;
}

export function rowsIn(db: Queryable): Rows {
  const countRows = async (table: CountedTable, accountId: string) => {
    const { rows } = await db.query<{ count: string }>(
      `SELECT count(*) FROM ${table} WHERE ${table === "idempotency_keys" ? "scope" : "account_id"} = $1`,
      [accountId],
    );
    return Number(rows[0]!.count);
  };
  const setKeyTimeToPast = async (
    column: "lease_expires_at" | "expires_at",
    accountId: string,
    key: string,
  ) => {
    await db.query(
      `UPDATE idempotency_keys SET ${column} = now() - interval '1 second' WHERE scope = $1 AND idem_key = $2`,
      [accountId, key],
    );
  };

  return {
    countRows,
    async rowCounts(accountId) {
      return {
        orders: await countRows("orders", accountId),
        payments: await countRows("payments", accountId),
      };
    },
    async refundsOfOrder(orderId) {
      const { rows: refunds } = await db.query<OrderRefunds["refunds"][number]>(
        `SELECT status::text AS status, amount, provider_refund_id
           FROM refunds WHERE order_id = $1::uuid ORDER BY created_at, id`,
        [orderId],
      );
      const { rows } = await db.query<{ refunded_amount: number }>(
        `SELECT refunded_amount FROM payments WHERE order_id = $1::uuid`,
        [orderId],
      );
      return { refunds, refundedAmount: rows[0]?.refunded_amount ?? 0 };
    },
    async providerRefundsOfOrder(orderId) {
      const { rows } = await db.query<ProviderRefundRow>(
        `SELECT r.id, r.amount::int AS amount, r.status, r.metadata->>'oncepay_provider_key' AS provider_key
           FROM payments p JOIN payment_simulator.refunds r ON r.payment_intent = p.provider_payment_id
          WHERE p.order_id = $1::uuid ORDER BY r.seq`,
        [orderId],
      );
      return rows;
    },
    async tableCounts(accountId) {
      const { rows } = await db.query<Record<CountedTable, number>>(
        `SELECT (SELECT count(*)::int FROM orders WHERE account_id = $1::uuid) AS orders,
                (SELECT count(*)::int FROM payments WHERE account_id = $1::uuid) AS payments,
                (SELECT count(*)::int FROM idempotency_keys WHERE scope = $1::uuid::text) AS idempotency_keys`,
        [accountId],
      );
      return rows[0]!;
    },
    async keyRequestsOf(accountId, key) {
      const { rows } = await db.query<KeyRequestRow>(
        `SELECT r.nth, r.request_id, r.status, r.answer::text AS answer, r.received_at, r.answered_at
           FROM idempotency_key_requests r JOIN idempotency_keys k ON k.id = r.key_id
          WHERE k.scope = $1 AND k.idem_key = $2
          ORDER BY r.received_at, r.nth`,
        [accountId, key],
      );
      const { rows: counts } = await db.query<{ seen: number }>(
        `SELECT c.seen FROM idempotency_key_request_counts c JOIN idempotency_keys k ON k.id = c.key_id
          WHERE k.scope = $1 AND k.idem_key = $2`,
        [accountId, key],
      );
      return { seen: counts[0]?.seen ?? 0, rows };
    },
    async keyRequestRowsOfKeyId(keyId) {
      const { rows } = await db.query<{ count: number }>(
        `SELECT (SELECT count(*)::int FROM idempotency_key_requests WHERE key_id = $1)
              + (SELECT count(*)::int FROM idempotency_key_request_counts WHERE key_id = $1) AS count`,
        [keyId],
      );
      return rows[0]!.count;
    },
    async keyRow(accountId, key) {
      const { rows } = await db.query<Omit<KeyRow, "provider_key">>(
        `SELECT id, state, recovery_point, fingerprint, request, side_effect_generation, response_status, response_body, progress, lease_expires_at, expires_at
           FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`,
        [accountId, key],
      );
      const row = rows[0];
      return (
        row && {
          ...row,
          provider_key: paymentProviderKey(
            {
              accountId,
              idempotencyKey: key,
              fingerprint: row.fingerprint,
            },
            row.side_effect_generation,
          ),
        }
      );
    },
    async stuckKeys(accountId) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM idempotency_keys WHERE scope = $1 AND state = 'in_flight' AND lease_expires_at <= now()`,
        [accountId],
      );
      return rows[0]!.n;
    },
    expireLease: (accountId, key) => setKeyTimeToPast("lease_expires_at", accountId, key),
    expireKey: (accountId, key) => setKeyTimeToPast("expires_at", accountId, key),
    async loseKey(accountId, key) {
      await db.query(
        `WITH lost_key AS (
           DELETE FROM idempotency_keys WHERE scope = $1 AND idem_key = $2 RETURNING id
         ), lost_payments AS (
           DELETE FROM payments WHERE idempotency_key_id IN (SELECT id FROM lost_key)
         )
         DELETE FROM orders WHERE idempotency_key_id IN (SELECT id FROM lost_key)`,
        [accountId, key],
      );
    },
    async accountIdByTokenHash(tokenHash) {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM accounts WHERE token_hash = $1`,
        [tokenHash],
      );
      return rows[0]?.id;
    },
    async ordersOf(accountId) {
      const { rows } = await db.query<{ id: string; total_amount: number }>(
        `SELECT id, total_amount FROM orders WHERE account_id = $1 ORDER BY created_at`,
        [accountId],
      );
      return rows;
    },
    async webhookEventsOf(paymentIntentId) {
      const { rows } = await db.query<{ event_id: string; outcome: string }>(
        `SELECT event_id, outcome FROM webhook_events WHERE provider_payment_id = $1 ORDER BY received_at`,
        [paymentIntentId],
      );
      return rows;
    },
    async deliveriesOf(accountId) {
      const { rows } = await db.query<{ outcome: string }>(
        `SELECT r.outcome FROM webhook_receipts r
           JOIN payments p ON p.provider_payment_id = r.provider_payment_id
          WHERE p.account_id = $1 ORDER BY r.received_at, r.id`,
        [accountId],
      );
      return rows.map((row) => row.outcome);
    },
    async labWebhookStormOf(stormId) {
      const { rows } = await db.query<{ status: string; shipments: number }>(
        `SELECT o.status::text,
                (SELECT count(*)::int FROM shipments s WHERE s.order_id = o.id)
              + (SELECT count(*)::int FROM lab_shipments s WHERE s.order_id = o.id) AS shipments
           FROM lab_webhook_storms w JOIN orders o ON o.id = w.order_id
          WHERE w.id = $1`,
        [stormId],
      );
      if (!rows[0]) throw new Error(`No lab webhook storm ${stormId}`);
      return rows[0];
    },
    async fulfilmentOf(accountId) {
      const { rows } = await db.query<{
        status: string;
        settled_by: string | null;
        shipments: number;
      }>(
        `SELECT o.status::text, p.settled_by,
                (SELECT count(*)::int FROM shipments s WHERE s.order_id = o.id) AS shipments
           FROM orders o LEFT JOIN payments p ON p.order_id = o.id
          WHERE o.account_id = $1 ORDER BY o.created_at`,
        [accountId],
      );
      return rows;
    },
    async paymentsOf(accountId) {
      const { rows } = await db.query<{ status: string; amount: number }>(
        `SELECT status::text, amount FROM payments WHERE account_id = $1 ORDER BY created_at`,
        [accountId],
      );
      return rows;
    },
    async idempotencyKeysOf(accountId) {
      const { rows } = await db.query<{
        key: string;
        response_status: number | null;
        order_id: string | null;
      }>(
        `SELECT k.idem_key AS key, k.response_status, o.id AS order_id
           FROM idempotency_keys k LEFT JOIN orders o ON o.idempotency_key_id = k.id
          WHERE k.scope = $1 ORDER BY k.created_at`,
        [accountId],
      );
      return rows;
    },
    async demoFaultsOf(accountId) {
      const { rows } = await db.query<{ network_delay_ms: number; lose_response: boolean }>(
        `SELECT network_delay_ms, lose_response FROM demo_settings WHERE account_id = $1`,
        [accountId],
      );
      return {
        networkDelayMs: rows[0]?.network_delay_ms ?? 0,
        loseResponse: rows[0]?.lose_response ?? false,
      };
    },
    async rateLimitPoints(windowKey) {
      const { rows } = await db.query<{ points: number }>(
        `SELECT points FROM rate_limits WHERE key = $1`,
        [windowKey],
      );
      return rows[0]?.points ?? 0;
    },
    async endRateLimitWindow(windowKey) {
      // The window's clock is the database's (lib/limits/rate-limit.ts): it ended a millisecond ago.
      const { rowCount } = await db.query(
        `UPDATE rate_limits SET expire = (extract(epoch FROM statement_timestamp()) * 1000)::bigint - 1
          WHERE key = $1`,
        [windowKey],
      );
      if (rowCount !== 1) throw new Error(`No rate limit window ${windowKey} to end`);
    },
    async providerIntents(filter) {
      const [condition, value] =
        "metadata" in filter
          ? ["metadata @> $1::jsonb", JSON.stringify(filter.metadata)]
          : ["starts_with(idempotency_key, $1)", filter.keyPrefix];
      const { rows } = await db.query<ProviderIntentCounts>(
        `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded, count(*)::int AS total,
                coalesce(sum(amount) FILTER (WHERE status = 'succeeded'), 0)::int AS "amountCharged"
           FROM payment_simulator.payment_intents WHERE ${condition}`,
        [value],
      );
      return rows[0]!;
    },
    async labRunCounts(accountId) {
      const { rows } = await db.query<{ strategy: string; kind: string; runs: number }>(
        `SELECT strategy::text, kind::text, count(*)::int AS runs FROM lab_storms
          WHERE account_id = $1 GROUP BY strategy, kind ORDER BY strategy, kind`,
        [accountId],
      );
      return rows;
    },
    async labStorm(stormId) {
      const { rows } = await db.query<{
        account_id: string;
        strategy: string;
        size: number;
        idem_key: string | null;
        cart_id: string;
      }>(
        `SELECT account_id, strategy::text, size, idem_key, cart_id FROM lab_storms WHERE id = $1`,
        [stormId],
      );
      return rows[0];
    },
    async recoveryPointsOf(accountId, keys) {
      const { rows } = await db.query<{ recovery_point: string }>(
        `SELECT recovery_point FROM idempotency_keys WHERE scope = $1 AND ($2::text[] IS NULL OR idem_key = ANY($2))`,
        [accountId, keys ?? null],
      );
      return rows.map((row) => row.recovery_point);
    },
    async ordersByKey(accountId) {
      const { rows } = await db.query<{ key: string; n: number }>(
        `SELECT idem_key AS key, count(*)::int AS n FROM orders WHERE account_id = $1 GROUP BY idem_key`,
        [accountId],
      );
      return new Map(rows.map((row) => [row.key, row.n]));
    },
    async chargesByProviderKey(keyPrefix) {
      const { rows } = await db.query<{ key: string; n: number }>(
        `SELECT idempotency_key AS key, count(*)::int AS n FROM payment_simulator.payment_intents
          WHERE starts_with(idempotency_key, $1) AND status = 'succeeded' GROUP BY idempotency_key`,
        [keyPrefix],
      );
      return new Map(rows.map((row) => [row.key, row.n]));
    },
    async paidProviderKeys(accountId) {
      const { rows } = await db.query<{ key: string }>(
        `SELECT provider_key AS key FROM payments
          WHERE account_id = $1 AND status = 'succeeded' AND order_id IS NOT NULL`,
        [accountId],
      );
      return new Set(rows.map((row) => row.key));
    },
    async ordersForCart(accountId, cartId) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND cart_id = $2`,
        [accountId, cartId],
      );
      return rows[0]!.n;
    },
  };
}

/**
 * For tests that restart the app: the database URL can change with each
 * start (the embedded database gets a new port), so each query opens its own
 * short connection to the URL it is given.
 */
export function rowsAt(databaseUrl: string): Rows {
  return rowsIn({
    async query(text, values) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return await client.query(text, values);
      } finally {
        await client.end();
      }
    },
  });
}

/** A pool made on first use, so that merely importing the wiring needs no database (and a closed pool can be made again). */
export function lazyPool(connect: () => pg.Pool): {
  db: Queryable;
  pool(): pg.Pool;
  close(): Promise<void>;
} {
  let pool: pg.Pool | undefined;
  const current = () => (pool ??= connect());
  return {
    db: { query: (text, values) => current().query(text, values) },
    pool: current,
    async close() {
      await pool?.end();
      pool = undefined;
    },
  };
}
