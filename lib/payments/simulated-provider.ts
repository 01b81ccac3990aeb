import { createHash } from "node:crypto";
import type { ChargeRequest, ChargeResult, PaymentProvider } from "@/lib/payments/provider";

/**
 * An in-process stand-in for a card processor, answering like Stripe's test
 * mode: `pm_card_visa` succeeds, `pm_card_chargeDeclined` is declined with
 * `card_declined`. The payment id is derived from the idempotency key, so a
 * repeated charge for one key names the same payment, as it would at Stripe.
 */
export class SimulatedPaymentProvider implements PaymentProvider {
  readonly name = "simulated";

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const providerPaymentId = `pi_sim_${createHash("sha256").update(request.idempotencyKey).digest("hex").slice(0, 24)}`;
    if (request.paymentMethod === "pm_card_chargeDeclined") {
      return { status: "declined", providerPaymentId, declineCode: "card_declined", message: "Your card was declined." };
    }
    return { status: "succeeded", providerPaymentId };
  }
}
