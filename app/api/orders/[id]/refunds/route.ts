import { createRefund } from "@/lib/api/refunds";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  POST: async (request: Request, context: RouteContext<"/api/orders/[id]/refunds">) =>
    createRefund(request, (await context.params).id),
});
