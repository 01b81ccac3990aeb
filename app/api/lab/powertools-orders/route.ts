import { apiMethods } from "@/lib/http/api-route";
import { labCheckouts } from "@/lib/api/lab-checkouts";

// The lab's Powertools idempotency (a common design, run for real); see lib/lab/powertools-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: labCheckouts.powertools,
});
