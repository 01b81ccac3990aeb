import { STATUS_CODES } from "node:http";

/**
 * An operation's example request and answers as the reference shows them:
 * HTTP messages put together from the `example`s the OpenAPI document
 * carries (parameters, request body, response headers and bodies), so the
 * page shows what the published document says and nothing beside it.
 */

export interface HttpMessageExample {
  /** `POST /api/orders HTTP/1.1`, or `HTTP/1.1 201 Created`. */
  startLine: string;
  headers: { name: string; value: string }[];
  /** The body as the document has it: a JSON value, or text. */
  body?: unknown;
  /** The body as sent: JSON indented by two spaces, or the text itself. */
  bodyText?: string;
}

export interface AnswerExampleView extends HttpMessageExample {
  status: number;
}

export interface OperationExampleView {
  request: HttpMessageExample;
  answers: AnswerExampleView[];
}

interface Example {
  example?: unknown;
}

/** The parts of an operation object the examples are read from. */
export interface ExampleSource {
  security?: unknown[];
  parameters?: (Example & { name: string; in: string })[];
  requestBody?: { content: Record<string, Example> };
  responses: Record<
    string,
    { headers?: Record<string, Example>; content?: Record<string, Example> }
  >;
}

// The security schemes have no example value: a placeholder says where the token goes.
export const TOKEN_PLACEHOLDER = "Bearer <token from POST /api/accounts>";

export function operationExample(
  method: string,
  path: string,
  operation: ExampleSource,
): OperationExampleView | undefined {
  const answers = Object.entries(operation.responses).flatMap(([status, response]) => {
    const [mediaType, described] = Object.entries(response.content ?? {})[0] ?? [];
    if (!mediaType || described?.example === undefined) return [];
    const code = Number(status);
    return [
      {
        status: code,
        startLine: `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ""}`.trimEnd(),
        headers: [
          { name: "Content-Type", value: mediaType },
          ...exampleHeaders(Object.entries(response.headers ?? {})),
        ],
        ...bodyOf(described.example),
      },
    ];
  });
  if (answers.length === 0) return undefined;

  const parameters = operation.parameters ?? [];
  const valueOf = (parameter: Example) => String(parameter.example);
  const withExample = (where: string) =>
    parameters.filter((parameter) => parameter.in === where && parameter.example !== undefined);
  const target = withExample("path").reduce(
    (filled, parameter) =>
      filled.replace(`{${parameter.name}}`, encodeURIComponent(valueOf(parameter))),
    path,
  );
  const query = new URLSearchParams(
    withExample("query").map((parameter) => [parameter.name, valueOf(parameter)]),
  ).toString();
  const [bodyMediaType, body] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];

  return {
    request: {
      startLine: `${method} ${target}${query ? `?${query}` : ""} HTTP/1.1`,
      headers: [
        ...((operation.security ?? []).length > 0
          ? [{ name: "Authorization", value: TOKEN_PLACEHOLDER }]
          : []),
        ...withExample("header").map((parameter) => ({
          name: parameter.name,
          value: valueOf(parameter),
        })),
        ...(bodyMediaType ? [{ name: "Content-Type", value: bodyMediaType }] : []),
      ],
      ...(body?.example !== undefined && bodyOf(body.example)),
    },
    answers,
  };
}

function exampleHeaders(headers: [string, Example][]): HttpMessageExample["headers"] {
  return headers
    .filter(([, header]) => header.example !== undefined)
    .map(([name, header]) => ({ name, value: String(header.example) }));
}

function bodyOf(example: unknown): Pick<HttpMessageExample, "body" | "bodyText"> {
  return {
    body: example,
    bodyText: typeof example === "string" ? example : JSON.stringify(example, null, 2),
  };
}
