import { createAccount } from "@/lib/api/accounts";
import { apiRoute } from "@/lib/http/api-route";

export const POST = apiRoute(createAccount);
