import { apiMethods } from "@/lib/http/api-route";
import { createClaimAfterChargeOrder } from "@/lib/lab/claim-after-charge-checkout";

// The lab's deliberately broken "claim after the charge" checkout; see lib/lab/claim-after-charge-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: createClaimAfterChargeOrder,
});
