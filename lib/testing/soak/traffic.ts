import { randomUUID } from "node:crypto";
import {
  FAULT_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  RETRY_AFTER_HEADER,
} from "@/lib/http/headers";

/**
 * The soak's shoppers: API clients that behave as DESIGN.md asks a careful
 * client to (the same key and body on every retry, honouring Retry-After,
 * until a final answer), sending a mix of what real traffic holds. Each
 * scenario checks its own answers and reports what it saw; the database
 * invariants are checked apart (invariants.ts).
 */
export interface Shopper {
  accountId: string;
  token: string;
}

export interface Attempt {
  ms: number;
  status: number | null;
}

/** Where a scenario reports: every HTTP attempt (for throughput and latency), and anything that contradicts the contract. */
export interface TrafficLog {
  attempt(attempt: Attempt): void;
  contractBreach(scenario: string, detail: string): void;
}

interface Completed {
  shopper: Shopper;
  key: string;
  body: string;
  text: string;
  at: number;
}

// A careful client's budget for one request: longer than a lease (the soak's
// is short) plus a recovery interval and a provider fault or two.
const RETRY_BUDGET_MS = 30_000;
const CARTS: { sku: string; quantity: number }[][] = [
  [{ sku: "mug-ceramic-350", quantity: 2 }],
  [
    { sku: "beans-house-250", quantity: 1 },
    { sku: "filters-paper-100", quantity: 3 },
  ],
  [{ sku: "dripper-v60-02", quantity: 1 }],
];

export class Traffic {
  /** Completed checkouts to replay and to reuse with another body. */
  private readonly completed: Completed[] = [];

  constructor(
    private readonly baseUrl: string,
    private readonly shoppers: Shopper[],
    private readonly log: TrafficLog,
    /**
     * Only keys completed this recently are replayed or reused: an older one
     * may have expired (the soak's TTL is short, so the reaper works), and
     * then the same key is a new purchase, not a replay.
     */
    private readonly replayWindowMs: number,
  ) {}

  /**
   * One request of the mix, picked by weight: mostly new checkouts and
   * replays, some declines and misused keys, a storm now and then, and a
   * steady trickle of checkouts the server abandons after charging, which
   * only the recovery worker can finish.
   */
  async next(random: () => number = Math.random): Promise<void> {
    const roll = random();
    if (roll < 0.52) return this.newCheckout();
    if (roll < 0.72) return this.replay();
    if (roll < 0.8) return this.decline();
    if (roll < 0.87) return this.mismatchedPayload();
    if (roll < 0.92) return this.storm(random() < 0.5 ? 10 : 50);
    return this.abandonedAfterCharge();
  }

  private shopper(): Shopper {
    return this.shoppers[Math.floor(Math.random() * this.shoppers.length)]!;
  }

  private body(paymentMethod = "pm_card_visa"): string {
    return JSON.stringify({
      cartId: `soak_${randomUUID()}`,
      items: CARTS[Math.floor(Math.random() * CARTS.length)],
      paymentMethod,
    });
  }

  async newCheckout(): Promise<void> {
    const shopper = this.shopper();
    const key = randomUUID();
    const body = this.body();
    const answer = await this.untilFinal(shopper, key, body);
    if (answer.status !== 201)
      return this.log.contractBreach(
        "new checkout",
        `answered ${answer.status}: ${answer.text.slice(0, 200)}`,
      );
    this.remember({ shopper, key, body, text: answer.text, at: Date.now() });
  }

  async replay(): Promise<void> {
    const earlier = this.recent();
    if (!earlier) return this.newCheckout();
    const answer = await this.untilFinal(earlier.shopper, earlier.key, earlier.body);
    if (answer.text !== earlier.text || !answer.replayed) {
      this.log.contractBreach(
        "replay",
        `status ${answer.status}, replayed ${answer.replayed}, same bytes ${answer.text === earlier.text}`,
      );
    }
  }

