/** An HTTP method, coloured by whether it changes anything. */
export function MethodBadge({ method }: { method: string }) {
  const tone = method === "GET" ? "bg-sage-soft text-sage" : "bg-clay-soft text-clay";
  return (
    <span className={`rounded-md px-2 py-0.5 font-mono text-xs font-bold tracking-wide ${tone}`}>
      {method}
    </span>
  );
}

/** A status code, coloured by its class: success, the client's to fix, or ours. */
export function StatusBadge({ status }: { status: number }) {
  const tone =
    status < 300
      ? "bg-sage-soft text-sage"
      : status < 500
        ? "bg-clay-soft text-clay"
        : "bg-berry-soft text-berry";
  return (
    <span className={`inline-block rounded-md px-2 py-0.5 font-mono text-sm font-bold ${tone}`}>
      {status}
    </span>
  );
}
