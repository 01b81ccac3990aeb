import { createOrder } from "@/lib/api/orders";
import { apiRoute } from "@/lib/http/api-route";

export const POST = apiRoute(createOrder);
