import {
  defineOperation,
  SideEffectOutcomeUnknown,
  SideEffectRejected,
  type Operation,
  type SideEffectContext,
} from "../../src/index.js";

/**
 * A service with Stripe's idempotency: one result per key, whatever the
 * number of calls. It counts calls and effects, so a test can tell "asked
 * twice" from "done twice".
 */
export class IdempotentService {
  readonly results = new Map<string, string>();
  calls = 0;
  /** The next call fails this way, once: `lost` does the effect and loses the answer. */
  nextFailure: "lost" | "unknown" | "rejected" | undefined;
  /** Keys the service will refuse for good (a stored failure it replays). */
  readonly deadKeys = new Set<string>();

  get effects(): number {
    return this.results.size;
  }

  async call(key: string, amount: number): Promise<string> {
    this.calls++;
    const failure = this.nextFailure;
    this.nextFailure = undefined;
    if (failure === "rejected" || this.deadKeys.has(key))
      throw new SideEffectRejected("The service refused the call.");
    if (failure === "unknown") throw new SideEffectOutcomeUnknown("The service did not answer.");
    let receipt = this.results.get(key);
    if (!receipt) {
      receipt = `receipt-${this.results.size + 1}-${amount}`;
      this.results.set(key, receipt);
    }
    if (failure === "lost") throw new SideEffectOutcomeUnknown("The answer was lost.");
    return receipt;
  }
}

/** The service as the operation calls it: in the test's process, or over HTTP (fake-service.ts). */
export interface Service {
  call(key: string, amount: number): Promise<string>;
}

/** Where a test stops an attempt dead, as a crash would: after the point's work, before what follows. */
export type CrashPoint = "in-first-phase" | "after-call" | "in-last-phase";

export class Crash extends Error {
  constructor(readonly point: CrashPoint) {
    super(`crashed ${point}`);
  }
}

export interface LedgerInput {
  amount: number;
}

/** How an operation writes a row of its own, in its store's transaction. */
export type EffectWriter<Tx> = (
  tx: Tx,
  row: { scope: string; label: string; keyId: string },
) => Promise<void>;

export interface LedgerOptions {
  name?: string;
  /** Called at each crash point: throwing there (Crash) or killing the process stops the attempt. */
  onPoint?: (point: CrashPoint) => void;
  /** Awaited before each call of the service (to hold an attempt in flight). */
  beforeCall?: () => Promise<void>;
}

/**
 * A three-phase operation shaped like a payment: reserve (a row of its
 * own, atomic), call the service (a side effect), record (a row, and the
 * response, atomic).
 */
export function ledgerOperation<Tx>(
  service: Service,
  writeEffect: EffectWriter<Tx>,
  options: LedgerOptions = {},
): Operation<LedgerInput, Tx> {
  const crash = (point: CrashPoint) => options.onPoint?.(point);
  return defineOperation<LedgerInput, Tx>({
    name: options.name ?? "ledger",
    parse(json) {
      const amount = (json as { amount?: unknown } | null)?.amount;
      if (typeof amount !== "number" || !Number.isInteger(amount) || amount <= 0)
        return {
          ok: false,
          detail: "amount must be a positive integer.",
          errors: [{ path: "amount", message: "a positive integer" }],
        };
      return { ok: true, input: { amount }, stored: { amount } };
    },
    phases: [
      {
        kind: "atomic",
        point: "started",
        async run({ request }, tx) {
          await writeEffect(tx, { scope: request.scope, label: "reserved", keyId: request.keyId });
          crash("in-first-phase");
          return { to: "calling" };
        },
      },
      {
        kind: "side-effect",
        point: "calling",
        async run({ input, sideEffectKey }) {
          await options.beforeCall?.();
          const receipt = await service.call(sideEffectKey, input.amount);
          crash("after-call");
          return { to: "recording", progress: { receipt } };
        },
      },
      {
        kind: "atomic",
        point: "recording",
        async run({ request, progress }, tx) {
          await writeEffect(tx, { scope: request.scope, label: "recorded", keyId: request.keyId });
          crash("in-last-phase");
          return {
            response: {
              status: 201,
              headers: { "Content-Type": "application/json" },
              body: { receipt: progress.receipt },
            },
          };
        },
      },
    ],
  });
}

/**
 * A two-phase operation that starts with its side effect, as a checkout
 * does: the claim records the amount (progressAtClaim), then the service is
 * called with it, then a row and the response are recorded (atomic).
 */
export function callFirstOperation<Tx>(
  service: Service,
  writeEffect: EffectWriter<Tx>,
  options: LedgerOptions & { rejectionReleasesKey?: boolean } = {},
): Operation<LedgerInput, Tx> {
  const ledger = ledgerOperation(service, writeEffect, options);
  const [, calling, recording] = ledger.phases;
  if (calling?.kind !== "side-effect" || !recording) throw new Error("the ledger's phases changed");
  return defineOperation<LedgerInput, Tx>({
    ...ledger,
    name: options.name ?? "call-first",
    progressAtClaim: ({ amount }) => ({ amount }),
    phases: [
      {
        ...calling,
        rejectionReleasesKey: options.rejectionReleasesKey,
        // The amount the claim recorded, not this attempt's, as a resume must.
        run: (context: SideEffectContext<LedgerInput>) =>
          calling.run({ ...context, input: { amount: Number(context.progress.amount) } }),
      },
      recording,
    ],
  });
}
