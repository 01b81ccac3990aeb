import { apiMethods } from "@/lib/http/api-route";
import { createUnsafeOrder } from "@/lib/lab/unsafe-checkout";

// The lab's deliberately broken "no key" checkout; see lib/lab/unsafe-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({ POST: createUnsafeOrder });
