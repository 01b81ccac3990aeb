import { receiveStripeWebhook } from "@/lib/api/webhooks";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: receiveStripeWebhook,
});
