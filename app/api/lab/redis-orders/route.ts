import { apiMethods } from "@/lib/http/api-route";
import { labCheckouts } from "@/lib/api/lab-checkouts";

// The lab's separate key store on Redis (a common design, run for real); see lib/lab/redis-key-store-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: labCheckouts.redisKeyStore,
});
