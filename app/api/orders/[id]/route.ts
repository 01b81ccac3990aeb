import { getOrder } from "@/lib/api/orders";
import { apiRoute } from "@/lib/http/api-route";

export const GET = apiRoute(async (request: Request, context: RouteContext<"/api/orders/[id]">) =>
  getOrder(request, (await context.params).id),
);
