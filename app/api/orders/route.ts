import { createOrder } from "@/lib/api/orders";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({ POST: createOrder });
