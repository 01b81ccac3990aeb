import { getOpenApiDocument } from "@/lib/api/openapi";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({ GET: getOpenApiDocument });
