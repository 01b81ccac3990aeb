import { jsonResponse } from "@/lib/http/json";
import { CATALOG } from "@/lib/orders/catalog";

/** GET /api/products: the catalog the server prices carts from. */
export async function listProducts(): Promise<Response> {
  return jsonResponse(200, { object: "list", data: CATALOG });
}
