import { createAccount } from "@/lib/api/accounts";
import { apiMethods } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiMethods({ POST: createAccount });
