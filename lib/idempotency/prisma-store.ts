import { randomUUID } from "node:crypto";
import { Prisma, type PrismaClient } from "@/lib/generated/prisma/client";
import {
  claimKey,
  DISPOSABLE_WHEN_EXPIRED,
  takenOverClaim,
  type ClaimSteps,
  type ExistingKey,
  type KeyTimings,
} from "@/lib/idempotency/key-rules";
import {
  completionError,
  LeaseLostError,
  type AbandonedKey,
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyStore,
  type KeyCompletion,
} from "@/lib/idempotency/store";
import type { StoredResponse } from "@oncepay/idempotency";
import type { OrderRows } from "@/lib/orders/record";

/**
 * The idempotency store as a Prisma user writes it: the ORM's queries, an
 * interactive transaction in which the order (with its items and payment,
 * by nested create) and the key's completion commit together, and SQL only
 * where the ORM has no words for it (the claim's ON CONFLICT DO NOTHING,
 * the database's clock). The one to copy when your app speaks Prisma and a
 * checkout's few extra round trips do not matter (docs/stores.md compares
 * it with SqlIdempotencyStore).
 *
 * The database's clock: Prisma's queries compare and write only values the
 * client sends, and a lease must end by the database's clock, so that app
 * instances with skewed clocks agree on it. A step that compares or writes a
 * lease's time first reads `now()` from the database (databaseNow). A time
 * read a moment early is safe: the lease looks alive a moment longer.
 */
