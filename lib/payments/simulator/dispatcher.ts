import type pg from "pg";
import { describeError, logEvent } from "@/lib/payments/simulator/log";
import { signatureHeader } from "@/lib/payments/simulator/webhook-signature";

/**
 * Posts events to webhook endpoints at least once, as Stripe does: each
 * delivery (one event for one endpoint, events.ts) is attempted until the
 * endpoint answers 2xx, after each failure waiting the next step of the
 * retry schedule, and given up (`failed`) once the schedule runs out. A
 * redirect, a timeout or a refused connection is a failure like a 500.
 *
 * Deliveries live in the database, so several simulators on one database
 * share them: each attempt first claims its row, pushing `next_attempt_at`
 * past the attempt's timeout (a lease), and no connection is held while the
 * endpoint is asked. A simulator that dies mid-attempt leaves the lease to
 * run out, and the delivery is attempted again: at least once, never lost.
 * An endpoint that is `held` (the admin API) keeps its deliveries waiting.
 */
export interface DispatcherOptions {
  /**
   * How long to wait after the 1st, 2nd, … failed attempt; after the last,
   * the delivery fails. Given to each endpoint this simulator makes, which
   * keeps it (any simulator on the database then retries its deliveries alike).
   */
  retryScheduleMs: readonly number[];
  /** How long one attempt may take before it counts as failed. */
  attemptTimeoutMs: number;
  /** How often to look for due deliveries when nothing pokes it. */
  pollMs: number;
}

/**
 * Stripe retries for up to three days; this is that schedule compressed to
 * about 45 minutes (seven attempts), short enough to watch in a demo and
 * long enough that an app restart does not lose an event.
 */
export const DEFAULT_RETRY_SCHEDULE_MS = [1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000];

export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = {
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
  attemptTimeoutMs: 10_000,
  pollMs: 500,
};

/** A delivery claimed for one attempt. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  event: string;
  endpoint: string;
  body: string;
  url: string;
  secret: string;
  retry_schedule_ms: number[];
}

/** What one attempt came to: the endpoint's status, or why there was none. */
export interface AttemptResult {
  id: string;
  event: string;
  endpoint: string;
  attempt: number;
  status: number | null;
  error: string | null;
  delivered: boolean;
}