  async decline(): Promise<void> {
    const shopper = this.shopper();
    const answer = await this.untilFinal(
      shopper,
      randomUUID(),
      this.body("pm_card_chargeDeclined"),
    );
    if (answer.status !== 402) this.log.contractBreach("decline", `answered ${answer.status}`);
  }

  async mismatchedPayload(): Promise<void> {
    const earlier = this.recent();
    if (!earlier) return this.newCheckout();
    const answer = await this.untilFinal(earlier.shopper, earlier.key, this.body());
    if (answer.status !== 422)
      this.log.contractBreach("mismatched payload", `answered ${answer.status}`);
  }

  /** `size` identical requests in flight at once: every one ends with the same 201. */
  async storm(size: number): Promise<void> {
    const shopper = this.shopper();
    const key = randomUUID();
    const body = this.body();
    const answers = await Promise.all(
      Array.from({ length: size }, () => this.untilFinal(shopper, key, body)),
    );
    const texts = new Set(answers.map((answer) => answer.text));
    if (answers.some((answer) => answer.status !== 201) || texts.size !== 1) {
      this.log.contractBreach(
        `${size}-way storm`,
        `statuses ${[...new Set(answers.map((answer) => answer.status))].join(",")}, ${texts.size} distinct bodies`,
      );
      return;
    }
    this.remember({ shopper, key, body, text: answers[0]!.text, at: Date.now() });
  }

  /**
   * The server fails after the charge and the client never retries: the
   * recovery worker alone must finish the order (the invariants see to it).
   */
  async abandonedAfterCharge(): Promise<void> {
    const shopper = this.shopper();
    const started = performance.now();
    const response = await this.send(shopper, randomUUID(), this.body(), {
      [FAULT_HEADER]: "after-charge",
    });
    this.log.attempt({ ms: performance.now() - started, status: response?.status ?? null });
    // 500 from the fault, or 503 when a provider fault struck first; never a success.
    if (response && response.status < 500)
      this.log.contractBreach("abandoned after charge", `answered ${response.status}`);
  }

  private remember(completed: Completed): void {
    this.completed.push(completed);
    // Enough to replay from; bounded so the soak itself does not grow.
    if (this.completed.length > 500) this.completed.splice(0, this.completed.length - 500);
  }

  private recent(): Completed | undefined {
    const since = Date.now() - this.replayWindowMs;
    const fresh = this.completed.filter((completed) => completed.at >= since);
    return fresh[Math.floor(Math.random() * fresh.length)];
  }

  private async untilFinal(
    shopper: Shopper,
    key: string,
    body: string,
  ): Promise<{ status: number; text: string; replayed: boolean }> {
    const deadline = Date.now() + RETRY_BUDGET_MS;
    for (;;) {
      const started = performance.now();
      const response = await this.send(shopper, key, body);
      const text = response ? await response.text().catch(() => null) : null;
      this.log.attempt({ ms: performance.now() - started, status: response?.status ?? null });
      const retryable =
        response === null || text === null || response.status === 409 || response.status >= 500;
      if (!retryable)
        return {
          status: response.status,
          text,
          replayed: response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === "true",
        };
      if (Date.now() > deadline)
        return { status: response?.status ?? 0, text: text ?? "no answer", replayed: false };
      const retryAfterSeconds = Number(response?.headers.get(RETRY_AFTER_HEADER) ?? 0);
      await new Promise((resolve) =>
        setTimeout(resolve, retryAfterSeconds > 0 ? retryAfterSeconds * 1000 : 200),
      );
    }
  }

  private async send(
    shopper: Shopper,
    key: string,
    body: string,
    headers: Record<string, string> = {},
  ): Promise<Response | null> {
    try {
      return await fetch(`${this.baseUrl}/api/orders`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${shopper.token}`,
          "Content-Type": "application/json",
          [IDEMPOTENCY_KEY_HEADER]: key,
          ...headers,
        },
        body,
      });
    } catch {
      return null; // the connection broke: a lost answer, retried like any other
    }
  }
}