export class PrismaIdempotencyStore implements IdempotencyStore, ClaimSteps {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly timings: KeyTimings,
  ) {}

  async claimKey(request: ClaimRequest): Promise<ClaimResult> {
    return claimKey(this, request);
  }

  /**
   * The claim. Prisma's `create` has no ON CONFLICT DO NOTHING (a duplicate
   * is an error, P2002, which inside a transaction aborts it), so the claim
   * is SQL: the unique index on (account_id, idem_key) lets exactly one of
   * any number of concurrent INSERTs get a row back. It also returns the
   * database's clock, for judging an existing row's lease and TTL.
   */
  async insertOrRead(
    request: ClaimRequest,
    leaseOwner: string,
  ): Promise<{ claimedId: string } | { claimedId: null; existing: ExistingKey | null }> {
    const { leaseSeconds, ttlSeconds } = this.timings;
    const [row] = await this.prisma.$queryRaw<{ claimed_id: string | null; now: Date }[]>`
      WITH claimed AS (
        INSERT INTO idempotency_keys (account_id, idem_key, request_method, request_path, fingerprint, request_body,
                                      lease_owner, lease_expires_at, expires_at)
        VALUES (${request.accountId}::uuid, ${request.key}, ${request.method}, ${request.path}, ${request.fingerprint},
                ${JSON.stringify(request.body)}::jsonb, ${leaseOwner}::uuid,
                now() + make_interval(secs => ${leaseSeconds}), now() + make_interval(secs => ${ttlSeconds}))
        ON CONFLICT (account_id, idem_key) DO NOTHING
        RETURNING id
      )
      SELECT (SELECT id FROM claimed) AS claimed_id, now() AS now`;
    const { claimed_id: claimedId, now } = row!;
    if (claimedId) return { claimedId };
    const key = await this.prisma.idempotencyKey.findUnique({
      where: { accountId_idemKey: { accountId: request.accountId, idemKey: request.key } },
      select: {
        id: true,
        fingerprint: true,
        state: true,
        recoveryPoint: true,
        leaseExpiresAt: true,
        expiresAt: true,
        responseStatus: true,
        responseHeaders: true,
        responseBody: true,
      },
    });
    if (!key) return { claimedId: null, existing: null };
    const complete = key.state === "complete";
    const leaseExpired = key.leaseExpiresAt !== null && key.leaseExpiresAt <= now;
    // DISPOSABLE_WHEN_EXPIRED, on the row as read (the DELETE checks it again).
    const disposable =
      key.expiresAt <= now &&
      (complete ||
        (key.recoveryPoint === "claimed" && (key.leaseExpiresAt === null || leaseExpired)));
    return {
      claimedId: null,
      existing: {
        id: key.id,
        fingerprint: key.fingerprint,
        complete,
        disposable,
        leaseExpired,
        response: () => storedResponseOf(key),
      },
    };
  }

  /** The same DELETE as the reaper's: the condition repeated, so a key taken over or completed meanwhile stays. */
  async deleteIfDisposable(keyId: string): Promise<void> {
    await this.prisma.$executeRaw`
      DELETE FROM idempotency_keys WHERE id = ${keyId}::uuid AND ${Prisma.raw(DISPOSABLE_WHEN_EXPIRED)}`;
  }

  /** Takes over a key whose holder's lease ran out. The UPDATE re-checks the lease on the newest row version: one winner. */
  async takeOverKey(keyId: string): Promise<Claim | undefined> {
    const leaseOwner = randomUUID();
    const now = await this.databaseNow();
    const { count } = await this.prisma.idempotencyKey.updateMany({
      where: { id: keyId, state: "in_flight", leaseExpiresAt: { lte: now } },
      data: { leaseOwner, leaseExpiresAt: this.leaseEndFrom(now) },
    });
    if (count !== 1) return undefined;
    const row = await this.prisma.idempotencyKey.findUniqueOrThrow({
      where: { id: keyId },
      select: {
        recoveryPoint: true,
        paymentRequest: true,
        chargeResult: true,
        paymentStartedAt: true,
        providerKeyGeneration: true,
      },
    });
    return takenOverClaim(keyId, leaseOwner, {
      recovery_point: row.recoveryPoint,
      payment_request: row.paymentRequest,
      charge_result: row.chargeResult,
      payment_started_at: row.paymentStartedAt,
      provider_key_generation: row.providerKeyGeneration,
    });
  }

  async findAbandonedKeys(limit: number): Promise<AbandonedKey[]> {
    const now = await this.databaseNow();
    const keys = await this.prisma.idempotencyKey.findMany({
      where: { state: "in_flight", leaseExpiresAt: { lte: now } },
      orderBy: { leaseExpiresAt: "asc" },
      take: limit,
      select: {
        id: true,
        accountId: true,
        idemKey: true,
        fingerprint: true,
        requestMethod: true,
        requestPath: true,
        requestBody: true,
      },
    });
    return keys.map((key) => ({
      keyId: key.id,
      accountId: key.accountId,
      idempotencyKey: key.idemKey,
      fingerprint: key.fingerprint,
      method: key.requestMethod,
      path: key.requestPath,
      requestBody: key.requestBody,
    }));
  }

  async markPaymentStarted(claim: Claim, paymentRequest: unknown): Promise<void> {
    const now = await this.databaseNow();
    await this.updateHeld(claim, {
      recoveryPoint: "payment_started",
      paymentRequest: paymentRequest as Prisma.InputJsonValue,
      paymentStartedAt: now,
      leaseExpiresAt: this.leaseEndFrom(now),
    });
    claim.recoveryPoint = "payment_started";
    claim.paymentRequest = paymentRequest;
    claim.paymentStartedAt = now;
  }

  async startNextProviderKey(claim: Claim): Promise<void> {
    const now = await this.databaseNow();
    await this.updateHeld(claim, {
      providerKeyGeneration: { increment: 1 },
      paymentStartedAt: now,
      leaseExpiresAt: this.leaseEndFrom(now),
    });
    claim.providerKeyGeneration += 1;
    claim.paymentStartedAt = now;
  }

  async recordCharge(claim: Claim, chargeResult: unknown): Promise<void> {
    const now = await this.databaseNow();
    await this.updateHeld(claim, {
      recoveryPoint: "charged",
      chargeResult: chargeResult as Prisma.InputJsonValue,
      chargedAt: now,
    });
    claim.recoveryPoint = "charged";
    claim.chargeResult = chargeResult;
  }

  /**
   * One interactive transaction: the key completes, on condition that our
   * lease still holds it, and the order is created with its items and
   * payment. If another attempt took the key over, the update matches
   * nothing and the throw rolls the transaction back, so nothing is written.
   */
  async completeKey(claim: Claim, completion: KeyCompletion): Promise<void> {
    const { response, rows } = completion;
    await this.prisma
      .$transaction(async (tx) => {
        const { count } = await tx.idempotencyKey.updateMany({
          where: { id: claim.keyId, leaseOwner: claim.leaseOwner, state: "in_flight" },
          data: {
            state: "complete",
            recoveryPoint: "finished",
            responseStatus: response.status,
            responseHeaders: response.headers,
            responseBody: response.body as Prisma.InputJsonValue,
            // A label for the key inspector, never compared with a lease, so
            // this instance's clock may set it, as it sets the order's time.
            completedAt: new Date(),
            leaseOwner: null,
            leaseExpiresAt: null,
          },
        });
        if (count !== 1) throw new LeaseLostError(claim.keyId);
        if (rows) await createOrderRows(tx, rows);
      })
      .catch((error: unknown) => {
        throw completionError(error, completion);
      });
  }

  async endLease(claim: Claim): Promise<void> {
    const now = await this.databaseNow();
    await this.prisma.idempotencyKey.updateMany({
      where: { id: claim.keyId, leaseOwner: claim.leaseOwner, state: "in_flight" },
      data: { leaseExpiresAt: now },
    });
  }

  async releaseKey(claim: Claim): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({
      where: { id: claim.keyId, leaseOwner: claim.leaseOwner, state: "in_flight" },
    });
  }

  /** Updates the key only while our lease holds it; throws LeaseLostError otherwise. */
  private async updateHeld(
    claim: Claim,
    data: Prisma.IdempotencyKeyUpdateManyMutationInput,
  ): Promise<void> {
    const { count } = await this.prisma.idempotencyKey.updateMany({
      where: { id: claim.keyId, leaseOwner: claim.leaseOwner, state: "in_flight" },
      data,
    });
    if (count !== 1) throw new LeaseLostError(claim.keyId);
  }

  private async databaseNow(): Promise<Date> {
    const [row] = await this.prisma.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    return row!.now;
  }

  private leaseEndFrom(now: Date): Date {
    return new Date(now.getTime() + this.timings.leaseSeconds * 1000);
  }
}

/** The order with its items and payment by nested create, or the declined payment alone. */
async function createOrderRows(
  tx: Prisma.TransactionClient,
  { order, payment }: OrderRows,
): Promise<void> {
  if (order === null) {
    await tx.payment.create({ data: payment, select: { id: true } });
    return;
  }
  await tx.order.create({
    data: { ...order, items: { create: order.items }, payment: { create: payment } },
    select: { id: true },
  });
}

function storedResponseOf(row: {
  responseStatus: number | null;
  responseHeaders: Prisma.JsonValue;
  responseBody: Prisma.JsonValue;
}): StoredResponse {
  return {
    status: row.responseStatus ?? 500,
    headers: (row.responseHeaders ?? {}) as Record<string, string>,
    body: row.responseBody,
  };
}
