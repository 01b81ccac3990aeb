import { apiMethods } from "@/lib/http/api-route";
import { createPowertoolsOrder } from "@/lib/lab/powertools-checkout";

// The lab's Powertools idempotency (a common design, run for real); see lib/lab/powertools-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: createPowertoolsOrder,
});
