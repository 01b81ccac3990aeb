import { getOrder } from "@/lib/api/orders";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: async (request: Request, context: RouteContext<"/api/orders/[id]">) =>
    getOrder(request, (await context.params).id),
});
