import { receiveLabWebhook } from "@/lib/api/lab-webhooks";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: (request: Request) => receiveLabWebhook(request, "no_event_record"),
});
