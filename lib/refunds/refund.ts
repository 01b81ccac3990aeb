import { randomUUID } from "node:crypto";
import { z } from "zod";
import {
  defineOperation,
  SideEffectOutcomeUnknown,
  SideEffectRejected,
  type Operation,
  type PhaseContext,
  type SideEffectContext,
  type Step,
  type StoredResponse,
} from "@oncepay/idempotency";
import { assertNever } from "@/lib/assert-never";
import { injectFault, type FaultName } from "@/lib/faults";
import { IDEMPOTENCY_KEY_HEADER } from "@/lib/http/headers";
import { problemType, storedProblem } from "@/lib/http/problem";
import { addToContext } from "@/lib/observability/request-context";
import {
  PaymentProviderError,
  refundResultSchema,
  type RefundProvider,
  type RefundResult,
} from "@/lib/payments/provider";
import { refundProviderKey } from "@/lib/refunds/provider-key";
import { parseRefundRequest, type RefundRequest } from "@/lib/refunds/refund-request";
import {
  lockPayment,
  recordRefunded,
  recordRefused,
  reserveRefund,
  type RunStatement,
} from "@/lib/refunds/refund-rows";
import type { RefundView } from "@/lib/refunds/refund-view";

/**
 * POST /api/orders/{id}/refunds as an operation of the engine package, the
 * shop's second after the checkout:
 *
 *   claimed          atomic: locks the order's payment, checks what is left
 *                    to refund, and reserves the amount with a pending refund
 *                    (refund_started), durably, before the provider hears of it
 *   refund_started   side effect: asks the provider under the request's
 *                    refund key; its answer (provider_answered) is kept
 *                    with the key in the next phase's commit
 *   provider_answered atomic: records the refund (or the refusal, which
 *                    gives the amount back), the provider's answer and the
 *                    completed key, in one commit
 *
 * The reservation is what keeps refunds under different keys, in flight at
 * once, from refunding more than was charged: each waits for the payment's
 * row lock, and sees what the ones before it reserved. A refund the
 * provider makes always has its row first, so nothing is refunded there
 * that the shop does not know of.
 */
export const REFUND = "refund";

export interface RefundDeps<Tx> {
  provider: RefundProvider;
  /** Runs the refund's statements in the engine's transaction of the shop's store. */
  statements: (tx: Tx) => RunStatement;
  /** A failure this request asked for (tests and demos only). */
  fault?: FaultName;
}

export function refundOperation<Tx>(deps: RefundDeps<Tx>): Operation<RefundRequest, Tx> {
  return defineOperation<RefundRequest, Tx>({
    name: REFUND,
    parse: parseRefundRequest,
    phases: [
      {
        kind: "atomic",
        point: "claimed",
        run: (context, tx) => reserve(deps, context, deps.statements(tx)),
      },
      {
        kind: "side-effect",
        point: "refund_started",
        sideEffectKey: refundProviderKey,
        run: (context) => askProvider(deps, context),
      },
      {
        kind: "atomic",
        point: "provider_answered",
        run: (context, tx) => record(deps, context, deps.statements(tx)),
      },
    ],
  });
}

/** What the phases keep with the key: the reserved refund, then the provider's answer. */
const progressSchema = z.object({
  refund: z
    .object({
      id: z.uuid(),
      providerPaymentId: z.string(),
      amount: z.number().int(),
      currency: z.string(),
      createdAt: z.iso.datetime(),
    })
    .optional(),
  answer: refundResultSchema.optional(),
  providerKey: z.string().optional(),
});
type Progress = z.infer<typeof progressSchema>;

function progressOf(context: PhaseContext<RefundRequest>): Progress {
  const parsed = progressSchema.safeParse(context.progress);
  // Only this module writes it; a row that does not parse is a bug, not a retryable failure.
  if (!parsed.success)
    throw new Error(`The refund's progress does not parse: ${parsed.error.message}`);
  return parsed.data;
}

async function reserve<Tx>(
  deps: RefundDeps<Tx>,
  context: PhaseContext<RefundRequest>,
  run: RunStatement,
): Promise<Step> {
  const { request, input } = context;
  const payment = await lockPayment(run, request.scope, input.orderId);
  if (!payment) return { response: orderNotFound(input.orderId) };
  const left = payment.amount - payment.refundedAmount;
  const amount = input.amount ?? left;
  if (left === 0 || amount > left)
    return { response: exceedsBalance(input, payment.amount, left, payment.currency) };
  const refund = { id: randomUUID(), amount };
  const { createdAt } = await reserveRefund(run, payment, {
    ...refund,
    accountId: request.scope,
    orderId: input.orderId,
    keyId: request.keyId,
    idempotencyKey: request.key,
    providerKey: refundProviderKey(request, 0),
  });
  // Nothing of the refund is committed yet: a failure here releases the key.
  injectFault(deps.fault, "after-claim");
  return {
    to: "refund_started",
    progress: {
      refund: {
        ...refund,
        providerPaymentId: payment.providerPaymentId,
        currency: payment.currency,
        createdAt: createdAt.toISOString(),
      },
    },
  };
}

