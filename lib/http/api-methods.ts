import { problemResponse, problemType } from "@/lib/http/problem";

/**
 * The methods an API route does not serve, answered by OncePay rather than
 * left to Next.js: a 405 problem+json with `Allow` (RFC 9110 requires it),
 * and OPTIONS says the same in a 204. `apiMethods` in api-route.ts puts them
 * in every route.
 */
export const API_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type ApiMethod = (typeof API_METHODS)[number];

export type Handler<Rest extends unknown[]> = (
  request: Request,
  ...rest: Rest
) => Promise<Response>;

export function allowHeader(served: readonly ApiMethod[]): string {
  return [...served, ...(served.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
}

export function methodNotAllowed(method: string, served: readonly ApiMethod[]): Response {
  return problemResponse(
    {
      type: problemType("method-not-allowed"),
      title: "Method not allowed",
      status: 405,
      detail: `This endpoint does not answer ${method}. It answers ${allowHeader(served)}.`,
    },
    { Allow: allowHeader(served) },
  );
}

export function optionsResponse(served: readonly ApiMethod[]): Response {
  return new Response(null, { status: 204, headers: { Allow: allowHeader(served) } });
}
