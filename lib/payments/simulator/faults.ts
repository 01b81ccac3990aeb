import { z } from "zod";

/**
 * Injected trouble, for tests and demos, set with `PUT /_simulator/faults`
 * and held in memory by one simulator process:
 *
 *   latencyMs   every POST that moves money (POST /v1/payment_intents, POST
 *               /v1/refunds) waits this long after claiming its
 *               Idempotency-Key and before charging or refunding: a slow
 *               card network.
 *               A second request with the same key meanwhile gets 409.
 *               Stays until changed.
 *   failNext    one-shot; the next API request (any /v1/ request, after its
 *               API key is checked) fails, then the fault is cleared:
 *     "http_500"         answered 500 api_error before it reaches the ledger:
 *                        nothing is claimed, charged or stored, so a retry
 *                        with the same key runs for the first time.
 *     "drop_connection"  runs to completion (charged, response stored under
 *                        its key), then the connection is destroyed without
 *                        a response: the lost-response case. A retry with
 *                        the same key gets the stored response, replayed.
 *     "http_500_stored_after_charge"
 *                        charges (or refunds), then answers 500 api_error
 *                        and stores that 500 under the key instead of the
 *                        charge, as Stripe
 *                        does when it fails while executing a request: every
 *                        retry with the key replays the 500 (with
 *                        Stripe-Should-Retry: false) for the key's 24 hours,
 *                        and only looking the PaymentIntent up tells what
 *                        happened.
 *     "http_500_stored_before_charge"
 *                        the same stored, replayed 500, but nothing was
 *                        charged (or refunded): the case where the lookup
 *                        finds nothing.
 *
 * A PUT replaces the whole setting: omitted fields go back to their defaults,
 * so `PUT {}` clears everything.
 */
export const faultSettingsSchema = z
  .object({
    // Below the idempotency lease (60 s, idempotency.ts), so a slow attempt is never taken over.
    latencyMs: z.number().int().min(0).max(30_000).default(0),
    failNext: z
      .enum([
        "http_500",
        "drop_connection",
        "http_500_stored_after_charge",
        "http_500_stored_before_charge",
      ])
      .nullable()
      .default(null),
  })
  .strict();

export type FaultSettings = z.infer<typeof faultSettingsSchema>;
export type FailureMode = NonNullable<FaultSettings["failNext"]>;

export class Faults {
  private settings: FaultSettings = faultSettingsSchema.parse({});

  current(): FaultSettings {
    return { ...this.settings };
  }

  replace(settings: FaultSettings): FaultSettings {
    this.settings = { ...settings };
    return this.current();
  }

  get latencyMs(): number {
    return this.settings.latencyMs;
  }

  /**
   * Takes the one-shot failure, if any. JavaScript runs this without
   * interruption, so of concurrent requests exactly one gets it.
   */
  takeFailure(): FailureMode | null {
    const failure = this.settings.failNext;
    this.settings = { ...this.settings, failNext: null };
    return failure;
  }
}
