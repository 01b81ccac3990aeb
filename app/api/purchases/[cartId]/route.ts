import { getPurchase } from "@/lib/api/purchases";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: async (request: Request, context: RouteContext<"/api/purchases/[cartId]">) =>
    getPurchase(request, (await context.params).cartId),
});
