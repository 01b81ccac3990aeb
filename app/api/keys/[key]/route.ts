import { getKey } from "@/lib/api/keys";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: async (request: Request, context: RouteContext<"/api/keys/[key]">) =>
    getKey(request, (await context.params).key),
});
