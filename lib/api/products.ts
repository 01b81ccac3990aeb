import { jsonResponse } from "@/lib/http/json";
import { CATALOG } from "@/lib/orders/catalog";

/** GET /api/products: the catalog the server prices carts from, whole (a list like every other, with nothing more to page to). */
export async function listProducts(): Promise<Response> {
  return jsonResponse(200, { object: "list", data: CATALOG, has_more: false });
}
