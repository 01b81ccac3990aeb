import { REQUEST_ID_HEADER } from "@/lib/http/headers";
import type { JsonObject } from "@/lib/openapi/document";
import { EXAMPLE_REQUEST_ID, type OperationExample } from "@/lib/openapi/examples";

/**
 * An operation object of the document with its example written in, where
 * OpenAPI 3.1 keeps examples: `example` on each parameter, on the request
 * body's media type, on each response header and on each response's media
 * type. An example naming a parameter, status or header the operation does
 * not have is a mistake in the examples table, and throws rather than
 * publishing an example of nothing.
 */
export function withExamples(
  operationId: string,
  operation: JsonObject,
  example: OperationExample | undefined,
): JsonObject {
  if (!example) return operation;
  const where = (what: string) => `The example of ${operationId} ${what}`;
  const parameters = (operation.parameters ?? []) as JsonObject[];
  for (const name of Object.keys(example.parameters ?? {}))
    if (!parameters.some((parameter) => parameter.name === name))
      throw new Error(where(`names a parameter it does not take: ${name}`));

  const requestBody = operation.requestBody as { content: Record<string, JsonObject> } | undefined;
  if ((example.requestBody === undefined) !== (requestBody === undefined))
    throw new Error(where("must have a request body exactly when the operation takes one"));

  const responses = operation.responses as Record<
    string,
    { headers?: Record<string, JsonObject>; content?: Record<string, JsonObject> }
  >;
  const answered = Object.fromEntries(
    example.answers.map((answer) => {
      const response = responses[String(answer.status)];
      if (!response) throw new Error(where(`answers ${answer.status}, which it never does`));
      const headerValues = { [REQUEST_ID_HEADER]: EXAMPLE_REQUEST_ID, ...answer.headers };
      const headers = { ...response.headers };
      for (const [name, value] of Object.entries(headerValues)) {
        if (!headers[name])
          throw new Error(where(`sends ${name}, not a header of its ${answer.status}`));
        headers[name] = { ...headers[name], example: value };
      }
      const [mediaType, described] = Object.entries(response.content ?? {})[0] ?? [];
      const body = answer.text ?? answer.body;
      if ((body === undefined) !== (mediaType === undefined))
        throw new Error(
          where(`must have a body at ${answer.status} exactly when the answer has one`),
        );
      return [
        String(answer.status),
        {
          ...response,
          headers,
          ...(mediaType && { content: { [mediaType]: { ...described, example: body } } }),
        },
      ];
    }),
  );

  return {
    ...operation,
    ...(parameters.length > 0 && {
      parameters: parameters.map((parameter) => {
        const value = example.parameters?.[parameter.name as string];
        return value === undefined ? parameter : { ...parameter, example: value };
      }),
    }),
    ...(requestBody && {
      requestBody: {
        ...requestBody,
        content: Object.fromEntries(
          Object.entries(requestBody.content).map(([mediaType, described]) => [
            mediaType,
            { ...described, example: example.requestBody },
          ]),
        ),
      },
    }),
    responses: { ...responses, ...answered },
  };
}
