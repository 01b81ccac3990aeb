import { createOrder, listOrders } from "@/lib/api/orders";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({
  GET: listOrders,
  POST: createOrder,
});
