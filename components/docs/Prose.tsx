/** Text from the OpenAPI document, whose descriptions mark code with backticks (CommonMark's inline code). */
export function Prose({ text }: { text: string }) {
  const parts = text.split("`");
  // An odd number of backticks leaves the last one unpaired: shown as it is.
  if (parts.length % 2 === 0) return <>{text}</>;
  return (
    <>
      {parts.map((part, index) =>
        index % 2 === 1 ? (
          <code key={index} className="font-mono text-[0.92em] text-roast">
            {part}
          </code>
        ) : (
          part
        ),
      )}
    </>
  );
}
