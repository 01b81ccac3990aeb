import { postWebhookRedelivery } from "@/lib/api/demo-webhooks";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: postWebhookRedelivery,
});
