import type { HttpMessageExample } from "@/lib/pages/api-examples";

/** One example HTTP message, as it goes over the wire: start line, headers, body. */
export function HttpExample({
  caption,
  message,
  testId,
  status,
}: {
  caption: string;
  message: HttpMessageExample;
  testId: "example-request" | "example-answer";
  status?: number;
}) {
  return (
    <figure className="min-w-0" data-testid={testId} data-status={status}>
      <figcaption className="text-xs font-semibold uppercase tracking-wide text-mocha">
        {caption}
      </figcaption>
      {/* Focusable: a long body scrolls inside the box, and a keyboard must reach it. On a
          phone the lines wrap rather than scroll sideways. */}
      <pre
        tabIndex={0}
        aria-label={`${caption}: ${message.startLine}`}
        className="mt-1.5 max-h-96 overflow-auto whitespace-pre-wrap rounded-xl bg-espresso p-4 font-mono text-xs leading-relaxed text-oat [overflow-wrap:anywhere] sm:whitespace-pre sm:[overflow-wrap:normal]"
      >
        <code>
          <span className="font-semibold text-cream" data-testid="example-start-line">
            {message.startLine}
          </span>
          {message.headers.map((header) => (
            <span key={header.name} data-testid="example-header" data-name={header.name}>
              {"\n"}
              <span className="text-sand">{header.name}:</span> {header.value}
            </span>
          ))}
          {message.bodyText !== undefined && (
            <>
              {"\n\n"}
              <span data-testid="example-body">{message.bodyText}</span>
            </>
          )}
        </code>
      </pre>
    </figure>
  );
}
