import { listWebhookStorms, startWebhookStorm } from "@/lib/api/lab-webhooks";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: listWebhookStorms,
  POST: startWebhookStorm,
});
