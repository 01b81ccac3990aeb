import { listProducts } from "@/lib/api/products";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({ GET: listProducts });