async function askProvider<Tx>(
  deps: RefundDeps<Tx>,
  context: SideEffectContext<RefundRequest>,
): Promise<Step> {
  const { refund } = progressOf(context);
  if (!refund) throw new Error("The refund reached refund_started without its reservation");
  addToContext({ providerKey: context.sideEffectKey });
  let answer: RefundResult;
  try {
    answer = await deps.provider.refund({
      providerPaymentId: refund.providerPaymentId,
      amount: refund.amount,
      idempotencyKey: context.sideEffectKey,
    });
  } catch (error) {
    throw asRefundFailure(error);
  }
  injectFault(deps.fault, "after-charge");
  return { to: "provider_answered", progress: { answer, providerKey: context.sideEffectKey } };
}

async function record<Tx>(
  deps: RefundDeps<Tx>,
  context: PhaseContext<RefundRequest>,
  run: RunStatement,
): Promise<Step> {
  const { refund, answer, providerKey } = progressOf(context);
  if (!refund || !answer || !providerKey)
    throw new Error("The refund reached provider_answered without the provider's answer");
  const { input } = context;
  // The last moment nothing of the outcome is written: its commit completes the key.
  injectFault(deps.fault, "before-commit");
  if (answer.status === "refused") {
    await recordRefused(run, refund.id, answer.code);
    return { response: refusedByProvider(answer.message) };
  }
  if (await recordRefunded(run, refund.id, answer.providerRefundId, providerKey)) {
    const view: RefundView = {
      id: refund.id,
      object: "refund",
      orderId: input.orderId,
      status: "succeeded",
      amount: answer.amount,
      currency: refund.currency,
      providerRefundId: answer.providerRefundId,
      createdAt: refund.createdAt,
    };
    return { response: { status: 201, headers: JSON_HEADERS, body: view } };
  }
  // The provider answered with a refund an earlier key row recorded: this
  // key was reused after it expired, for the same refund. That refund is
  // already counted; this one gives its reservation back.
  await recordRefused(run, refund.id, "already_recorded");
  return { response: expiredKeyReused(answer.providerRefundId) };
}

const JSON_HEADERS = { "Content-Type": "application/json" };

function problem(slug: string, title: string, status: number, detail: string): StoredResponse {
  return storedProblem({ type: problemType(slug), title, status, detail });
}

function orderNotFound(orderId: string): StoredResponse {
  return problem(
    "order-not-found",
    "Order not found",
    404,
    `No paid order ${orderId} for this account: nothing was refunded.`,
  );
}

function exceedsBalance(
  input: RefundRequest,
  charged: number,
  left: number,
  currency: string,
): StoredResponse {
  const asked = input.amount === undefined ? "the rest" : `${input.amount}`;
  return problem(
    "refund-exceeds-balance",
    "Refund larger than what is left to refund",
    422,
    left === 0
      ? `Order ${input.orderId} is refunded in full (${charged} ${currency} in minor units): nothing was refunded now.`
      : `Order ${input.orderId} has ${left} of ${charged} ${currency} (minor units) left to refund, counting refunds still in progress; this request asked for ${asked}. Nothing was refunded: send a new request, with a new ${IDEMPOTENCY_KEY_HEADER}, for at most ${left}.`,
  );
}

function refusedByProvider(message: string): StoredResponse {
  return problem(
    "refund-refused",
    "The payment provider refused the refund",
    422,
    `The payment provider refused this refund, so nothing was refunded: ${message}`,
  );
}

function expiredKeyReused(providerRefundId: string): StoredResponse {
  return problem(
    "idempotency-key-expired",
    "Idempotency key reused after it expired",
    422,
    `This ${IDEMPOTENCY_KEY_HEADER} was used for an earlier refund of the same amount, whose refund (${providerRefundId}) the payment provider still remembers and our records already hold. Nothing was refunded now. Send a new request with a new key.`,
  );
}

function asRefundFailure(error: unknown): unknown {
  if (!(error instanceof PaymentProviderError)) return error;
  switch (error.outcome) {
    case "rejected":
      return new SideEffectRejected(
        "The payment provider refused the request, so nothing was refunded. This is a problem on our side; the same key can be retried once it is fixed.",
        { cause: error },
      );
    case "unknown":
    case "absent":
      return new SideEffectOutcomeUnknown(
        "The payment provider did not answer in time. Retry with the same Idempotency-Key: it resumes this refund and never refunds twice.",
        { cause: error },
      );
    default:
      return assertNever(error.outcome, "provider error outcome");
  }
}
