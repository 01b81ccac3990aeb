import type { KeyRequestsView } from "@/lib/ledger/key-requests";

/**
 * A key's row as the key page reads it (lib/ledger/key-inspection.ts), and
 * what every key shows whichever its operation: shared by the checkout's
 * and the refund's descriptions of their keys.
 */

/** A key's row as both operations read it. */
export interface KeyRow {
  id: string;
  idem_key: string;
  state: "in_flight" | "complete";
  recovery_point: string;
  operation: string;
  /** What the engine keeps of the request, for a resume: the checkout's cart, the refund's order and amount. */
  request: unknown;
  created_at: Date;
  /** When the key reached each point it moved to, by the point's name. */
  points_reached: Record<string, string | undefined>;
  completed_at: Date | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  lease_expired: boolean | null;
  expires_at: Date;
  fingerprint: string;
  response_status: number | null;
  side_effect_generation: number;
}

/** What every key shows, whichever its operation, as the operation's module receives it. */
export interface CommonKeyFields {
  object: "idempotency_key";
  key: string;
  state: KeyRow["state"];
  lease: { owner: string; expiresAt: string; expired: boolean } | null;
  expiresAt: string;
  fingerprint: string;
  response: { status: number } | null;
  requests: KeyRequestsView;
}

/** When the key reached `point` (the engine keeps each point it moved to by name), as the API writes times; null if it has not. */
export function reachedAt(row: KeyRow, point: string): string | null {
  const at = row.points_reached[point];
  return at === undefined ? null : new Date(at).toISOString();
}

/** A recovery point the row holds, checked against the operation's own list. */
export function recoveryPointOf<Point extends string>(
  row: KeyRow,
  points: readonly Point[],
): Point {
  const point = points.find((one) => one === row.recovery_point);
  if (!point)
    throw new Error(
      `Key ${row.id} (${row.operation}) is at an unknown point: ${row.recovery_point}`,
    );
  return point;
}
