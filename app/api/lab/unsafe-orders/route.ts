import { apiMethods } from "@/lib/http/api-route";
import { labCheckouts } from "@/lib/api/lab-checkouts";

// The lab's deliberately broken "no key" checkout; see lib/lab/unsafe-checkout.ts.
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({ POST: labCheckouts.unsafe });
