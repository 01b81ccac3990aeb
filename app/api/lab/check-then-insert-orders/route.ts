import { apiMethods } from "@/lib/http/api-route";
import { labCheckouts } from "@/lib/api/lab-checkouts";

// The lab's deliberately broken "check, then insert" checkout; see lib/lab/check-then-insert-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: labCheckouts.checkThenInsert,
});
