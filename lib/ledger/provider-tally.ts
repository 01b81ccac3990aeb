import { errorFields, log } from "@/lib/log";
import {
  PaymentLookupError,
  type PaymentRecords,
  type ProviderPayment,
} from "@/lib/payments/provider";

/**
 * What the payment provider holds for one purchase intent, counted from its
 * own records (Stripe's search API; the simulator speaks it too), not from
 * ours: the ledger's and the lab's proof that an intent was charged once
 * must come from the side that moved the money.
 *
 * A PaymentIntent that succeeded is one successful charge (OncePay creates
 * and confirms each in one call, with automatic capture); any other status
 * is an attempt that took no money (a decline).
 */
export type ProviderTally =
  | {
      available: true;
      charges: number;
      declined: number;
      amountCharged: number;
      payments: ProviderPayment[];
    }
  | { available: false; detail: string };

export async function tallyAtProvider(
  records: PaymentRecords,
  metadata: Record<string, string>,
): Promise<ProviderTally> {
  let payments: ProviderPayment[];
  try {
    payments = await records.findPayments(metadata);
  } catch (error) {
    if (error instanceof PaymentLookupError) return providerUnreachable(error);
    throw error;
  }
  const succeeded = payments.filter((payment) => payment.status === "succeeded");
  return {
    available: true,
    charges: succeeded.length,
    declined: payments.length - succeeded.length,
    amountCharged: succeeded.reduce((sum, payment) => sum + payment.amount, 0),
    payments,
  };
}

/**
 * A lookup that failed, as a reader shows it: that the provider could not
 * be asked, in words of ours. What its client said (a host, a port, a
 * message from the SDK) is logged, under the request's id, for an operator.
 */
export function providerUnreachable(error: PaymentLookupError): {
  available: false;
  detail: string;
} {
  log.warn("provider.lookup_failed", errorFields(error));
  return { available: false, detail: PROVIDER_UNREACHABLE_DETAIL };
}

export const PROVIDER_UNREACHABLE_DETAIL =
  "The payment provider could not be asked just now, so nothing here is counted from its records. Reload in a moment.";
