import type { Queryable } from "@/lib/testing/rows";

/**
 * What must hold at every moment of a soak, for the soak's own accounts,
 * read straight from our tables and the payment simulator's (both live in
 * the app's database). A breach is named with a count, never thrown: the
 * soak reports every one it sees.
 *
 * Checked while traffic runs:
 * - one order per cart (each purchase has its own cart id; a storm shares
 *   one): two orders for one cart is a double charge to the shopper;
 * - every order has its payment row;
 * - at most one successful charge per provider key;
 * - no key in flight past its lease plus the recovery interval and a little
 *   slack: the recovery worker must have finished or released it.
 * Checked once traffic has stopped and in-flight keys have settled:
 * - the provider's charges equal our payment rows, succeeded and failed
 *   alike: no charge without its order, no order without its charge.
 */
export interface InvariantCounts {
  duplicateOrders: number;
  ordersWithoutPayment: number;
  duplicateCharges: number;
  stuckKeys: number;
}

export interface SettledCounts {
  succeededCharges: number;
  succeededPayments: number;
  failedCharges: number;
  declinedPayments: number;
  inFlightKeys: number;
}

export async function checkInvariants(
  db: Queryable,
  accountIds: string[],
  stuckAfterSeconds: number,
): Promise<InvariantCounts> {
  const { rows } = await db.query<InvariantCounts>(
    `SELECT
       (SELECT count(*)::int FROM (SELECT 1 FROM orders WHERE account_id = ANY($1::uuid[]) GROUP BY account_id, cart_id HAVING count(*) > 1) d) AS "duplicateOrders",
       (SELECT count(*)::int FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.account_id = ANY($1::uuid[]) AND p.id IS NULL) AS "ordersWithoutPayment",
       (SELECT count(*)::int FROM (
          SELECT 1 FROM payment_simulator.charges c JOIN payment_simulator.payment_intents pi ON pi.id = c.payment_intent
           WHERE c.status = 'succeeded' AND split_part(pi.idempotency_key, ':', 2) = ANY($1::text[])
           GROUP BY pi.idempotency_key HAVING count(*) > 1) d) AS "duplicateCharges",
       (SELECT count(*)::int FROM idempotency_keys
         WHERE scope = ANY($1::text[]) AND state = 'in_flight' AND lease_expires_at < now() - make_interval(secs => $2)) AS "stuckKeys"`,
    [accountIds, stuckAfterSeconds],
  );
  return rows[0]!;
}

export async function settledCounts(db: Queryable, accountIds: string[]): Promise<SettledCounts> {
  const { rows } = await db.query<SettledCounts>(
    `SELECT
       (SELECT count(*)::int FROM payment_simulator.charges c JOIN payment_simulator.payment_intents pi ON pi.id = c.payment_intent
         WHERE c.status = 'succeeded' AND split_part(pi.idempotency_key, ':', 2) = ANY($1::text[])) AS "succeededCharges",
       (SELECT count(*)::int FROM payments WHERE account_id = ANY($1::uuid[]) AND status = 'succeeded') AS "succeededPayments",
       (SELECT count(*)::int FROM payment_simulator.charges c JOIN payment_simulator.payment_intents pi ON pi.id = c.payment_intent
         WHERE c.status = 'failed' AND split_part(pi.idempotency_key, ':', 2) = ANY($1::text[])) AS "failedCharges",
       (SELECT count(*)::int FROM payments WHERE account_id = ANY($1::uuid[]) AND status = 'declined') AS "declinedPayments",
       (SELECT count(*)::int FROM idempotency_keys WHERE scope = ANY($1::text[]) AND state = 'in_flight') AS "inFlightKeys"`,
    [accountIds],
  );
  return rows[0]!;
}

export function breaches(counts: InvariantCounts): string[] {
  return (Object.entries(counts) as [keyof InvariantCounts, number][])
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name}: ${n}`);
}

export function settledBreaches(counts: SettledCounts): string[] {
  const found: string[] = [];
  if (counts.inFlightKeys > 0) found.push(`inFlightKeys after settling: ${counts.inFlightKeys}`);
  if (counts.succeededCharges !== counts.succeededPayments)
    found.push(
      `succeeded charges ${counts.succeededCharges} ≠ payments ${counts.succeededPayments}`,
    );
  if (counts.failedCharges !== counts.declinedPayments)
    found.push(
      `failed charges ${counts.failedCharges} ≠ declined payments ${counts.declinedPayments}`,
    );
  return found;
}
