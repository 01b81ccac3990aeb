import { listLatestRunsOfEachDesign } from "@/lib/api/lab";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: listLatestRunsOfEachDesign,
});
