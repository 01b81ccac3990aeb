import { apiMethods } from "@/lib/http/api-route";
import { labCheckouts } from "@/lib/api/lab-checkouts";

// The lab's deliberately broken "claim after the charge" checkout; see lib/lab/claim-after-charge-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: labCheckouts.claimAfterCharge,
});
