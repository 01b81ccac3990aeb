import { listProducts } from "@/lib/api/products";
import { apiRoute } from "@/lib/http/api-route";

export const GET = apiRoute(listProducts);