// Due deliveries claimed per round; a round's attempts run at once.
const BATCH = 20;

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: DispatcherOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.poke(), this.options.pollMs);
    this.timer.unref();
    this.poke();
  }

  /** Look for due deliveries now (after a commit that may have made some). */
  poke(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.again) {
        this.again = false;
        this.poke();
      }
    });
  }

  /** Stops looking, abandons attempts in flight (their leases run out), and waits for the round to end. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.stopping.abort();
    await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const rows = await this.claimChosen(
          `SELECT d.id FROM payment_simulator.webhook_deliveries d
             JOIN payment_simulator.webhook_endpoints e ON e.id = d.endpoint
            WHERE d.state = 'pending' AND d.next_attempt_at <= now() AND NOT e.held
            ORDER BY d.next_attempt_at, d.id
            LIMIT $2`,
          BATCH,
        );
        await Promise.all(rows.map((delivery) => this.attempt(delivery)));
        if (rows.length < BATCH || this.closed) return;
      }
    } catch (error) {
      if (!this.closed)
        logEvent("warn", "payment_simulator.webhook_dispatch_failed", describeError(error));
    }
  }

  /**
   * Claims these pending deliveries at once, whether due or held (the admin
   * API delivers them on demand), in the order of their events, oldest first.
   */
  async claim(ids: readonly string[]): Promise<ClaimedDelivery[]> {
    const rows = await this.claimChosen(
      `SELECT d.id FROM payment_simulator.webhook_deliveries d
        WHERE d.id = ANY($2::bigint[]) AND d.state = 'pending'`,
      ids,
    );
    return rows.sort((a, b) => Number(a.seq) - Number(b.seq) || Number(a.id) - Number(b.id));
  }

  /**
   * Leases the deliveries `chosen` selects (which reads `parameter` as $2), skipping
   * any another simulator holds: each gets its attempt counted and its next
   * attempt pushed past this one's lease, in one statement.
   */
  private async claimChosen(
    chosen: string,
    parameter: unknown,
  ): Promise<(ClaimedDelivery & { seq: string })[]> {
    const { rows } = await this.pool.query<ClaimedDelivery & { seq: string }>(
      `WITH chosen AS (${chosen} FOR UPDATE OF d SKIP LOCKED)
       UPDATE payment_simulator.webhook_deliveries d
          SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $1)
         FROM chosen, payment_simulator.events ev, payment_simulator.webhook_endpoints e
        WHERE d.id = chosen.id AND ev.id = d.event AND e.id = d.endpoint
       RETURNING d.id, d.attempts, d.event, d.endpoint, ev.body, e.url, e.secret, e.retry_schedule_ms, ev.seq`,
      [this.leaseSeconds(), parameter],
    );
    return rows;
  }

  /** One attempt of a claimed delivery: post it, then record what came of it. */
  async attempt(delivery: ClaimedDelivery): Promise<AttemptResult> {
    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(delivery.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json; charset=utf-8",
          "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
          "Stripe-Signature": signatureHeader(
            delivery.secret,
            delivery.body,
            Math.floor(Date.now() / 1000),
          ),
        },
        body: delivery.body,
        // A redirect is not a delivery: Stripe does not follow them either.
        redirect: "manual",
        signal: AbortSignal.any([
          this.stopping.signal,
          AbortSignal.timeout(this.options.attemptTimeoutMs),
        ]),
      });
      status = response.status;
      await response.body?.cancel();
    } catch (failure) {
      error =
        failure instanceof Error
          ? ((failure.cause as Error | undefined)?.message ?? failure.message)
          : String(failure);
    }
    const result = {
      id: delivery.id,
      event: delivery.event,
      endpoint: delivery.endpoint,
      attempt: delivery.attempts,
      status,
      error,
      delivered: status !== null && status >= 200 && status < 300,
    };
    // Closing: the lease runs out and another simulator (or this one, started
    // again) makes the attempt; nothing is recorded for one cut short.
    if (!this.closed) await this.record(result, delivery.retry_schedule_ms[result.attempt - 1]);
    return result;
  }

  private async record(result: AttemptResult, retryInMs: number | undefined): Promise<void> {
    logEvent(result.delivered ? "debug" : "info", "payment_simulator.webhook_attempt", {
      ...result,
      retryInMs: result.delivered ? undefined : (retryInMs ?? null),
    });
    // `attempts = $n`: a late answer to an attempt whose lease ran out (and
    // that another attempt has taken over) records nothing.
    await this.pool.query(
      result.delivered
        ? `UPDATE payment_simulator.webhook_deliveries
              SET state = 'delivered', delivered_at = now(), last_status = $2, last_error = NULL
            WHERE id = $1 AND attempts = $3 AND state = 'pending'`
        : `UPDATE payment_simulator.webhook_deliveries
              SET last_status = $2, last_error = $4,
                  state = CASE WHEN $5::float8 IS NULL THEN 'failed' ELSE 'pending' END,
                  next_attempt_at = now() + make_interval(secs => coalesce($5::float8, 0) / 1000)
            WHERE id = $1 AND attempts = $3 AND state = 'pending'`,
      result.delivered
        ? [result.id, result.status, result.attempt]
        : [result.id, result.status, result.attempt, result.error, retryInMs ?? null],
    );
  }

  // The lease: well past an attempt's timeout, so no other simulator starts it meanwhile.
  private leaseSeconds(): number {
    return (2 * this.options.attemptTimeoutMs) / 1000 + 1;
  }
}
