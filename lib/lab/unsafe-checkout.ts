import { takeLostResponse } from "@/lib/demo/settings";
import { lostResponse } from "@/lib/http/lost-response";
import {
  chargeOnce,
  labResponse,
  recordLabOutcome,
  runLabCheckout,
  type LabServices,
} from "@/lib/lab/lab-checkout";

/**
 * BROKEN ON PURPOSE: the lab's "no key" strategy, POST /api/lab/unsafe-orders.
 *
 * It charges and writes an order on every request, with no Idempotency-Key
 * and no claim, so a client that retries after a lost response pays twice,
 * and a storm of N identical requests pays N times. Everything else (who is
 * asking, pricing, the charge, the order) is what the other strategies share
 * (lab-checkout.ts). Like every demo fault, it exists only on a server
 * started with DEMO_FAULTS=on; otherwise it is a 403 and charges nothing.
 */
export async function createUnsafeOrder(
  request: Request,
  services: LabServices,
): Promise<Response> {
  return runLabCheckout(request, services, "no_key", async (checkout) => {
    // Nothing tells a retry from a new purchase.
    const charged = await chargeOnce(checkout);
    await checkout.crashPoint("after-charge");
    const result = await recordLabOutcome(checkout.statements, checkout, charged, null);

    if (await takeLostResponse(checkout.db, checkout.accountId)) return lostResponse();
    return labResponse(result);
  });
}
