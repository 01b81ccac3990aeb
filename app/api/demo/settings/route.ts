import { getDemoSettings, putDemoSettings } from "@/lib/api/demo";
import { apiRoute } from "@/lib/http/api-route";

export const GET = apiRoute(getDemoSettings);
export const PUT = apiRoute(putDemoSettings);
