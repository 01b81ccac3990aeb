import { getDemoSettings, putDemoSettings } from "@/lib/api/demo";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: getDemoSettings,
  PUT: putDemoSettings,
});
