import { getWebhookStorm } from "@/lib/api/lab-webhooks";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: async (request: Request, context: RouteContext<"/api/lab/webhook-storms/[id]">) =>
    getWebhookStorm(request, (await context.params).id),
});
