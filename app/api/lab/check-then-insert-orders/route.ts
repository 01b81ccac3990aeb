import { apiMethods } from "@/lib/http/api-route";
import { createCheckThenInsertOrder } from "@/lib/lab/check-then-insert-checkout";

// The lab's deliberately broken "check, then insert" checkout; see lib/lab/check-then-insert-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: createCheckThenInsertOrder,
});
