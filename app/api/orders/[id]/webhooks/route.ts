import { getOrderWebhooks } from "@/lib/api/order-webhooks";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: async (request: Request, context: RouteContext<"/api/orders/[id]/webhooks">) =>
    getOrderWebhooks(request, (await context.params).id),
});
