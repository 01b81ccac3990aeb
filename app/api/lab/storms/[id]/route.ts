import { getStorm } from "@/lib/api/lab";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: async (request: Request, context: RouteContext<"/api/lab/storms/[id]">) =>
    getStorm(request, (await context.params).id),
});
